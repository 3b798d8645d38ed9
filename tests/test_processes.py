"""The suite stops what it starts: a process group that ignores SIGTERM is killed, its port closed."""

from __future__ import annotations

import os
import subprocess
import sys
import time

from tests.processes import RUN_TAG, group_members, port_open, stop_group, tagged

# A server that ignores SIGTERM (as JupyterLab with kernels did), with a child of its own.
STUBBORN = """
import signal, socket, subprocess, sys, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
child = subprocess.Popen([sys.executable, "-c", "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(120)"])
server = socket.socket(); server.bind(("127.0.0.1", 0)); server.listen()
print(server.getsockname()[1], flush=True)
time.sleep(120)
"""


def test_a_group_that_ignores_sigterm_is_stopped_and_its_port_closed():
    process = subprocess.Popen(
        [sys.executable, "-c", STUBBORN], stdout=subprocess.PIPE, text=True, start_new_session=True
    )
    port = int(process.stdout.readline())
    deadline = time.monotonic() + 10
    while len(group_members(process.pid)) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(group_members(process.pid)) == 2 and port_open(port)
    stop_group(process.pid, port=port, timeout=1.0)
    process.wait(5)
    assert group_members(process.pid) == [] and not port_open(port)


def test_a_process_that_escaped_its_parent_is_still_found_by_its_tag():
    token = os.environ[RUN_TAG]
    orphan = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(60)"], start_new_session=True
    )
    try:
        assert orphan.pid in [pid for pid, _ in tagged(token)]
    finally:
        stop_group(orphan.pid)
        orphan.wait(5)
    assert orphan.pid not in [pid for pid, _ in tagged(token)]
