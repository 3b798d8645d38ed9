"""`hookviz build` on a course as instructors bring it: assignments as folders (data and helper
modules beside the notebook ship with the exercise), and every error found in one run."""

from __future__ import annotations

import shutil
from pathlib import Path

import nbformat
import pytest

from hookviz.course.authoring.build import build_course
from hookviz.course.format.notebooks import NotebookError, grade_id
from tests.tiny_course import TINY

HANDGRADED = Path(__file__).resolve().parents[2] / "fixtures" / "handgraded"


@pytest.fixture
def course(tmp_path: Path) -> Path:
    (tmp_path / "course.toml").write_text('[course]\nrepository = "https://github.com/a/b"\n')
    (tmp_path / "solutions").mkdir()
    shutil.copytree(HANDGRADED, tmp_path / "solutions" / "handgraded")
    shutil.copy(TINY, tmp_path / "solutions" / "01-tiny.ipynb")
    return tmp_path


def test_files_beside_a_notebook_ship_with_its_exercise(course: Path) -> None:
    report = build_course(course)
    exercises = course / "exercises" / "handgraded"
    for name in ("words.txt", "wordtools.py"):
        assert (exercises / name).read_bytes() == (HANDGRADED / name).read_bytes()
    assert "exercises/handgraded/words.txt" in report.stale
    assert build_course(course, check=True).stale == []
    (course / "solutions" / "handgraded" / "words.txt").write_text("kiwi\n")
    assert build_course(course, check=True).stale == ["exercises/handgraded/words.txt"]


def break_cell(path: Path, gid: str, **meta) -> None:
    notebook = nbformat.read(path, as_version=4)
    for cell in notebook.cells:
        if grade_id(cell) == gid:
            cell.metadata.nbgrader.update(meta)
    nbformat.write(notebook, path)


def test_build_reports_every_error_in_one_run_and_writes_nothing(course: Path) -> None:
    break_cell(course / "solutions" / "01-tiny.ipynb", "check_shout", points="two")
    break_cell(course / "solutions" / "01-tiny.ipynb", "check_triple", points=-1)
    break_cell(course / "solutions" / "handgraded" / "handgraded.ipynb", "explain", points=None)
    (course / "exercises").mkdir()
    nbformat.write(nbformat.v4.new_notebook(), course / "exercises" / "stray.ipynb")
    with pytest.raises(NotebookError) as caught:
        build_course(course)
    message = str(caught.value)
    assert message.startswith("4 problems; nothing was written:")
    assert "01-tiny.ipynb, code cell 5 (grade_id check_shout): a check cell needs points" in message
    assert (
        "01-tiny.ipynb, code cell 7 (grade_id check_triple): a check cell needs points" in message
    )
    assert "(grade_id explain): a question graded by hand needs points" in message
    assert "exercises/stray.ipynb has no solution" in message
    assert sorted(p.name for p in (course / "exercises").iterdir()) == ["stray.ipynb"]


def test_an_assignment_takes_the_files_beside_it_not_other_assignments(tmp_path: Path) -> None:
    from hookviz.grading.core.merge import assignment_files

    for name, text in {
        "a.ipynb": "{}",
        "data.csv": "x",
        "data/more.txt": "y",
        ".hidden": "h",
        "other/b.ipynb": "{}",  # another assignment's folder
        "other/picture.png": "p",
        "out/assignment.json": "{}",  # an out folder of hookviz grade
        "out/gradebook.csv": "student",
    }.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    files = assignment_files(tmp_path / "a.ipynb")
    assert sorted(p.relative_to(tmp_path).as_posix() for p in files) == [
        "data.csv",
        "data/more.txt",
    ]
