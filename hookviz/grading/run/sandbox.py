"""Running a submission's pytest where it can do little harm, and never for long.

Every grading child runs in its own session (process group) with resource limits set by a
tiny launcher just before ``exec``: address space, file size, process count, CPU time, no core
files. A wall clock kills the whole group. Where bubblewrap works the child also gets:

- no network, its own PID namespace (everything dies with it), a private /tmp and /run;
- a read-only view of the system and Python, with the instructor's files hidden: the
  assignment's repository (or folder), the submissions, the out folder and home folders
  (only the paths Python needs are shown again, read-only);
- when the grader runs as root, an unprivileged user id of its own (root is exempt from the
  process-count limit, and need not be trusted with student code).

bubblewrap installed but unable to create namespaces (some containers) is an error, not a
silent downgrade: pass ``--sandbox none`` to grade with limits only, knowingly. An exported
autograder's ``--sandbox user`` (a container where the grader is root) gives the limits and that
unprivileged user, without bubblewrap.
"""

from __future__ import annotations

import json
import os
import selectors
import shutil
import signal
import site
import subprocess
import sys
import sysconfig
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import hookviz

from .limits import Limits
from .plugin import launcher_command

OUTPUT_TAIL = 8_000
RESULTS_LIMIT = 32_000_000
DONE_LINE = b'{"event": "done"}\n'
# A root grader runs each child as a user of its own, taken from this range: far above the
# uids distributions give people (1000-60000) and services, below 2**31 (some tools read uids
# as signed ints). A grading run claims a block of BLOCK_SIZE uids, one per slot (-j), that no
# account and no running process uses, and holds it with a lock file while it runs.
UID_RANGE = range(1_500_000_000, 1_500_000_000 + 2**20)
BLOCK_SIZE = 1024  # the most slots (-j) one run can have
UID_LOCKS = Path(tempfile.gettempdir()) / "hookviz-uid-blocks"
SITE_FOLDERS = ("site-packages", "dist-packages")  # what a folder of installed packages is called
# How children are contained (--sandbox). auto: bubblewrap where it works, else limits only;
# bwrap: bubblewrap or an error; none: limits and a process group only; user: limits and, when
# the grader is root, an unprivileged user per slot, for a container where bubblewrap cannot
# make its namespaces (Gradescope's).
MODES = ("auto", "bwrap", "none", "user")
GRADE_MODES = ("auto", "bwrap", "none")  # `hookviz grade`, on the instructor's machines
AUTOGRADER_MODES = ("user", "bwrap", "none")  # an exported autograder's, fixed when exported


def uids_in_use() -> set[int]:
    """The uids of every account and of every running process (real, effective, saved, fs)."""
    import pwd

    used = {entry.pw_uid for entry in pwd.getpwall()}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                for line in Path(f"/proc/{name}/status").read_text().splitlines():
                    if line.startswith("Uid:"):
                        used.update(int(value) for value in line.split()[1:])
                        break
            except OSError:
                continue
    return used


def claim_uid_block(used: set[int] | None = None, *, locks: Path | None = None) -> tuple[int, Any]:
    """The first uid of a free block of UID_RANGE, and the lock file that holds it for this process.

    A block is free when no account and no running process has any of its uids, and no other
    grading run holds its lock (an flock, released when the run ends, even by a crash).
    """
    import fcntl

    used = uids_in_use() if used is None else used
    folder = UID_LOCKS if locks is None else locks
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    blocks = len(UID_RANGE) // BLOCK_SIZE
    first = os.getpid() % blocks  # runs started together try different blocks first
    for k in range(blocks):
        start = UID_RANGE.start + ((first + k) % blocks) * BLOCK_SIZE
        if any(uid in used for uid in range(start, start + BLOCK_SIZE)):
            continue
        handle = open(folder / f"{start}.lock", "a+")  # noqa: SIM115 (held open as the claim)
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            handle.close()
            continue
        return start, handle
    raise SandboxError(
        f"no free block of {BLOCK_SIZE} uids in {UID_RANGE.start}-{UID_RANGE.stop - 1}: accounts or "
        "other grading runs use them all. Wait for the other runs, or grade as a non-root user."
    )


