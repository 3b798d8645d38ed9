"""docs/nbgrader.md, followed command for command on nbgrader's own documentation course.

The course ships inside nbgrader (``docs/source/user_guide``: ``source/ps1`` and the submissions
of bitdiddle and hacker). It is copied into a bare folder, as an nbgrader instructor has it,
with no hookviz file; every ``hookviz`` command in the guide's shell blocks runs there in order,
as written. The one step the guide leaves to a person, filling in the CSV of grades given by
hand, is done here, and so is the Canvas roster an instructor downloads.
"""

from __future__ import annotations

import csv
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.grading_env import private_jupyter_dirs

pytestmark = [pytest.mark.notebook, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[3]
GUIDE = REPO / "docs" / "nbgrader.md"
HOOKVIZ = str(Path(sys.executable).with_name("hookviz"))


def nbgrader_docs_course() -> Path:
    import nbgrader

    return Path(nbgrader.__file__).parent / "docs" / "source" / "user_guide"


def guide_commands() -> list[str]:
    """Every `hookviz ...` line of the guide's shell blocks, in order, comments dropped."""
    commands, in_shell = [], False
    for line in GUIDE.read_text(encoding="utf-8").splitlines():
        stripped = line.strip()
        if stripped.startswith("```"):
            in_shell = stripped == "```bash"
            continue
        if in_shell and stripped.startswith("hookviz "):
            commands.append(re.sub(r"\s+#.*$", "", stripped))
    return commands


def fill_in_grades(csv_path: Path) -> None:
    """What the instructor does in a spreadsheet: full points, a comment, for every row."""
    with csv_path.open(newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    for row in rows:
        row["points"], row["comment"] = row["max_points"], "clear and complete"
    with csv_path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def write_roster(path: Path) -> None:
    """A gradebook as Canvas exports it: student columns, a Points Possible row, the assignment."""
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "ps1"])
        writer.writerow(["    Points Possible", "", "", "", "", "13"])
        writer.writerow(["Bitdiddle, Ben", "1", "s1", "bitdiddle", "A", ""])
        writer.writerow(["Hacker, Alyssa", "2", "s2", "hacker", "A", ""])


def test_the_guide_works_word_for_word_on_nbgraders_documentation_course(tmp_path):
    commands = guide_commands()
    assert commands[:3] == [
        "hookviz import-nbgrader source/ps1",
        "hookviz build",
        "hookviz grade submitted --assignment solutions/ps1 --out out/ps1",
    ]
    assert "hookviz init --from-nbgrader" in commands and len(commands) >= 8
    course = tmp_path / "course"
    docs = nbgrader_docs_course()
    shutil.copytree(docs / "source" / "ps1", course / "source" / "ps1")
    shutil.copytree(docs / "submitted", course / "submitted")
    write_roster(course / "roster.csv")

    said: dict[str, str] = {}
    with private_jupyter_dirs(tmp_path / "jupyter"):
        for command in commands:
            if command.startswith("hookviz merge-manual"):
                fill_in_grades(course / command.split()[-1])
            done = subprocess.run(
                [HOOKVIZ, *command.split()[1:]],
                cwd=course,
                capture_output=True,
                text=True,
                timeout=900,
            )
            assert done.returncode == 0, f"{command}:\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}"
            said[command] = done.stdout + done.stderr

    note = "note: no course.toml in"
    before_init = commands[: commands.index("hookviz init --from-nbgrader")]
    for command in before_init:
        expected = 1 if command.split()[1] in ("import-nbgrader", "build") else 0
        assert said[command].count(note) == expected, (command, said[command][-800:])
    assert note not in said["hookviz site"]  # written down by then
    assert (course / "course.toml").is_file()

    grading = said["hookviz grade submitted --assignment solutions/ps1 --out out/ps1"]
    assert re.search(r"bitdiddle\s+1\.5/10\s", grading) and re.search(r"hacker\s+3/10\s", grading)
    with (course / "out" / "ps1" / "gradebook.csv").open(encoding="utf-8") as f:
        totals = {row["student"]: float(row["problem1"]) for row in csv.DictReader(f)}
    assert totals == {"bitdiddle": 8.5, "hacker": 10.0}  # 1.5 and 3, plus the 7 given by hand
    canvas = (course / "out" / "ps1" / "canvas.csv").read_text(encoding="utf-8")
    assert "bitdiddle" in canvas and "hacker" in canvas
    assert (
        "graded, but in no row of the roster"
        not in said["hookviz gradebook out/ps1 --canvas roster.csv"]
    )
    assert (course / "problem1-autograder.zip").is_file()
    assert (course / "out" / "ps1" / "problem1" / "report.html").is_file()
    site = course / "site"
    assert (site / "assignments" / "ps1-problem1.html").is_file()
    assert "ps1-problem2.html" in (site / "index.html").read_text(encoding="utf-8")
    feedback = json.loads((course / "out" / "ps1" / "problem1" / "gradebook.json").read_text())
    assert feedback  # the gradebook stays readable after the merge
