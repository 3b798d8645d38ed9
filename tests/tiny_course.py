"""The tiny assignment the build, CLI and grading tests share, and its batch of students.

The instructor's notebook is tests/fixtures/grading/tiny.ipynb (double: 2 points, shout: 1,
triple: 2). CASES are issue 5's honest and hostile students made from it; grade_batch grades
them all at once, and tests/conftest.py's ``graded_batch`` fixture does so once per run for
every file that reads the batch.
"""

from __future__ import annotations

import copy
import functools
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

import nbformat

from hookviz.course.authoring.build import exercise_from_solution
from hookviz.course.authoring.stamp import CourseConfig
from hookviz.course.format import regions
from hookviz.course.format.notebooks import grade_id, is_check
from hookviz.grading.grade.batch import GradeOptions, Summary, grade_folder
from hookviz.grading.run.limits import Limits

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "tests" / "fixtures" / "grading"
TINY = FIXTURES / "tiny.ipynb"
CONFIG = CourseConfig("https://github.com/a/b", "main", "a", "b", colab=True)
CELL_TIMEOUT = 10.0  # long enough for `import torch` on a busy 2-core machine
OPTIONS = GradeOptions(
    jobs=2, limits=Limits(cell_timeout=CELL_TIMEOUT, submission_timeout=90, memory_mb=3072)
)


def solution() -> nbformat.NotebookNode:
    return copy.deepcopy(_solution())


def exercise() -> nbformat.NotebookNode:
    """What students get: stubs, no hidden tests, no outputs."""
    return copy.deepcopy(_exercise())


@functools.cache  # read and built once: CASES makes some thirty students at import
def _solution() -> nbformat.NotebookNode:
    return nbformat.read(TINY, as_version=4)


@functools.cache
def _exercise() -> nbformat.NotebookNode:
    return exercise_from_solution(
        _solution(), CONFIG, "solutions/tiny.ipynb", "exercises/tiny.ipynb"
    )


def right_answers() -> dict[str, str]:
    return {
        grade_id(c): regions.strip_solution_markers(c.source)
        for c in solution().cells
        if grade_id(c) in ("double", "shout", "triple")
    }


def student(answers: dict[str, str] | None = None, mutate=None) -> nbformat.NotebookNode:
    """The exercise with the right answers, some replaced by ``answers``, then ``mutate``d."""
    notebook = exercise()
    sources = {**right_answers(), **(answers or {})}
    for cell in notebook.cells:
        if grade_id(cell) in sources:
            cell.source = sources[grade_id(cell)]
    if mutate:
        mutate(notebook)
    return notebook


def checks_of(notebook) -> list:
    return [c for c in notebook.cells if is_check(c)]


def paste_outputs(notebook) -> None:
    """Copy the solution's outputs into the check cells, as if they had run."""
    stored = {grade_id(c): c for c in checks_of(solution())}
    for cell in checks_of(notebook):
        cell.outputs = copy.deepcopy(stored[grade_id(cell)].outputs)
        cell.execution_count = stored[grade_id(cell)].execution_count


def edit_checks(notebook) -> None:
    for cell in checks_of(notebook):
        gid = grade_id(cell)
        expected = {
            "check_double": "✓ double(2) is 4",
            "check_shout": "✓ shout works",
            "check_triple": "✓ triple(5) is 15",
        }
        cell.source = f'print("{expected[gid]}")\nprint("[hookviz] {gid}: finished")'


def delete_checks(notebook) -> None:
    notebook.cells = [c for c in notebook.cells if not is_check(c)]


def duplicate_check(notebook) -> None:
    first = checks_of(notebook)[0]
    notebook.cells.insert(
        notebook.cells.index(first), nbformat.from_dict({**copy.deepcopy(first), "id": "dup"})
    )


def reorder_checks(notebook) -> None:
    checks = checks_of(notebook)
    notebook.cells = [c for c in notebook.cells if not is_check(c)] + list(reversed(checks))


def claim_points(notebook) -> None:
    checks_of(notebook)[0].metadata.nbgrader["points"] = 100


