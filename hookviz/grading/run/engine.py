"""Grading one submission: read, merge, run `pytest --nbval` in the sandbox, score."""

from __future__ import annotations

import ast
import hashlib
import json
import os
import re
import secrets
import shutil
import stat
import sys
import time
import traceback
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from ..course import regions
from ..course.conventions import (
    FAIL_MARK,
    HIDDEN_TEST_FAILED,
    Flag,
    Outcome,
    Status,
    ends_with_sentinel,
    outputs_text,
)
from ..course.notebooks import is_answer, notebook_text
from . import probe
from .flags import imported_names, scan_answers
from .merge import NO_ANSWER, Assignment, CheckCell, Renamed, merge
from .sandbox import ChildResult, Limits, Sandbox
from .submissions import Submission, SubmissionError, file_sha256, read_submission

PLUGIN_DIR = Path(__file__).resolve().parent / "plugin"
# The child's entry point. rfc3987_syntax is an optional jsonschema format checker that takes
# over a second to import (nbformat imports jsonschema); nbformat never needs it.
BOOT = (
    "import sys; sys.modules.setdefault('rfc3987_syntax', None); sys.path.insert(0, sys.argv.pop(1)); "
    "import pytest; raise SystemExit(pytest.main(sys.argv[1:]))"
)
FEEDBACK_OUTPUT_LIMIT = 4_000


@dataclass
class CheckResult:
    """One check cell's result."""

    grade_id: str
    max_points: float
    points: float = 0.0
    outcome: str = Outcome.NOT_RUN  # an Outcome, or the Status of a submission that never ran
    detail: str = ""
    expected: str = ""
    actual: str = ""
    seconds: float = 0.0
    tamper: list[str] = field(default_factory=list)
    nbval_outcome: str = ""  # what the output comparison alone said, before integrity checks
    hidden_failure: str = ""  # the message of a failed hidden test, when one failed
    error: str = ""  # the exception the cell raised, as ``Name: message``, when it raised
    manual: bool = False  # a question graded by hand: ``actual`` is the answer, as markdown
    comment: str = ""  # the grader's comment on a question graded by hand


@dataclass
class SubmissionResult:
    """Everything the gradebook and the feedback file need about one student."""

    student: str
    assignment: str
    assignment_sha256: str
    submission: str
    submission_sha256: str
    status: str
    detail: str
    total: float
    max_total: float
    checks: list[CheckResult]
    notes: list[str] = field(default_factory=list)
    flags: list[str] = field(default_factory=list)  # each Flag's text form, sorted
    matched_by: dict[str, str] = field(default_factory=dict)
    seconds: float = 0.0
    sandbox: str = ""
    graded_at: str = ""

    def to_json(self) -> dict:
        """A plain dict for results/<student>.json."""
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict) -> SubmissionResult:
        """Read back what ``to_json`` wrote."""
        data = dict(data)
        data["checks"] = [CheckResult(**c) for c in data.get("checks", [])]
        return cls(**data)


@dataclass(frozen=True)
class GradeSettings:
    """Per-run settings shared by every submission."""

    limits: Limits
    output_limit: int = 100_000


def empty_result(
    submission: Submission, assignment: Assignment, status: Status, detail: str, sha: str = ""
) -> SubmissionResult:
    """A row for a submission that was not run: every check scores 0 with the reason."""
    checks = [
        CheckResult(c.grade_id, c.points, outcome=status, detail=detail, expected=c.expected)
        for c in assignment.checks
    ] + [
        CheckResult(q.grade_id, q.points, outcome=status, detail=detail, manual=True)
        for q in assignment.manual
    ]
    return SubmissionResult(
        student=submission.student,
        assignment=assignment.name,
        assignment_sha256=assignment.sha256,
        submission=str(submission.path or ""),
        submission_sha256=sha,
        status=status,
        detail=detail,
        total=0.0,
        max_total=assignment.max_points,
        checks=checks,
        graded_at=_now(),
    )


