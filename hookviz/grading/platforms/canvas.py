"""`hookviz gradebook OUT --canvas ROSTER.csv`: the gradebook in the layout Canvas imports.

ROSTER.csv is a gradebook exported from Canvas (Grades, Export). Canvas imports that same
layout back: the student columns first (Student, ID, then SIS User ID and SIS Login ID, with
Integration ID and Root Account when present, and Section last), an optional "Points Possible"
row, then one column per assignment. The file written keeps the roster's student columns and
rows exactly as they are (Canvas finds each student by them), leaves out the roster's other
assignments and totals (a column that is not in the file changes nothing on import), and adds
one column for this assignment. Students are matched to rows by SIS Login ID or SIS User ID.
"""

from __future__ import annotations

import csv
import io
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from ...course.format.notebooks import NotebookError, atomic_write_text
from ..core.gradebook import GRADEBOOK_JSON

BOM = "\ufeff"
LOGIN_COLUMN = re.compile(r"^SIS\s+Login\s+ID$")
SIS_COLUMN = re.compile(r"^SIS\s+User\s+ID$")
POINTS_POSSIBLE = "Points Possible"
# Rows of an export that describe the assignments, not a student ("Muted", "Manual Posting").
POSTING_ROW = re.compile(r"^\s*(Muted|Manual Posting.*)?\s*$", re.IGNORECASE)
ROSTER_HELP = (
    "export it from Canvas (Grades, then Export, then Export Entire Gradebook) and pass that file"
)


@dataclass
class CanvasExport:
    """What `canvas_gradebook` wrote and whom it could not place."""

    path: Path
    column: str
    points_possible: float
    matched: dict[str, str] = field(default_factory=dict)  # student -> "login" or "SIS id"
    not_in_roster: list[str] = field(default_factory=list)  # graded, no row in the roster
    not_graded: list[str] = field(default_factory=list)  # roster rows no graded student matched
    ambiguous: list[str] = field(default_factory=list)  # graded students matching several rows
    stale: list[str] = field(default_factory=list)  # graded against another assignment version


@dataclass
class Roster:
    """A Canvas gradebook export, read as it is."""

    header: list[str]
    rows: list[list[str]]
    identity: int  # how many leading columns describe the student (through Section)
    login: int | None
    sis: int | None
    delimiter: str
    bom: bool
    newline: str


