"""Runs a bench script with --smoke in its own process group, stopped for sure: the benches
reach into hookviz's internals, so a refactor that breaks one shows here, not months later."""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
from pathlib import Path

from tests.processes import RUN_TAG, stop_group, tagged

BENCH = Path(__file__).resolve().parents[1] / "bench"


def run_smoke(script: str, *args: str, timeout: float = 600) -> str:
    """The script's output; fails with the output's tail when it exits non-zero or leaves a
    process behind."""
    token = secrets.token_hex(8)  # this run's processes, told apart from the suite's others
    env = {**os.environ, RUN_TAG: token, "PYTHONUNBUFFERED": "1"}
    child = subprocess.Popen(
        [sys.executable, str(BENCH / script), "--smoke", *args],
        cwd=BENCH.parent,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        output, _ = child.communicate(timeout=timeout)
    finally:
        stop_group(child.pid)
        child.wait()
    left = tagged(token)
    assert child.returncode == 0, f"{script} --smoke exited {child.returncode}:\n{output[-4000:]}"
    assert not left, f"{script} --smoke left processes running: {left}"
    return output
