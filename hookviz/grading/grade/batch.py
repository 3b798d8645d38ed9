"""`hookviz grade`: a whole folder of submissions, in parallel, into one gradebook."""

from __future__ import annotations

import os
import queue
import shutil
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from tqdm import tqdm

from ...course.conventions import Status
from ...course.format.notebooks import NotebookError
from ..core.gradebook import GRADEBOOK_CSV, GRADEBOOK_JSON, OutFolder
from ..core.merge import Assignment, load_assignment
from ..core.results import SubmissionResult
from ..core.submissions import Submission, file_sha256, find_submissions
from ..manual.sheets import MANUAL_CSV, write_manual_grading
from ..run.engine import grade_submission
from ..run.limits import Limits
from ..run.nbval_child import GradeSettings, instructor_imports
from ..run.sandbox import SandboxError, detect_sandbox
from ..run.selfcheck import verify_solution
from ..run.warm_kernel import WarmSandbox

# While grading, the gradebook is rebuilt (from every result file) at most every 2 s, and at
# most a tenth of the time (10,000 rows take seconds); once more at the end.
REBUILD_EVERY, REBUILD_SHARE = 2.0, 0.1


@dataclass(frozen=True)
class GradeOptions:
    """How to grade: parallel jobs, time and memory limits, re-grading, sandbox."""

    jobs: int | None = None  # None: one per CPU here; with a scheduler, twice its worker threads
    limits: Limits = Limits()  # time and memory per cell, per submission, per process
    force: bool = False
    sandbox: str = "auto"
    output_limit: int = 100_000
    check_solution: bool = True  # grade the assignment itself first; stop unless full marks
    scheduler: str | None = None  # a Dask scheduler's address, or local:N (see cluster.py)
    warm_start: bool = True  # fork each submission from a warm process per slot (warm_kernel.py)


@dataclass
class Summary:
    """What a run did."""

    gradebook_csv: Path
    gradebook_json: Path
    graded: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    results: list[SubmissionResult] = field(default_factory=list)


class Progress:
    """Progress on ``stream``: a tqdm bar in a terminal or notebook, one line per student in a log."""

    def __init__(self, total: int, stream: TextIO | None = None):
        self.total, self.done = total, 0
        self.stream = stream or sys.stderr
        self.lock = threading.Lock()
        self.started = time.monotonic()
        live = _is_terminal(self.stream)
        # In a log tqdm would join its redraws with carriage returns: there we write lines.
        self.bar = tqdm(total=total, file=self.stream, unit="submission", disable=not live)

    def step(self, student: str, what: str) -> None:
        with self.lock:
            self.done += 1
            if self.bar.disable:
                elapsed = time.monotonic() - self.started
                self.stream.write(f"{self.done}/{self.total} {elapsed:5.0f}s  {student}: {what}\n")
                self.stream.flush()
            else:
                self.bar.set_postfix_str(f"{student}: {what}", refresh=False)
                self.bar.update()

    def close(self) -> None:
        self.bar.close()


def _is_terminal(stream: TextIO) -> bool:
    """A terminal, or a Jupyter kernel's stream (its front end draws carriage returns)."""
    return stream.isatty() or type(stream).__module__.startswith("ipykernel")


class LocalGrader:
    """Grades on this machine: ``jobs`` sandboxed children at a time."""

    def __init__(
        self,
        assignment: Assignment,
        settings: GradeSettings,
        sandbox_mode: str,
        hidden: list[Path],
        jobs: int | None,
        warm_start: bool = True,
    ):
        try:
            sandbox = detect_sandbox(sandbox_mode, hidden)
        except SandboxError as error:
            raise NotebookError(str(error)) from error
        self.assignment, self.settings = assignment, settings
        self.jobs = jobs or os.cpu_count() or 1
        self.warnings = [sandbox.warning] if sandbox.warning else []
        self._slots: queue.Queue[int] = queue.Queue()
        for slot in range(self.jobs):
            self._slots.put(slot)
        self._scratch = Path(tempfile.mkdtemp(prefix="hookviz-grade-"))
        self._scratch.chmod(0o711)  # an unprivileged grading user must reach its own folder inside
        self.warm = (
            WarmSandbox(sandbox, instructor_imports(assignment), self._scratch)
            if warm_start and sandbox.kind == "bwrap"
            else None
        )
        self.sandbox = self.warm or sandbox
        start = "warm" if self.warm else "cold"
        self.description = f"{self.jobs} at a time, sandbox: {sandbox.kind}, {start} start"

    def grade(self, submission: Submission) -> SubmissionResult:
        """The submission's result; waits for a free slot."""
        slot = self._slots.get()
        try:
            return grade_submission(
                submission,
                self.assignment,
                self.sandbox,
                self.settings,
                slot=slot,
                scratch=self.warm.slot_dir(slot) if self.warm else self._scratch,
            )
        finally:
            self._slots.put(slot)

    def stop(self) -> None:
        """Kill every running child now (the grader is stopping), not after its timeout."""
        self.sandbox.kill_all()

    def close(self) -> None:
        if self.warm:
            self.warm.close()
        shutil.rmtree(self._scratch, ignore_errors=True)


