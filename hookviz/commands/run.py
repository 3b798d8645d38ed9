"""`hookviz run NOTEBOOK...`: run notebooks and store their outputs (course/authoring/execute.py)."""

from __future__ import annotations

import argparse
from pathlib import Path

from .common import EXIT_OK


def add_parser(commands) -> argparse.ArgumentParser:
    """The `run` subcommand's parser."""
    parser = commands.add_parser(
        "run",
        help="run notebooks and store their outputs (what nbval and the grader compare)",
        description="Run each notebook top to bottom in a fresh kernel, in its own folder, and "
        "store its outputs; each check cell records the source its output came from, so that "
        "`hookviz build` and `hookviz grade` refuse a check cell edited since.",
    )
    parser.add_argument("notebooks", nargs="+", type=Path, help="the notebooks (.ipynb)")
    return parser


def run(args: argparse.Namespace) -> int:
    """Run each notebook and store its outputs."""
    import tempfile

    from ..course.authoring.execute import store_outputs
    from ..course.format.notebooks import NotebookError

    for path in args.notebooks:
        if path.suffix != ".ipynb" or not path.is_file():
            raise NotebookError(
                f"{path} is not a notebook file (.ipynb); pass the notebooks to run."
            )
    with tempfile.TemporaryDirectory(prefix="hookviz-settings-") as settings:
        for path in args.notebooks:
            seconds = store_outputs(path, Path(settings))
            print(f"{path}: executed and stored in {seconds:.1f} s")
    return EXIT_OK
