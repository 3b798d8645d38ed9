"""The instructor's notebook read as an assignment, and a submission merged into it."""

from __future__ import annotations

import copy

import nbformat
import pytest

from hookviz.course.authoring.build import exercise_from_solution
from hookviz.course.conventions import HIDDEN_TEST_FAILED, Flag
from hookviz.course.format import regions
from hookviz.course.format.notebooks import NotebookError, grade_id, is_check
from hookviz.grading.core.merge import load_assignment, merge
from hookviz.grading.run.scoring import hidden_failure
from tests.tiny_course import CONFIG, TINY


def exercise():
    return exercise_from_solution(nbformat.read(TINY, as_version=4), CONFIG, "s.ipynb", "e.ipynb")


def cell(notebook, gid):
    return next(c for c in notebook.cells if grade_id(c) == gid)


def test_assignment_lists_checks_answers_and_points(assignment) -> None:
    assert [(c.grade_id, c.points, c.index) for c in assignment.checks] == [
        ("check_double", 2, 2),
        ("check_shout", 1, 4),
        ("check_triple", 2, 6),
    ]
    assert [(a.grade_id, a.functions) for a in assignment.answers] == [
        ("double", ("double",)),
        ("shout", ("shout",)),
        ("triple", ("triple",)),
    ]
    assert assignment.max_points == 5
    assert assignment.checks[0].expected == "✓ double(2) is 4\n[hookviz] check_double: finished\n"


@pytest.mark.parametrize(
    "mutate, message",
    [
        (lambda c: setattr(c, "outputs", []), "must end with its sentinel line"),
        (lambda c: setattr(c, "execution_count", None), "must end with its sentinel line"),
        (
            lambda c: setattr(c, "source", "# NBVAL_IGNORE_OUTPUT\n" + c.source),
            "must have its output compared",
        ),
        (
            lambda c: c.metadata.setdefault("tags", []).append("nbval-skip"),
            "must have its output compared",
        ),
        (lambda c: c.metadata.nbgrader.pop("points"), "a check cell needs points"),
        (  # edited after its output was stored: every student would fail it
            lambda c: setattr(c, "source", c.source.replace("shout works", "shout() works")),
            "was edited after its output was stored",
        ),
        (lambda c: c.metadata.pop("hookviz"), "carries no record of the source it came from"),
    ],
)
def test_an_assignment_that_cannot_be_graded_fairly_is_refused(tmp_path, mutate, message) -> None:
    notebook = nbformat.read(TINY, as_version=4)
    mutate(cell(notebook, "check_shout"))
    nbformat.write(notebook, tmp_path / "tiny.ipynb")
    with pytest.raises(NotebookError, match="check_shout") as caught:
        load_assignment(tmp_path / "tiny.ipynb")
    assert message in str(caught.value)


def test_a_hidden_test_failure_is_told_apart_from_a_visible_one(assignment) -> None:
    check_double = assignment.checks[0]  # its hidden region is line 4: a plain assert
    assert check_double.hidden_lines == {4}

    def outputs(printed: str, ename: str, line: int) -> list[dict]:
        return [
            {"type": "stream", "name": "stdout", "text": printed},
            {"type": "error", "ename": ename, "evalue": "double(-3) should be -6", "line": line},
        ]

    assert hidden_failure(outputs("✓ double(2) is 4\n", "AssertionError", 4), check_double) == (
        "double(-3) should be -6"
    )
    # A visible ✗ came first: it explains the failure. An assert elsewhere is not hidden.
    assert hidden_failure(outputs("✗ double(2) is 5\n", "AssertionError", 4), check_double) == ""
    assert hidden_failure(outputs("", "AssertionError", 1), check_double) == ""
    assert (
        hidden_failure(outputs("", HIDDEN_TEST_FAILED, 9), check_double)
        == "double(-3) should be -6"
    )


