"""`hookviz grade --scheduler`: every submission is one task on a Dask distributed cluster.

A task carries all its worker needs, the instructor's notebook and the submission's bytes, and
brings back the SubmissionResult: no shared file system is assumed. The worker runs the very
`grade_submission` a local run does, in a sandbox it detects for itself, with the same limits.
The client keeps batch.py's loop (claims, skips, result files, the gradebook), so a cluster run
has the guarantees of a local one. Dask is imported by this module only, and batch.py imports
it only when a scheduler is given.
"""

from __future__ import annotations

import hashlib
import logging
import multiprocessing.util
import platform
import shutil
import socket
import tempfile
import threading
import time
import uuid
from concurrent.futures import CancelledError
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import TextIO

import hookviz

from ...course.conventions import Status, shorten
from ...course.format.notebooks import NotebookError
from ..core.gradebook import safe_name
from ..core.merge import Assignment, load_assignment
from ..core.results import SubmissionResult, empty_result
from ..core.submissions import (
    MAX_SUBMISSION_BYTES,
    Submission,
    SubmissionError,
    file_sha256,
    read_submission,
)
from ..run.engine import grade_submission
from ..run.nbval_child import GradeSettings
from ..run.sandbox import Sandbox, SandboxError, detect_sandbox

try:  # the optional extra: pip install 'hookviz[cluster]'
    import distributed
except ImportError as error:  # pragma: no cover - exercised only without the extra
    raise NotebookError(
        "--scheduler needs Dask's distributed scheduler, which is not installed here "
        f"({error}). Install it with: pip install 'hookviz[cluster]' (or 'dask[distributed]')."
    ) from error

WORKER_WAIT = 600.0  # seconds to wait for the first worker (a batch queue may take a while)
PREFLIGHT_WAIT = 180.0  # seconds each worker may take to detect its sandbox
LOCAL_PREFIX = "local:"


@dataclass(frozen=True)
class Scheduler:
    """Where the tasks go: a running scheduler's address, or a LocalCluster of N processes."""

    address: str | None = None
    local_workers: int | None = None

    @classmethod
    def parse(cls, text: str) -> Scheduler:
        """``tcp://HOST:PORT`` (or another Dask address) or ``local:N``; NotebookError otherwise."""
        text = text.strip()
        if text.startswith(LOCAL_PREFIX):
            count = text[len(LOCAL_PREFIX) :]
            if not count.isdigit() or int(count) < 1:
                raise NotebookError(
                    f"--scheduler {text!r}: after 'local:' give how many worker processes to "
                    "start here, e.g. --scheduler local:4."
                )
            return cls(local_workers=int(count))
        scheme, _, rest = text.rpartition("://")
        host, _, port = rest.rpartition(":")
        if scheme not in ("", "tcp", "tls", "ws", "wss", "ucx") or not host or not port.isdigit():
            raise NotebookError(
                f"--scheduler {text!r} is not a scheduler address: pass the address `dask "
                "scheduler` prints, such as tcp://10.0.0.5:8786, or local:N to start N worker "
                "processes on this machine."
            )
        return cls(address=text if scheme else f"tcp://{text}")


@dataclass(frozen=True)
class GradeTask:
    """One submission, with everything a worker needs to grade it."""

    student: str
    note: str
    path: str  # where the client found it ("" when the student has no notebook)
    data: bytes | None  # the file's bytes (None when there is no file)
    assignment_name: str
    assignment_bytes: bytes
    settings: GradeSettings
    sandbox: str  # 'auto', 'bwrap' or 'none': each worker detects its own
    hidden: tuple[str, ...]  # the client's folders, hidden on workers where they exist
    assignment_files: tuple[tuple[str, bytes], ...] = ()  # beside the notebook: (path, bytes)


