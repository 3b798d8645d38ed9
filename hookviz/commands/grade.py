"""`hookviz grade SUBMISSIONS --assignment A`: grade a folder of submissions (grading/grade/)."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..grading.run.limits import Limits, positive
from ..grading.run.sandbox import GRADE_MODES
from .common import EXIT_OK


def add_parser(commands) -> argparse.ArgumentParser:
    """The `grade` subcommand's parser."""
    parser = commands.add_parser(
        "grade",
        help="grade a folder of submissions with nbval",
        description="Grade SUBMISSIONS/<student>/<NAME>.ipynb (or SUBMISSIONS/<student>.ipynb) against "
        "the instructor's solutions/NAME.ipynb. Writes gradebook.csv, gradebook.json and "
        "feedback/<student>.md to the out folder.",
    )
    parser.add_argument("submissions", help="the folder of student submissions")
    parser.add_argument(
        "--assignment",
        required=True,
        help="the instructor's notebook, solutions/NAME.ipynb, or a folder of notebooks graded "
        "into one gradebook (files beside the notebooks are copied into every grading folder)",
    )
    parser.add_argument("--out", help="where the gradebook goes (default: gradebook-out/NAME)")
    parser.add_argument(
        "-j",
        "--jobs",
        type=positive(int),
        default=None,
        help="submissions graded at once (default: one per CPU; with --scheduler, twice the "
        "cluster's worker threads)",
    )
    Limits.add_arguments(parser, "one whole submission")
    parser.add_argument("--force", action="store_true", help="grade again students already graded")
    parser.add_argument(
        "--sandbox",
        choices=GRADE_MODES,
        default="auto",
        help="auto (default): bubblewrap when installed; bwrap: require it; none: limits only",
    )
    parser.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="grade on a Dask cluster, one task per submission: a scheduler's address "
        "(tcp://HOST:8786), or local:N to start N worker processes here (needs hookviz[cluster])",
    )
    return parser


def run(args: argparse.Namespace) -> int:
    """Grade the submissions into the out folder."""
    from ..grading.grade.batch import GradeOptions, grade_folder
    from ..grading.grade.folder import grade_assignment_folder

    options = GradeOptions(
        jobs=args.jobs,
        limits=Limits.from_args(args),
        force=args.force,
        sandbox=args.sandbox,
        scheduler=args.scheduler,
    )
    out = Path(args.out) if args.out else Path("gradebook-out") / Path(args.assignment).stem
    if Path(args.assignment).is_dir():  # an assignment of several notebooks: one gradebook
        gradebook = grade_assignment_folder(
            Path(args.submissions), Path(args.assignment), out, options
        )
        print(f"gradebook: {gradebook}")
        return EXIT_OK
    summary = grade_folder(Path(args.submissions), Path(args.assignment), out, options)
    print(f"gradebook: {summary.gradebook_csv}")
    return EXIT_OK
