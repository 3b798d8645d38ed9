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

from ..course.conventions import HIDDEN_TEST_FAILED, PASS_MARK, Outcome, Status, in_words
from ..course.notebooks import NotebookError, atomic_write_text
from .engine import ADVICE, FEEDBACK_OUTPUT_LIMIT, SubmissionResult
from .merge import Assignment

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


def _number(value: float) -> str:
    return f"{value:g}"


def _cell(text: str) -> str:
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
                    _cell(result.student),
                    _number(result.total),
                    *(_number(by_id.get(gid, 0.0)) for gid in ids),
                    result.status,
                    _cell("; ".join(result.flags)),
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


def _clip(text: str) -> str:
    if len(text) <= FEEDBACK_OUTPUT_LIMIT:
        return text
    half = FEEDBACK_OUTPUT_LIMIT // 2
    return f"{text[:half]}\n... ({len(text) - 2 * half} characters left out) ...\n{text[-half:]}"


def _fence(text: str) -> str:
    fence = "```"
    while fence in text:
        fence += "`"
    return f"{fence}text\n{_clip(text).rstrip()}\n{fence}"


def _header(result: SubmissionResult, title: str) -> list[str]:
    lines = [
        f"# {result.assignment}: {title} for {result.student}",
        "",
        f"**Score: {_number(result.total)} / {_number(result.max_total)}**",
    ]
    if result.status != Status.OK:
        lines += [
            "",
            f"Status: **{result.status}**" + (f": {result.detail}" if result.detail else "."),
        ]
    if result.notes:
        lines += ["", "## Notes", ""] + [f"- {note}" for note in result.notes]
    return lines


def _check_heading(check) -> str:
    if check.outcome in (Outcome.NEEDS_MANUAL_GRADE, Outcome.GRADED_BY_HAND):
        mark = in_words(check.outcome)
    elif check.outcome == Outcome.PASSED and check.points == check.max_points:
        mark = "passed"
    else:
        mark = "not passed"
    return f"## {check.grade_id}: {_number(check.points)} / {_number(check.max_points)} ({mark})"


def _what_happened(check) -> list[str]:
    """The outcome in words, and what the grader knows of why (the error the cell raised)."""
    raised = check.error if check.outcome == Outcome.ERROR else ""
    if raised.startswith(HIDDEN_TEST_FAILED):
        raised = ""  # the feedback explains a hidden test below
    why = check.detail or raised
    if why:
        return ["", f"What happened: {in_words(check.outcome)}: {why.rstrip('.')}."]
    if check.outcome in ADVICE:
        return ["", f"What happened: {in_words(check.outcome)}."]
    return []


def _hidden_failure(actual: str) -> str | None:
    """The message of a failed hidden test in a check's output, if one failed."""
    for line in actual.splitlines():
        if line.startswith(f"{HIDDEN_TEST_FAILED}: "):
            return line[len(HIDDEN_TEST_FAILED) + 2 :]
    return None


def feedback_markdown(result: SubmissionResult) -> str:
    """The student's feedback: each check, passed or not, what the check looks for, their output, the hints.

    It never shows the instructor's expected output as such: under a passed check it may hold
    an explanation ("Why: ...") that gives a prediction's answer away.
    """
    lines = _header(result, "feedback")
    for check in result.checks:
        lines += ["", _check_heading(check)]
        if check.manual:
            lines += _manual_feedback(check)
            continue
        if check.outcome == Outcome.PASSED:
            continue
        lines += _what_happened(check)
        claims = [
            line[2:] for line in check.expected.splitlines() if line.startswith(f"{PASS_MARK} ")
        ]
        if claims:
            lines += ["", "What the check looks for:", ""] + [f"- {claim}" for claim in claims]
        lines += ["", "Your output:", "", _fence(check.actual or "(nothing)")]
        hidden = check.hidden_failure or _hidden_failure(check.actual)
        if hidden and hidden.startswith("hidden test failed"):
            lines += [
                "",
                "Your answer passed the checks you could run, but a hidden test failed: the grader "
                "ran one of this cell's checks again, on a model you had not seen, and your answer "
                f"did not pass it ({hidden}). An answer that works for any model passes; look for "
                "what yours assumes about the models the visible checks use (a size, a name, a "
                "number of layers).",
            ]
        elif hidden:
            lines += [
                "",
                "Your answer passed the checks you could run, but a hidden test failed: the grader "
                f"tried your answer on a case you had not seen, and it did not pass ({hidden}). An "
                "answer that works for any input passes; look for what yours assumes about the "
                "inputs the visible checks use.",
            ]
        hints = [
            line.strip() for line in check.actual.splitlines() if line.strip().startswith("Hint:")
        ]
        hints = [hint for hint in hints if hint != "Hint: as above."]
        advice = ADVICE.get(check.outcome)
        if "not written yet" in check.detail or "not done yet" in check.actual:
            advice = "An answer this check needs is not written yet: write it where it says YOUR CODE HERE."
        if hidden:
            advice = None
        if hints or advice:
            lines += (
                ["", "Hints:", ""]
                + [f"- {hint}" for hint in hints]
                + ([f"- {advice}"] if advice else [])
            )
    return "\n".join(lines) + "\n"


def _manual_feedback(check) -> list[str]:
    """A question graded by hand: that it waits for a grade, or the grader's comment."""
    if check.outcome == Outcome.NEEDS_MANUAL_GRADE:
        return ["", "Your instructor grades this answer by hand; the points come later."]
    if check.outcome == Outcome.GRADED_BY_HAND:
        return ["", f"Comment: {check.comment}"] if check.comment else []
    return _what_happened(check)


def review_markdown(result: SubmissionResult) -> str:
    """The instructor's view of one submission: every check that did not pass, expected against actual."""
    lines = _header(result, "review")
    if result.flags:
        lines += ["", "Flags: " + "; ".join(result.flags)]
    for check in result.checks:
        lines += ["", _check_heading(check)]
        if check.manual:
            lines += _manual_feedback(check) + ["", "Answer:", "", _fence(check.actual or "")]
            continue
        if check.outcome == Outcome.PASSED:
            continue
        lines += _what_happened(check)
        lines += ["", "Expected output:", "", _fence(check.expected)]
        lines += ["", "Actual output:", "", _fence(check.actual or "(nothing)")]
    return "\n".join(lines) + "\n"
