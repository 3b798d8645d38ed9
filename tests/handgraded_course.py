"""tests/fixtures/handgraded as a course: built, and handed in by three students.

The assignment has questions graded by hand (a markdown answer, a code answer, a task) and a
data file and helper module beside the notebook. ada answers everything, bob writes a wrong
count and no hand-graded answer, cy hands in nothing. The manual-grading, Gradescope and
cluster tests grade it.
"""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import nbformat

from hookviz.course.authoring.build import build_course
from hookviz.course.format.notebooks import grade_id

HANDGRADED = Path(__file__).resolve().parent / "fixtures" / "handgraded"
ADA_ESSAY = "It reads the file once. <script>alert('x')</script> & then counts **in memory**."
QUESTIONS = ("explain", "sorted_words", "task_other_text")
RIGHT_COUNT = "def count(word):\n    return WORDS.count(word)\n"  # needs words.txt beside it


def submission(exercise, answers: dict[str, str], task_cells: list | None = None):
    """The exercise with ``answers`` (grade_id: source) filled in, ``task_cells`` after the task."""
    notebook = nbformat.from_dict(json.loads(json.dumps(exercise)))
    for cell in notebook.cells:
        if grade_id(cell) in answers:
            cell.source = answers[grade_id(cell)]
    if task_cells:
        at = next(i for i, c in enumerate(notebook.cells) if grade_id(c) == "task_other_text")
        notebook.cells[at + 1 : at + 1] = task_cells
    return notebook


def build(root: Path) -> tuple[Path, nbformat.NotebookNode]:
    """The course in ``root/course``, built: the solution's path and the students' exercise."""
    course = root / "course"
    (course / "solutions").mkdir(parents=True)
    (course / "course.toml").write_text('[course]\nrepository = "https://github.com/a/b"\n')
    shutil.copytree(HANDGRADED, course / "solutions" / "handgraded")
    build_course(course)
    exercise = nbformat.read(course / "exercises" / "handgraded" / "handgraded.ipynb", as_version=4)
    return course / "solutions" / "handgraded" / "handgraded.ipynb", exercise


def hand_in(exercise, students: Path) -> None:
    """ada's, bob's and cy's folders in ``students``."""
    ada = submission(
        exercise,
        {"count": RIGHT_COUNT, "explain": ADA_ESSAY, "sorted_words": "print(sorted(set(WORDS)))"},
        [
            nbformat.v4.new_markdown_cell("I counted a poem:"),
            nbformat.v4.new_code_cell('print(len("a b c".split()))'),
        ],
    )
    bob = submission(exercise, {"count": "def count(word):\n    return 1\n"})
    for name, notebook in (("ada", ada), ("bob", bob)):
        (students / name).mkdir(parents=True)
        nbformat.write(notebook, students / name / "handgraded.ipynb")
    (students / "cy").mkdir()


def write_csv(path: Path, rows: list[list[str]]) -> Path:
    """A filled-in manual-grades CSV: student, question, points, comment, max_points."""
    with open(path, "w", newline="", encoding="utf-8") as handle:
        csv.writer(handle).writerows(
            [["student", "question", "points", "comment", "max_points"], *rows]
        )
    return path
