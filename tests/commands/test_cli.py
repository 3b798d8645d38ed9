"""The `hookviz` command line: help, argument errors, and errors that name the fix."""

from __future__ import annotations

import contextlib
import io
import shutil
from pathlib import Path

import pytest

from hookviz.cli import main, parser
from tests.tiny_course import TINY


def run(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(list(args))
        except SystemExit as stop:  # argparse exits on bad arguments
            code = stop.code
    return code, out.getvalue(), err.getvalue()


def test_help_lists_both_commands() -> None:
    text = parser().format_help()
    assert "build" in text and "grade" in text


@pytest.mark.parametrize(
    "args, words",
    [
        (["grade", "subs"], "--assignment"),
        (["grade", "subs", "--assignment", "a.ipynb", "-j", "0"], "must be more than 0"),
        (["grade", "subs", "--assignment", "a.ipynb", "--timeout", "-1"], "must be more than 0"),
        (["grade", "subs", "--assignment", "a.ipynb", "--sandbox", "docker"], "invalid choice"),
        (["publish"], "invalid choice"),
    ],
)
def test_bad_arguments_exit_2_and_say_what_is_expected(args, words) -> None:
    code, _, err = run(*args)
    assert code == 2 and words in err


def test_grade_with_a_missing_assignment_names_it(tmp_path: Path) -> None:
    (tmp_path / "subs").mkdir()
    code, _, err = run(
        "grade", str(tmp_path / "subs"), "--assignment", str(tmp_path / "nope.ipynb")
    )
    assert code == 2
    assert "the assignment" in err and "nope.ipynb does not exist" in err


def test_grade_with_no_submissions_says_where_it_looked(tmp_path: Path) -> None:
    shutil.copy(TINY, tmp_path / "tiny.ipynb")
    (tmp_path / "subs").mkdir()
    code, _, err = run(
        "grade", str(tmp_path / "subs"), "--assignment", str(tmp_path / "tiny.ipynb")
    )
    assert code == 2 and "no submissions in" in err and "<student>/tiny.ipynb" in err


def test_grade_with_a_missing_submissions_folder_names_it(tmp_path: Path) -> None:
    shutil.copy(TINY, tmp_path / "tiny.ipynb")
    code, _, err = run(
        "grade", str(tmp_path / "absent"), "--assignment", str(tmp_path / "tiny.ipynb")
    )
    assert code == 2 and "absent does not exist" in err


def test_grade_refuses_an_assignment_without_stored_check_outputs(tmp_path: Path) -> None:
    import nbformat

    notebook = nbformat.read(TINY, as_version=4)
    for cell in notebook.cells:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    nbformat.write(notebook, tmp_path / "tiny.ipynb")
    (tmp_path / "subs").mkdir()
    code, _, err = run(
        "grade", str(tmp_path / "subs"), "--assignment", str(tmp_path / "tiny.ipynb")
    )
    assert (
        code == 2
        and "must end with its sentinel line" in err
        and "run the notebook and save it" in err
    )
