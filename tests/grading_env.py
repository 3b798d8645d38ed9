"""What the grading tests (and bench/bench_grading.py) share: Jupyter's folders kept private to a
run, and the grading children a run leaves behind."""

from __future__ import annotations

import os
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
