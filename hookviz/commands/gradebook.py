"""`hookviz gradebook OUT --canvas ROSTER.csv`: the gradebook in Canvas's import layout
(grading/platforms/canvas.py)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .common import EXIT_OK


def add_parser(commands) -> argparse.ArgumentParser:
    """The `gradebook` subcommand's parser."""
    parser = commands.add_parser(
        "gradebook",
        help="the gradebook in a course platform's import layout (Canvas)",
        description="Write OUT's scores in the layout of Canvas's gradebook export, which Canvas "
        "imports back: the roster's student columns as they are, then one column for the assignment. "
        "Students are matched by SIS Login ID or SIS User ID.",
    )
    parser.add_argument("out", help="the out folder of `hookviz grade`")
    parser.add_argument(
        "--canvas", required=True, metavar="ROSTER.csv", help="a gradebook exported from Canvas"
    )
    parser.add_argument("-o", "--output", help="the CSV to write (default: OUT/canvas.csv)")
    parser.add_argument(
        "--column",
        help="the assignment's column title (default: the roster's column for it, else its name)",
    )
    return parser


def run(args: argparse.Namespace) -> int:
    """Write the CSV, and name the students it could not place."""
    from ..grading.platforms.canvas import canvas_gradebook

    out = Path(args.out)
    export = canvas_gradebook(
        out, Path(args.canvas), Path(args.output or out / "canvas.csv"), column=args.column
    )
    print(
        f"wrote {export.path}: {len(export.matched)} scores in the column {export.column!r} "
        f"(out of {export.points_possible:g})"
    )
    unplaced = [
        ("graded, but in no row of the roster (no score written)", export.not_in_roster),
        (
            "matching more than one row, or a row another student matches (no score written)",
            export.ambiguous,
        ),
        (
            "in the roster, but not graded (cell left empty: Canvas keeps their grade)",
            export.not_graded,
        ),
        ("graded against another version of the assignment (grade again)", export.stale),
    ]
    for what, who in unplaced:
        if who:
            print(f"{what}: {', '.join(who)}", file=sys.stderr)
    return EXIT_OK
