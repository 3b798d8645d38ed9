"""A Korean submission is graded as an English one: same score, flags and ✓/✗ sequence, its
feedback in Korean (hookviz/grading/core/languages.py), through the real grader."""

from __future__ import annotations

import copy
import json
import re
import shutil
from pathlib import Path

import nbformat
import pytest

from hookviz.course.conventions import FAIL_MARK, NOT_DONE_MARK, PASS_MARK
from hookviz.course.format import regions
from hookviz.course.format.notebooks import grade_id, is_check, is_solution
from hookviz.course.wording import words
from hookviz.grading.core.languages import submission_language, translated_path
from hookviz.grading.grade.batch import grade_folder
from hookviz.grading.platforms.gradescope_autograder import results_json
from tests.answers.a01_apply import ANSWERS
from tests.tiny_course import OPTIONS

REPO = Path(__file__).resolve().parents[3]
NAME = "01-apply"
WRONG = {a.exercise: a for a in ANSWERS if a.kind == "wrong"}  # one wrong answer per exercise

pytestmark = pytest.mark.slow


def submission(exercise: Path, solution: Path, wrong: str | None = None) -> nbformat.NotebookNode:
    """The exercise with the solution's answers, one of them replaced by a wrong one."""
    answers = {
        grade_id(c): regions.strip_solution_markers(c.source)
        for c in nbformat.read(solution, as_version=4).cells
        if is_solution(c) and c.cell_type == "code"
    }
    if wrong:
        answers[wrong] = WRONG[wrong].source
    notebook = copy.deepcopy(nbformat.read(exercise, as_version=4))
    for cell in notebook.cells:
        if grade_id(cell) in answers and is_solution(cell):
            cell.source = answers[grade_id(cell)]
    return notebook


def marks(text: str) -> list[str]:
    return [
        line[0] for line in text.splitlines() if line[:1] in (PASS_MARK, FAIL_MARK, NOT_DONE_MARK)
    ]


@pytest.fixture(scope="module")
def graded(tmp_path_factory) -> dict:
    """Four students, English and Korean, right and partly wrong, graded in one run."""
    root = tmp_path_factory.mktemp("bilingual")
    course = root / "course"
    for folder in ("solutions", "ko/solutions"):
        (course / folder).mkdir(parents=True)
        shutil.copy(REPO / folder / f"{NAME}.ipynb", course / folder / f"{NAME}.ipynb")
    wrong = sorted(WRONG)[0]
    students = {
        "en-right": submission(REPO / f"exercises/{NAME}.ipynb", REPO / f"solutions/{NAME}.ipynb"),
        "ko-right": submission(
            REPO / f"ko/exercises/{NAME}.ipynb", REPO / f"solutions/{NAME}.ipynb"
        ),
        "en-wrong": submission(
            REPO / f"exercises/{NAME}.ipynb", REPO / f"solutions/{NAME}.ipynb", wrong
        ),
        "ko-wrong": submission(
            REPO / f"ko/exercises/{NAME}.ipynb", REPO / f"solutions/{NAME}.ipynb", wrong
        ),
    }
    edited = copy.deepcopy(students["ko-right"])
    check = next(c for c in edited.cells if is_check(c))
    check.source += "\n# my own line"
    students["ko-edited"] = edited
    for student, notebook in students.items():
        (root / "submitted" / student).mkdir(parents=True)
        nbformat.write(notebook, root / "submitted" / student / f"{NAME}.ipynb")
    summary = grade_folder(
        root / "submitted", course / "solutions" / f"{NAME}.ipynb", root / "out", OPTIONS
    )
    return {
        "results": {r.student: r for r in summary.results},
        "course": course,
        "students": students,
        "out": root / "out",
        "edited": grade_id(check),
    }


def test_the_language_of_a_submission_is_the_one_it_was_handed_out_in(graded) -> None:
    students = graded["students"]
    assert [submission_language(students[s]) for s in ("en-right", "ko-right")] == ["en", "ko"]
    course = graded["course"]
    assert (
        translated_path(course / "solutions" / f"{NAME}.ipynb", "ko")
        == (course / "ko" / "solutions" / f"{NAME}.ipynb").resolve()
    )
    assert translated_path(course / "solutions" / f"{NAME}.ipynb", "fr") is None


