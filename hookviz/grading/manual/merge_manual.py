"""The questions graded by hand: a page per question with every student's answer, a CSV to fill
in, and merging it back into the gradebook, the feedback files and the exports.

`hookviz grade` writes ``OUT/manual/<grade_id>.html`` (self-contained, readable offline: every
answer shown as escaped text, nothing fetched) and ``OUT/manual/manual-grades.csv`` (student,
question, points, comment, max_points). `hookviz grade merge-manual OUT CSV` checks the whole
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

from ..course.conventions import Outcome
from ..course.notebooks import NotebookError, atomic_write_text
from ..markup import tag
from .engine import SubmissionResult
from .folder import FOLDER_MARKER, combine
from .gradebook import (
    GRADEBOOK_CSV,
    GRADEBOOK_JSON,
    MANUAL_GRADES,
    OutFolder,
    answer_sha256,
    safe_name,
)
from .merge import Assignment, load_assignment

MANUAL_DIR = "manual"
MANUAL_CSV = "manual-grades.csv"
COLUMNS = ("student", "question", "points", "comment", "max_points")
CANVAS_CSV = "canvas.csv"
_WAITING = (Outcome.NEEDS_MANUAL_GRADE, Outcome.GRADED_BY_HAND)

PAGE_STYLE = """
body { font: 16px/1.5 system-ui, sans-serif; max-width: 60rem; margin: 2rem auto; padding: 0 1rem;
       color: #1b1b1b; background: #fff; }
h1 { font-size: 1.5rem; } h2 { font-size: 1.15rem; margin-top: 2rem; }
section { border-top: 1px solid #bbb; }
pre { white-space: pre-wrap; overflow-wrap: anywhere; background: #f4f4f4; padding: .75rem;
      border-radius: 4px; }
.meta { color: #444; }
@media (prefers-color-scheme: dark) {
  body { color: #eee; background: #181818; } pre { background: #262626; } .meta { color: #bbb; }
}
"""


def waiting(result: SubmissionResult) -> list:
    """The student's questions graded by hand that can take a grade (the notebook was read)."""
    return [c for c in result.checks if c.manual and c.outcome in _WAITING]


# -- the pages and the CSV -------------------------------------------------------------------


def write_manual_grading(out: OutFolder, assignment: Assignment) -> list[Path]:
    """Write a page per question graded by hand and the CSV to fill in; returns the pages.

    Points and comments already in the CSV (filled in, not merged yet) are kept.
    """
    if not assignment.manual:
        return []
    folder = out.path / MANUAL_DIR
    folder.mkdir(parents=True, exist_ok=True)
    results = out.all_results(assignment)
    pages = []
    for question in assignment.manual:
        path = folder / f"{safe_name(question.grade_id)}.html"
        atomic_write_text(path, question_page(assignment, question, results))
        pages.append(path)
    csv_path = folder / MANUAL_CSV
    kept = _filled_in(csv_path)
    table = io.StringIO()
    writer = csv.writer(table, lineterminator="\n")
    writer.writerow(COLUMNS)
    for result in results:
        for check in waiting(result):
            points, comment = kept.get((result.student, check.grade_id), ("", ""))
            if not points and check.outcome == Outcome.GRADED_BY_HAND:
                points, comment = f"{check.points:g}", check.comment
            writer.writerow(
                [result.student, check.grade_id, points, comment, f"{check.max_points:g}"]
            )
    atomic_write_text(csv_path, table.getvalue())
    return pages


def _filled_in(path: Path) -> dict[tuple[str, str], tuple[str, str]]:
    """(student, question) -> (points, comment) of the rows of an existing CSV with points."""
    try:
        rows = list(csv.DictReader(io.StringIO(path.read_text(encoding="utf-8-sig"))))
    except (OSError, csv.Error, UnicodeDecodeError):
        return {}
    return {
        (row.get("student", ""), row.get("question", "")): (
            (row.get("points") or "").strip(),
            row.get("comment") or "",
        )
        for row in rows
        if (row.get("points") or "").strip()
    }


def question_page(assignment: Assignment, question, results: list[SubmissionResult]) -> str:
    """One question, its prompt and model answer, then every student's answer, as one HTML page."""
    answers = []
    for result in results:
        check = next((c for c in result.checks if c.grade_id == question.grade_id), None)
        if check is None:
            continue
        if check.outcome in _WAITING:
            state = (
                f"graded: {check.points:g} / {check.max_points:g}"
                if check.outcome == Outcome.GRADED_BY_HAND
                else f"to grade, out of {check.max_points:g}"
            )
            body = tag("pre", check.actual or "(no answer)")
        else:
            state = f"not graded by hand: {result.status}"
            body = tag("p", result.detail or "no notebook was read")
        answers.append(
            tag(
                "section",
                tag("h2", result.student) + tag("p", state, cls="meta") + body,
                raw=True,
                id=f"student-{safe_name(result.student)}",
            )
        )
    head = [
        tag("h1", f"{assignment.name}: {question.grade_id} ({question.points:g} points)"),
        tag(
            "p",
            f"{len(answers)} answers. Grade them in {MANUAL_CSV} (student, question, points, "
            "comment), then run `hookviz grade merge-manual OUT CSV`.",
            cls="meta",
        ),
    ]
    if question.prompt:
        head += [tag("h2", "The question"), tag("pre", question.prompt)]
    if question.model_answer:
        head += [tag("h2", "Your model answer"), tag("pre", question.model_answer)]
    return (
        "<!doctype html>\n"
        + tag(
            "html",
            tag(
                "head",
                '<meta charset="utf-8">'
                + tag("title", f"{assignment.name}: {question.grade_id}")
                + tag("style", PAGE_STYLE, raw=True),
                raw=True,
            )
            + tag("body", "".join(head) + "".join(answers), raw=True),
            raw=True,
            lang="en",
        )
        + "\n"
    )


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
        if check.outcome not in _WAITING:
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
        from .canvas import canvas_gradebook

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
