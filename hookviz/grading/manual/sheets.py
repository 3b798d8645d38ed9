"""What `hookviz grade` writes for the questions graded by hand: a page per question with every
student's answer, and the CSV to fill in.

``OUT/manual/<grade_id>.html`` is self-contained and readable offline (every answer shown as
escaped text, nothing fetched); ``OUT/manual/manual-grades.csv`` has student, question, points,
comment, max_points. `hookviz merge-manual` (merge_manual.py) reads it back.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

from ...course.conventions import Outcome
from ...course.format.notebooks import atomic_write_text
from ...markup import tag
from ..core.gradebook import OutFolder, safe_name
from ..core.merge import Assignment
from ..core.results import SubmissionResult

MANUAL_DIR = "manual"


MANUAL_CSV = "manual-grades.csv"


COLUMNS = ("student", "question", "points", "comment", "max_points")


WAITING = (
    Outcome.NEEDS_MANUAL_GRADE,
    Outcome.GRADED_BY_HAND,
)  # outcomes of a question graded by hand


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
    return [c for c in result.checks if c.manual and c.outcome in WAITING]


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
        if check.outcome in WAITING:
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