WRONG_DOUBLE = "def double(x):\n    return 2 + x\n"
CASES = {
    "correct": student(),
    "partly_wrong": student({"double": WRONG_DOUBLE}),
    "raises": student({"shout": 'def shout(text):\n    raise ValueError("boom")\n'}),
    "infinite_loop": student({"double": "def double(x):\n    while True:\n        pass\n"}),
    "unstoppable_loop": student(
        {
            # ipykernel restores its SIGINT handler before each cell: ignore it from inside.
            "double": "import signal\n\ndef double(x):\n"
            "    signal.signal(signal.SIGINT, signal.SIG_IGN)\n    while True:\n        pass\n"
        }
    ),
    "os_exit": student({"shout": "import os\n\ndef shout(text):\n    os._exit(3)\n"}),
    "memory_bomb": student(
        {
            "triple": "def triple(x):\n    hoard = []\n    while True:\n        hoard.append(bytes(2**30))\n"
        }
    ),
    "output_flood": student(
        {
            "double": "def double(x):\n    for _ in range(30_000):\n        print('flood ' * 10)\n    return 2 * x\n"
        }
    ),
    "fork_bomb": student(
        {
            # posix_spawn, not os.fork: forking a kernel with torch loaded takes some 70 ms on a
            # busy 2-core machine, and 240 forks outlast the cell timeout before the limit bites.
            "shout": "import os\n\ndef shout(text):\n    started = 0\n    try:\n"
            "        for _ in range(3000):\n"
            "            os.posix_spawn('/bin/sleep', ['sleep', '120'], {})\n            started += 1\n"
            "    finally:\n        print(f'{started} processes started')\n"
            "    return text.upper() + '!'\n"
        }
    ),
    "pasted_outputs": student(  # only shout written; every check's output pasted
        {
            gid: regions.replace_solutions(src)
            for gid, src in (
                (grade_id(c), c.source)
                for c in solution().cells
                if grade_id(c) in ("double", "triple")
            )
        },
        paste_outputs,
    ),
    "blank": exercise(),  # handed in as handed out
    "edited_checks": student(
        {"double": WRONG_DOUBLE, "shout": "def shout(t):\n    return t\n"}, edit_checks
    ),
    "deleted_checks": student(mutate=delete_checks),
    "duplicated_checks": student(mutate=duplicate_check),
    "reordered_checks": student(mutate=reorder_checks),
    "changed_points": student(mutate=claim_points),
    "showtraceback": student(
        {
            "double": "from IPython.core.interactiveshell import InteractiveShell\n"
            "InteractiveShell.showtraceback = lambda self, *args, **kwargs: None\n"
            "get_ipython().showtraceback = lambda *args, **kwargs: None\n\n"
            "def double(x):\n    return 4 if x == 2 else 0\n"
        }
    ),
    "checks_monkeypatched": student(
        {
            "triple": "from hookviz.course import checks\n"
            "checks.difference = lambda actual, expected, **kwargs: None\n\n"
            "def triple(x):\n    return 0\n"
        }
    ),
    "sentinel_printed": student(
        {
            "double": "def double(x):\n    print('✓ double(2) is 4')\n    print('[hookviz] check_double: finished')\n"
            "    return 2 + x\n"
        }
    ),
    "no_answers": None,
    "invalid_json": None,
    "empty_file": None,
    "old_format": None,
    "missing": None,
    "deep": student(),
}


def write_submissions(folder: Path) -> None:
    """Every case as a student hands it in: a notebook, a folder, a broken or an old file."""
    for name, notebook in CASES.items():
        if notebook is not None and name not in ("correct", "deep"):
            nbformat.write(notebook, folder / f"{name}.ipynb")
    (folder / "correct").mkdir()
    nbformat.write(CASES["correct"], folder / "correct" / "tiny.ipynb")
    (folder / "deep" / "tiny").mkdir(parents=True)
    nbformat.write(CASES["deep"], folder / "deep" / "tiny" / "tiny.ipynb")
    (folder / "missing").mkdir()
    (folder / "missing" / "notes.txt").write_text("I forgot to upload it")
    (folder / "invalid_json.ipynb").write_text('{"cells": [ not json')
    (folder / "empty_file.ipynb").write_text("")
    prose = nbformat.v4.new_notebook()
    prose.cells = [nbformat.v4.new_markdown_cell("I did not do the exercises.")]
    nbformat.write(prose, folder / "no_answers.ipynb")
    # nbformat 3: worksheets and `input`, and no nbgrader metadata: matched by the functions defined.
    v3 = nbformat.v3
    cells = [v3.new_code_cell(input=src) for src in right_answers().values()]
    old = v3.new_notebook(worksheets=[v3.new_worksheet(cells=cells)])
    (folder / "old_format.ipynb").write_text(v3.writes_json(old))


@dataclass(frozen=True)
class GradedBatch:
    """The batch as graded: its folder (tiny.ipynb, submitted/, out/), the summary, the time."""

    root: Path
    summary: Summary
    seconds: float

    @property
    def out(self) -> Path:
        return self.root / "out"


def grade_batch(root: Path) -> GradedBatch:
    """Grade every case once, in ``root``."""
    shutil.copy(TINY, root / "tiny.ipynb")
    (root / "submitted").mkdir()
    write_submissions(root / "submitted")
    started = time.monotonic()
    summary = grade_folder(root / "submitted", root / "tiny.ipynb", root / "out", OPTIONS)
    return GradedBatch(root, summary, time.monotonic() - started)