def test_only_answer_sources_come_from_the_student(assignment) -> None:
    student = exercise()
    cell(student, "double").source = "def double(x):\n    return x * 2\n"
    cell(student, "check_double").source = "print('forged')"
    cell(student, "check_double").outputs = [
        nbformat.v4.new_output("stream", name="stdout", text="forged\n")
    ]
    cell(student, "setup").source = "FACTOR = 1000"
    merged = merge(assignment, student)
    graded = merged.notebook
    assert cell(graded, "double").source == "def double(x):\n    return x * 2\n"
    assert cell(graded, "check_double").source == cell(assignment.notebook, "check_double").source
    assert "BEGIN HIDDEN TESTS" in cell(graded, "check_double").source
    assert cell(graded, "check_double").outputs == cell(assignment.notebook, "check_double").outputs
    assert cell(graded, "setup").source == 'FACTOR = 3\nprint("ready")'
    assert cell(graded, "setup").execution_count is None  # only check cells are compared
    assert merged.matched_by == {"double": "grade_id", "shout": "grade_id", "triple": "grade_id"}
    assert merged.notes == ["You edited the check cell check_double; the original was used."]


def test_a_check_cell_from_an_older_exercise_is_not_called_edited(assignment) -> None:
    older = nbformat.read(TINY, as_version=4)  # the solution before its check changed
    cell(older, "check_shout").source = cell(older, "check_shout").source.replace(
        "shout works", "ok"
    )
    handed_out = exercise_from_solution(older, CONFIG, "s.ipynb", "e.ipynb")
    merged = merge(assignment, handed_out)
    assert merged.notes == [
        "Your copy of the check cell check_shout is an older version (the assignment changed "
        "after you got it); the current one was used."
    ]
    assert merged.flags == [Flag("check-outdated", "check_shout")]
    cell(handed_out, "check_shout").source += "\nprint('mine')"  # and now edited by the student
    assert merge(assignment, handed_out).flags == [Flag("check-edited", "check_shout")]


def test_answers_without_metadata_match_by_functions_then_position(assignment) -> None:
    student = exercise()
    cell(student, "shout").source = "def helper():\n    pass\n"  # defines no `shout`: position only
    for c in student.cells:
        c.metadata = {}  # lost, as when answers are pasted into a new notebook
    merged = merge(assignment, student)
    assert merged.matched_by == {"double": "functions", "shout": "position", "triple": "functions"}
    assert any("by its position" in note for note in merged.notes)


def test_a_missing_answer_is_graded_as_the_stub(assignment) -> None:
    student = exercise()
    student.cells = [c for c in student.cells if grade_id(c) != "triple"]
    for c in student.cells:
        if c.cell_type == "code" and grade_id(c) != "double":
            c.metadata = {}
            c.source = "x = 1"
    merged = merge(assignment, student)
    assert merged.matched_by["triple"] == "missing"
    assert cell(merged.notebook, "triple").source == regions.replace_solutions(
        cell(assignment.notebook, "triple").source
    )
    assert "No answer for triple was found; it was graded as not done." in merged.notes


def test_duplicated_answer_cells_grade_the_last_one(assignment) -> None:
    student = exercise()
    first = cell(student, "double")
    second = copy.deepcopy(first)
    second.id = "again"
    first.source, second.source = (
        "def double(x):\n    return 0\n",
        "def double(x):\n    return 2 * x\n",
    )
    student.cells.insert(student.cells.index(first) + 1, second)
    merged = merge(assignment, student)
    assert cell(merged.notebook, "double").source.endswith("return 2 * x\n")
    assert any("2 answer cells for double" in note for note in merged.notes)


def test_check_cells_in_the_fixture_end_with_their_sentinel() -> None:
    for c in nbformat.read(TINY, as_version=4).cells:
        if is_check(c):
            assert c.outputs[-1].text.endswith(f"[hookviz] {grade_id(c)}: finished\n")
