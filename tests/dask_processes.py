"""A real Dask scheduler and workers, started as `dask` commands on 127.0.0.1 (tests, bench).

Each process runs in a session of its own and is stopped as a group: workers first, then the
scheduler. Safety nets for a runner that dies without stopping them: the scheduler closes after
being idle for a while, and a worker closes once its scheduler has been gone for a minute.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import distributed

from tests.processes import stop_group

BIN = Path(sys.executable).parent
IDLE_TIMEOUT = "900s"  # a scheduler with no task for this long exits
DEATH_TIMEOUT = "60"  # a worker whose scheduler is gone this long exits


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class DaskProcesses:
    """`dask scheduler` and `dask worker --nthreads 1` processes; logs in ``folder``."""

    def __init__(self, folder: Path):
        self.folder = Path(folder)
        self.processes: list[subprocess.Popen] = []
        self.workers: list[subprocess.Popen] = []
        # Port 0: the scheduler takes a free port as it listens and writes its address to a
        # file. A free port picked here could be taken by another socket before it listens.
        scheduler_file = self.folder / "scheduler.json"
        self._start(
            "scheduler",
            ["scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard"]
            + ["--idle-timeout", IDLE_TIMEOUT, "--scheduler-file", str(scheduler_file)],
        )
        try:
            self.address = self._listening_at(scheduler_file)
        except BaseException:
            stop_group(self.processes[0].pid, timeout=10)
            self.processes[0].wait()
            raise

    def _listening_at(self, path: Path, timeout: float = 120.0) -> str:
        """The address the scheduler writes to ``path`` once it listens (not in one write)."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                return json.loads(path.read_text())["address"]
            except (OSError, ValueError, KeyError):
                if self.processes[0].poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"no scheduler address in {path}\n{self.logs()}") from None
            time.sleep(0.1)

    def _start(self, name: str, arguments: list[str], env: dict | None = None) -> subprocess.Popen:
        with open(self.folder / f"{name}-{len(self.processes)}.log", "wb") as log:
            process = subprocess.Popen(
                [str(BIN / "dask"), *arguments],
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                env=env,
            )
        self.processes.append(process)
        return process

    def start_worker(self, **env: str) -> None:
        """One more worker with one thread (``env``: more environment variables). No nanny:
        `kill -9` of this process is the worker's death (a nanny would start it again). Its
        temporary folders go under its own TMPDIR."""
        tmp = self.folder / f"worker-tmp-{len(self.processes)}"
        tmp.mkdir()
        arguments = ["worker", self.address, "--nthreads", "1", "--no-dashboard", "--no-nanny"]
        arguments += ["--death-timeout", DEATH_TIMEOUT]
        env = {**os.environ, "TMPDIR": str(tmp), **env}
        self.workers.append(self._start("worker", arguments, env))

    def client(self) -> distributed.Client:
        return distributed.Client(self.address, timeout=60, set_as_default=False)

    def ensure_workers(self, count: int) -> None:
        """Start workers until ``count`` are alive, and wait until the scheduler counts exactly them."""
        self.workers = [w for w in self.workers if w.poll() is None]
        while len(self.workers) < count:
            self.start_worker()
        with self.client() as client:
            deadline = time.monotonic() + 120
            while len(client.nthreads()) != count:  # a killed worker takes a moment to be dropped
                if time.monotonic() > deadline:
                    raise RuntimeError(f"workers: {client.nthreads()}\n{self.logs()}")
                time.sleep(0.2)

    def worker_pids(self) -> dict[str, int]:
        """Each worker's address and process id."""
        with self.client() as client:
            return client.run(os.getpid)

    def logs(self) -> str:
        return "\n".join(
            f"--- {path.name}\n{path.read_text(errors='replace')[-3000:]}"
            for path in sorted(self.folder.glob("*.log"))
        )

    def stop(self) -> None:
        """Workers first, then the scheduler (a worker told to stop after its scheduler is gone
        hangs reconnecting, seen with distributed 2026.8); each group until it is gone."""
        workers = self.processes[1:]
        orphaned = self.processes[0].poll() is not None  # their scheduler died: no use asking
        for worker in workers:  # all at once, then each until it is gone
            _signal_group(worker.pid, signal.SIGKILL if orphaned else signal.SIGTERM)
        for worker in workers:
            stop_group(worker.pid, timeout=10)
        stop_group(self.processes[0].pid, port=int(self.address.rsplit(":", 1)[1]), timeout=10)
        for process in self.processes:
            process.wait()


def _signal_group(pgid: int, number: int) -> None:
    try:
        os.killpg(pgid, number)
    except ProcessLookupError:
        pass
