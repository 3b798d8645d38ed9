"""What the feedback says when a check crashed, or when its function was renamed (no kernel)."""

from __future__ import annotations

import pytest

from hookviz.course.conventions import Flag, Outcome
from hookviz.grading.core.feedback import feedback_markdown, review_markdown
from hookviz.grading.core.merge import Renamed, load_assignment, merge
from hookviz.grading.run.limits import Limits
from hookviz.grading.run.sandbox import ChildResult
from hookviz.grading.run.scoring import score
from tests.tiny_course import TINY, student


@pytest.fixture(scope="module")
def assignment():
    return load_assignment(TINY)


def graded(assignment, outputs: dict[str, list[dict]], renamed=()):
    """A finished run in which each check in ``outputs`` raised (the others passed)."""
    records = []
    for check in assignment.checks:
        failed = outputs.get(check.grade_id)
        records.append(
            {
                "event": "cell",
                "index": check.index,
                "grade_id": check.grade_id,
                "outcome": Outcome.ERROR.value if failed else Outcome.PASSED.value,
                "outputs": failed or [{"type": "stream", "name": "stdout", "text": check.expected}],
            }
        )
    child = ChildResult(0, False, 1.0, [*records, {"event": "done"}])
    return score(assignment, child, Limits(), renamed)


def raised(ename: str, evalue: str) -> list[dict]:
    return [{"type": "error", "ename": ename, "evalue": evalue, "line": 1}]


def test_a_crashed_check_says_in_words_what_happened(assignment) -> None:
    result = graded(assignment, {"check_shout": raised("ValueError", "boom")})
    shout = next(c for c in result.checks if c.grade_id == "check_shout")
    assert shout.outcome == Outcome.ERROR and shout.error == "ValueError: boom"
    for page in (feedback_markdown(result), review_markdown(result)):
        assert "What happened: the check stopped with an error: ValueError: boom." in page
        assert "What happened: error." not in page


def test_a_renamed_function_is_flagged_and_named_with_what_the_cell_defines(assignment) -> None:
    renamed = student({"double": "def twice(x):\n    return 2 * x\n"})
    merged = merge(assignment, renamed)
    assert merged.renamed == [Renamed("double", ("double",), ("twice",))]
    flag = Flag("answer-renamed", "double: defines twice, not double")
    assert flag in merged.flags
    assert any("twice" in note and "double" in note for note in merged.notes)

    result = graded(
        assignment,
        {"check_double": raised("NameError", "name 'double' is not defined")},
        merged.renamed,
    )
    by_id = {c.grade_id: c for c in result.checks}
    assert "look for double" in by_id["check_double"].detail
    assert "defines twice" in by_id["check_double"].detail
    assert by_id["check_shout"].detail == ""  # it calls shout, which is there
    feedback = feedback_markdown(result)
    assert "name it double" in feedback and "not defined yet: run the cell" not in feedback


def test_an_answer_with_its_function_and_a_helper_is_not_renamed(assignment) -> None:
    helper = student(
        {"double": "def helper(x):\n    return x\n\ndef double(x):\n    return 2 * x\n"}
    )
    merged = merge(assignment, helper)
    assert merged.renamed == []
    assert not [f for f in merged.flags if f.kind == "answer-renamed"]


def test_a_stub_left_as_handed_out_is_not_renamed(assignment) -> None:
    merged = merge(assignment, student({"double": "# nothing yet\n"}))
    assert merged.renamed == []  # it defines nothing: not written, not renamed


def test_partial_credit_says_why_in_the_feedback_and_the_review(assignment) -> None:
    result = graded(assignment, {})
    check = result.checks[0]
    assert check.outcome == Outcome.PASSED and not check.detail
    for page in (feedback_markdown(result), review_markdown(result)):
        assert "Partial credit" not in page  # full points: nothing to explain
    check.points, check.detail = check.max_points / 2, "the test cell's last expression shows 0.5"
    for page in (feedback_markdown(result), review_markdown(result)):
        assert "Partial credit: the test cell's last expression shows 0.5." in page


def stream(text: str) -> list[dict]:
    return [{"type": "stream", "name": "stdout", "text": text}]