def read_roster(path: Path) -> Roster:
    """Read a Canvas gradebook export; NotebookError says what is wrong with it."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as error:
        raise NotebookError(f"cannot read the roster {path} ({error}); {ROSTER_HELP}.") from error
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise NotebookError(
            f"{path} is not UTF-8 text ({error}); {ROSTER_HELP}, or save it again as CSV UTF-8."
        ) from error
    bom = text.startswith(BOM)
    text = text.removeprefix(BOM)
    first_line = text.split("\n", 1)[0]
    newline = "\r\n" if first_line.endswith("\r") else "\n"
    # Canvas writes semicolons for locales with decimal commas: take the separator that splits more.
    delimiter = ";" if len(_fields(first_line, ";")) > len(_fields(first_line, ",")) else ","
    rows = [
        row for row in csv.reader(io.StringIO(text, newline=""), delimiter=delimiter) if any(row)
    ]
    if not rows:
        raise NotebookError(f"{path} is empty; {ROSTER_HELP}.")
    header = rows[0]
    names = [name.strip() for name in header]
    if (
        len(names) < 3
        or "Student" not in names[0]
        or "ID" not in names[1]
        or "Section" not in names
    ):
        raise NotebookError(
            f"{path} is not a Canvas gradebook export: its first columns are {names[:6]}, where Canvas "
            f"writes Student, ID, SIS User ID, SIS Login ID, Section; {ROSTER_HELP}."
        )
    identity = names.index("Section") + 1
    login = next((i for i, name in enumerate(names[:identity]) if LOGIN_COLUMN.match(name)), None)
    sis = next((i for i, name in enumerate(names[:identity]) if SIS_COLUMN.match(name)), None)
    if login is None and sis is None:
        raise NotebookError(
            f"{path} has no SIS Login ID or SIS User ID column, which students are matched by; "
            "export the gradebook as a user who may see SIS data, or ask your Canvas administrator."
        )
    return Roster(header, rows[1:], identity, login, sis, delimiter, bom, newline)


def _fields(line: str, delimiter: str) -> list[str]:
    return next(csv.reader([line], delimiter=delimiter), [])


def _score(value: float) -> str:
    return f"{round(value, 2):g}"


def canvas_gradebook(
    out: Path, roster_path: Path, destination: Path, *, column: str | None = None
) -> CanvasExport:
    """Write ``destination``: the roster's student columns and the assignment's scores from ``out``."""
    document_path = Path(out) / GRADEBOOK_JSON
    try:
        document = json.loads(document_path.read_text(encoding="utf-8"))
    except OSError as error:
        raise NotebookError(
            f"{document_path} cannot be read ({error.strerror}); run `hookviz grade` into {out} first."
        ) from error
    roster = read_roster(roster_path)
    name, points_possible = document["assignment"], float(document["max_total"])
    column = column or _existing_column(roster, name) or name
    by_key: dict[str, list[tuple[int, str]]] = {}
    for index, row in enumerate(roster.rows):
        if _describes_assignments(row):
            continue
        for position, kind in ((roster.login, "login"), (roster.sis, "SIS id")):
            if position is not None and position < len(row) and row[position].strip():
                by_key.setdefault(row[position].strip().casefold(), []).append((index, kind))
    export = CanvasExport(Path(destination), column, points_possible)
    candidates = {}
    for student in document["students"]:
        name = str(student["student"])
        if student.get("stale"):
            export.stale.append(name)
        candidates[name] = {index for index, _ in by_key.get(name.strip().casefold(), [])}
    claims: dict[int, int] = {}
    for rows in candidates.values():
        for index in rows:
            claims[index] = claims.get(index, 0) + 1
    scores: dict[int, str] = {}
    for student in document["students"]:
        name = str(student["student"])
        rows = candidates[name]
        if not rows:
            export.not_in_roster.append(name)
        elif len(rows) > 1 or claims[next(iter(rows))] > 1:
            export.ambiguous.append(name)  # a person must decide: no score is written for it
        else:
            (index,) = rows
            scores[index] = _score(float(student["total"]))
            key = name.strip().casefold()
            export.matched[name] = next(kind for i, kind in by_key[key] if i == index)

    table = io.StringIO()
    writer = csv.writer(table, delimiter=roster.delimiter, lineterminator=roster.newline)
    writer.writerow([*roster.header[: roster.identity], column])
    for index, row in enumerate(roster.rows):
        identity = (row + [""] * roster.identity)[: roster.identity]
        if row and POINTS_POSSIBLE in row[0]:
            writer.writerow([*identity, _score(points_possible)])
        elif _describes_assignments(row):
            continue
        else:
            writer.writerow([*identity, scores.get(index, "")])
            if index not in scores:
                export.not_graded.append(_describe(roster, row))
    text = (BOM if roster.bom else "") + table.getvalue()
    atomic_write_text(export.path, text)
    return export


def _describes_assignments(row: list[str]) -> bool:
    """The Points Possible row, or a row of posting policies: not a student."""
    if row and POINTS_POSSIBLE in row[0]:
        return True
    return all(POSTING_ROW.match(cell) for cell in row)


def _existing_column(roster: Roster, name: str) -> str | None:
    """The roster's column for this assignment ("01-apply (12345)"), so Canvas updates it."""
    for title in roster.header[roster.identity :]:
        if title.strip() == name or title.strip().startswith(f"{name} ("):
            return title
    return None


def _describe(roster: Roster, row: list[str]) -> str:
    login = (
        row[roster.login].strip() if roster.login is not None and roster.login < len(row) else ""
    )
    sis = row[roster.sis].strip() if roster.sis is not None and roster.sis < len(row) else ""
    key = login or sis or "no login or SIS id"
    return f"{row[0].strip() if row else '?'} ({key})"
