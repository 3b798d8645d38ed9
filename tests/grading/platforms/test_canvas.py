"""`hookviz gradebook OUT --canvas ROSTER.csv`: the graded batch, in the layout Canvas imports back.

The roster is written as Canvas exports a gradebook (student columns, a "Points Possible" row,
other assignments and the read-only totals), with the batch's students among people who were
not graded. The file written must pass the header rules of Canvas's own importer
(GradebookImporter#header? and #update_column_count in instructure/canvas-lms), keep every
student cell as it was, and score each student once by SIS Login ID or SIS User ID.
"""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path

import pytest

from hookviz.cli import main
from hookviz.grading.platforms.canvas import canvas_gradebook

pytestmark = [pytest.mark.notebook, pytest.mark.slow]

HEADER = [
    "Student", "ID", "SIS User ID", "SIS Login ID", "Section", "Quiz 1 (101)", "tiny (202)",
    "Current Points", "Final Points", "Current Score", "Unposted Current Score", "Final Score",
]  # fmt: skip
POINTS_ROW = ["    Points Possible", "", "", "", "", "10", "5", "(read only)", "(read only)",
              "(read only)", "(read only)", "(read only)"]  # fmt: skip
MUTED_ROW = ["", "", "", "", "", "", "Manual Posting", "", "", "", "", ""]


def roster_rows() -> list[list[str]]:
    """Students matched by login, by SIS id (another case), one by both, and people not graded."""
    people = [
        # Student, ID, SIS User ID, SIS Login ID, Section: how each is found
        ["Doe, Jane", "9001", "00123", "correct", "Sec A"],  # login; a SIS id with a leading zero
        ["Roe, Rick", "9002", "partly_wrong", "rroe@uni.example", "Sec A"],  # SIS id
        ["Poe, Ed", "9003", "s-3", "OS_EXIT", "Sec B"],  # login, in other capitals
        ["Test, Student", "9004", "", "", ""],  # Canvas's test student: never graded
        ["Moe, Al", "9005", "s-5", "amoe", "Sec B"],  # in the roster, not graded
        ["Lee, Ann", "9006", "deep", "alee", "Sec A"],  # "deep" is her SIS id...
        ["Kim, Bo", "9007", "s-7", "deep", "Sec B"],  # ...and his login: no score for either
    ]
    return [person + ["7", "", "7", "7", "70%", "70%", "70%"] for person in people]


def write_roster(path: Path, delimiter: str = ",", bom: bool = True, newline: str = "\r\n") -> list:
    rows = [HEADER, POINTS_ROW, MUTED_ROW, *roster_rows()]
    table = io.StringIO()
    csv.writer(
        table, delimiter=delimiter, lineterminator=newline, quoting=csv.QUOTE_MINIMAL
    ).writerows(rows)
    path.write_bytes((("\ufeff" if bom else "") + table.getvalue()).encode())
    return rows


def canvas_accepts_header(row: list[str]) -> int:
    """Canvas's importer's header rules: the number of student columns, or 0 when it rejects it."""
    if not (len(row) > 3 and "Student" in row[0] and "ID" in row[1]):
        return 0
    columns = 3
    if re.match(r"SIS\s+Login\s+ID", row[2]):
        columns += 1
    elif re.match(r"SIS\s+User\s+ID", row[2]) and re.match(r"SIS\s+Login\s+ID", row[3]):
        extra = 1 if re.match(r"Integration\s+ID", row[4]) else 0
        columns += 2 + extra
        if re.match(r"Root\s+Account", row[4 + extra]):
            columns += 1
    return columns if "Section" in row[columns - 1] else 0


def read_back(path: Path, delimiter: str = ",") -> tuple[str, list[list[str]]]:
    data = path.read_bytes().decode()
    return data, list(
        csv.reader(io.StringIO(data.removeprefix("\ufeff"), newline=""), delimiter=delimiter)
    )


def totals(batch) -> dict[str, str]:
    document = json.loads((batch.out / "gradebook.json").read_text())
    return {s["student"]: f"{s['total']:g}" for s in document["students"]}


