"""`hookviz new NN-name`: a new assignment in solutions/ from a template (course/authoring/scaffold.py)."""

from __future__ import annotations

import argparse

from .common import EXIT_OK, add_root, course_root


def add_parser(commands) -> argparse.ArgumentParser:
    """The `new` subcommand's parser."""
    parser = commands.add_parser(
        "new",
        help="start a new assignment in solutions/ from a template",
        description="Write solutions/NN-name.ipynb: a setup cell, one answer and one check cell "
        "(visible checks on two models, a hidden test, the sentinel), with its outputs stored, "
        "so that it builds and grades at once. Replace the example with your exercise.",
    )
    parser.add_argument("name", help="NN-name, e.g. 05-activation-stats")
    add_root(parser)
    return parser


def run(args: argparse.Namespace) -> int:
    """Write the new assignment and say what to do next."""
    from ..course.authoring.scaffold import new_assignment

    root = course_root(args)
    relative = new_assignment(root, args.name).relative_to(root)
    print(f"wrote {relative}, with its outputs stored. Next:")
    print(
        "  1. replace the example with your exercise (docs/CONVENTIONS.md), then store its outputs:"
    )
    print(f"     hookviz run {relative}")
    print("  2. hookviz build   (writes the exercise students get)")
    return EXIT_OK
