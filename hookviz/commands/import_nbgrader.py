"""`hookviz import-nbgrader SOURCE`: an nbgrader assignment as a hookviz one (course/authoring/nbgrader_import.py)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .common import EXIT_OK, add_root, course_root


def add_parser(commands) -> argparse.ArgumentParser:
    """The `import-nbgrader` subcommand's parser."""
    parser = commands.add_parser(
        "import-nbgrader",
        help="turn an nbgrader source assignment into a hookviz one, in solutions/",
        description="Copy an nbgrader source assignment (source/NAME: its notebooks and the files "
        "beside them) into solutions/NAME/, run each notebook to store its outputs, and say what "
        "changed and what hookviz will not grade as nbgrader does (an ### AUTOTEST directive, a "
        "test cell without points). Written answers and tasks are graded by hand.",
    )
    parser.add_argument("source", help="the nbgrader source assignment folder, e.g. source/ps1")
    parser.add_argument("--name", help="the folder in solutions/ (default: the source's name)")
    add_root(parser)
    parser.add_argument(
        "--no-run", action="store_true", help="do not run the notebooks (store outputs later)"
    )
    return parser


def run(args: argparse.Namespace) -> int:
    """Import the assignment and say what changed."""
    from ..course.authoring.nbgrader_import import import_nbgrader

    root = course_root(args)
    report = import_nbgrader(Path(args.source), root, name=args.name, run=not args.no_run)
    target = report.target.relative_to(root)
    print(f"imported {args.source} into {target}/:")
    for line in report.notebooks:
        print(f"  {line}")
    if report.files:
        print(f"  files beside them, copied: {', '.join(report.files)}")
    print("What changed:" if report.changes else "Nothing needed changing.")
    for change in report.changes:
        print(f"  - {change}")
    if report.notes:
        print("Worth a look (hookviz build warns about them):")
        for note in report.notes:
            print(f"  - {note}")
    if report.attention:
        print("To fix before `hookviz build`:", file=sys.stderr)
        for problem in report.attention:
            print(f"  - {problem}", file=sys.stderr)
    print(f"Next: hookviz build, then hookviz grade SUBMISSIONS --assignment {target}")
    return EXIT_OK
