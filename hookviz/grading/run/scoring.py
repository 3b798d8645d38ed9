"""Scoring: points per check and the submission's status, from the grading child's records.

Pure: it reads what the pytest plugin recorded for each cell (and whether the child timed out
or died) and never runs anything.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ...course.conventions import (
    FAIL_MARK,
    HIDDEN_TEST_FAILED,
    Flag,
    Outcome,
    Status,
    outputs_text,
    shorten,
    without_notes,
)
from ...course.format.steps import notebook_language
from ...course.wording import words
from ..core.bare_checks import score_test_cell
from ..core.merge import Assignment, CheckCell, Renamed
from ..core.results import CheckResult, SubmissionResult, now_utc
from .limits import Limits
from .sandbox import ChildResult


def _explain_renamed(
    checks: list[CheckResult], assignment: Assignment, renamed: Sequence[Renamed]
) -> None:
    """A check that calls a function the student renamed says so, naming both names."""
    sources = {c.grade_id: c.exercise_source for c in assignment.checks}
    for check in checks:
        if check.outcome == Outcome.PASSED or check.detail:
            continue
        for found in renamed:
            if any(
                re.search(rf"\b{re.escape(name)}\b", sources.get(check.grade_id, ""))
                for name in found.missing
            ):
                check.detail = found.explain(notebook_language(assignment.notebook))
                break


def _note_restored(
    restored: dict[str, tuple[str, CheckCell]], lang: str, notes: list[str], flags: list[Flag]
) -> None:
    """Each locked cell's name an answer cell rebound, which the grader put back before the
    checks: a note for the student (in their language) and a flag for the instructor."""
    for name, (cell, check) in restored.items():
        notes.append(
            words("feedback.locked_name_restored", lang, name=name, cell=cell, check=check.grade_id)
        )
        flags.append(Flag("locked-name-rebound", name))


def score(
    assignment: Assignment, child: ChildResult, limits: Limits, renamed: Sequence[Renamed] = ()
) -> SubmissionResult:
    """Points per check from the plugin's records, and the submission's status.

    ``renamed``: answer cells that define other functions than their checks look for (merge
    finds them); a check that did not pass and calls one of those names says so.
    """
    cells = {r.get("index"): r for r in child.records if r.get("event") == "cell"}
    done = any(r.get("event") == "done" for r in child.records)
    checks, notes, flags = [], [], []
    restored: dict[str, tuple[str, CheckCell]] = {}  # a locked cell's name an answer rebound
    died_in = next((r for r in cells.values() if r.get("outcome") == Outcome.KERNEL_DIED), None)
    check_ids = {c.grade_id for c in assignment.checks}
    for answer in assignment.answers:
        record = cells.get(answer.index)
        if record and record.get("outcome") in (
            Outcome.ERROR,
            Outcome.TIMEOUT,
            Outcome.KERNEL_DIED,
        ):
            notes.append(
                words(
                    "feedback.answer_failed",
                    notebook_language(assignment.notebook),
                    grade_id=answer.grade_id,
                    line=_failure_line(record),
                )
            )
    for check in assignment.checks:
        record = cells.get(check.index)
        result = CheckResult(check.grade_id, check.points, expected=check.expected)
        if record is None:
            if child.timed_out:
                result.detail = words(
                    "detail.out_of_time_before", "en", seconds=f"{limits.submission_timeout:g}"
                )
            elif died_in is not None:
                result.detail = words("detail.died_before", "en")
            else:
                result.detail = words("detail.crashed_before", "en")
            checks.append(result)
            continue
        result.actual = outputs_text(record.get("outputs", []))
        result.hidden_failure = hidden_failure(record.get("outputs", []), check)
        result.error = _error_line(record)
        result.seconds = float(record.get("seconds") or 0)
        result.tamper = [str(t) for t in record.get("tamper", [])]
        result.outcome = result.nbval_outcome = _outcome(record.get("outcome"))
        if result.outcome == Outcome.MISMATCH and _differ_in_notes_only(result.actual, check):
            result.outcome = Outcome.PASSED  # a correct earlier answer stood in: said, not graded
        result.detail = str(record.get("detail") or "")
        if result.outcome == Outcome.TIMEOUT:
            result.detail = words("detail.check_timeout", "en", seconds=f"{limits.cell_timeout:g}")
        elif result.outcome == Outcome.ERROR and "NotImplementedError" in result.error:
            result.detail = words("detail.not_written", "en")
        earned = check.points
        if check.ran_to_end and result.outcome == Outcome.PASSED:
            # a bare check's output is not compared: it scores as nbgrader scores a test cell
            # that raised nothing, once it reached the sentinel the grader appends
            bare = score_test_cell(record.get("outputs", []), check.grade_id, check.points)
            earned, result.detail = bare.points, bare.detail
            if not bare.ran_to_end or bare.stderr:
                result.outcome = Outcome.MISMATCH
            elif bare.above_points:
                result.outcome = Outcome.GRADER_ERROR
        for name_cell in record.get("restored") or ():
            restored.setdefault(str(name_cell.get("name")), (str(name_cell.get("cell")), check))
        if result.tamper:
            result.outcome = Outcome.TAMPERED
            result.detail = "; ".join(result.tamper)
            flags.append(Flag(Outcome.TAMPERED.value, check.grade_id))
        elif result.outcome == Outcome.PASSED:
            result.points = earned
        checks.append(result)
    _note_restored(restored, notebook_language(assignment.notebook), notes, flags)
    outcomes = {c.outcome for c in checks} | {
        r.get("outcome") for r in cells.values() if r.get("grade_id") not in check_ids
    }
    status, detail = _status(child, limits, died_in, done, bool(cells), outcomes)
    _explain_renamed(checks, assignment, renamed)
    result = SubmissionResult(
        student="",
        assignment=assignment.name,
        assignment_sha256=assignment.sha256,
        submission="",
        submission_sha256="",
        status=status,
        detail=detail,
        total=sum(c.points for c in checks),
        max_total=assignment.max_points,
        checks=checks,
        notes=notes,
        flags=flags,
        graded_at=now_utc(),
    )
    if status in (Status.CRASHED, Status.ERROR) and not cells:
        result.notes.append("The grader's log ends with: " + child.output_tail[-800:].strip())
    return result


def _status(
    child: ChildResult, limits: Limits, died_in: dict | None, done: bool, ran: bool, outcomes: set
) -> tuple[Status, str]:
    """The submission's status, and why, from how its run ended."""
    if child.timed_out:
        return (
            Status.TIMEOUT,
            words("status.ran_too_long", "en", seconds=f"{limits.submission_timeout:g}"),
        )
    if died_in is not None:
        where = died_in.get("grade_id") or words(
            "status.code_cell", "en", index=died_in.get("index")
        )
        return Status.CRASHED, words("status.died_in", "en", where=where)
    if not done:
        return Status.CRASHED, words("status.stopped", "en", code=child.returncode)
    if not ran:  # the run finished but ran no cell: pytest could not collect the notebook
        return Status.ERROR, words("status.nothing_ran", "en", code=child.returncode)
    if Outcome.TIMEOUT in outcomes:
        return Status.TIMEOUT, words(
            "status.cell_timeout", "en", seconds=f"{limits.cell_timeout:g}"
        )
    return Status.OK, ""


