"""Warm starts: each grading slot keeps one sandboxed process that has imported torch, pytest,
nbval and ipykernel, and forks every submission's pytest and kernel from it.

A cold submission pays a new Python for pytest, another for its kernel, and ``import torch`` in
it (about 4 of its 5.5 s). Forked from a warm process that never runs student code, each
submission still gets processes of its own that die with it, in the same bubblewrap sandbox,
under the same limits and user; the warm process kills whatever else is left in the sandbox
and empties its writable folders before it takes the next one, and the grader empties the
slot's folder (see ``plugin/hookviz_warm_start.py``). Without bubblewrap there is no PID
namespace to sweep, so ``--sandbox none`` always starts cold.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from .plugin import PYTEST_BOOT, WARM_BOOT, boot_command
from .sandbox import (
    ChildResult,
    ChildSpec,
    Sandbox,
    kill_group,
    output_tail_of,
    read_until_closed,
    records_of,
    start_session,
)

READY_TIMEOUT = 300.0  # importing torch on a loaded machine can take tens of seconds
EXIT_TIMEOUT = 15.0  # from "pytest is done" to "the sandbox is swept"
# What torch imports only on first use, for seconds: an optimizer's first step imports dynamo.
TORCH_LATER = ("torch.optim", "torch._dynamo")
ENV = {
    "LANG": "C.UTF-8",
    "LC_ALL": "C.UTF-8",
    "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
    "PYDEVD_DISABLE_FILE_VALIDATION": "1",
    "JUPYTER_PLATFORM_DIRS": "1",
    "OMP_NUM_THREADS": "1",  # read when torch is imported, here: one thread per kernel
    "MKL_NUM_THREADS": "1",
}


@dataclass
class Zygote:
    """One slot's warm process: its bwrap child and the control socket."""

    process: subprocess.Popen
    control: socket.socket
    ready: dict


