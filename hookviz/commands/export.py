"""`hookviz export gradescope NOTEBOOK`: an assignment's autograder for a course platform
(grading/platforms/gradescope_export.py)."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..grading.run.limits import Limits
from ..grading.run.sandbox import AUTOGRADER_MODES
from .common import EXIT_OK


def add_parser(commands) -> argparse.ArgumentParser:
    """The `export` subcommand's parser, with one subcommand per platform."""
    parser = commands.add_parser(
        "export",
        help="write an assignment's autograder for a course platform",
        description="Write an assignment's autograder for a course platform (Gradescope).",
    )
    platforms = parser.add_subparsers(dest="platform", required=True)
    gradescope = platforms.add_parser(
        "gradescope",
        help="Gradescope's autograder zip",
        description="Write Gradescope's autograder zip: setup.sh (Python, the CPU build of torch, "
        "hookviz), run_autograder (grades the notebook in submission/ with hookviz's grader and "
        "writes results/results.json) and your notebook, which must score full marks first.",
    )
    gradescope.add_argument("assignment", help="the instructor's notebook, solutions/NAME.ipynb")
    gradescope.add_argument(
        "-o", "--output", help="the zip to write (default: NAME-autograder.zip)"
    )
    gradescope.add_argument(
        "--sandbox",
        choices=AUTOGRADER_MODES,
        default="user",
        help="user (default): limits, and student code runs as an unprivileged user with your "
        "files closed to it; bwrap: bubblewrap (needs user namespaces in Gradescope's container); "
        "none: limits only",
    )
    gradescope.add_argument(
        "--hidden-tests-visibility",
        choices=("visible", "after_due_date", "after_published", "hidden"),
        default="after_published",
        help="when students see the checks that have hidden tests (default: after_published)",
    )
    Limits.add_arguments(gradescope, "the whole notebook")
    gradescope.add_argument(
        "--torch-index-url",
        metavar="URL",
        help="the package index setup.sh installs torch from, when your index's torch==2.13 is a "
        "CUDA build (default: pip's own)",
    )
    gradescope.add_argument(
        "--manual-grades",
        metavar="OUT",
        help="ship the grades given by hand merged into OUT (hookviz merge-manual): upload the "
        "zip again and regrade all submissions, and each student's score includes them",
    )
    return parser


def run(args: argparse.Namespace) -> int:
    """Check the solution scores full marks, then write the zip."""
    from ..grading.platforms.gradescope_export import (
        ExportOptions,
        check_solution,
        export_gradescope,
    )

    options = ExportOptions(
        sandbox=args.sandbox,
        hidden_visibility=args.hidden_tests_visibility,
        limits=Limits.from_args(args),
        torch_index_url=args.torch_index_url,
        manual_grades=Path(args.manual_grades) if args.manual_grades else None,
    )
    assignment = Path(args.assignment)
    check_solution(assignment, options)
    export = export_gradescope(
        assignment, Path(args.output or f"{assignment.stem}-autograder.zip"), options
    )
    print(f"wrote {export.path}: {', '.join(export.members)}")
    print(
        "Upload it on Gradescope: a Programming Assignment, Configure Autograder, "
        "the Ubuntu 22.04 base image or newer."
    )
    return EXIT_OK
