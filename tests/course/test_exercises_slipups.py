"""Slip-ups in the student's notebook get a short note that names the cell to run, never a traceback.

Each student notebook of exercises/ runs in a fresh kernel, cell by cell as a student might:
a check cell before the setup cell, then every check cell before its answer cell, then each
answer defined under another name. None of these is the answer being wrong, so no check may
stop at a ``NameError`` of its own.
"""

from __future__ import annotations

import ast
from pathlib import Path

import nbformat
import pytest

from hookviz.course.checks import NOT_DONE
from hookviz.course.wording import words
from tests.course.test_exercises_mutants import Kernel, grading
from tests.helpers import notebook_runner

pytestmark = pytest.mark.notebook

EXERCISES = sorted(Path("exercises").glob("[0-9][0-9]-*.ipynb"))


def code_cells(path: Path) -> list:
    return [cell for cell in nbformat.read(path, as_version=4).cells if cell.cell_type == "code"]


def answer_names(source: str) -> list[str]:
    """The functions and classes an answer cell defines, in order."""
    tree = ast.parse(source)
    return [n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))]


@pytest.fixture(scope="module")
def fresh_kernel(tmp_path_factory):
    """A function that starts a new kernel; every kernel it started is stopped at the end."""
    env = notebook_runner().isolated_env(tmp_path_factory.mktemp("slipup-settings"))
    started: list[Kernel] = []

    def start() -> Kernel:
        started.append(Kernel(tmp_path_factory.mktemp("slipups"), env))
        return started[-1]

    yield start
    for kernel in started:
        kernel.stop()


@pytest.mark.parametrize("path", EXERCISES, ids=[p.stem for p in EXERCISES])
def test_check_cells_run_too_early_name_the_cell_to_run(fresh_kernel, path: Path):
    cells = code_cells(path)
    checks = [c for c in cells if grading(c).get("grade")]
    assert checks, path
    kernel = fresh_kernel()

    # 1. A check cell first, in a new kernel (or just after a restart): the setup cell is named.
    for cell in checks:
        outcome = kernel.run(cell.source)
        assert not outcome.stdout.startswith("✓"), outcome.stdout
        assert outcome.traceback and len(outcome.traceback) == 1, (grading(cell), outcome)
        assert "The setup cell has not run in this kernel" in outcome.traceback[0]
        assert "NameError" not in outcome.error, outcome.error

    # 2. The setup and the given cells run, but no answer cell: each check says what to run.
    for cell in cells:
        meta = grading(cell)
        if meta.get("solution"):
            continue
        outcome = kernel.run(cell.source)
        if not meta.get("grade"):
            continue  # a "try it" cell may fail on the missing answer: that is its job
        where = f"{path.name} {meta['grade_id']}:\n{outcome.stdout}\n{outcome.error}"
        assert "NameError" not in outcome.error and not outcome.traceback, where
        assert outcome.stdout.startswith(NOT_DONE) and "not defined" in outcome.stdout, where
        assert "✗" not in outcome.stdout, f"a missing answer is not a wrong one: {where}"


def test_a_korean_check_run_too_early_says_so_in_korean(fresh_kernel):
    """The Korean exercises' guards name the language: nothing has set it in a fresh kernel."""
    kernel = fresh_kernel()
    for path in sorted(Path("ko/exercises").glob("[0-9][0-9]-*.ipynb")):
        name = path.stem  # each assignment's setup cell loads checks.assignment(its file name)
        for cell in [c for c in code_cells(path) if grading(c).get("grade")]:
            outcome = kernel.run(cell.source)
            note = words("checks.setup_not_run", "ko", name=name)
            assert outcome.traceback and note in outcome.traceback[0], (path, outcome)
    # the same kernel, the English cells: English again (the Korean guard set nothing)
    english = [c for c in code_cells(EXERCISES[0]) if grading(c).get("grade")][0]
    note = words("checks.setup_not_run", "en", name=EXERCISES[0].stem)
    assert note in kernel.run(english.source).traceback[0]


@pytest.mark.parametrize("path", EXERCISES, ids=[p.stem for p in EXERCISES])
def test_a_renamed_answer_is_named_with_the_name_the_check_wants(fresh_kernel, path: Path):
    cells = code_cells(path)
    solutions = {
        grading(c)["grade_id"]: c.source
        for c in nbformat.read(Path("solutions") / path.name, as_version=4).cells
        if grading(c).get("solution")
    }
    kernel = fresh_kernel()
    for cell in cells:
        meta = grading(cell)
        if not meta.get("grade"):
            source = solutions.get(meta.get("grade_id"), cell.source)
            kernel.run(source)  # the solution's answers, so that later exercises have theirs
            continue
        wanted = next((n for n, s in solutions.items() if meta["grade_id"] == f"check_{n}"), None)
        if wanted is None or not answer_names(solutions[wanted]):
            continue
        name = answer_names(solutions[wanted])[0]
        renamed = f"my_{name}"
        kernel.run(f"{renamed} = {name}\ndel {name}")
        outcome = kernel.run(cell.source)
        where = f"{path.name} {meta['grade_id']}:\n{outcome.stdout}\n{outcome.error}"
        assert "NameError" not in outcome.error and not outcome.traceback, where
        assert f"{name} is not defined yet" in outcome.stdout, where
        assert renamed in outcome.stdout, f"the check does not name the function it found: {where}"
        kernel.run(f"{name} = {renamed}")  # put it back for the exercises that follow
