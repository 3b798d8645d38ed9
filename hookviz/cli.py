"""The `hookviz` command: `hookviz build` (exercises from solutions) and `hookviz grade`."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

EXIT_OK, EXIT_STALE, EXIT_ERROR = 0, 1, 2


def _build(args: argparse.Namespace) -> int:
    from .course.build import build_course
    from .course.stamp import find_course_root

    root = Path(args.root) if args.root else find_course_root(Path.cwd())
    report = build_course(root, check=args.check)
    if args.check:
        if not report.stale:
            print(f"hookviz build --check: {len(report.unchanged)} notebooks up to date.")
            return EXIT_OK
        print(
            "hookviz build --check: out of date (run `hookviz build`, then commit):",
            file=sys.stderr,
        )
        for path, reason in report.changed:
            print(f"  {path}: {reason}", file=sys.stderr)
        for path in report.removed:
            print(f"  {path}: its solution is gone, so it should be removed", file=sys.stderr)
        return EXIT_STALE
    for path, reason in report.changed:
        print(f"wrote {path} ({reason})")
    for path in report.removed:
        print(f"removed {path} (its solution is gone)")
    print(
        f"hookviz build: {len(report.changed)} written, {len(report.removed)} removed, "
        f"{len(report.unchanged)} up to date."
    )
    return EXIT_OK


def _grade(args: argparse.Namespace) -> int:
    from .grading.batch import GradeOptions, grade_folder

    options = GradeOptions(
        jobs=args.jobs,
        cell_timeout=args.timeout,
        submission_timeout=args.submission_timeout,
        memory_mb=args.memory_mb,
        force=args.force,
        sandbox=args.sandbox,
        scheduler=args.scheduler,
    )
    out = Path(args.out) if args.out else Path("gradebook-out") / Path(args.assignment).stem
    summary = grade_folder(Path(args.submissions), Path(args.assignment), out, options)
    print(f"gradebook: {summary.gradebook_csv}")
    return EXIT_OK


def _new(args: argparse.Namespace) -> int:
    from .course.scaffold import new_assignment
    from .course.stamp import find_course_root

    root = Path(args.root) if args.root else find_course_root(Path.cwd())
    path = new_assignment(root, args.name)
    relative = path.relative_to(root)
    print(f"wrote {relative}, with its outputs stored. Next:")
    print("  1. replace the example with your exercise (docs/CONVENTIONS.md), then store its outputs:")
    print(f"     .venv/bin/python tools/run_notebooks.py {relative}")
    print("  2. hookviz build   (writes the exercise students get)")
    return EXIT_OK


def _positive(kind: type) -> Callable[[str], float]:
    def parse(text: str) -> float:
        value = kind(text)
        if value <= 0:
            raise argparse.ArgumentTypeError(f"must be more than 0, got {text}")
        return value

    return parse


def parser() -> argparse.ArgumentParser:
    """The argument parser of the `hookviz` command."""
    top = argparse.ArgumentParser(
        prog="hookviz",
        description=__doc__,
        epilog="Exit codes: 0 done (whatever the students' statuses); 1 build --check found files "
        "out of date; 2 an error to fix first, named with the notebook's cell and the fix.",
    )
    commands = top.add_subparsers(dest="command", required=True)

    build = commands.add_parser(
        "build",
        help="stamp notebooks and generate exercises/ from solutions/",
        description="Stamp every notebook in notebooks/ and solutions/ with its Colab badge and "
        "install cell, and generate exercises/ from solutions/ (answers become stubs, hidden tests "
        "go, outputs are cleared).",
    )
    build.add_argument(
        "--root", help="the course folder (default: the nearest folder with course.toml)"
    )
    build.add_argument(
        "--check",
        action="store_true",
        help="write nothing; exit 1 and name the files that are out of date "
        "(exit 2: an error in a notebook, named with its cell and the fix)",
    )
    build.set_defaults(run=_build)

    new = commands.add_parser(
        "new",
        help="start a new assignment in solutions/ from a template",
        description="Write solutions/NN-name.ipynb: a setup cell, one answer and one check cell "
        "(visible checks on two models, a hidden test, the sentinel), with its outputs stored, "
        "so that it builds and grades at once. Replace the example with your exercise.",
    )
    new.add_argument("name", help="NN-name, e.g. 05-activation-stats")
    new.add_argument(
        "--root", help="the course folder (default: the nearest folder with course.toml)"
    )
    new.set_defaults(run=_new)

    grade = commands.add_parser(
        "grade",
        help="grade a folder of submissions with nbval",
        description="Grade SUBMISSIONS/<student>/<NAME>.ipynb (or SUBMISSIONS/<student>.ipynb) against "
        "the instructor's solutions/NAME.ipynb. Writes gradebook.csv, gradebook.json and "
        "feedback/<student>.md to the out folder.",
    )
    grade.add_argument("submissions", help="the folder of student submissions")
    grade.add_argument(
        "--assignment", required=True, help="the instructor's notebook, solutions/NAME.ipynb"
    )
    grade.add_argument("--out", help="where the gradebook goes (default: gradebook-out/NAME)")
    grade.add_argument(
        "-j",
        "--jobs",
        type=_positive(int),
        default=None,
        help="submissions graded at once (default: one per CPU; with --scheduler, twice the "
        "cluster's worker threads)",
    )
    grade.add_argument(
        "--timeout",
        type=_positive(float),
        default=60.0,
        help="seconds one cell may run (default 60)",
    )
    grade.add_argument(
        "--submission-timeout",
        type=_positive(float),
        default=300.0,
        help="seconds one whole submission may take (default 300)",
    )
    grade.add_argument(
        "--memory-mb",
        type=_positive(int),
        default=4096,
        help="address-space limit of each grading process, in MB (default 4096)",
    )
    grade.add_argument("--force", action="store_true", help="grade again students already graded")
    grade.add_argument(
        "--sandbox",
        choices=("auto", "bwrap", "none"),
        default="auto",
        help="auto (default): bubblewrap when installed; bwrap: require it; none: limits only",
    )
    grade.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="grade on a Dask cluster, one task per submission: a scheduler's address "
        "(tcp://HOST:8786), or local:N to start N worker processes here (needs hookviz[cluster])",
    )
    grade.set_defaults(run=_grade)
    return top


def main(argv: Sequence[str] | None = None) -> int:
    """Run the `hookviz` command; returns its exit code."""
    args = parser().parse_args(argv)
    from .course.notebooks import NotebookError

    try:
        return args.run(args)
    except NotebookError as error:
        print(f"hookviz {args.command}: {error}", file=sys.stderr)
        return EXIT_ERROR


if __name__ == "__main__":
    sys.exit(main())
