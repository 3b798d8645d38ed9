"""The out folder: one result file per student, the gradebook built from them, feedback files.

Two grading runs may share an out folder. Each student's result is written atomically
(temporary file + rename) while that student's claim lock is held, and the gradebook is
rebuilt from all result files under the folder's lock; so no row is lost or half-written.
"""

from __future__ import annotations

import contextlib
import csv
import fcntl
import hashlib
import io
import json
import re
from collections.abc import Iterator
from pathlib import Path

from ...course.conventions import Outcome
from ...course.format.notebooks import NotebookError, atomic_write_text
from .feedback import feedback_markdown, review_markdown
from .merge import Assignment
from .results import SubmissionResult, points_text

GRADEBOOK_CSV, GRADEBOOK_JSON = "gradebook.csv", "gradebook.json"
MANUAL_GRADES = Path("manual") / "grades.json"  # what `hookviz grade merge-manual` merged


def answer_sha256(answer: str) -> str:
    """What a grade given by hand is tied to: the answer it graded."""
    return hashlib.sha256(answer.encode("utf-8")).hexdigest()


def safe_name(student: str) -> str:
    """A file name for ``student``: unchanged when already plain, else cleaned plus a short hash."""
    cleaned = re.sub(r"[^A-Za-z0-9._@+-]", "_", student).lstrip(".") or "_"
    if cleaned == student:
        return student
    return f"{cleaned[:60]}-{hashlib.sha256(student.encode()).hexdigest()[:8]}"


def spreadsheet_cell(text: str) -> str:
    """Keep spreadsheet programs from running a name that starts like a formula."""
    return "'" + text if text[:1] in ("=", "+", "-", "@") else text


def read_results(folder: Path, assignment_name: str) -> list[SubmissionResult]:
    """Every result stored in ``folder`` (an out folder's results/) for the assignment, by
    student; a file that cannot be read as a result is passed over."""
    results = []
    for path in sorted(Path(folder).glob("*.json")):
        try:
            result = SubmissionResult.from_json(json.loads(path.read_text(encoding="utf-8")))
        except (OSError, ValueError, TypeError):
            continue
        if result.assignment == assignment_name:
            results.append(result)
    return sorted(results, key=lambda r: r.student)


