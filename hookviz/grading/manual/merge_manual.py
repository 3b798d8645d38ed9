"""`hookviz merge-manual OUT CSV`: the grades given by hand, merged into the gradebook, the
feedback files and the exports.

`hookviz grade` writes the pages and the CSV to fill in (sheets.py). `hookviz merge-manual OUT CSV` checks the whole
CSV first (a student or question the gradebook does not have, points that are not a number or
over the maximum: every bad row named with its fix, and nothing merged), then writes each
student's result, feedback and review, the gradebook, and ``canvas.csv`` when there is one.
The merged grades are also kept in ``OUT/manual/grades.json``, so that grading a student again
keeps a grade whose answer did not change.
"""

from __future__ import annotations

import csv
import io
import json
import math
from dataclasses import dataclass, field
from pathlib import Path

from ...course.conventions import Outcome
from ...course.format.notebooks import NotebookError, atomic_write_text
from ..core.combined import FOLDER_MARKER, combine
from ..core.gradebook import (
    GRADEBOOK_CSV,
    GRADEBOOK_JSON,
    MANUAL_GRADES,
    OutFolder,
    answer_sha256,
)
from ..core.merge import Assignment, load_assignment
from ..core.results import SubmissionResult
from .sheets import COLUMNS, MANUAL_CSV, MANUAL_DIR, WAITING, waiting, write_manual_grading

CANVAS_CSV = "canvas.csv"


# -- merging the CSV -------------------------------------------------------------------------


@dataclass
class MergeReport:
    """What `merge_manual` changed."""

    graded: int = 0  # grades written
    students: list[str] = field(default_factory=list)  # whose results changed
    left: int = 0  # questions still without a grade
    exports: list[Path] = field(default_factory=list)


def read_grades(
    csv_path: Path, results: dict[str, SubmissionResult]
) -> dict[tuple[str, str], tuple[float, str]]:
    """The filled-in rows of ``csv_path``, checked against the results; NotebookError naming
    every bad row and its fix (nothing is merged then)."""
    try:
        text = Path(csv_path).read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as error:
        raise NotebookError(f"cannot read {csv_path} ({error}).") from error
    reader = csv.DictReader(io.StringIO(text))
    missing = [c for c in COLUMNS[:3] if c not in (reader.fieldnames or [])]
    if missing:
        raise NotebookError(
            f"{csv_path}: no column {', '.join(missing)}; its first row must be "
            f"{','.join(COLUMNS)} (as `hookviz grade` writes it in OUT/{MANUAL_DIR}/{MANUAL_CSV})."
        )
    grades: dict[tuple[str, str], tuple[float, str]] = {}
    problems = []
    for number, row in enumerate(reader, start=2):
        student, question = (row.get("student") or "").strip(), (row.get("question") or "").strip()
        points = (row.get("points") or "").strip()
        where = f"{csv_path}, row {number} ({student or '?'}, {question or '?'})"
        if not points:
            continue  # not graded yet: left waiting
        result = results.get(student)
        if result is None:
            problems.append(
                f"{where}: no student {student!r} in this gradebook; use the student column "
                "as `hookviz grade` wrote it."
            )
            continue
        check = next((c for c in result.checks if c.grade_id == question), None)
        if check is None or not check.manual:
            known = ", ".join(c.grade_id for c in result.checks if c.manual) or "none"
            problems.append(
                f"{where}: {question!r} is not a question graded by hand (those are: {known})."
            )
            continue
        if check.outcome not in WAITING:
            problems.append(
                f"{where}: this student's notebook was not graded ({result.status}), so the "
                "question has no answer to grade; leave its points empty."
            )
            continue
        try:
            value = float(points.replace(",", ".")) if points.count(",") <= 1 else math.nan
        except ValueError:
            value = math.nan
        if not math.isfinite(value):
            problems.append(f"{where}: points {points!r} is not a number; write e.g. 2 or 1.5.")
            continue
        if not 0 <= value <= check.max_points:
            problems.append(
                f"{where}: points {value:g} is outside 0 to {check.max_points:g}, the question's "
                "maximum; write a number in that range."
            )
            continue
        if (student, question) in grades:
            problems.append(f"{where}: a second row for this student and question; keep one.")
            continue
        grades[(student, question)] = (value, (row.get("comment") or "").strip())
    if problems:
        raise NotebookError(
            f"{len(problems)} rows of {csv_path} cannot be merged, so nothing was merged:\n  "
            + "\n  ".join(problems)
        )
    return grades


def merge_manual(out_path: Path, csv_path: Path) -> MergeReport:
    """Merge the filled-in CSV into the results, feedback, gradebook and canvas.csv of ``out_path``."""
    out_path = Path(out_path)
    assignment = _assignment_of(out_path)
    out = OutFolder(out_path)
    report = MergeReport()
    with out.locked():
        results = {r.student: r for r in out.all_results(assignment)}
        grades = read_grades(csv_path, results)
        stored = load_stored_grades(out)
        for (student, question), (points, comment) in grades.items():
            check = next(c for c in results[student].checks if c.grade_id == question)
            stored.setdefault(student, {})[question] = {
                "points": points,
                "comment": comment,
                "answer_sha256": answer_sha256(check.actual),
            }
        atomic_write_text(
            out.path / MANUAL_GRADES,
            json.dumps(stored, indent=1, ensure_ascii=False, sort_keys=True),
        )
        for student in sorted({s for s, _ in grades}):
            before = json.dumps(results[student].to_json(), sort_keys=True)
            out.save(results[student])  # applies the stored grades
            if json.dumps(out.load(student).to_json(), sort_keys=True) != before:
                report.students.append(student)
        report.graded = len(grades)
        final = out.rebuild(assignment)
        report.left = sum(
            1 for r in final for c in waiting(r) if c.outcome == Outcome.NEEDS_MANUAL_GRADE
        )
    write_manual_grading(out, assignment)
    graded = out.path
    if (out.path.parent / FOLDER_MARKER).is_file():  # one notebook of an assignment folder
        graded = out.path.parent
        combine(graded)
        report.exports.append(graded / GRADEBOOK_CSV)
    canvas = graded / CANVAS_CSV
    if canvas.is_file():  # it has the roster's columns: it is its own roster
        from ..platforms.canvas import canvas_gradebook

        canvas_gradebook(graded, canvas, canvas)
        report.exports.append(canvas)
    return report


def load_stored_grades(out: OutFolder) -> dict:
    """student -> question -> {points, comment, answer_sha256}, as merged so far."""
    try:
        return json.loads((out.path / MANUAL_GRADES).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def _assignment_of(out_path: Path) -> Assignment:
    marker = out_path / "assignment.json"
    try:
        path = Path(json.loads(marker.read_text(encoding="utf-8"))["path"])
    except (OSError, ValueError, KeyError) as error:
        raise NotebookError(
            f"{out_path} is not the out folder of `hookviz grade` (no readable assignment.json); "
            "pass the folder you graded into."
        ) from error
    if not (out_path / GRADEBOOK_JSON).is_file():
        raise NotebookError(f"{out_path} has no {GRADEBOOK_JSON}; run `hookviz grade` first.")
    return load_assignment(path)