class SandboxError(RuntimeError):
    """The sandbox asked for cannot be set up here; the message says what to do."""


@dataclass
class ChildResult:
    """How a grading child ended, and what its plugin reported."""

    returncode: int | None
    timed_out: bool
    seconds: float
    records: list[dict] = field(default_factory=list)
    output_tail: str = ""


@dataclass(frozen=True)
class ChildSpec:
    """Where and how one grading child runs: the same for a cold start and a warm one."""

    workdir: Path  # its folder, its own (the only one it may write)
    env: dict[str, str]
    limits: Limits
    slot: int  # which of the -j slots: its unprivileged user, its warm process
    log_path: Path  # its stdout and stderr, out of its sight


class ChildRunner(Protocol):
    """What grading a submission needs of a sandbox: ``Sandbox`` starts each child cold,
    ``warm_kernel.WarmSandbox`` forks it from a warm process. Both take exactly these."""

    kind: str  # "bwrap", "user" or "none": what the result's ``sandbox`` field says

    def prepare_workdir(self, workdir: Path, slot: int) -> None:
        """Hand ``workdir`` to the user slot ``slot``'s child runs as."""

    def run(self, program: list[str], child: ChildSpec) -> ChildResult:
        """Run ``program`` contained, as ``child`` says; what its plugin recorded, and how it ended."""

    def kill_all(self) -> None:
        """Kill every child still running (the grader is stopping)."""