def manual_checks(assignment: Assignment, answers: dict[str, str]) -> list[CheckResult]:
    """The questions graded by hand, each waiting for its grade, with the student's answer."""
    return [
        CheckResult(
            q.grade_id,
            q.points,
            outcome=Outcome.NEEDS_MANUAL_GRADE,
            expected=q.model_answer,
            actual=answers.get(q.grade_id, NO_ANSWER),
            manual=True,
        )
        for q in assignment.manual
    ]


def _with_manual(
    result: SubmissionResult, assignment: Assignment, answers: dict[str, str]
) -> SubmissionResult:
    result.checks = [c for c in result.checks if not c.manual] + manual_checks(assignment, answers)
    return result


def grade_submission(
    submission: Submission,
    assignment: Assignment,
    sandbox: Sandbox,
    settings: GradeSettings,
    *,
    slot: int,
    scratch: Path,
) -> SubmissionResult:
    """Grade one submission; never raises for anything the submission does."""
    started = time.monotonic()
    try:
        result = _grade(submission, assignment, sandbox, settings, slot, scratch)
    except Exception:  # a grader bug must not stop the batch; the row says what happened
        result = empty_result(
            submission,
            assignment,
            Status.ERROR,
            "the grader failed: " + traceback.format_exc(limit=6)[-3000:],
        )
    result.seconds = round(time.monotonic() - started, 3)
    result.sandbox = sandbox.kind
    return result


def _grade(
    submission: Submission,
    assignment: Assignment,
    sandbox: Sandbox,
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
    merged = merge(assignment, student_notebook)
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
        result.notes = notes
        result.flags = _flag_texts(flags)
        result.matched_by = merged.matched_by
        return _with_manual(result, assignment, merged.manual)
    if not assignment.checks:  # only questions graded by hand: nothing to run
        result = empty_result(submission, assignment, Status.OK, "", sha)
        result.notes, result.flags = notes, _flag_texts(flags)
        result.matched_by = merged.matched_by
        return _with_manual(result, assignment, merged.manual)

    workdir = scratch / f"{slot}-{secrets.token_hex(6)}"
    try:
        child = _run(merged.notebook, assignment, sandbox, settings, slot, workdir)
    finally:
        _remove_tree(workdir)
    result = score(assignment, child, settings.limits, merged.renamed)
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
                check.detail = found.explain()
                break


def _normalized(source: str) -> str:
    """A cell's source without trailing spaces and blank lines at either end."""
    return "\n".join(line.rstrip() for line in source.strip().splitlines())


def _run(
    notebook,
    assignment: Assignment,
    sandbox: Sandbox,
    settings: GradeSettings,
    slot: int,
    workdir: Path,
) -> ChildResult:
    for sub in (
        "home",
        "tmp",
        "jupyter/config",
        "jupyter/data",
        "jupyter/runtime",
        "ipython",
        "mpl",
    ):
        (workdir / sub).mkdir(parents=True, exist_ok=True)
    workdir.chmod(0o700)
    notebook_path = workdir / f"{assignment.name}.ipynb"
    notebook_path.write_text(notebook_text(notebook), encoding="utf-8")
    copy_assignment_files(assignment, workdir)
    settings_path = workdir / "hookviz-settings.json"
    checks_path = Path(probe.__file__).resolve().parent.parent / "course" / "checks.py"
    settings_path.write_text(
        json.dumps(
            {
                "notebook": str(notebook_path),
                "output_limit": settings.output_limit,
                "probe_source": Path(probe.__file__).read_text(encoding="utf-8"),
                "probe_config": {
                    "workdir": str(workdir),
                    "checks_path": str(checks_path) if checks_path.is_file() else None,
                    "checks_sha256": _sha256(checks_path) if checks_path.is_file() else None,
                    "preload": instructor_imports(assignment),
                },
                "probe_timeout": min(10.0, settings.limits.cell_timeout),
                "snapshot_timeout": settings.limits.cell_timeout,
            }
        ),
        encoding="utf-8",
    )
    sandbox.prepare_workdir(workdir, slot)
    token = secrets.token_hex(8)
    env = {
        "PATH": os.pathsep.join(
            [str(Path(sys.executable).parent), "/usr/local/bin", "/usr/bin", "/bin"]
        ),
        "HOME": str(workdir / "home"),
        "TMPDIR": str(workdir / "tmp"),
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "JUPYTER_CONFIG_DIR": str(workdir / "jupyter/config"),
        "JUPYTER_DATA_DIR": str(workdir / "jupyter/data"),
        "JUPYTER_RUNTIME_DIR": str(workdir / "jupyter/runtime"),
        "JUPYTER_PLATFORM_DIRS": "1",
        "IPYTHONDIR": str(workdir / "ipython"),
        "MPLCONFIGDIR": str(workdir / "mpl"),
        "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
        "PYDEVD_DISABLE_FILE_VALIDATION": "1",
        "OMP_NUM_THREADS": "1",  # one thread per kernel: submissions run side by side
        "MKL_NUM_THREADS": "1",
        "HOOKVIZ_GRADE_TOKEN": token,
    }
    if os.environ.get("VIRTUAL_ENV"):
        env["VIRTUAL_ENV"] = os.environ["VIRTUAL_ENV"]
    program = [
        sys.executable, "-I", "-c", BOOT, str(PLUGIN_DIR),
        str(notebook_path),
        "-p", "hookviz_grading_plugin",
        "-p", "nbval.plugin",
        "--nbval",
        "--nbval-current-env",
        f"--nbval-cell-timeout={settings.limits.cell_timeout:g}",
        "--noconftest",
        "-p", "no:cacheprovider",
        "-c", os.devnull,
        f"--rootdir={workdir}",
        "-q", "--color=no",
        f"--hookviz-config={settings_path}",
    ]  # fmt: skip
    return sandbox.run(
        program,
        workdir=workdir,
        env=env,
        limits=settings.limits,
        slot=slot,
        log_path=workdir.parent / f"{workdir.name}.log",
    )


def copy_assignment_files(assignment: Assignment, workdir: Path) -> None:
    """The files beside the instructor's notebook (data, helper modules), where the notebook
    finds them: the kernel runs in ``workdir``, as it ran beside the notebook."""
    folder = assignment.path.parent
    for path in assignment.files:
        target = workdir / path.relative_to(folder)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)