@pytest.mark.parametrize(
    "delimiter, bom, newline", [(",", True, "\r\n"), (";", False, "\n")], ids=["comma", "semicolon"]
)
def test_the_gradebook_in_canvas_layout(
    graded_batch, tmp_path: Path, delimiter, bom, newline
) -> None:
    rows = write_roster(tmp_path / "roster.csv", delimiter, bom, newline)
    export = canvas_gradebook(graded_batch.out, tmp_path / "roster.csv", tmp_path / "canvas.csv")
    data, written = read_back(tmp_path / "canvas.csv", delimiter)
    # The roster's own encoding, separator and line ends.
    assert data.startswith("\ufeff") == bom
    assert ("\r\n" in data) == (newline == "\r\n")
    # Its student columns, then this assignment's column (the roster's own "tiny (202)": Canvas updates it).
    assert written[0] == HEADER[:5] + ["tiny (202)"]
    assert canvas_accepts_header(written[0]) == 5
    assert written[1] == POINTS_ROW[:5] + ["5"]
    assert all(len(row) == 6 for row in written)
    people = rows[3:]  # the Manual Posting row describes other assignments: left out
    assert [row[:5] for row in written[2:]] == [
        person[:5] for person in people
    ]  # kept as they were
    scores = {row[0]: row[5] for row in written[2:]}
    graded = totals(graded_batch)
    assert scores == {
        "Doe, Jane": graded["correct"],
        "Roe, Rick": graded["partly_wrong"],
        "Poe, Ed": graded["os_exit"],
        "Test, Student": "",
        "Moe, Al": "",
        "Lee, Ann": "",  # "deep" matches two rows: a person must decide
        "Kim, Bo": "",
    }
    assert (graded["correct"], graded["partly_wrong"], graded["os_exit"]) == ("5", "3", "2")
    assert export.matched == {"correct": "login", "partly_wrong": "SIS id", "os_exit": "login"}
    assert export.ambiguous == ["deep"]
    assert sorted(export.not_in_roster) == sorted(
        set(graded) - {"correct", "partly_wrong", "os_exit", "deep"}
    )
    assert export.not_graded == [
        "Test, Student (no login or SIS id)",
        "Moe, Al (amoe)",
        "Lee, Ann (alee)",
        "Kim, Bo (deep)",
    ]
    assert export.points_possible == 5


def test_the_command_names_who_could_not_be_placed(graded_batch, tmp_path: Path, capsys) -> None:
    write_roster(tmp_path / "roster.csv")
    out = graded_batch.out
    assert (
        main(
            [
                "gradebook",
                str(out),
                "--canvas",
                str(tmp_path / "roster.csv"),
                "-o",
                str(tmp_path / "c.csv"),
                "--column",
                "Lab 1",
            ]
        )
        == 0
    )
    captured = capsys.readouterr()
    assert "3 scores in the column 'Lab 1' (out of 5)" in captured.out
    assert "graded, but in no row of the roster (no score written): " in captured.err
    assert (
        "matching more than one row, or a row another student matches (no score written): deep"
        in captured.err
    )
    assert "Moe, Al (amoe)" in captured.err
    assert (
        read_back(tmp_path / "c.csv")[1][0][-1] == "Lab 1"
    )  # a new assignment for Canvas to create


def test_a_file_that_is_not_a_canvas_export_is_refused(
    graded_batch, tmp_path: Path, capsys
) -> None:
    out = graded_batch.out
    assert (
        main(
            [
                "gradebook",
                str(out),
                "--canvas",
                str(out / "gradebook.csv"),
                "-o",
                str(tmp_path / "c.csv"),
            ]
        )
        == 2
    )
    assert "not a Canvas gradebook export" in capsys.readouterr().err
    (tmp_path / "no-sis.csv").write_text("Student,ID,Section,tiny\nDoe,1,A,\n")
    assert (
        main(
            [
                "gradebook",
                str(out),
                "--canvas",
                str(tmp_path / "no-sis.csv"),
                "-o",
                str(tmp_path / "c.csv"),
            ]
        )
        == 2
    )
    assert "no SIS Login ID or SIS User ID column" in capsys.readouterr().err
    assert main(["gradebook", str(tmp_path), "--canvas", str(tmp_path / "no-sis.csv")]) == 2
    assert "run `hookviz grade`" in capsys.readouterr().err
    assert not (tmp_path / "c.csv").exists()