@dataclass
class Sandbox:
    """How children are contained: 'bwrap', 'user' or 'none' (limits and a process group only)."""

    kind: str
    bwrap: str | None = None
    hidden: tuple[Path, ...] = ()
    shown: tuple[Path, ...] = ()
    warning: str | None = None
    _live: dict[int, subprocess.Popen] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _uid_block: int | None = None  # the first uid of the block this run holds
    _uid_lock: Any = None  # the open, flock-ed lock file that holds it

    @property
    def as_root(self) -> bool:
        """True when the grader runs as root (children then get users of their own, under bwrap)."""
        return os.geteuid() == 0

    def user_for(self, slot: int) -> tuple[int, int] | None:
        """The unprivileged uid/gid a root grader gives slot ``slot`` (None: keep ours): a uid of
        a block no account or process uses."""
        if not (self.as_root and self.kind in ("bwrap", "user")):
            return None
        if not 0 <= slot < BLOCK_SIZE:
            raise SandboxError(
                f"slot {slot} is out of range: one grading run has at most {BLOCK_SIZE} slots (-j {BLOCK_SIZE})."
            )
        with self._lock:
            if self._uid_block is None:
                self._uid_block, self._uid_lock = claim_uid_block()
        uid = self._uid_block + slot
        return uid, uid

    def prepare_workdir(self, workdir: Path, slot: int) -> None:
        """Hand the folder to the user the child runs as."""
        user = self.user_for(slot)
        if user is None:
            return
        for path in [workdir, *workdir.rglob("*")]:
            os.chown(path, *user, follow_symlinks=False)

    def command(self, program: list[str], workdir: Path, limits: Limits, slot: int) -> list[str]:
        """The full argv: [bwrap ...] launcher -> program."""
        user = self.user_for(slot)
        offset = 0 if self.kind == "bwrap" else _tasks_of_user(os.getuid())
        spec = {"limits": limits.rlimits(offset)}
        if user is not None:
            spec["uid"], spec["gid"] = user
        launcher = launcher_command(json.dumps(spec), program)
        if self.kind != "bwrap":
            return launcher
        return [*self.bwrap_options(workdir), "--", *launcher]

    def bwrap_options(self, workdir: Path) -> list[str]:
        """bwrap and its options (everything before ``--``) for a child working in ``workdir``."""
        options = [
            str(self.bwrap),
            "--die-with-parent",
            "--new-session",
            "--unshare-pid",
            "--unshare-net",
            "--unshare-ipc",
            "--unshare-uts",
            "--unshare-cgroup-try",
            "--ro-bind",
            "/",
            "/",
            "--dev",
            "/dev",
            "--proc",
            "/proc",
            "--tmpfs",
            "/dev/shm",
        ]
        if not self.as_root:
            options[1:1] = ["--unshare-user", "--cap-drop", "ALL"]
        masks = [(p, "hide") for p in (Path("/tmp"), Path("/run"), *self.hidden)]
        masks += [(p, "show") for p in self.shown]
        made: set[Path] = set()
        for path, what in sorted(masks, key=lambda item: len(item[0].parts)):
            if what == "hide" and path.is_dir():
                options += ["--perms", "0755", "--tmpfs", str(path)]
                made.add(path)
            elif what == "show":
                inside = [h for h, w in masks if w == "hide" and _inside(path, h) and h != path]
                if not inside:
                    continue
                # bwrap would make the folders on the way 0700: unreadable for the grading user.
                for parent in reversed(path.parents):
                    if parent not in made and any(
                        _inside(parent, h) and parent != h for h in inside
                    ):
                        options += ["--perms", "0755", "--dir", str(parent)]
                        made.add(parent)
                options += ["--ro-bind", str(path), str(path)]
                made.add(path)
        hidden = [p for p, what in masks if what == "hide"]
        for parent in reversed(workdir.parents):
            if parent not in made and any(_inside(parent, h) and parent != h for h in hidden):
                options += ["--perms", "0755", "--dir", str(parent)]
                made.add(parent)
        options += ["--bind", str(workdir), str(workdir), "--chdir", str(workdir)]
        return options

    def run(self, program: list[str], child: ChildSpec) -> ChildResult:
        """Run ``program`` contained; its plugin writes JSON lines to the fd in $HOOKVIZ_RESULTS_FD."""
        workdir, limits = child.workdir, child.limits
        read_end, write_end = os.pipe()
        env = {**child.env, "HOOKVIZ_RESULTS_FD": str(write_end)}
        argv = self.command(program, workdir, limits, child.slot)
        started = time.monotonic()
        with open(child.log_path, "wb") as log:
            try:
                process = start_session(argv, cwd=workdir, env=env, log=log, fd=write_end)
            finally:
                os.close(write_end)
            with self._lock:
                self._live[process.pid] = process
            try:
                data, timed_out = read_until_closed(read_end, started + limits.submission_timeout)
            finally:
                os.close(read_end)
                try:  # pytest is done or the clock ran out: a moment to exit, then the group goes
                    process.wait(timeout=0 if timed_out_now(started, limits) else 0.2)
                except subprocess.TimeoutExpired:
                    pass
                kill_group(process)  # whatever is left in the group
                process.wait()
                with self._lock:
                    self._live.pop(process.pid, None)
                if self.kind != "bwrap":
                    _kill_strays(env.get("HOOKVIZ_GRADE_TOKEN", ""))
        return ChildResult(
            returncode=process.returncode,
            timed_out=timed_out,
            seconds=time.monotonic() - started,
            records=records_of(data),
            output_tail=output_tail_of(child.log_path),
        )

    def kill_all(self) -> None:
        """Kill every running child (the grader is stopping)."""
        with self._lock:
            children = list(self._live.values())
        for child in children:
            kill_group(child)


def start_session(
    argv: list[str], *, cwd: Path, env: dict[str, str], log: Any, fd: int
) -> subprocess.Popen:
    """Start ``argv`` in a session of its own (its group is killed whole), no stdin, stdout and
    stderr to ``log``, with ``fd`` its one inherited descriptor."""
    return subprocess.Popen(
        argv,
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=log,
        stderr=subprocess.STDOUT,
        pass_fds=(fd,),
        start_new_session=True,
    )