@pytest.mark.parametrize("kind", ["right", "wrong"])
def test_korean_and_english_grade_the_same(graded, kind: str) -> None:
    english, korean = graded["results"][f"en-{kind}"], graded["results"][f"ko-{kind}"]
    assert (korean.status, korean.total, korean.max_total) == (
        english.status,
        english.total,
        english.max_total,
    )
    assert korean.flags == english.flags
    assert korean.assignment_sha256 == english.assignment_sha256  # one assignment
    for en, ko in zip(english.checks, korean.checks, strict=True):
        assert (ko.grade_id, ko.points, ko.outcome) == (en.grade_id, en.points, en.outcome)
        assert marks(ko.actual) == marks(en.actual)
    if kind == "right":
        assert english.total == english.max_total
    else:
        assert english.total < english.max_total


def test_korean_feedback_is_korean(graded) -> None:
    english, korean = graded["results"]["en-wrong"], graded["results"]["ko-wrong"]
    failed = [c for c in korean.checks if c.points < c.max_points]
    assert failed
    for check in failed:
        assert any("\uac00" <= ch <= "\ud7a3" for ch in check.actual), check.actual
    assert not any("\uac00" <= ch <= "\ud7a3" for c in english.checks for ch in c.actual)


HANGUL = re.compile(r"[\uac00-\ud7a3]")
# the feedback page's own words, which must all be in the student's language
CHROME = ["feedback.your_output", "feedback.looks_for", "feedback.not_passed", "feedback.hints"]


def test_the_feedback_page_speaks_the_students_language_and_the_review_english(graded) -> None:
    out = graded["out"]
    pages = {
        s: (out / "feedback" / f"{s}.md").read_text(encoding="utf-8") for s in graded["results"]
    }
    korean, english = pages["ko-wrong"], pages["en-wrong"]
    result = graded["results"]["ko-wrong"]
    score = words(
        "feedback.score", "ko", points=f"{result.total:g}", max_points=f"{result.max_total:g}"
    )
    assert korean.startswith(
        f"# {words('feedback.title', 'ko', assignment=NAME, student='ko-wrong')}"
    )
    assert f"**{score}**" in korean
    for key in CHROME:
        assert words(key, "ko") in korean and words(key, "en") not in korean, key
        assert words(key, "en") in english and words(key, "ko") not in english, key
    assert any(words(f"feedback.advice.{c.outcome}", "ko") in korean for c in result.checks) or (
        words("feedback.not_written", "ko") in korean
    )
    assert not HANGUL.search(english)
    # the instructor's review stays English, whichever language the student worked in
    review = (out / "review" / "ko-wrong.md").read_text(encoding="utf-8")
    assert "Expected output:" in review and "(not passed)" in review
    assert not HANGUL.search(review.split("```")[0])  # before the first output it quotes
    gradebook = json.loads((out / "gradebook.json").read_text(encoding="utf-8"))
    langs = {row["student"]: row["lang"] for row in gradebook["students"]}
    assert langs == {
        "en-right": "en",
        "en-wrong": "en",
        "ko-right": "ko",
        "ko-wrong": "ko",
        "ko-edited": "ko",
    }


def test_the_graders_notes_on_a_korean_notebook_are_korean(graded) -> None:
    result = graded["results"]["ko-edited"]
    gid = graded["edited"]
    assert result.flags == [f"check-edited ({gid})"]
    assert result.notes == [words("merge.check_edited", "ko", grade_id=gid)]
    page = (graded["out"] / "feedback" / "ko-edited.md").read_text(encoding="utf-8")
    assert f"## {words('feedback.notes', 'ko')}" in page and result.notes[0] in page


def test_gradescope_results_speak_the_students_language(graded) -> None:
    from hookviz.grading.core.merge import load_assignment

    assignment = load_assignment(graded["course"] / "solutions" / f"{NAME}.ipynb")
    documents = {
        s: results_json(graded["results"][s], assignment, "after_published", 1)
        for s in ("ko-wrong", "en-wrong", "ko-edited")
    }
    korean, english = documents["ko-wrong"], documents["en-wrong"]
    assert [t["score"] for t in korean["tests"]] == [t["score"] for t in english["tests"]]
    for ko, en in zip(korean["tests"], english["tests"], strict=True):
        if ko["score"] < ko["max_score"]:
            assert words("feedback.your_output", "ko") in ko["output"]
            assert words("feedback.your_output", "en") in en["output"]
        else:
            assert not HANGUL.search(en["output"])
    notes = documents["ko-edited"]["output"]
    assert words("feedback.notes", "ko") + ":" in notes and "Notes:" not in notes
