"""The item analysis behind `hookviz report`: what the out folder says about each check.

Pass rates, discrimination, the failure messages grouped alike, the kinds of flags, and the
answers to compare for near-identical code. No figure and no HTML: those are figures.py
and page.py.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from ...course.conventions import FAIL_MARK, NOT_DONE_MARK, Flag, Outcome, Status, shorten
from ...course.format.notebooks import NotebookError, is_answer
from ..core.gradebook import GRADEBOOK_JSON, read_results
from ..core.merge import load_assignment, merge
from ..core.results import CheckResult, SubmissionResult
from ..core.submissions import SubmissionError, find_submissions, read_submission

# No notebook to grade: left out of the item analysis.
NOT_SUBMITTED = (Status.MISSING, Status.INVALID, Status.EMPTY)
MESSAGE_LIMIT = 160
_ERROR_LINE = re.compile(r"^[A-Za-z_][\w.]*(Error|Exception|Exit|Interrupt|Failed)\b")


@dataclass
class CheckStats:
    """One check across the batch."""

    grade_id: str
    max_points: float
    attempted: int = 0
    passed: int = 0
    discrimination: float | None = None  # corrected item-total correlation
    failures: Counter = field(default_factory=Counter)
    examples: dict[str, list[str]] = field(default_factory=dict)  # message -> a few students

    @property
    def pass_rate(self) -> float | None:
        """The share of attempted submissions that scored the check's full points."""
        return self.passed / self.attempted if self.attempted else None


def failure_message(check: CheckResult) -> str | None:
    """What went wrong in one check, in a line that groups alike failures (None when it passed)."""
    if check.outcome == Outcome.PASSED and check.points >= check.max_points:
        return None
    if check.hidden_failure:
        return _clip("hidden test failed: " + check.hidden_failure.strip().splitlines()[0])
    what = check.outcome.replace("-", " ") + (f": {check.detail}" if check.detail else "")
    if check.outcome not in (
        Outcome.MISMATCH,
        Outcome.ERROR,
    ):  # a timeout, a crash...: the grader's words
        return _clip(what)
    lines = check.actual.splitlines()
    for line in lines:
        if line.startswith(
            (FAIL_MARK, NOT_DONE_MARK)
        ):  # the check's own verdict: the claim that failed
            return _clip(line)
    if check.detail:
        return _clip(what)
    errors = [line.rstrip(": ") for line in lines if _ERROR_LINE.match(line)]
    return _clip(errors[-1] if errors else what)


def _clip(text: str) -> str:
    return shorten(" ".join(text.split()), MESSAGE_LIMIT)


def load_results(out: Path) -> tuple[dict, list[SubmissionResult]]:
    """gradebook.json and every student's result in ``out``; NotebookError when it is no out folder."""
    out = Path(out)
    try:
        document = json.loads((out / GRADEBOOK_JSON).read_text(encoding="utf-8"))
    except OSError as error:
        raise NotebookError(
            f"{out / GRADEBOOK_JSON} cannot be read ({error.strerror}); pass the out folder of "
            "`hookviz grade` (gradebook-out/NAME by default)."
        ) from error
    results = read_results(out / "results", document["assignment"])
    if not results:
        raise NotebookError(f"{out} holds no graded submission of {document['assignment']}.")
    return document, results


def item_analysis(document: dict, results: list[SubmissionResult]) -> list[CheckStats]:
    """Pass rate, discrimination and failure messages of every check."""
    import numpy as np

    stats = {gid: CheckStats(gid, float(points)) for gid, points in document["max_points"].items()}
    attempted = [r for r in results if r.status not in NOT_SUBMITTED]
    for result in attempted:
        for check in result.checks:
            item = stats.get(check.grade_id)
            if item is None:
                continue
            item.attempted += 1
            message = failure_message(check)
            if message is None:
                item.passed += 1
            else:
                item.failures[message] += 1
                examples = item.examples.setdefault(message, [])
                if len(examples) < 3:
                    examples.append(result.student)
    totals = np.array([r.total for r in attempted], dtype=float)
    passes = [{c.grade_id: failure_message(c) is None for c in r.checks} for r in attempted]
    for gid, item in stats.items():
        passed = np.array([1.0 if row.get(gid) else 0.0 for row in passes])
        rest = totals - passed * item.max_points  # the score on the other checks
        if len(attempted) > 2 and passed.std() > 0 and rest.std() > 0:
            item.discrimination = float(np.corrcoef(passed, rest)[0, 1])
    return list(stats.values())


def answers_to_compare(
    results: list[SubmissionResult],
    assignment_path: Path | None,
    submissions: Path | None,
    notes: list[str],
):
    """What the similarity engines compare: (student -> grade_id -> source, stubs, solutions),
    or None with a note saying why not."""
    if assignment_path is None:
        notes.append("The assignment notebook is unknown: pass --assignment to compare answers.")
        return None
    try:
        assignment = load_assignment(assignment_path)
    except NotebookError as error:
        notes.append(f"Answers were not compared: {error}")
        return None
    paths = {r.student: Path(r.submission) for r in results if r.submission}
    if submissions is not None:
        try:
            found = find_submissions(Path(submissions), assignment.name)
        except NotebookError as error:
            notes.append(f"Answers were not compared: {error}")
            return None
        paths = {s.student: s.path for s in found if s.path is not None}
    answers, changed, unreadable = {}, [], []
    for result in results:
        path = paths.get(result.student)
        if result.status in NOT_SUBMITTED or path is None:
            continue
        try:
            notebook, sha = read_submission(path)
        except SubmissionError:
            unreadable.append(result.student)
            continue
        if sha != result.submission_sha256:
            changed.append(result.student)
            continue
        answers[result.student] = merge(assignment, notebook).present
    if changed:
        notes.append(
            f"Left out of the comparison, their file changed since it was graded: {', '.join(changed)}."
        )
    if unreadable:
        notes.append(
            f"Left out of the comparison, their file could not be read: {', '.join(unreadable)} "
            "(moved? pass --submissions)."
        )
    stubs = {a.grade_id: a.stub for a in assignment.answers}
    solutions = {
        cell.metadata["nbgrader"]["grade_id"]: cell.source
        for cell in assignment.notebook.cells
        if cell.cell_type == "code" and is_answer(cell)
    }
    return answers, stubs, solutions


def flag_kinds(results: list[SubmissionResult]) -> Counter:
    """How many submissions carry each kind of flag ("grader", "tampered", ...)."""
    counts: Counter = Counter()
    for result in results:
        counts.update({Flag.parse(flag).kind for flag in result.flags})
    return counts