def timed_out_now(started: float, limits: Limits) -> bool:
    """True once the submission's wall clock has run out."""
    return time.monotonic() - started >= limits.submission_timeout


def read_until_closed(fd: int, deadline: float) -> tuple[bytes, bool]:
    """Everything written to ``fd`` until every writer closed it, or the deadline passed."""
    chunks, size = [], 0
    with selectors.DefaultSelector() as selector:
        selector.register(fd, selectors.EVENT_READ)
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return b"".join(chunks), True
            if not selector.select(timeout=min(left, 1.0)):
                continue
            chunk = os.read(fd, 65536)
            if not chunk:
                return b"".join(chunks), False
            if size < RESULTS_LIMIT:
                chunks.append(chunk)
                size += len(chunk)
            if chunk.endswith(DONE_LINE):  # pytest has finished; its exit adds nothing
                return b"".join(chunks), False


def records_of(data: bytes) -> list[dict]:
    """The JSON records the grading plugin wrote to its results pipe, in order."""
    records = []
    for line in data.decode("utf-8", "replace").splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue  # a line cut by a kill
        if isinstance(record, dict):
            records.append(record)
    return records


def kill_group(child: subprocess.Popen) -> None:
    """SIGKILL the child's whole process group (it leads one: started in a new session)."""
    try:
        os.killpg(child.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _kill_strays(token: str) -> None:
    """Without a PID namespace, kill what the child left behind (the kernel has its own session)."""
    if not token or not Path("/proc").is_dir():
        return
    needle = f"HOOKVIZ_GRADE_TOKEN={token}".encode()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            if needle in (entry / "environ").read_bytes().split(b"\0"):
                os.kill(int(entry.name), signal.SIGKILL)
        except (OSError, ValueError):
            continue


def _tasks_of_user(uid: int) -> int:
    """Threads the user runs now: RLIMIT_NPROC counts them all, so the budget comes on top."""
    total = 0
    proc = Path("/proc")
    if not proc.is_dir():
        return 0
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            status = (entry / "status").read_text()
        except OSError:
            continue
        fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
        if fields.get("Uid", "").split()[:1] == [str(uid)]:
            total += int(fields.get("Threads", "1").strip() or 1)
    return total


def output_tail_of(path: Path) -> str:
    """The last OUTPUT_TAIL bytes of a child's log, as text ("" when it cannot be read)."""
    try:
        with open(path, "rb") as handle:
            handle.seek(0, os.SEEK_END)
            handle.seek(max(handle.tell() - OUTPUT_TAIL, 0))
            return handle.read().decode("utf-8", "replace")
    except OSError:
        return ""


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def python_paths() -> list[Path]:
    """Folders the grading Python needs: its prefixes, stdlib, site-packages (its own and those
    a .pth file added, as a virtual environment reading another one's packages has), hookviz."""
    paths = {Path(sys.prefix), Path(sys.base_prefix), Path(sys.exec_prefix)}
    paths |= {Path(p) for p in sysconfig.get_paths().values()}
    paths |= {Path(p) for p in site.getsitepackages()}
    # Only site folders from sys.path: it can also hold the working folder or a course checkout.
    paths |= {Path(p) for p in sys.path if p and Path(p).name in SITE_FOLDERS}
    paths.add(Path(hookviz.__file__).resolve().parent)  # the package (editable or not)
    paths.add(Path(sys.executable).resolve().parent)
    resolved = set()
    for path in paths:
        for candidate in (path, path.resolve()):
            if candidate.exists():
                resolved.add(candidate)
    return sorted(resolved)


def home_folders() -> list[Path]:
    """Home folders to hide: /root, /home and the grader's own home."""
    folders = {Path("/root"), Path("/home"), Path.home()}
    return sorted(f for f in folders if f.is_dir() and f != Path("/"))


def start_python_in(sandbox: Sandbox, imports: str) -> subprocess.CompletedProcess:
    """Start the grading Python in ``sandbox`` the way a submission's is started (in a fresh work
    folder, as the grading user: the whole chain of bwrap, the launcher and its user) and import
    ``imports`` there; returns the finished process, for the caller to read its exit and stderr."""
    with tempfile.TemporaryDirectory(prefix="hookviz-sandbox-check-") as folder:
        workdir = Path(folder)
        workdir.chmod(0o755)
        sandbox.prepare_workdir(workdir, 0)
        program = [sys.executable, "-I", "-c", f"import {imports}"]
        return subprocess.run(
            sandbox.command(program, workdir, Limits(), 0),
            cwd=workdir,
            capture_output=True,
            text=True,
            timeout=120,
        )


def detect_sandbox(mode: str, hidden: list[Path]) -> Sandbox:
    """The sandbox for ``mode`` (one of MODES), checked to work here."""
    if mode not in MODES:
        raise SandboxError(
            f"--sandbox must be {', '.join(MODES[:-1])} or {MODES[-1]}, not {mode!r}."
        )
    if mode == "user":
        return _user_sandbox()
    shown = tuple(python_paths())
    to_hide = tuple(sorted({p.resolve() for p in [*hidden, *home_folders()]}))
    # Linux never applies RLIMIT_NPROC to root: without bwrap's user switch, say so.
    root_note = (
        " Running as root, the process-count limit does not hold." if os.geteuid() == 0 else ""
    )
    if mode == "none":
        return Sandbox(
            "none",
            warning="--sandbox none: submissions run with your user's rights "
            "(limits and timeouts still apply)." + root_note,
        )
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        if mode == "bwrap":
            raise SandboxError(
                "--sandbox bwrap: bubblewrap (bwrap) is not installed. Install it "
                "(apt-get install bubblewrap), or pass --sandbox none to grade without it."
            )
        return Sandbox(
            "none",
            warning="bubblewrap (bwrap) is not installed: submissions run with your user's rights, "
            "network and files (limits and timeouts still apply). Install bubblewrap to contain them."
            + root_note,
        )
    sandbox = Sandbox("bwrap", bwrap=bwrap, hidden=to_hide, shown=shown)
    probe = start_python_in(sandbox, "pytest, nbval, ipykernel")
    if probe.returncode != 0 and "namespace" not in probe.stderr and "bwrap" not in probe.stderr:
        raise SandboxError(
            "the grading sandbox starts, but Python cannot load pytest, nbval and ipykernel in it "
            f"({probe.stderr.strip()[-500:]}). Grade from a Python environment the sandbox can read "
            "(not inside the assignment's repository or a hidden home folder), or pass --sandbox none."
        )
    if probe.returncode != 0:
        raise SandboxError(
            "bubblewrap is installed but cannot create its namespaces here "
            f"({probe.stderr.strip() or 'exit code ' + str(probe.returncode)}). Allow unprivileged user "
            "namespaces (sysctl kernel.unprivileged_userns_clone=1, or a container with them), run the "
            "grader as root, or pass --sandbox none to grade with limits only."
        )
    return sandbox


def _user_sandbox() -> Sandbox:
    """Limits and a process group, with the graded code run as an unprivileged user.

    Gradescope runs each submission in a throwaway container as root, where bubblewrap usually
    cannot create its namespaces; its own advice is to run students' code as another user, with
    the instructor's folders closed to it (the autograder makes them 0700).
    """
    sandbox = Sandbox("user")
    if not sandbox.as_root:
        sandbox.warning = (
            "--sandbox user: not running as root, so submissions run with this user's rights "
            "(limits and timeouts still apply)."
        )
    probe = start_python_in(sandbox, "pytest, nbval, ipykernel, hookviz")
    if probe.returncode != 0:
        raise SandboxError(
            "the grading user cannot start Python with pytest, nbval, ipykernel and hookviz "
            f"({probe.stderr.strip()[-500:]}). The virtual environment and every folder above it "
            "must be readable by others (setup.sh runs chmod o+rx on them)."
        )
    return sandbox
