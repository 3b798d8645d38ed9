"""Authoring that cannot silently mis-grade: what `hookviz grade` and `hookviz new` do for the
instructor (issue 11, item 7). The build-time traps are in test_build.py."""

from __future__ import annotations

import contextlib
import io
import json
import shutil
from pathlib import Path

import nbformat
import pytest

from hookviz.cli import main
from hookviz.course.format.notebooks import grade_id, read_notebook
from hookviz.grading.grade.batch import GradeOptions, grade_folder
from hookviz.grading.run.limits import Limits
from tests.grading_env import private_jupyter_dirs
from tests.tiny_course import REPO, TINY

pytestmark = [pytest.mark.notebook, pytest.mark.slow]

OPTIONS = GradeOptions(
    jobs=2, limits=Limits(cell_timeout=30, submission_timeout=120, memory_mb=3072)
)


@pytest.fixture(autouse=True)
def jupyter_home(tmp_path_factory):
    with private_jupyter_dirs(tmp_path_factory.mktemp("jupyter-home")):
        yield


def run(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(args))
    return code, out.getvalue(), err.getvalue()


def cell(notebook, gid: str):
    return next(c for c in notebook.cells if grade_id(c) == gid)


def one_student(folder: Path) -> Path:
    """A submissions folder with one student who hands in the solution."""
    (folder / "subs").mkdir()
    shutil.copy(TINY, folder / "subs" / "ann.ipynb")
    return folder / "subs"


def test_grade_refuses_a_check_cell_edited_after_its_output_was_stored(tmp_path: Path) -> None:
    notebook = nbformat.read(TINY, as_version=4)
    check = cell(notebook, "check_shout")
    check.source = check.source.replace("✓ shout works", "✓ shout() works")  # not run again
    nbformat.write(notebook, tmp_path / "tiny.ipynb")
    code, _, err = run(
        "grade", str(one_student(tmp_path)), "--assignment", str(tmp_path / "tiny.ipynb")
    )
    assert code == 2
    assert "tiny.ipynb, code cell 5 (grade_id check_shout)" in err
    assert "was edited after its output was stored" in err and "hookviz run" in err
    assert not (tmp_path / "gradebook-out").exists()


def test_grade_stops_unless_the_instructors_own_notebook_scores_full_marks(tmp_path: Path) -> None:
    # A stored output that the check cell does not print (a changed hints file, a check that
    # prints something new on every run...): every student would fail it.
    notebook = nbformat.read(TINY, as_version=4)
    output = cell(notebook, "check_shout").outputs[0]
    output.text = output.text.replace("✓ shout works", "✓ shout works!")
    nbformat.write(notebook, tmp_path / "tiny.ipynb")
    subs, out = one_student(tmp_path), tmp_path / "out"
    code, _, err = run(
        "grade", str(subs), "--assignment", str(tmp_path / "tiny.ipynb"), "--out", str(out)
    )
    assert code == 2, err
    assert "your own notebook, graded as a submission, scores 4 / 5" in err
    assert "Nothing was graded" in err
    assert (
        "check_shout: mismatch: line 1 is '✓ shout works', the stored output has '✓ shout works!'"
        in err
    )
    assert "hookviz run" in err
    assert (
        list((out / "results").glob("*.json")) == [] and not (out / "solution-check.json").exists()
    )

    shutil.copy(TINY, tmp_path / "tiny.ipynb")  # fixed: now it grades, and remembers the verdict
    stream = io.StringIO()
    summary = grade_folder(subs, tmp_path / "tiny.ipynb", out, OPTIONS, stream=stream)
    assert [r.total for r in summary.results] == [
        5
    ] and "grading your own tiny.ipynb first" in stream.getvalue()
    assert json.loads((out / "solution-check.json").read_text())["full_marks"] is True
    stream = io.StringIO()
    grade_folder(subs, tmp_path / "tiny.ipynb", out, OPTIONS, stream=stream)
    assert "grading your own" not in stream.getvalue()  # the same notebook: not graded again


def test_hookviz_new_scaffolds_an_assignment_that_builds_and_grades_cleanly(tmp_path: Path) -> None:
    course = tmp_path / "course"
    course.mkdir()
    # the repository's course.toml, English only (a Korean build would want translations)
    toml = (REPO / "course.toml").read_text(encoding="utf-8")
    (course / "course.toml").write_text(toml.split("\n[i18n]")[0] + "\n", encoding="utf-8")
    assert "[i18n]" in toml and "[i18n]" not in (course / "course.toml").read_text()
    assert run("new", "7-demo", "--root", str(course))[0] == 2  # not NN-name
    code, out, err = run("new", "07-demo", "--root", str(course))
    assert code == 0, err
    assert "hookviz run solutions/07-demo.ipynb" in out
    code, _, err = run("new", "07-other", "--root", str(course))
    assert code == 2 and "07-demo.ipynb already exists" in err

    assert run("build", "--root", str(course))[0] == 0
    code, out, _ = run("build", "--check", "--root", str(course))
    assert code == 0 and "2 notebooks up to date" in out
    solution = read_notebook(course / "solutions" / "07-demo.ipynb")
    counts = [c.execution_count for c in solution.cells if c.cell_type == "code"]
    assert counts == list(range(1, len(counts) + 1))  # one top-to-bottom run, nbval-ready

    subs = tmp_path / "subs"
    subs.mkdir()
    shutil.copy(course / "solutions" / "07-demo.ipynb", subs / "solver.ipynb")
    shutil.copy(course / "exercises" / "07-demo.ipynb", subs / "starter.ipynb")
    wrong = read_notebook(course / "exercises" / "07-demo.ipynb")
    cell(
        wrong, "count_parameters"
    ).source = "def count_parameters(model):\n    return len(list(model.parameters()))\n"
    nbformat.write(wrong, subs / "wrong.ipynb")
    summary = grade_folder(subs, course / "solutions" / "07-demo.ipynb", tmp_path / "out", OPTIONS)
    by_student = {r.student: r for r in summary.results}
    assert (by_student["solver"].total, by_student["solver"].status) == (1, "ok")
    assert (by_student["starter"].total, by_student["starter"].status) == (0, "no-answers")
    assert (by_student["wrong"].total, by_student["wrong"].status) == (0, "ok")
    feedback = (tmp_path / "out" / "feedback" / "wrong.md").read_text()
    assert "✗ it counts every number in the parameters of a Linear(3, 2)" in feedback
    assert "Count numbers, not tensors" in feedback
