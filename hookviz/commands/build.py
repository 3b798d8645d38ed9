"""`hookviz build`: stamp notebooks and generate exercises/ from solutions/ (course/authoring/build.py)."""

from __future__ import annotations

import argparse
import sys

from .common import EXIT_OK, EXIT_STALE, add_root, course_root


def add_parser(commands) -> argparse.ArgumentParser:
    """The `build` subcommand's parser."""
    parser = commands.add_parser(
        "build",
        help="stamp notebooks and generate exercises/ from solutions/",
        description="Stamp every notebook in notebooks/ and solutions/ with its Colab badge and "
        "install cell, and generate exercises/ from solutions/ (answers become stubs, hidden tests "
        "go, outputs are cleared).",
    )
    add_root(parser)
    parser.add_argument(
        "--check",
        action="store_true",
        help="write nothing; exit 1 and name the files that are out of date "
        "(exit 2: an error in a notebook, named with its cell and the fix)",
    )
    return parser


def run(args: argparse.Namespace) -> int:
    """Build the course (or, with --check, say what is out of date)."""
    from ..course.authoring.build import build_course

    report = build_course(course_root(args), check=args.check)
    for warning in report.warnings:
        print(f"hookviz build: warning: {warning}", file=sys.stderr)
    if args.check:
        return _report_check(report)
    for path, reason in report.changed:
        print(f"wrote {path} ({reason})")
    for path in report.removed:
        print(f"removed {path} (its solution is gone)")
    for line in report.untranslated:
        print(f"hookviz build: note: not translated yet: {line}", file=sys.stderr)
    print(
        f"hookviz build: {len(report.changed)} written, {len(report.removed)} removed, "
        f"{len(report.unchanged)} up to date."
    )
    return EXIT_OK


def _report_check(report) -> int:
    if not report.stale:
        print(f"hookviz build --check: {len(report.unchanged)} notebooks up to date.")
        return EXIT_OK
    print("hookviz build --check: out of date (run `hookviz build`, then commit):", file=sys.stderr)
    for path, reason in report.changed:
        print(f"  {path}: {reason}", file=sys.stderr)
    for path in report.removed:
        print(f"  {path}: its solution is gone, so it should be removed", file=sys.stderr)
    for line in report.untranslated:
        print(f"  {line}", file=sys.stderr)
    return EXIT_STALE
