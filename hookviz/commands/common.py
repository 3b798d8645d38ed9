"""What the commands share: exit codes and the course folder they act on."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

EXIT_OK, EXIT_STALE, EXIT_ERROR = 0, 1, 2


def add_root(parser: argparse.ArgumentParser) -> None:
    """--root, the course folder."""
    parser.add_argument(
        "--root", help="the course folder (default: the nearest folder with course.toml)"
    )


def course_root(args: argparse.Namespace) -> Path:
    """--root, or the nearest folder above the current one with course.toml (or, without one,
    the nbgrader course there: then the defaults taken are said once, on stderr)."""
    from ..course.authoring.stamp import find_course_root, load_course_config

    root = Path(args.root) if args.root else find_course_root(Path.cwd())
    note = load_course_config(root).defaults
    if note:
        print(f"hookviz {args.command}: note: {note}", file=sys.stderr)
    return root
