"""Execute notebooks top to bottom in a fresh kernel and store their outputs (what nbval compares).

    .venv/bin/python tools/run_notebooks.py notebooks/*.ipynb solutions/*.ipynb

Each notebook runs in its own folder, in a kernel of this Python, with Jupyter, IPython and
matplotlib writing their settings to a temporary folder; each check cell then records the
sha256 of the source its output came from (`hookviz build` and `hookviz grade` refuse a check
cell edited since). The work is done by ``hookviz.course.execute``; tests import ``execute``
and ``isolated_env`` from here.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from hookviz.course.execute import (  # noqa: F401 - re-exported for the tests
    CELL_TIMEOUT,
    SETTINGS_DIRS,
    WIDGET_VIEW,
    environment,
    execute,
    isolated_env,
    store_outputs,
)


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
