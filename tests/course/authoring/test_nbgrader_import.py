"""`hookviz import-nbgrader SOURCE_DIR`: an nbgrader source assignment becomes a hookviz one,
and the command says what it changed and what is left to fix."""

from __future__ import annotations

import contextlib
import io
import json
import shutil
from pathlib import Path

import nbformat
import pytest

from hookviz.cli import EXIT_ERROR, EXIT_OK, main
from hookviz.course.format.notebooks import OUTPUTS_SOURCE_KEY, grade_id
from tests.grading_env import private_jupyter_dirs

pytestmark = [pytest.mark.notebook]

ORACLE = Path(__file__).resolve().parents[2] / "fixtures" / "nbgrader" / "oracle"


def hookviz(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(args))
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def course(tmp_path: Path) -> Path:
    (tmp_path / "course.toml").write_text('[course]\nrepository = "https://github.com/a/b"\n')
    return tmp_path


def test_import_copies_the_folder_runs_it_and_says_what_changed(course: Path) -> None:
    source = course / "nbgrader" / "source" / "oracle"
    shutil.copytree(ORACLE, source)
    released = nbformat.read(source / "oracle.ipynb", as_version=4)  # as in a release/ copy
    for cell in released.cells:
        if cell.metadata.get("nbgrader"):
            cell.metadata.nbgrader["checksum"] = "0" * 32
    nbformat.write(released, source / "oracle.ipynb")

    with private_jupyter_dirs(course / "jupyter"):
        code, out, err = hookviz("import-nbgrader", str(source), "--root", str(course))
    assert code == EXIT_OK, err
    target = course / "solutions" / "oracle"
    assert "oracle.ipynb: 3 answers, 4 checks, 1 graded by hand" in out
    assert "copied: autotests.yml, measurements.csv" in out
    assert "dropped 9 nbgrader release fields" in out
    assert "solutions/oracle/oracle.ipynb: ran it and stored its outputs (hookviz run)" in out
    assert (
        "Next: hookviz build, then hookviz grade SUBMISSIONS --assignment solutions/oracle" in out
    )
    for name in ("autotests.yml", "measurements.csv"):
        assert (target / name).read_bytes() == (ORACLE / name).read_bytes()
    notebook = nbformat.read(target / "oracle.ipynb", as_version=4)
    cells = {grade_id(c): c for c in notebook.cells if grade_id(c)}
    assert "checksum" not in json.dumps([c.metadata for c in notebook.cells])
    assert OUTPUTS_SOURCE_KEY in cells["test_squares"].metadata.hookviz  # its outputs stored
    # It ran beside its data file: the cell that reads it ran, and nothing stopped.
    assert cells["load_data"].execution_count == 1 and "running it stopped" not in err
    # What build would stop at is named with its cell, in this same run.
    assert "(grade_id test_cube)" in err and "AUTOTEST" in err

    again, _, err = hookviz("import-nbgrader", str(source), "--root", str(course), "--no-run")
    assert again == EXIT_ERROR and "solutions/oracle already exists; pass --name" in err


def test_import_refuses_what_is_no_assignment_folder(course: Path) -> None:
    code, _, err = hookviz("import-nbgrader", str(course / "nowhere"), "--root", str(course))
    assert code == EXIT_ERROR and "is not a folder; pass an nbgrader source assignment" in err
