"""`hookviz merge-manual OUT CSV`: the grades given by hand, merged into a graded batch
(grading/manual/merge_manual.py)."""

from __future__ import annotations

import argparse
from pathlib import Path

from .common import EXIT_OK


def add_parser(commands) -> argparse.ArgumentParser:
    """The `merge-manual` subcommand's parser."""
    parser = commands.add_parser(
        "merge-manual",
        help="merge the grades given by hand into a graded batch",
        description="Merge CSV (OUT/manual/manual-grades.csv, filled in: student, question, "
        "points, comment) into OUT's gradebook.csv and gradebook.json, each student's feedback, "
        "and OUT/canvas.csv when there is one. The whole CSV is checked first: a row naming an "
        "unknown student or question, or points that are no number or over the maximum, stops "
        "it with every such row named, and nothing is merged.",
    )
    parser.add_argument("out", help="the out folder of `hookviz grade`")
    parser.add_argument("csv", help="the filled-in CSV")
    return parser


def run(args: argparse.Namespace) -> int:
    """Merge the CSV and say what changed."""
    from ..grading.manual.merge_manual import merge_manual

    report = merge_manual(Path(args.out), Path(args.csv))
    print(
        f"merged {report.graded} grades given by hand into {args.out}: gradebook.csv, "
        f"gradebook.json and the feedback of {len(report.students)} students"
        + "".join(f", {path.name}" for path in report.exports)
    )
    if report.left:
        print(f"{report.left} answers still wait for a grade (their points are empty).")
    return EXIT_OK