def code_fingerprint() -> str:
    """A hash of hookviz's Python and TOML files: client and workers must grade with the same code."""
    package = Path(hookviz.__file__).resolve().parent
    digest = hashlib.sha256()
    for path in sorted(package.rglob("*")):
        if path.suffix in (".py", ".toml") and "__pycache__" not in path.parts:
            digest.update(str(path.relative_to(package)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


# -- on a worker -------------------------------------------------------------------------------


class _WorkerState:
    """What one worker process keeps between tasks: folders, assignments, sandboxes, slots."""

    def __init__(self) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="hookviz-worker-"))
        self.root.chmod(0o711)  # an unprivileged grading user must reach its work folder
        self.inputs = self.root / "inputs"  # copies of notebooks: hidden from every sandbox
        self.inputs.mkdir(mode=0o700)
        self.scratch = self.root / "scratch"
        self.scratch.mkdir()
        self.scratch.chmod(0o711)
        self._assignments: dict[str, Assignment] = {}
        self._sandboxes: dict[tuple[str, tuple[str, ...]], Sandbox] = {}
        self._slots: set[int] = set()
        self._lock = threading.Lock()
        # Runs at the worker's exit, also in a Nanny's multiprocessing child (atexit does not).
        multiprocessing.util.Finalize(
            self,
            shutil.rmtree,
            args=(str(self.root),),
            kwargs={"ignore_errors": True},
            exitpriority=10,
        )

    def assignment(
        self, name: str, data: bytes, files: tuple[tuple[str, bytes], ...] = ()
    ) -> Assignment:
        """The instructor's notebook and the files beside it, loaded and validated once per worker.

        The folder stays until the worker exits: each grading folder copies the files from it.
        """
        digest = hashlib.sha256(data)
        for relative, content in files:
            digest.update(relative.encode() + b"\0" + hashlib.sha256(content).digest())
        key = digest.hexdigest()
        with self._lock:
            if key not in self._assignments:
                folder = Path(tempfile.mkdtemp(dir=self.inputs))
                try:
                    path = folder / f"{name}.ipynb"
                    path.write_bytes(data)
                    for relative, content in files:
                        target = folder / relative
                        target.parent.mkdir(parents=True, exist_ok=True)
                        target.write_bytes(content)
                    self._assignments[key] = load_assignment(path)
                except BaseException:
                    shutil.rmtree(folder, ignore_errors=True)
                    raise
            return self._assignments[key]

    def sandbox(self, mode: str, hidden: tuple[str, ...]) -> Sandbox:
        """The sandbox for ``mode``, checked to work on this worker (once)."""
        with self._lock:
            key = (mode, hidden)
            if key not in self._sandboxes:
                self._sandboxes[key] = detect_sandbox(mode, [*map(Path, hidden), self.inputs])
            return self._sandboxes[key]

    def take_slot(self) -> int:
        """The lowest slot no task of this worker uses (it picks the grading user under root)."""
        with self._lock:
            slot = next(n for n in range(len(self._slots) + 1) if n not in self._slots)
            self._slots.add(slot)
            return slot

    def give_back(self, slot: int) -> None:
        with self._lock:
            self._slots.discard(slot)


_state: _WorkerState | None = None
_state_lock = threading.Lock()


def _worker_state() -> _WorkerState:
    global _state
    with _state_lock:
        if _state is None:
            _state = _WorkerState()
        return _state


def grade_on_worker(task: GradeTask) -> SubmissionResult:
    """Run on a worker: the job a local run does for one submission, from the task's bytes."""
    state = _worker_state()
    assignment = state.assignment(
        task.assignment_name, task.assignment_bytes, task.assignment_files
    )
    sandbox = state.sandbox(task.sandbox, task.hidden)
    folder = Path(tempfile.mkdtemp(dir=state.inputs))
    slot = state.take_slot()
    try:
        path = None
        if task.data is not None:
            path = folder / Path(task.path).name  # the file's own name: messages quote it
            path.write_bytes(task.data)
        submission = Submission(task.student, path, task.note)
        result = grade_submission(
            submission, assignment, sandbox, task.settings, slot=slot, scratch=state.scratch
        )
    finally:
        state.give_back(slot)
        shutil.rmtree(folder, ignore_errors=True)
    result.submission = task.path  # the client's path, which its next run compares
    return result


def describe_worker(sandbox_mode: str, hidden: tuple[str, ...]) -> dict:
    """Run on each worker before grading: its code, versions and sandbox (or why it has none)."""
    report = {
        "host": socket.gethostname(),
        "fingerprint": code_fingerprint(),
        "python": platform.python_version(),
        "torch": _version("torch"),
        "sandbox": None,
        "warning": None,
        "error": None,
    }
    try:
        sandbox = _worker_state().sandbox(sandbox_mode, hidden)
        report["sandbox"], report["warning"] = sandbox.kind, sandbox.warning
    except SandboxError as error:
        report["error"] = str(error)
    return report


def _version(name: str) -> str:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "not installed"


# -- on the client -----------------------------------------------------------------------------