class WarmSandbox:
    """``Sandbox.run`` for ``engine``, run in a warm process per slot (a cold run where it cannot)."""

    def __init__(self, sandbox: Sandbox, preload: list[str], scratch: Path):
        self.base, self.scratch = sandbox, scratch
        self.preload = list(preload) + (list(TORCH_LATER) if "torch" in preload else [])
        self.kind, self.warning = sandbox.kind, sandbox.warning
        self.enabled = sandbox.kind == "bwrap"
        self.notes: list[str] = []  # why a slot went cold, once each
        self.starts = 0  # warm processes started (a submission that breaks one costs another)
        self._zygotes: dict[int, Zygote] = {}
        self._lock = threading.Lock()

    def slot_dir(self, slot: int) -> Path:
        """Where slot ``slot``'s work folders go: the only folder of ours its sandbox sees."""
        folder = self.scratch / f"slot-{slot}"
        folder.mkdir(exist_ok=True)
        folder.chmod(
            0o755
        )  # pytest lists a notebook's parent; only this submission's folder is in it
        return folder

    def prepare_workdir(self, workdir: Path, slot: int) -> None:
        self.base.prepare_workdir(workdir, slot)

    def user_for(self, slot: int) -> tuple[int, int] | None:
        return self.base.user_for(slot)

    def run(self, program: list[str], child: ChildSpec) -> ChildResult:
        """As ``Sandbox.run``: ``program`` is engine's pytest command, run forked from warm."""
        args = pytest_args(program)
        workdir, slot = child.workdir, child.slot
        if not self.enabled or args is None or workdir.parent != self.slot_dir(slot):
            return self.base.run(program, child)
        self._empty_slot(slot, keep={workdir.name})
        zygote = self._zygote(slot)
        if zygote is None:
            return self.base.run(program, child)
        user = self.base.user_for(slot)
        spec = {
            "limits": child.limits.rlimits(0),
            "uid": user[0] if user else None,
            "gid": user[1] if user else None,
            "workdir": str(workdir),
            "env": child.env,
            "pytest_args": [*args, "-W", "ignore::pytest.PytestAssertRewriteWarning"],
        }
        # The log stays out of the sandbox's sight (the cold path's is outside it too).
        log_path = self.scratch / f"{workdir.name}.log"
        read_end, write_end = os.pipe()
        started = time.monotonic()
        try:
            with open(log_path, "wb") as log:
                socket.send_fds(
                    zygote.control, [json.dumps({"run": spec}).encode()], [write_end, log.fileno()]
                )
        except OSError as error:
            os.close(read_end)
            self._discard(slot, f"the warm process stopped answering ({error})")
            return self.base.run(program, child)
        finally:
            os.close(write_end)
        try:
            data, timed_out = read_until_closed(read_end, started + child.limits.submission_timeout)
        finally:
            os.close(read_end)
        returncode = None
        if timed_out:
            self._discard(slot)  # the clock ran out: the whole sandbox goes, as a cold one would
        else:
            returncode = self._finish(slot, zygote)
        tail = output_tail_of(log_path)
        log_path.unlink(missing_ok=True)
        return ChildResult(
            returncode=returncode,
            timed_out=timed_out,
            seconds=time.monotonic() - started,
            records=records_of(data),
            output_tail=tail,
        )

    def _finish(self, slot: int, zygote: Zygote) -> int | None:
        """Tell the warm process pytest is done; its child's exit code once all is swept."""
        try:
            zygote.control.send(json.dumps({"stop": True}).encode())
            zygote.control.settimeout(EXIT_TIMEOUT)
            answer = json.loads(zygote.control.recv(1 << 16) or b"null")
        except (OSError, ValueError):
            answer = None
        if not isinstance(answer, dict) or "exit" not in answer:
            self._discard(slot)  # killed by its submission, or too slow to sweep: start anew
            return None
        if not answer.get("clean"):
            self._discard(slot)
        return answer["exit"]

    def _zygote(self, slot: int) -> Zygote | None:
        with self._lock:
            zygote = self._zygotes.get(slot)
        if zygote is not None and zygote.process.poll() is None:
            return zygote
        if zygote is not None:
            self._discard(slot)
        try:
            zygote = self._start(slot)
        except (OSError, ValueError, RuntimeError) as error:
            self.enabled = False
            self.notes.append(f"warm start failed, grading cold: {error}")
            return None
        with self._lock:
            self._zygotes[slot] = zygote
        return zygote

    def _start(self, slot: int) -> Zygote:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        folder = self.slot_dir(slot)
        command = [
            *self.base.bwrap_options(folder),
            "--",
            *boot_command(WARM_BOOT, str(theirs.fileno()), json.dumps(self.preload)),
        ]
        env = {
            **ENV,
            "PATH": os.pathsep.join([str(Path(sys.executable).parent), "/usr/bin", "/bin"]),
            "HOME": str(folder),
            # What the children's /proc/PID/environ shows (a fork keeps its parent's): a leak
            # check finds them, and this warm process, by the token, as it finds cold children.
            "HOOKVIZ_GRADE_TOKEN": f"warm-{os.getpid()}-{slot}",
        }
        log = open(self.scratch / f"warm-{slot}.log", "ab")  # noqa: SIM115 (the child's stderr)
        try:
            process = start_session(command, cwd=folder, env=env, log=log, fd=theirs.fileno())
        finally:
            theirs.close()
            log.close()
        self.starts += 1
        ours.settimeout(READY_TIMEOUT)
        try:
            ready = json.loads(ours.recv(1 << 16) or b"null")
        except (OSError, ValueError):
            ready = None
        if not isinstance(ready, dict) or "ready" not in ready or ready["ready"]["threads"] != 1:
            kill_group(process)
            process.wait()
            ours.close()
            tail = output_tail_of(self.scratch / f"warm-{slot}.log")[-600:].strip()
            raise RuntimeError(f"the warm process did not start ({ready!r}; {tail})")
        return Zygote(process, ours, ready["ready"])

    def _discard(self, slot: int, note: str | None = None) -> None:
        with self._lock:
            zygote = self._zygotes.pop(slot, None)
        if note:
            self.notes.append(note)
        if zygote is None:
            return
        kill_group(zygote.process)  # bwrap's PID namespace: every process in it dies
        zygote.process.wait()
        zygote.control.close()

    def _empty_slot(self, slot: int, keep: set[str]) -> None:
        """Nothing but this submission's own folder is in its slot's folder."""
        folder = self.slot_dir(slot)
        for entry in folder.iterdir():
            if entry.name in keep:
                continue
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry, ignore_errors=True)
            else:
                entry.unlink(missing_ok=True)

    def kill_all(self) -> None:
        """Kill every warm process and running child now (the grader is stopping)."""
        for slot in list(self._zygotes):
            self._discard(slot)
        self.base.kill_all()

    close = kill_all


def pytest_args(program: list[str]) -> list[str] | None:
    """The pytest arguments of the cold command ``python -I -c PYTEST_BOOT PLUGIN_DIR ARGS...``."""
    cold = boot_command(PYTEST_BOOT)
    if program[: len(cold)] == cold:
        return list(program[len(cold) :])
    return None
