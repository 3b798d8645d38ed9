"""Running a notebook top to bottom in a fresh kernel and storing its outputs (what nbval compares).

Each notebook runs in its own folder, in a kernel of this Python, with Jupyter, IPython and
matplotlib writing their settings to a temporary folder. After a run, each check cell records
the sha256 of the source its output came from, so that `build` and `grade` refuse a check cell
edited since. `hookviz run` is the command; `hookviz new` uses it too. nbclient
and nbformat are imported on first use (the ``dev`` extra).
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..format.notebooks import nbformat_module, record_outputs_source

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
CELL_TIMEOUT = 300  # seconds; a cell stuck this long is a bug, not a slow machine
SETTINGS_DIRS = (
    "JUPYTER_CONFIG_DIR",
    "JUPYTER_DATA_DIR",
    "JUPYTER_RUNTIME_DIR",
    "IPYTHONDIR",
    "MPLCONFIGDIR",
)


def isolated_env(base: Path) -> dict[str, str]:
    """Environment for a kernel: settings under ``base``, and this Python first on PATH."""
    env = dict(os.environ)
    for name in SETTINGS_DIRS:
        folder = base / name.lower()
        folder.mkdir(parents=True, exist_ok=True)
        env[name] = str(folder)
    # The python3 kernelspec starts "python" from PATH: make that this interpreter.
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    env["PYTHONHASHSEED"] = "0"
    return env


@contextlib.contextmanager
def environment(env: dict[str, str]) -> Iterator[None]:
    """Use ``env`` as os.environ inside the block (the kernel inherits it)."""
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(env)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


def execute(
    nb: Any,
    cwd: Path,
    *,
    settings: Path | None = None,
    allow_errors: bool = False,
    timeout: int = CELL_TIMEOUT,
) -> Any:
    """Run ``nb`` top to bottom in a fresh kernel started in ``cwd``; returns it with outputs.

    ``settings`` is the folder for Jupyter/IPython/matplotlib settings (a temporary one by
    default); sharing one across notebooks lets matplotlib build its font cache only once.
    """
    from nbclient import NotebookClient

    with contextlib.ExitStack() as stack:
        if settings is None:
            settings = Path(
                stack.enter_context(tempfile.TemporaryDirectory(prefix="hookviz-kernel-"))
            )
        stack.enter_context(environment(isolated_env(settings)))
        client = NotebookClient(
            nb,
            timeout=timeout,
            kernel_name="python3",
            allow_errors=allow_errors,
            record_timing=False,
            store_widget_state=False,
            resources={"metadata": {"path": str(cwd)}},
        )
        client.execute()
    return nb


def store_outputs(path: Path, settings: Path | None = None) -> float:
    """Clear ``path``'s outputs, execute it, and write it back; returns the seconds it took."""
    nbformat = nbformat_module()
    path = Path(path)
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
    start = time.monotonic()
    execute(nb, path.parent.resolve(), settings=settings)
    nb.metadata.pop("widgets", None)
    nb.metadata.get("language_info", {}).pop("version", None)  # the same notebook for every Python
    for cell in nb.cells:
        cell.metadata.pop("execution", None)
        for output in cell.get("outputs", []):
            # A widget view points at a kernel-side model that is gone once the kernel stops: keep
            # only its text (the widget's repr) until the reader runs the cell again.
            output.get("data", {}).pop(WIDGET_VIEW, None)
    record_outputs_source(nb)
    nbformat.write(nb, path)
    return time.monotonic() - start