def hidden_failure(outputs: list[dict], check: CheckCell) -> str:
    """The message of the hidden test that failed in a check's outputs ("" when none did).

    ``checks.Check.hidden`` raises HiddenTestFailed; an older-style hidden test is a plain
    ``assert`` between the hidden-test markers, recognised by the line that raised, when no
    visible check had failed before it (a ✗ already explains that failure).
    """
    printed = ""
    for output in outputs:
        if output.get("type") != "error":
            printed += str(output.get("text", ""))
            continue
        name, message = output.get("ename"), str(output.get("evalue") or "")
        if name == HIDDEN_TEST_FAILED:
            return message
        visible_failure = any(line.startswith(FAIL_MARK) for line in printed.splitlines())
        if (
            name == "AssertionError"
            and output.get("line") in check.hidden_lines
            and not visible_failure
        ):
            return message or "an assert in the hidden tests failed"
    return ""


def _differ_in_notes_only(actual: str, check: CheckCell) -> bool:
    """True when a check's output is the expected one but for its notes: it ran with a
    correct version of an earlier answer that has a ✗ in its own cell (course/upstream.py),
    and said so; the mistake already cost that cell, so it costs this one nothing."""
    return (
        not check.ran_to_end
        and without_notes(actual) != actual
        and without_notes(actual) == without_notes(check.expected)
    )


def _outcome(value: object) -> Outcome:
    """The plugin's outcome; one it does not know is the grader's error."""
    try:
        return Outcome(value)
    except ValueError:
        return Outcome.GRADER_ERROR


def _error_line(record: dict) -> str:
    """The exception a cell raised, as ``Name: message`` ("" when it raised none)."""
    for output in record.get("outputs", []):
        if output.get("type") == "error":
            return f"{output.get('ename')}: {shorten(str(output.get('evalue')), 200)}"
    return ""


def _failure_line(record: dict) -> str:
    return _error_line(record) or record.get("outcome", "?")
