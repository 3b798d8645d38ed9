"""An assignment of several notebooks, graded in one run into one gradebook; the grades given by
hand in one notebook reach the combined gradebook when merged."""

from __future__ import annotations

import contextlib
import csv
import io
import json
import shutil
from pathlib import Path

import nbformat
import pytest

from hookviz.cli import main
from hookviz.course.authoring.build import build_course
from hookviz.course.format.notebooks import grade_id
from tests.grading_env import private_jupyter_dirs
from tests.tiny_course import TINY, right_answers

pytestmark = [pytest.mark.notebook, pytest.mark.slow]

HANDGRADED = Path(__file__).resolve().parents[2] / "fixtures" / "handgraded"


def answered(path: Path, answers: dict[str, str]):
    notebook = nbformat.read(path, as_version=4)
    for cell in notebook.cells:
        if grade_id(cell) in answers:
            cell.source = answers[grade_id(cell)]
    return notebook


def test_a_folder_of_notebooks_is_graded_into_one_gradebook(tmp_path: Path) -> None:
    course = tmp_path / "course"
    shutil.copytree(HANDGRADED, course / "solutions" / "set1")
    shutil.copy(TINY, course / "solutions" / "set1" / "tiny.ipynb")
    (course / "course.toml").write_text('[course]\nrepository = "https://github.com/a/b"\n')
    build_course(course)
    exercises = course / "exercises" / "set1"
    submissions = tmp_path / "submitted"
    for student, count in (("ada", "return WORDS.count(word)"), ("bob", "return 0")):
        folder = submissions / student / "set1"  # nbgrader's submitted/<student>/<assignment>/
        folder.mkdir(parents=True)
        words = {"count": f"def count(word):\n    {count}\n", "explain": f"{student} explains"}
        nbformat.write(answered(exercises / "handgraded.ipynb", words), folder / "handgraded.ipynb")
        nbformat.write(answered(exercises / "tiny.ipynb", right_answers()), folder / "tiny.ipynb")
    out = tmp_path / "out"
    args = ["grade", str(submissions), "--assignment", str(course / "solutions" / "set1")]
    args += ["--out", str(out), "-j", "2", "--timeout", "10", "--memory-mb", "3072"]
    printed = io.StringIO()
    with private_jupyter_dirs(tmp_path / "jupyter"), contextlib.redirect_stderr(io.StringIO()):
        with contextlib.redirect_stdout(printed):
            assert main(args) == 0
    assert f"gradebook: {out / 'gradebook.csv'}" in printed.getvalue()
    with open(out / "gradebook.csv", encoding="utf-8") as handle:
        rows = {row["student"]: row for row in csv.DictReader(handle)}
    assert rows["ada"]["handgraded"] == "2" and rows["ada"]["tiny"] == "5"
    assert rows["ada"]["total"] == "7" and rows["bob"]["total"] == "5"
    assert rows["ada"]["handgraded/check_count"] == "2"
    assert rows["bob"]["tiny/check_double"] == "2"
    document = json.loads((out / "gradebook.json").read_text())
    assert document["max_total"] == 8 + 5 and document["notebooks"] == ["handgraded", "tiny"]

    filled = tmp_path / "filled.csv"
    filled.write_text(
        "student,question,points,comment,max_points\nada,explain,3,Good.,3\n", encoding="utf-8"
    )
    with contextlib.redirect_stdout(io.StringIO()):
        assert main(["merge-manual", str(out / "handgraded"), str(filled)]) == 0
    with open(out / "gradebook.csv", encoding="utf-8") as handle:
        rows = {row["student"]: row for row in csv.DictReader(handle)}
    assert rows["ada"]["total"] == "10" and rows["ada"]["handgraded/explain"] == "3"
