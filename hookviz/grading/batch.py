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

from ..course.notebooks import NotebookError
from .engine import GradeSettings, SubmissionResult, grade_submission
from .gradebook import GRADEBOOK_CSV, GRADEBOOK_JSON, OutFolder
from .merge import Assignment, load_assignment
from .sandbox import Limits, SandboxError, detect_sandbox
from .selfcheck import verify_solution
from .submissions import Submission, file_sha256, find_submissions


@dataclass(frozen=True)
class GradeOptions:
    """How to grade: parallel jobs, time and memory limits, re-grading, sandbox."""

    jobs: int = os.cpu_count() or 1
    cell_timeout: float = 60.0
    submission_timeout: float = 300.0
    memory_mb: int = 4096
    force: bool = False
    sandbox: str = "auto"
    output_limit: int = 100_000
    check_solution: bool = True  # grade the assignment itself first; stop unless full marks


@dataclass
class Summary:
    """What a run did."""

    gradebook_csv: Path
    gradebook_json: Path
    graded: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    results: list[SubmissionResult] = field(default_factory=list)


class Progress:
    """A plain-text progress bar on stderr: redrawn in a terminal, one line per student in a log."""

    def __init__(self, total: int, stream: TextIO | None = None):
        self.total, self.done = total, 0
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty()
        self.lock = threading.Lock()
        self.started = time.monotonic()

    def step(self, student: str, what: str) -> None:
        with self.lock:
            self.done += 1
            width = 24
            filled = width * self.done // max(self.total, 1)
            bar = "#" * filled + "." * (width - filled)
            line = f"[{bar}] {self.done}/{self.total} {time.monotonic() - self.started:5.0f}s  {student}: {what}"
            if self.tty:
                self.stream.write("\r\033[K" + line + ("\n" if self.done == self.total else ""))
            else:
                self.stream.write(line + "\n")
            self.stream.flush()


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
        return stored if stored.status == "missing" else None
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
    try:
        sandbox = detect_sandbox(options.sandbox, hidden)
    except SandboxError as error:
        raise NotebookError(str(error)) from error
    if sandbox.warning:
        print(f"hookviz grade: warning: {sandbox.warning}", file=stream)
    out = OutFolder(out_path)
    out.check_assignment(assignment)
    settings = GradeSettings(
        Limits(
            cell_timeout=options.cell_timeout,
            submission_timeout=options.submission_timeout,
            memory_mb=options.memory_mb,
        ),
        output_limit=options.output_limit,
    )
    if options.check_solution:
        verify_solution(assignment, sandbox, settings, out, stream)
    summary = Summary(out.path / GRADEBOOK_CSV, out.path / GRADEBOOK_JSON)
    progress = Progress(len(found), stream)
    slots: queue.Queue[int] = queue.Queue()
    for slot in range(options.jobs):
        slots.put(slot)
    scratch = Path(tempfile.mkdtemp(prefix="hookviz-grade-"))
    scratch.chmod(0o711)  # an unprivileged grading user must reach its own folder inside
    record_lock = threading.Lock()

    def grade_one(submission: Submission) -> None:
        with out.claim(submission.student):
            stored = None if options.force else _already_graded(out, submission, assignment)
            if stored is not None:
                with record_lock:
                    summary.skipped.append(submission.student)
                progress.step(submission.student, f"already graded ({_describe(stored)})")
                return
            slot = slots.get()
            try:
                result = grade_submission(
                    submission, assignment, sandbox, settings, slot=slot, scratch=scratch
                )
            finally:
                slots.put(slot)
            out.save(result)
        with out.locked():
            out.rebuild(assignment)
        with record_lock:
            summary.graded.append(submission.student)
        progress.step(submission.student, _describe(result))

    print(
        f"hookviz grade: {len(found)} submissions of {assignment.name}, {options.jobs} at a time, "
        f"sandbox: {sandbox.kind}",
        file=stream,
    )
    pool = ThreadPoolExecutor(max_workers=options.jobs)
    try:
        for future in [pool.submit(grade_one, s) for s in found]:
            future.result()
    except BaseException:  # Ctrl-C or a grader bug: stop every child now, not after its timeout
        pool.shutdown(wait=False, cancel_futures=True)
        sandbox.kill_all()
        raise
    finally:
        pool.shutdown(wait=True)
        shutil.rmtree(scratch, ignore_errors=True)
    with out.locked():
        summary.results = out.rebuild(assignment)
    print(summary_table(summary.results, assignment.max_points), file=stream)
    return summary


def _repository_of(path: Path) -> Path:
    """The git repository holding ``path`` (its history holds the solutions too), else its folder."""
    folder = Path(path).resolve().parent
    for candidate in (folder, *folder.parents):
        if (candidate / ".git").exists():
            return candidate
    return folder