class ClusterGrader:
    """Grades submissions on a Dask cluster, one task each; ``grade`` blocks until the result is in."""

    def __init__(
        self,
        scheduler: str,
        assignment: Assignment,
        settings: GradeSettings,
        sandbox_mode: str,
        hidden: list[Path],
        jobs: int | None,
        stream: TextIO,
    ):
        where = Scheduler.parse(scheduler)
        self.assignment, self.settings, self.sandbox_mode = assignment, settings, sandbox_mode
        self.hidden = tuple(str(Path(p).resolve()) for p in hidden)
        self.assignment_bytes = Path(assignment.path).read_bytes()
        folder = Path(assignment.path).parent
        self.assignment_files = tuple(
            (file.relative_to(folder).as_posix(), file.read_bytes()) for file in assignment.files
        )
        if hashlib.sha256(self.assignment_bytes).hexdigest() != assignment.notebook_sha256:
            raise NotebookError(f"{assignment.path} changed while grading started; run again.")
        self._futures: set[distributed.Future] = set()
        self._lock = threading.Lock()
        self._stopping = False
        self.cluster = None
        try:
            if where.local_workers is not None:
                self.cluster = distributed.LocalCluster(
                    n_workers=where.local_workers,
                    threads_per_worker=1,
                    processes=True,
                    dashboard_address=None,
                    silence_logs=logging.ERROR,
                )
                address = self.cluster.scheduler_address
                self.client = distributed.Client(self.cluster, set_as_default=False)
            else:
                address = str(where.address)
                self.client = _connect(address)
            threads = self._wait_for_workers(address, stream)
            reports = self._preflight()
        except BaseException:
            self.close()
            raise
        self.jobs = jobs or max(8, 2 * threads)
        kinds = sorted({r["sandbox"] for r in reports.values()})
        self.description = (
            f"{self.jobs} at a time on {len(reports)} Dask workers ({threads} threads) at {address}, "
            f"sandbox: {', '.join(kinds)}"
        )
        self.warnings = sorted(
            {
                f"{r['warning']} (on {_names(reports, r['warning'])})"
                for r in reports.values()
                if r["warning"]
            }
        )
        if "none" in kinds:
            self.warnings.append(
                "on a cluster, a submission graded without bubblewrap also has its worker's "
                "network: it can reach the Dask scheduler, and through it run code on every worker "
                "and change any result. Use --sandbox none only where each grading process is "
                "already cut off from the network."
            )
        versions = {(r["python"].rsplit(".", 1)[0], r["torch"]) for r in reports.values()}
        if len(versions) > 1:
            self.warnings.append(
                "workers run different Python or torch versions ("
                + "; ".join(f"Python {p}, torch {t}" for p, t in sorted(versions))
                + "): outputs may differ between them. Give every worker the course's environment."
            )

    def _wait_for_workers(self, address: str, stream: TextIO) -> int:
        """Total worker threads, once at least one worker is there."""
        if not self.client.nthreads():
            print(f"hookviz grade: waiting for a Dask worker to join {address} ...", file=stream)
            try:
                self.client.wait_for_workers(1, timeout=WORKER_WAIT)
            except TimeoutError as error:
                raise NotebookError(
                    f"no Dask worker joined {address} within {WORKER_WAIT:g} s. Start workers with "
                    f"`dask worker {address} --nthreads 1` in the course's Python environment."
                ) from error
        return sum(self.client.nthreads().values())

    def _preflight(self) -> dict[str, dict]:
        """Every worker's report; NotebookError naming the worker that cannot grade, and the fix."""
        for attempt in range(2):
            reports = self._ask_workers()
            fingerprint = code_fingerprint()
            differ = [w for w, r in reports.items() if r["fingerprint"] != fingerprint]
            if not differ:
                return reports
            if attempt == 0:  # a file saved just then (an edit in progress) is no other version
                time.sleep(2.0)
        worker = differ[0]
        raise NotebookError(
            f"the Dask worker {worker} ({reports[worker]['host']}) has another version of hookviz "
            "than this machine (its grading code differs). Install the same commit of the course "
            "repository on the workers, then run again."
        )

    def _ask_workers(self) -> dict[str, dict]:
        futures = {
            worker: self.client.submit(
                describe_worker,
                self.sandbox_mode,
                self.hidden,
                key=f"hookviz-preflight-{uuid.uuid4().hex[:12]}",
                workers=[worker],
                allow_other_workers=False,
                pure=False,
            )
            for worker in self.client.nthreads()
        }
        deadline = time.monotonic() + PREFLIGHT_WAIT
        reports = {}
        for worker, future in futures.items():
            try:
                report = future.result(timeout=max(deadline - time.monotonic(), 1.0))
            except TimeoutError as error:
                raise NotebookError(
                    f"the Dask worker {worker} did not answer within {PREFLIGHT_WAIT:g} s (it was "
                    "to check its sandbox). Make sure it is not busy with other work, then run again."
                ) from error
            except Exception as error:
                raise NotebookError(
                    f"the Dask worker {worker} cannot run hookviz's grader "
                    f"({type(error).__name__}: {error}). Every worker needs the course repository's "
                    "Python environment (pip install -e '.[dev,cluster]' from the repository)."
                ) from error
            if report["error"]:
                raise NotebookError(
                    f"the Dask worker {worker} ({report['host']}): {report['error']}"
                )
            reports[worker] = report
        return reports

    def grade(self, submission: Submission) -> SubmissionResult:
        """The submission's result, graded on a worker; an "error" row when the cluster lost it."""
        started = time.monotonic()
        data = None
        if submission.path is not None:
            try:
                if submission.path.stat().st_size > MAX_SUBMISSION_BYTES:
                    read_submission(submission.path)  # raises what a worker would say of it
                data = submission.path.read_bytes()
            except OSError as error:
                return self._refused(
                    submission, Status.INVALID, f"cannot read the file ({error})", started
                )
            except SubmissionError as error:
                return self._refused(submission, error.status, str(error), started)
        task = GradeTask(
            student=submission.student,
            note=submission.note,
            path=str(submission.path or ""),
            data=data,
            assignment_name=self.assignment.name,
            assignment_bytes=self.assignment_bytes,
            assignment_files=self.assignment_files,
            settings=self.settings,
            sandbox=self.sandbox_mode,
            hidden=self.hidden,
        )
        future = self.client.submit(
            grade_on_worker,
            task,
            key=f"hookviz-grade-{safe_name(submission.student)}-{uuid.uuid4().hex[:12]}",
            pure=False,
        )
        with self._lock:
            self._futures.add(future)
        try:
            return future.result()
        except CancelledError as error:  # stopping, or the scheduler is gone with every task
            if self._stopping:
                raise
            raise NotebookError(
                f"lost the Dask scheduler ({type(error).__name__}: {error}). Run the same command "
                "again: students graded so far are kept, the others are graded then."
            ) from error
        except Exception as error:  # the task failed on the cluster, not the submission's grade
            if self._stopping:
                raise
            return self._lost(submission, error, started)
        finally:
            with self._lock:
                self._futures.discard(future)

    def _refused(
        self, submission: Submission, status: str, message: str, started: float
    ) -> SubmissionResult:
        """A file that is never sent (too large, unreadable): the row a worker would have written."""
        try:
            sha = file_sha256(submission.path)
        except OSError:
            sha = ""
        result = empty_result(submission, self.assignment, status, message, sha)
        result.seconds = round(time.monotonic() - started, 3)
        return result

    def _lost(self, submission: Submission, error: Exception, started: float) -> SubmissionResult:
        """The cluster could not grade it (workers died running it): a row the next run retries."""
        detail = (
            f"the cluster could not grade this submission ({type(error).__name__}: "
            f"{shorten(str(error), 500)}). Run the same command again to grade it"
        )
        if isinstance(error, distributed.KilledWorker):
            detail += "; if it happens again, its workers may run out of memory (give each more)"
        result = empty_result(
            submission, self.assignment, Status.ERROR, detail, sha=""
        )  # no sha: retried
        result.seconds = round(time.monotonic() - started, 3)
        return result

    def stop(self) -> None:
        """Cancel every task not finished (the grader is stopping); running ones end on their own."""
        self._stopping = True
        with self._lock:
            futures = list(self._futures)
        if futures:
            try:
                self.client.cancel(futures)
            except Exception:  # the scheduler may be gone already
                pass

    def close(self) -> None:
        """Disconnect, and stop the LocalCluster if this grader started it."""
        client = getattr(self, "client", None)
        if client is not None:
            log = logging.getLogger("distributed.client")
            level = log.level
            if client.status != "running":  # its reconnecting, cut short, would log a traceback
                log.setLevel(logging.CRITICAL)
            try:
                client.close()
            finally:
                log.setLevel(level)
        if self.cluster is not None:
            self.cluster.close()


def _connect(address: str) -> distributed.Client:
    try:
        return distributed.Client(address, set_as_default=False)  # dask's connect timeout
    except (OSError, TimeoutError) as error:
        raise NotebookError(
            f"cannot reach a Dask scheduler at {address} ({error}). Start one with `dask scheduler "
            "--port 8786` (it prints its address), or pass --scheduler local:N to grade with N "
            "worker processes here."
        ) from error


def _names(reports: dict[str, dict], warning: str) -> str:
    hosts = sorted({r["host"] for r in reports.values() if r["warning"] == warning})
    return ", ".join(hosts)
