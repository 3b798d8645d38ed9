"""Scoring by cell, through the real grader: a wrong earlier answer costs its own cell only.

02's linear_transformation check runs add_bias, weight_initialization and hook; 07's
capture_gradients calls gradient_hook. A submission whose earlier answers are wrong, and whose
later one is right, gets the later check's full points, with a note in its feedback (in the
language it was handed out in); a wrong later answer still gets nothing for it.
"""

from __future__ import annotations

import copy
import shutil
from pathlib import Path

import nbformat
import pytest

from hookviz.course.format import regions
from hookviz.course.format.notebooks import grade_id, is_solution
from hookviz.grading.grade.batch import grade_folder
from tests.answers import a02_forward_hooks, a07_grad_modes
from tests.tiny_course import OPTIONS

REPO = Path(__file__).resolve().parents[3]

pytestmark = pytest.mark.slow


def wrong(module, exercise: str, label: str) -> str:
    return next(
        a.source
        for a in module.ANSWERS
        if a.exercise == exercise and a.kind == "wrong" and a.label == label
    )


WRONG_HOOK = wrong(a02_forward_hooks, "hook", "the blog's x @ W + b")
WRONG_INIT = wrong(
    a02_forward_hooks, "weight_initialization", "every module's own parameters, as in assignment 1"
)
LEAVES = wrong(a02_forward_hooks, "linear_transformation", "hooks every leaf module")
ASKS_INPUT = wrong(a07_grad_modes, "gradient_hook", "asks the input whether it needs a gradient")


def submission(name: str, lang: str, answers: dict[str, str]) -> nbformat.NotebookNode:
    """The handed-out exercise with the solution's answers, some replaced by ``answers``."""
    solved = {
        grade_id(c): regions.strip_solution_markers(c.source)
        for c in nbformat.read(REPO / "solutions" / f"{name}.ipynb", as_version=4).cells
        if is_solution(c) and c.cell_type == "code"
    }
    folder = REPO / ("ko/exercises" if lang == "ko" else "exercises")
    notebook = copy.deepcopy(nbformat.read(folder / f"{name}.ipynb", as_version=4))
    for cell in notebook.cells:
        if is_solution(cell) and grade_id(cell) in solved:
            cell.source = answers.get(grade_id(cell), solved[grade_id(cell)])
    return notebook


def grade(root: Path, name: str, students: dict[str, nbformat.NotebookNode]) -> dict:
    course = root / name / "course"
    for folder in ("solutions", "ko/solutions"):
        (course / folder).mkdir(parents=True)
        shutil.copy(REPO / folder / f"{name}.ipynb", course / folder / f"{name}.ipynb")
    for student, notebook in students.items():
        (root / name / "submitted" / student).mkdir(parents=True)
        nbformat.write(notebook, root / name / "submitted" / student / f"{name}.ipynb")
    out = root / name / "out"
    summary = grade_folder(
        root / name / "submitted", course / "solutions" / f"{name}.ipynb", out, OPTIONS
    )
    for result in summary.results:  # a grader failure shows its traceback, not a bare 0 points
        assert result.status != "error", f"{result.student}: {result.detail}\n{result.notes}"
    return {
        result.student: (
            {c.grade_id: c for c in result.checks},
            (out / "feedback" / f"{result.student}.md").read_text(encoding="utf-8"),
        )
        for result in summary.results
    }


@pytest.fixture(scope="module")
def graded(tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("own-cell")
    results = grade(
        root,
        "02-forward-hooks",
        {
            "en-earlier-wrong": submission(
                "02-forward-hooks", "en", {"hook": WRONG_HOOK, "weight_initialization": WRONG_INIT}
            ),
            "ko-earlier-wrong": submission("02-forward-hooks", "ko", {"hook": WRONG_HOOK}),
            "en-both-wrong": submission(
                "02-forward-hooks", "en", {"hook": WRONG_HOOK, "linear_transformation": LEAVES}
            ),
        },
    )
    results.update(
        grade(
            root,
            "07-grad-modes",
            {"en-hook-wrong": submission("07-grad-modes", "en", {"gradient_hook": ASKS_INPUT})},
        )
    )
    return results


def points(checks: dict, grade_id: str) -> tuple[float, float]:
    return checks[grade_id].points, checks[grade_id].max_points


def test_a_right_later_answer_scores_in_full_after_wrong_earlier_ones(graded) -> None:
    checks, feedback = graded["en-earlier-wrong"]
    assert points(checks, "check_hook") == (0, 2)
    assert points(checks, "check_weight_initialization") == (0, 1)
    assert points(checks, "check_linear_transformation") == (3, 3)
    assert points(checks, "check_add_bias") == (1, 1)
    assert "ⓘ checked with a correct hook, since yours has a ✗ above" in feedback
    assert "ⓘ checked with a correct weight_initialization, since yours has a ✗ above" in feedback


def test_in_korean_too_with_the_note_in_korean(graded) -> None:
    checks, feedback = graded["ko-earlier-wrong"]
    assert points(checks, "check_hook") == (0, 2)
    assert points(checks, "check_linear_transformation") == (3, 3)
    assert (
        "ⓘ 여러분의 함수가 위 검사에서 ✗를 받았으므로, 올바른 hook 함수로 검사했습니다" in feedback
    )


def test_a_wrong_later_answer_still_scores_nothing(graded) -> None:
    checks, _ = graded["en-both-wrong"]
    assert points(checks, "check_linear_transformation") == (0, 3)
    assert "A leaf is not the same as a Function" in checks["check_linear_transformation"].actual


def test_capture_gradients_scores_in_full_after_a_wrong_gradient_hook(graded) -> None:
    checks, feedback = graded["en-hook-wrong"]
    assert points(checks, "check_gradient_hook") == (0, 3)
    assert points(checks, "check_capture_gradients") == (3, 3)
    assert "ⓘ checked with a correct gradient_hook, since yours has a ✗ above" in feedback
