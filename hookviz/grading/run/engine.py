"""Grading one submission: read it, merge it into the instructor's notebook, run it, score it.

The steps have homes of their own: merging in core/merge.py, the sandboxed run in
nbval_child.py, scoring in scoring.py, the result types in core/results.py.
"""

from __future__ import annotations

import secrets
import time
import traceback
from pathlib import Path

from ...course.conventions import Flag, Status, shorten
from ...course.format.steps import notebook_language
from ..core.languages import assignment_in, submission_language
from ..core.merge import Assignment, merge
from ..core.results import SubmissionResult, empty_result, manual_checks
from ..core.submissions import Submission, SubmissionError, file_sha256, read_submission
from .flags import imported_names, scan_answers
from .nbval_child import GradeSettings, remove_tree, run_notebook
from .sandbox import ChildRunner
from .scoring import score


def _with_manual(
    result: SubmissionResult, assignment: Assignment, answers: dict[str, str]
) -> SubmissionResult:
    result.checks = [c for c in result.checks if not c.manual] + manual_checks(assignment, answers)
    return result


def grade_submission(
    submission: Submission,
    assignment: Assignment,
    sandbox: ChildRunner,
    settings: GradeSettings,
    *,
    slot: int,
    scratch: Path,
) -> SubmissionResult:
    """Grade one submission; never raises for anything the submission does."""
    started = time.monotonic()
    failed = ""
    for _attempt in range(2):  # once more after a failure of ours: a passing one is flagged
        try:
            result = _grade(submission, assignment, sandbox, settings, slot, scratch)
        except Exception as error:  # a grader bug must not stop the batch; the row says so
            failed = failed or traceback.format_exc(limit=6)[-3000:]
            reason = shorten(f"{type(error).__name__}: {error}", 200)
            continue
        if failed:
            result.flags = sorted({*result.flags, str(Flag("graded-twice", reason))})
        break
    else:
        result = empty_result(submission, assignment, Status.ERROR, "the grader failed: " + failed)
    result.seconds = round(time.monotonic() - started, 3)
    result.sandbox = sandbox.kind
    return result


def _grade(
    submission: Submission,
    assignment: Assignment,
    sandbox: ChildRunner,
    settings: GradeSettings,
    slot: int,
    scratch: Path,
) -> SubmissionResult:
    if submission.path is None:
        return empty_result(
            submission, assignment, Status.MISSING, submission.note or "no notebook"
        )
    try:
        student_notebook, sha = read_submission(submission.path)
    except SubmissionError as error:
        try:  # the hash lets a re-run notice a fixed resubmission
            sha = file_sha256(submission.path)
        except OSError:
            sha = ""
        return empty_result(submission, assignment, Status(error.status), str(error), sha)
    graded = assignment_in(assignment, submission_language(student_notebook))  # its language
    feedback_lang = notebook_language(graded.notebook)  # English when there is no such copy
    merged = merge(graded, student_notebook)
    notes = ([submission.note] if submission.note else []) + merged.notes
    flags = merged.flags + ([Flag("notebook-renamed")] if submission.note else [])
    present = merged.present
    stubs = {a.grade_id: _normalized(a.stub) for a in assignment.answers}
    blank = all(_normalized(src) in ("", stubs.get(gid)) for gid, src in present.items())
    if assignment.answers and (not present or blank):
        detail = (
            "every answer cell is still as it was handed out: nothing was written"
            if present
            else "no answer cell was found in the notebook"
        )
        result = empty_result(submission, assignment, Status.NO_ANSWERS, detail, sha)
        result.lang = feedback_lang
        result.notes = notes
        result.flags = _flag_texts(flags)
        result.matched_by = merged.matched_by
        return _with_manual(result, assignment, merged.manual)
    if not assignment.checks:  # only questions graded by hand: nothing to run
        result = empty_result(submission, assignment, Status.OK, "", sha)
        result.lang = feedback_lang
        result.notes, result.flags = notes, _flag_texts(flags)
        result.matched_by = merged.matched_by
        return _with_manual(result, assignment, merged.manual)

    workdir = scratch / f"{slot}-{secrets.token_hex(6)}"
    try:
        child = run_notebook(merged.notebook, graded, sandbox, settings, slot, workdir)
    finally:
        remove_tree(workdir)
    result = score(graded, child, settings.limits, merged.renamed)
    result.assignment_sha256 = assignment.sha256  # one assignment, whichever its language
    result.lang = feedback_lang
    result.student = submission.student
    result.submission = str(submission.path)
    result.submission_sha256 = sha
    result.notes = notes + result.notes
    imported = set().union(
        *(imported_names(c.source) for c in assignment.notebook.cells if c.cell_type == "code")
    )
    result.flags = _flag_texts([*scan_answers(present, imported), *result.flags, *flags])
    result.matched_by = merged.matched_by
    return _with_manual(result, assignment, merged.manual)


def _flag_texts(flags: list[Flag | str]) -> list[str]:
    """Flags as the result stores them: their text forms, sorted, each once."""
    return sorted({str(flag) for flag in flags})


def _normalized(source: str) -> str:
    """A cell's source without trailing spaces and blank lines at either end."""
    return "\n".join(line.rstrip() for line in source.strip().splitlines())