class OutFolder:
    """``out/``: results/, feedback/ (for students), review/ (for you), the gradebook, the locks."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self.results = self.path / "results"
        self.feedback = self.path / "feedback"
        self.review = self.path / "review"
        self.locks = self.path / ".locks"
        for folder in (self.results, self.feedback, self.review, self.locks):
            folder.mkdir(parents=True, exist_ok=True)

    @contextlib.contextmanager
    def _flock(self, path: Path) -> Iterator[None]:
        with open(path, "a+") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    def locked(self) -> contextlib.AbstractContextManager[None]:
        """Hold the folder's lock (gradebook rebuilds, the assignment marker)."""
        return self._flock(self.locks / "gradebook.lock")

    def claim(self, student: str) -> contextlib.AbstractContextManager[None]:
        """Hold one student's lock: a second run waits, then finds the result and skips."""
        return self._flock(self.locks / f"{safe_name(student)}.lock")

    def check_assignment(self, assignment: Assignment) -> None:
        """Refuse an out folder that holds another assignment's grades."""
        marker = self.path / "assignment.json"
        with self.locked():
            if marker.exists():
                try:
                    name = json.loads(marker.read_text(encoding="utf-8")).get("name")
                except (OSError, ValueError):
                    name = None
                if name is not None and name != assignment.name:
                    raise NotebookError(
                        f"{self.path} holds grades for {name!r}, not {assignment.name!r}; "
                        "pass another --out folder for this assignment."
                    )
            atomic_write_text(
                marker,
                json.dumps(
                    {
                        "name": assignment.name,
                        "sha256": assignment.sha256,
                        "path": str(assignment.path),
                    },
                    indent=1,
                ),
            )

    def result_path(self, student: str) -> Path:
        """Where one student's result lives."""
        return self.results / f"{safe_name(student)}.json"

    def load(self, student: str) -> SubmissionResult | None:
        """The stored result for ``student`` (None if absent or unreadable)."""
        try:
            return SubmissionResult.from_json(
                json.loads(self.result_path(student).read_text(encoding="utf-8"))
            )
        except (OSError, ValueError, TypeError):
            return None

    def save(self, result: SubmissionResult) -> None:
        """Write the student's feedback, review and result, each atomically.

        The result goes last: a run killed in between leaves no result, so the next run grades
        that student again instead of skipping one whose feedback is missing. Grades given by
        hand (merged before) are applied first, to the answers they graded.
        """
        self.apply_manual_grades(result)
        atomic_write_text(
            self.feedback / f"{safe_name(result.student)}.md", feedback_markdown(result)
        )
        atomic_write_text(self.review / f"{safe_name(result.student)}.md", review_markdown(result))
        atomic_write_text(
            self.result_path(result.student),
            json.dumps(result.to_json(), indent=1, ensure_ascii=False),
        )

    def apply_manual_grades(self, result: SubmissionResult) -> None:
        """Put in the grades merged by hand for this student, where the answer is the one graded."""
        try:
            stored = json.loads((self.path / MANUAL_GRADES).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return
        mine = stored.get(result.student, {}) if isinstance(stored, dict) else {}
        apply_manual_grades(result, mine if isinstance(mine, dict) else {})

    def all_results(self, assignment: Assignment) -> list[SubmissionResult]:
        """Every stored result for this assignment, by student."""
        return read_results(self.results, assignment.name)

    def rebuild(self, assignment: Assignment) -> list[SubmissionResult]:
        """Rewrite gradebook.csv and gradebook.json from the result files (caller holds the lock)."""
        results = self.all_results(assignment)
        ids = [c.grade_id for c in assignment.checks] + [q.grade_id for q in assignment.manual]
        table = io.StringIO()
        writer = csv.writer(table, lineterminator="\n")
        writer.writerow(["student", "total", *ids, "status", "flags"])
        for result in results:
            by_id = {c.grade_id: c.points for c in result.checks}
            writer.writerow(
                [
                    spreadsheet_cell(result.student),
                    points_text(result.total),
                    *(points_text(by_id.get(gid, 0.0)) for gid in ids),
                    result.status,
                    spreadsheet_cell("; ".join(result.flags)),
                ]
            )
        atomic_write_text(self.path / GRADEBOOK_CSV, table.getvalue())
        document = {
            "assignment": assignment.name,
            "assignment_sha256": assignment.sha256,
            "max_points": {
                **{c.grade_id: c.points for c in assignment.checks},
                **{q.grade_id: q.points for q in assignment.manual},
            },
            "manual": [q.grade_id for q in assignment.manual],
            "max_total": assignment.max_points,
            "students": [
                {
                    "student": r.student,
                    "total": r.total,
                    "points": {c.grade_id: c.points for c in r.checks},
                    "outcomes": {c.grade_id: c.outcome for c in r.checks},
                    "status": r.status,
                    "detail": r.detail,
                    "flags": r.flags,
                    "notes": r.notes,
                    "submission": r.submission,
                    "submission_sha256": r.submission_sha256,
                    "stale": r.assignment_sha256 != assignment.sha256,
                    "seconds": r.seconds,
                    "graded_at": r.graded_at,
                    "lang": r.lang,  # the language of the student's notebook and feedback
                }
                for r in results
            ],
        }
        atomic_write_text(
            self.path / GRADEBOOK_JSON, json.dumps(document, indent=1, ensure_ascii=False)
        )
        return results


_BY_HAND = (Outcome.NEEDS_MANUAL_GRADE, Outcome.GRADED_BY_HAND)


def apply_manual_grades(result: SubmissionResult, grades: dict) -> None:
    """Put in one student's grades given by hand (question -> points, comment, answer_sha256),
    each only where the answer is the one it graded; the total follows."""
    for check in result.checks:
        grade = grades.get(check.grade_id)
        if not check.manual or check.outcome not in _BY_HAND or not isinstance(grade, dict):
            continue
        if grade.get("answer_sha256") == answer_sha256(check.actual):
            check.outcome = Outcome.GRADED_BY_HAND
            check.points = float(grade.get("points", 0))
            check.comment = str(grade.get("comment", ""))
        else:  # a new answer since it was graded: it waits for a grade again
            check.outcome, check.points, check.comment = Outcome.NEEDS_MANUAL_GRADE, 0.0, ""
    result.total = sum(c.points for c in result.checks)
