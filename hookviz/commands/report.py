"""`hookviz report OUT`: an item analysis of a graded batch, as a web page (grading/report/)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..grading.run.limits import positive
from .common import EXIT_OK


def add_parser(commands) -> argparse.ArgumentParser:
    """The `report` subcommand's parser."""
    parser = commands.add_parser(
        "report",
        help="an item analysis of a graded batch, as a web page",
        description="Write OUT/report.html (self-contained: figures inlined) and its PNGs: scores, "
        "the pass rate of every check, the most common failure messages, time per submission, "
        "flags, and near-identical answers. For you, not students; it changes no score.",
    )
    parser.add_argument("out", help="the out folder of `hookviz grade`")
    parser.add_argument("-o", "--output", help="the page to write (default: OUT/report.html)")
    parser.add_argument(
        "--assignment", help="the instructor's notebook (default: the one OUT was graded with)"
    )
    parser.add_argument(
        "--submissions", help="where the submissions are now, if they moved since grading"
    )
    parser.add_argument(
        "--similarity",
        choices=("auto", "ast", "copydetect", "off"),
        default="auto",
        help="how answers are compared (default auto: copydetect when installed, else ast)",
    )
    parser.add_argument(
        "--threshold",
        type=positive(float),
        default=0.9,
        help="how alike two answers must be to be listed, 0 to 1 (default 0.9)",
    )
    parser.add_argument(
        "--min-tokens",
        type=positive(int),
        default=30,
        help="answers shorter than this are not compared (default 30)",
    )
    return parser


def run(args: argparse.Namespace) -> int:
    """Write the report page."""
    from ..grading.report.write import write_report

    report = write_report(
        Path(args.out),
        destination=Path(args.output) if args.output else None,
        assignment=Path(args.assignment) if args.assignment else None,
        submissions=Path(args.submissions) if args.submissions else None,
        similarity=args.similarity,
        threshold=args.threshold,
        min_tokens=args.min_tokens,
    )
    print(
        f"wrote {report.html} (figures inlined; as PNGs in {report.html.parent / 'report-figures'})"
    )
    for note in report.notes:
        print(f"note: {note}", file=sys.stderr)
    return EXIT_OK
