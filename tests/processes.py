"""Processes the tests start, stopped for sure: a whole process group, and a check that nothing is left.

Jupyter servers survive a SIGTERM sent while they run kernels, and a server whose parent died
(`make` in the README's `make lab`) is adopted by init, out of sight of its parent's wait().
So a test stops a process group by waiting until none of its members is left, and its port
is closed, escalating to SIGKILL; and the suite marks every process it starts with an
environment variable, so that it can find, at the end, any that escaped.
"""

from __future__ import annotations

import os
import signal
import socket
import time
from pathlib import Path

RUN_TAG = "HOOKVIZ_TEST_RUN"


def _stat(pid: int) -> tuple[str, int] | None:
    """(state, process group) of a live process, or None."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return fields[0], int(fields[2])


def _pids() -> list[int]:
    return [int(name) for name in os.listdir("/proc") if name.isdigit()]


def group_members(pgid: int) -> list[int]:
    """The living (not zombie) processes of process group ``pgid``."""
    found = []
    for pid in _pids():
        stat = _stat(pid)
        if stat is not None and stat[1] == pgid and stat[0] != "Z":
            found.append(pid)
    return found


def port_open(port: int) -> bool:
    with socket.socket() as probe:
        probe.settimeout(0.2)
        return probe.connect_ex(("127.0.0.1", port)) == 0


def stop_group(pgid: int, *, port: int | None = None, timeout: float = 15.0) -> None:
    """SIGTERM the group, wait until its members are gone and its port is closed; then SIGKILL."""
    for sig, wait in ((signal.SIGTERM, timeout), (signal.SIGKILL, 10.0)):
        try:
            os.killpg(pgid, sig)
        except ProcessLookupError:
            pass
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            if not group_members(pgid) and (port is None or not port_open(port)):
                return
            time.sleep(0.1)
    left = group_members(pgid)
    raise RuntimeError(
        f"process group {pgid} survived SIGKILL: {left}"
        + (f", port {port} open" if port and port_open(port) else "")
    )


def tagged(token: str) -> list[tuple[int, str]]:
    """The living processes (not this one) whose environment carries ``RUN_TAG=token``: (pid, command)."""
    marker = f"{RUN_TAG}={token}".encode()
    found = []
    for pid in _pids():
        if pid == os.getpid():
            continue
        stat = _stat(pid)
        if stat is None or stat[0] == "Z":
            continue
        try:
            if marker not in Path(f"/proc/{pid}/environ").read_bytes().split(b"\0"):
                continue
            command = (
                Path(f"/proc/{pid}/cmdline")
                .read_bytes()
                .replace(b"\0", b" ")
                .decode(errors="replace")
            )
        except OSError:
            continue
        found.append((pid, command.strip()[:160]))
    return found
