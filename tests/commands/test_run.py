"""`hookviz run`: the stored-output step as a hookviz command, usable outside this repository."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import nbformat
import pytest

from hookviz.cli import EXIT_ERROR, EXIT_OK, main
from hookviz.course.format.notebooks import OUTPUTS_SOURCE_KEY, source_sha256
from tests.grading_env import private_jupyter_dirs

pytestmark = [pytest.mark.notebook]


def run(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["run", *args])
    return code, out.getvalue(), err.getvalue()


def test_run_stores_outputs_and_the_source_they_came_from(tmp_path: Path) -> None:
    (tmp_path / "value.txt").write_text("41")  # the kernel runs beside the notebook
    notebook = nbformat.v4.new_notebook()
    check = nbformat.v4.new_code_cell(
        'print(int(open("value.txt").read()) + 1)\nprint("[hookviz] check_x: finished")',
        metadata={"nbgrader": {"grade": True, "grade_id": "check_x", "points": 1}},
    )
    notebook.cells = [check]
    path = tmp_path / "a.ipynb"
    nbformat.write(notebook, path)
    with private_jupyter_dirs(tmp_path / "jupyter"):
        code, out, _ = run(str(path))
    assert code == EXIT_OK and f"{path}: executed and stored" in out
    stored = nbformat.read(path, as_version=4).cells[0]
    assert "".join(o.text for o in stored.outputs) == "42\n[hookviz] check_x: finished\n"
    assert stored.metadata.hookviz[OUTPUTS_SOURCE_KEY] == source_sha256(check.source)


def test_run_refuses_what_is_not_a_notebook(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("x")
    code, _, err = run(str(tmp_path / "notes.txt"))
    assert code == EXIT_ERROR
    assert "notes.txt is not a notebook file (.ipynb)" in err
