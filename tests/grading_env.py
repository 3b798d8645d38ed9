"""What the grading tests (and bench/bench_grading.py) share: Jupyter's folders kept private to a
run, and the grading children a run leaves behind."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

# Jupyter and IPython write here; a test's own folders keep it from the user's (and each other's).
JUPYTER_VARS = (
    "JUPYTER_CONFIG_DIR",
    "JUPYTER_DATA_DIR",
    "JUPYTER_RUNTIME_DIR",
    "IPYTHONDIR",
    "MPLCONFIGDIR",
)


@contextmanager
def private_jupyter_dirs(root: Path) -> Iterator[None]:
    """Point Jupyter's and IPython's folders under ``root`` for the block, then restore them."""
    saved = {name: os.environ.get(name) for name in JUPYTER_VARS}
    for name in JUPYTER_VARS:
        os.environ[name] = str(root / name.lower())
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def grading_processes(marker: Path) -> list[int]:
    """Grading children (kernels, pytest) whose environment names a folder under ``marker``."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                environ = (entry / "environ").read_bytes()
            except OSError:
                continue
            if b"HOOKVIZ_GRADE_TOKEN=" in environ and str(marker).encode() in environ:
                found.append(int(entry.name))
    return found


def grading_processes_left(marker: Path, timeout: float = 30.0) -> list[int]:
    """grading_processes(marker) once it is empty, or after ``timeout`` s. A grader returns right
    after its SIGKILLs; a killed kernel (or one in a dying bwrap namespace) still shows in /proc
    until it gets a CPU to exit on, later on a busy machine."""
    deadline = time.monotonic() + timeout
    while (left := grading_processes(marker)) and time.monotonic() < deadline:
        time.sleep(0.1)
    return left