def instructor_imports(assignment: Assignment) -> list[str]:
    """Modules the instructor's own code cells import: pinned before the first student cell.

    ``from a.b import c`` gives ``a.b`` and ``a.b.c`` (c may be a module); names that are not
    modules are skipped in the kernel.
    """
    found: dict[str, None] = {}
    for cell in assignment.notebook.cells:
        if cell.cell_type != "code" or is_answer(cell):
            continue
        try:
            tree = ast.parse(regions.python_source(regions.remove_hidden_tests(cell.source)))
        except (SyntaxError, ValueError, RecursionError, regions.RegionError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                found.update(dict.fromkeys(alias.name for alias in node.names))
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                found[node.module] = None
                found.update(
                    dict.fromkeys(f"{node.module}.{a.name}" for a in node.names if a.name != "*")
                )
    return list(found)


ADVICE = {
    Outcome.MISMATCH: "Compare your output with what the check looks for, above.",
    Outcome.ERROR: "The check stopped with an error (shown above); your answer raised it or made the check fail.",
    Outcome.TIMEOUT: "This check ran out of time: look for a loop that never ends, or work that is far too slow.",
    Outcome.KERNEL_DIED: "Python stopped while this check ran (os._exit, a crash, or too much memory).",
    Outcome.NOT_RUN: "This check did not run, because of what happened earlier in the notebook.",
    Outcome.TAMPERED: "The grader's tools were changed while this check ran; the check counts for nothing.",
    Outcome.GRADER_ERROR: "The grader could not run this check; ask your instructor.",
    Outcome.SKIPPED: "This check was skipped.",
}


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
                f"Your answer cell {answer.grade_id} failed when it ran: {_failure_line(record)}"
            )
    for check in assignment.checks:
        record = cells.get(check.index)
        result = CheckResult(check.grade_id, check.points, expected=check.expected)
        if record is None:
            if child.timed_out:
                result.detail = f"the whole submission ran out of time ({limits.submission_timeout:g} s) before this check"
            elif died_in is not None:
                result.detail = "the kernel had died before this check"
            else:
                result.detail = "grading stopped before this check (the notebook run crashed)"
            checks.append(result)
            continue
        result.actual = outputs_text(record.get("outputs", []))
        result.hidden_failure = hidden_failure(record.get("outputs", []), check)
        result.error = _error_line(record)
        result.seconds = float(record.get("seconds") or 0)
        result.tamper = [str(t) for t in record.get("tamper", [])]
        result.outcome = result.nbval_outcome = _outcome(record.get("outcome"))
        result.detail = str(record.get("detail") or "")
        if result.outcome == Outcome.TIMEOUT:
            result.detail = f"the check ran longer than {limits.cell_timeout:g} s"
        elif result.outcome == Outcome.ERROR and "NotImplementedError" in result.error:
            result.detail = "an answer this check uses is not written yet (NotImplementedError)"
        elif (
            check.ran_to_end
            and result.outcome == Outcome.PASSED
            and not ends_with_sentinel(result.actual, check.grade_id)
        ):  # a bare check's output is not compared: only reaching its sentinel scores
            result.outcome = Outcome.MISMATCH
            result.detail = "the check did not run to its end"
        if result.tamper:
            result.outcome = Outcome.TAMPERED
            result.detail = "; ".join(result.tamper)
            flags.append(Flag(Outcome.TAMPERED.value, check.grade_id))
        elif result.outcome == Outcome.PASSED:
            result.points = check.points
        checks.append(result)
    outcomes = {c.outcome for c in checks} | {
        r.get("outcome") for r in cells.values() if r.get("grade_id") not in check_ids
    }
    if child.timed_out:
        status, detail = (
            Status.TIMEOUT,
            f"the submission ran longer than {limits.submission_timeout:g} s and was stopped",
        )
    elif died_in is not None:
        where = died_in.get("grade_id") or f"code cell {died_in.get('index')}"
        status, detail = Status.CRASHED, f"the kernel died in {where}"
    elif not done:
        status = Status.CRASHED
        detail = f"the grading run stopped unexpectedly (exit code {child.returncode})"
    elif not cells:  # the run finished but ran no cell: pytest could not collect the notebook
        status = Status.ERROR
        detail = f"no cell of the notebook ran (pytest exited with code {child.returncode})"
    elif Outcome.TIMEOUT in outcomes:
        status, detail = Status.TIMEOUT, f"a cell ran longer than {limits.cell_timeout:g} s"
    else:
        status, detail = Status.OK, ""
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
        graded_at=_now(),
    )
    if status in (Status.CRASHED, Status.ERROR) and not cells:
        result.notes.append("The grader's log ends with: " + child.output_tail[-800:].strip())
    return result


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
            return f"{output.get('ename')}: {str(output.get('evalue'))[:200]}"
    return ""


def _failure_line(record: dict) -> str:
    return _error_line(record) or record.get("outcome", "?")


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _remove_tree(path: Path) -> None:
    """Delete a work folder even when the student's code made parts of it read-only."""

    def unlock(function, target, _info) -> None:
        try:
            os.chmod(Path(target).parent, stat.S_IRWXU)
            os.chmod(target, stat.S_IRWXU)
            function(target)
        except OSError:
            pass

    if path.exists():
        shutil.rmtree(path, onerror=unlock)
    log = path.parent / f"{path.name}.log"
    log.unlink(missing_ok=True)