def summary_table(results: list[SubmissionResult], max_total: float) -> str:
    """Student, score, status and flags, one aligned row each."""
    rows = [("student", "score", "status", "flags")]
    rows += [
        (r.student, f"{r.total:g}/{max_total:g}", r.status, "; ".join(r.flags)) for r in results
    ]
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    lines = [
        "  ".join(cell.ljust(widths[i]) if i < 3 else cell for i, cell in enumerate(row)).rstrip()
        for row in rows
    ]
    return "\n".join([lines[0], "-" * max(len(lines[0]), 20), *lines[1:]])


def _describe(result: SubmissionResult) -> str:
    text = f"{result.total:g}/{result.max_total:g} {result.status}"
    return text + (f" [flags: {'; '.join(result.flags)}]" if result.flags else "")


def _already_graded(
    out: OutFolder, submission: Submission, assignment: Assignment
) -> SubmissionResult | None:
    """The stored result, if it is for this very submission file and assignment."""
    stored = out.load(submission.student)
    if stored is None or stored.assignment_sha256 != assignment.sha256:
        return None
    if submission.path is None:
        return stored if stored.status == Status.MISSING else None
    try:
        current = file_sha256(submission.path)
    except OSError:
        return None
    return (
        stored
        if stored.submission_sha256 == current and stored.submission == str(submission.path)
        else None
    )


def grade_folder(
    submissions: Path,
    assignment_path: Path,
    out_path: Path,
    options: GradeOptions,
    *,
    stream: TextIO | None = None,
) -> Summary:
    """Grade every submission in ``submissions`` into ``out_path``; every student gets a row."""
    stream = stream or sys.stderr
    assignment = load_assignment(assignment_path)
    found = find_submissions(submissions, assignment.name)
    if not found:
        raise NotebookError(
            f"no submissions in {submissions}: expected {submissions}/<student>/{assignment.name}.ipynb "
            f"or {submissions}/<student>.ipynb."
        )
    hidden = [Path(submissions), Path(out_path), _repository_of(assignment.path)]
    out = OutFolder(out_path)
    out.check_assignment(assignment)
    settings = GradeSettings(
        options.limits,
        output_limit=options.output_limit,
    )
    if options.scheduler:  # Dask is imported only when a cluster is asked for
        from .cluster import ClusterGrader

        grader = ClusterGrader(
            options.scheduler, assignment, settings, options.sandbox, hidden, options.jobs, stream
        )
    else:
        grader = LocalGrader(
            assignment, settings, options.sandbox, hidden, options.jobs, options.warm_start
        )
    for warning in grader.warnings:
        print(f"hookviz grade: warning: {warning}", file=stream)
    if options.check_solution:
        try:
            verify_solution(assignment, None, settings, out, stream, grade=grader.grade)
        except BaseException:
            grader.stop()
            grader.close()
            raise
    summary = Summary(out.path / GRADEBOOK_CSV, out.path / GRADEBOOK_JSON)
    progress = Progress(len(found), stream)
    record_lock = threading.Lock()
    rebuild_due = [0.0]

    def grade_one(submission: Submission) -> None:
        with out.claim(submission.student):
            stored = None if options.force else _already_graded(out, submission, assignment)
            if stored is not None:
                with record_lock:
                    summary.skipped.append(submission.student)
                progress.step(submission.student, f"already graded ({_describe(stored)})")
                return
            result = grader.grade(submission)
            out.save(result)
        if time.monotonic() >= rebuild_due[0]:
            started = rebuild_due[0] = time.monotonic()
            rebuild_due[0] += REBUILD_EVERY  # the other threads skip it meanwhile
            with out.locked():
                out.rebuild(assignment)
            rebuild_due[0] = started + max(
                REBUILD_EVERY, (time.monotonic() - started) / REBUILD_SHARE
            )
        with record_lock:
            summary.graded.append(submission.student)
        progress.step(submission.student, _describe(result))

    print(
        f"hookviz grade: {len(found)} submissions of {assignment.name}, {grader.description}",
        file=stream,
    )
    pool = ThreadPoolExecutor(max_workers=grader.jobs)
    try:
        for future in [pool.submit(grade_one, s) for s in found]:
            future.result()
    except BaseException:  # Ctrl-C or a grader bug: stop every child now, not after its timeout
        pool.shutdown(wait=False, cancel_futures=True)
        grader.stop()
        raise
    finally:
        pool.shutdown(wait=True)
        progress.close()
        grader.close()
    with out.locked():
        summary.results = out.rebuild(assignment)
    print(summary_table(summary.results, assignment.max_points), file=stream)
    if assignment.manual:
        pages = write_manual_grading(out, assignment)
        print(
            f"hookviz grade: {len(pages)} questions are graded by hand: read the answers in "
            f"{pages[0].parent}/<question>.html, fill in {pages[0].parent / MANUAL_CSV}, then "
            f"run `hookviz merge-manual {out.path} {pages[0].parent / MANUAL_CSV}`.",
            file=stream,
        )
    return summary


def _repository_of(path: Path) -> Path:
    """The git repository holding ``path`` (its history holds the solutions too), else its folder."""
    folder = Path(path).resolve().parent
    for candidate in (folder, *folder.parents):
        if (candidate / ".git").exists():
            return candidate
    return folder
