"""Execute notebooks top to bottom in a fresh kernel and store their outputs (what nbval compares).

    .venv/bin/python tools/run_notebooks.py notebooks/*.ipynb solutions/*.ipynb

Each notebook runs in its own folder, in a kernel of this Python, with Jupyter, IPython and
matplotlib writing their settings to a temporary folder. Tests import ``execute`` from here.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import nbformat
from nbclient import NotebookClient

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
    nb: nbformat.NotebookNode,
    cwd: Path,
    *,
    settings: Path | None = None,
    allow_errors: bool = False,
    timeout: int = CELL_TIMEOUT,
) -> nbformat.NotebookNode:
    """Run ``nb`` top to bottom in a fresh kernel started in ``cwd``; returns it with outputs.

    ``settings`` is the folder for Jupyter/IPython/matplotlib settings (a temporary one by
    default); sharing one across notebooks lets matplotlib build its font cache only once.
    """
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
    nbformat.write(nb, path)
    return time.monotonic() - start


def main(argv: list[str] | None = None) -> int:
    """Execute each notebook given on the command line and store its outputs."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="+", type=Path)
    args = parser.parse_args(argv)
    for path in args.notebooks:
        if path.suffix != ".ipynb" or not path.is_file():
            parser.error(f"{path} is not a notebook file (.ipynb)")
    with tempfile.TemporaryDirectory(prefix="hookviz-settings-") as settings:
        for path in args.notebooks:
            seconds = store_outputs(path, Path(settings))
            print(f"{path}: executed and stored in {seconds:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
