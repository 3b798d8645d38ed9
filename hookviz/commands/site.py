"""`hookviz site`: the course as a static site whose widgets play without a kernel (site/build.py)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .common import EXIT_OK, add_root, course_root


def add_parser(commands) -> argparse.ArgumentParser:
    """The `site` subcommand's parser."""
    parser = commands.add_parser(
        "site",
        help="build the course as a static site whose widgets play without a kernel",
        description="Run each walkthrough notebook once and write site/: a page per notebook "
        "and per assignment (as students get it), the guides, the package reference and an "
        "offline search. Every widget plays in the browser from the state it recorded; no page "
        "requests anything outside site/, so it works from file:// and on any static host.",
    )
    add_root(parser)
    parser.add_argument("--out", help="where to write the site (default: ROOT/site)")
    parser.add_argument(
        "-j", "--jobs", type=int, default=None, help="notebooks run at once (default: 2)"
    )
    return parser


def run(args: argparse.Namespace) -> int:
    """Build the site."""
    from ..site.build import build_site

    report = build_site(course_root(args), Path(args.out) if args.out else None, jobs=args.jobs)
    for note in report.stateless:
        print(f"note: {note}; the page shows its text instead", file=sys.stderr)
    print(
        f"hookviz site: {len(report.pages)} pages, {report.widgets} widgets, in "
        f"{report.seconds:.0f} s. Open {report.out / 'index.html'}"
    )
    return EXIT_OK
