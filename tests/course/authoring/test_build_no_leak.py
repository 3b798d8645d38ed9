"""No solution text of any kind reaches exercises/: answer regions, whole answer cells, written
(markdown) answers, manually graded code, their outputs and attachments."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import nbformat
import pytest

from hookviz.course.authoring.build import build_course, course_notebooks
from hookviz.course.format import regions
from hookviz.course.format.notebooks import grade_id, is_solution

REPO = Path(__file__).resolve().parents[3]
HANDGRADED = REPO / "tests" / "fixtures" / "handgraded"


def solution_lines(cell) -> set[str]:
    """The lines of a solution cell that only its model answer has (stripped, not blank)."""
    source = cell.source
    found = [r for r in regions.find_regions(source) if r.kind == "solution"]
    lines = source.splitlines()
    if found:
        inside = [lines[i] for r in found for i in range(r.begin + 1, r.end)]
    else:
        inside = lines  # a solution cell without regions is answer through and through
    return {line.strip() for line in inside if line.strip()}


def leaks(solution, exercise) -> list[str]:
    """Each solution line found in the exercise's file, unless the solution also has it outside
    every answer (a shared name in a check cell, say)."""
    outside = set()
    for cell in solution.cells:
        if is_solution(cell):
            kept = set(cell.source.splitlines()) - set(solution_lines(cell))
            outside |= {line.strip() for line in kept}
        else:
            outside |= {line.strip() for line in cell.source.splitlines()}
    text = json.dumps(exercise, ensure_ascii=False)
    exercise_lines = {line.strip() for cell in exercise.cells for line in cell.source.splitlines()}
    found = []
    for cell in solution.cells:
        if not is_solution(cell):
            continue
        for line in solution_lines(cell) - outside:
            if line in exercise_lines or json.dumps(line, ensure_ascii=False)[1:-1] in text:
                found.append(f"{grade_id(cell)}: {line!r}")
    return found


def solution_cells_cleared(exercise) -> list[str]:
    """Solution cells of the exercise that still carry outputs or attachments."""
    return [
        str(grade_id(cell))
        for cell in exercise.cells
        if is_solution(cell) and (cell.get("outputs") or cell.get("attachments"))
    ]


def test_no_solution_of_the_repository_reaches_its_exercise() -> None:
    pairs = 0
    for path in course_notebooks(REPO, "solutions"):
        target = REPO / "exercises" / path.relative_to(REPO / "solutions")
        solution = nbformat.read(path, as_version=4)
        exercise = nbformat.read(target, as_version=4)
        assert leaks(solution, exercise) == [], target
        assert solution_cells_cleared(exercise) == [], target
        pairs += 1
    assert pairs >= 5


@pytest.fixture
def handgraded_course(tmp_path: Path) -> Path:
    (tmp_path / "course.toml").write_text(
        '[course]\nrepository = "https://github.com/someone/some-course"\n'
    )
    shutil.copytree(HANDGRADED, tmp_path / "solutions" / "handgraded")
    return tmp_path


def test_written_manual_and_task_cells_build_without_leaking(handgraded_course: Path) -> None:
    source = handgraded_course / "solutions" / "handgraded" / "handgraded.ipynb"
    solution = nbformat.read(source, as_version=4)
    attachment = {"image.png": {"image/png": "U0VDUkVULUFUVEFDSE1FTlQ="}}
    by_id = {grade_id(c): c for c in solution.cells}
    by_id["explain"]["attachments"] = attachment
    nbformat.write(solution, source)

    build_course(handgraded_course)
    exercise = nbformat.read(
        handgraded_course / "exercises" / "handgraded" / "handgraded.ipynb", as_version=4
    )
    cells = {grade_id(c): c for c in exercise.cells if grade_id(c)}
    assert cells["explain"].source == "YOUR ANSWER HERE"
    assert cells["explain"].cell_type == "markdown"
    assert cells["sorted_words"].source == "# YOUR CODE HERE\nraise NotImplementedError()"
    assert "### BEGIN SOLUTION" not in cells["count"].source
    assert "raise NotImplementedError()" in cells["count"].source
    # The task is the instruction itself: it stays, locked.
    assert cells["task_other_text"].source == by_id["task_other_text"].source
    assert cells["task_other_text"].metadata["editable"] is False
    text = json.dumps(exercise)
    assert "SECRET" not in text
    assert leaks(solution, exercise) == []
    assert solution_cells_cleared(exercise) == []


def test_the_leak_check_catches_a_leak(handgraded_course: Path) -> None:
    """The check above can fail: a written answer copied as it was is found."""
    solution = nbformat.read(
        handgraded_course / "solutions" / "handgraded" / "handgraded.ipynb", as_version=4
    )
    copied = nbformat.from_dict(json.loads(json.dumps(solution)))
    assert any("explain" in leak for leak in leaks(solution, copied))