@pytest.mark.parametrize(
    ("printed", "hint", "repeated"),
    [
        (
            "✗ double doubles 3\n    the result is 5, expected 6\n    Hint: multiply, do not add.\n"
            "✗ double doubles 4\n    Hint: as above.\n",
            "- Hint: multiply, do not add.",
            "- Hint: as above.",
        ),
        (
            "✗ double doubles 3\n    결과의 값: 5, 기대한 값: 6\n    힌트: 더하지 말고 곱하세요.\n"
            "✗ double doubles 4\n    힌트: 위와 같습니다.\n",
            "- 힌트: 더하지 말고 곱하세요.",
            "- 힌트: 위와 같습니다.",
        ),
    ],
    ids=["en", "ko"],
)
def test_the_feedback_gathers_the_hints_a_check_printed_in_either_language(
    assignment, printed, hint, repeated
) -> None:
    result = graded(assignment, {"check_double": stream(printed)})
    page = feedback_markdown(result)
    assert hint in page and repeated not in page


@pytest.mark.parametrize(
    "printed",
    [
        "○ double: not done yet. Write your answer where it says YOUR CODE HERE, run that cell, "
        "then run this check again.\n",
        "○ double: 아직 작성하지 않았습니다. YOUR CODE HERE 자리에 답을 작성하고 그 셀을 실행한 "
        "다음, 이 검사를 다시 실행하세요.\n",
    ],
    ids=["en", "ko"],
)
def test_an_answer_not_done_yet_is_named_in_either_language(assignment, printed) -> None:
    result = graded(assignment, {"check_double": stream(printed)})
    assert "An answer this check needs is not written yet" in feedback_markdown(result)


def mismatched(assignment, grade_id: str, printed: str):
    """A finished run in which nbval found ``grade_id``'s output unlike the stored one."""
    records = [
        {
            "event": "cell",
            "index": check.index,
            "grade_id": check.grade_id,
            "outcome": (Outcome.MISMATCH if check.grade_id == grade_id else Outcome.PASSED).value,
            "outputs": stream(printed if check.grade_id == grade_id else check.expected),
        }
        for check in assignment.checks
    ]
    return score(assignment, ChildResult(0, False, 1.0, [*records, {"event": "done"}]), Limits())


def test_a_check_that_ran_with_a_correct_earlier_answer_scores_and_says_so(assignment) -> None:
    """Its output is the stored one and a note (course/upstream.py): full points, the note in
    the feedback; a note does not excuse any other difference."""
    check = next(c for c in assignment.checks if not c.ran_to_end)
    note = "ⓘ checked with a correct helper, since yours has a ✗ above\n"
    result = mismatched(assignment, check.grade_id, note + check.expected)
    found = next(c for c in result.checks if c.grade_id == check.grade_id)
    assert found.outcome == Outcome.PASSED and found.points == check.points
    assert found.nbval_outcome == Outcome.MISMATCH  # what nbval said, for the review
    assert "\nⓘ checked with a correct helper, since yours has a ✗ above\n" in feedback_markdown(
        result
    )
    for printed in (note + check.expected.replace("✓", "✗", 1), check.expected):
        # another difference with a note; no note at all (nbval saw a difference elsewhere)
        other = mismatched(assignment, check.grade_id, printed)
        found = next(c for c in other.checks if c.grade_id == check.grade_id)
        assert found.outcome == Outcome.MISMATCH and found.points == 0


def test_the_graders_reasons_are_in_the_students_language(assignment) -> None:
    """A time limit, a dead kernel: the gradebook keeps the English reason, a Korean student's
    feedback says it in Korean (the instructor's review stays English)."""
    import dataclasses
    from pathlib import Path

    from hookviz.grading.core.feedback import detail_words

    records = [
        {
            "event": "cell",
            "index": check.index,
            "grade_id": check.grade_id,
            "outcome": Outcome.TIMEOUT.value,
            "outputs": [],
        }
        for check in assignment.checks
    ]
    child = ChildResult(0, False, 1.0, [*records, {"event": "done"}])
    result = score(assignment, child, Limits(cell_timeout=30))
    assert result.checks[0].detail == "the check ran longer than 30 s"
    korean = dataclasses.replace(result, lang="ko")
    page = feedback_markdown(korean)
    assert "검사가 30초 넘게 실행되었습니다" in page and "ran longer" not in page
    assert "the check ran longer than 30 s" in review_markdown(korean)
    assert detail_words("the kernel died in code cell 4", "ko") == "커널이 멈춘 곳: 코드 셀 4"
    assert detail_words("RuntimeError: boom", "ko") == "RuntimeError: boom"  # Python's own text
    # the sandboxed plugin imports no hookviz: it writes these two reasons in English itself
    from hookviz.course.wording import words

    plugin = Path(__file__).resolve().parents[3] / "hookviz/grading/run/plugin"
    source = (plugin / "hookviz_grading_plugin.py").read_text(encoding="utf-8")
    for key in ("detail.already_dead", "detail.died_while"):
        assert f'"{words(key, "en")}"' in source, key
