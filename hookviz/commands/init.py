"""`hookviz init [FOLDER]`: a new course anywhere (course/authoring/new_course.py)."""

from __future__ import annotations

import argparse
from pathlib import Path

from .common import EXIT_OK


def add_parser(commands) -> argparse.ArgumentParser:
    """The `init` subcommand's parser."""
    parser = commands.add_parser(
        "init",
        help="start a new course in a folder (or write down an nbgrader course's settings)",
        description="Write a new course into FOLDER (default: here): course.toml with every key "
        "explained, one assignment in solutions/ with its hints in hints/, one walkthrough page "
        "in notebooks/ with a prediction from predictions/, a .gitignore and a README for your "
        "students; then store the notebooks' outputs and build exercises/. It never writes "
        "over a course. With --from-nbgrader, in an nbgrader course's folder, it writes only "
        "course.toml with the defaults hookviz grades that course with.",
    )
    parser.add_argument("folder", nargs="?", default=".", help="where (default: here)")
    parser.add_argument(
        "--from-nbgrader",
        action="store_true",
        help="write down an nbgrader course's settings as course.toml, and nothing else",
    )
    parser.add_argument(
        "--no-run",
        action="store_true",
        help="do not run the notebooks (store their outputs later with `hookviz run`)",
    )
    return parser


def run(args: argparse.Namespace) -> int:
    """Make the course and say what to do next."""
    from ..course.authoring.new_course import init_course, init_from_nbgrader

    folder = Path(args.folder)
    if args.from_nbgrader:
        path = init_from_nbgrader(folder)
        print(f"wrote {path}: the defaults this nbgrader course was graded with; edit to change.")
        return EXIT_OK
    written = init_course(folder, run=not args.no_run)
    root = folder.resolve()
    for path in written:
        print(f"wrote {path.relative_to(root)}")
    where = "" if root == Path.cwd().resolve() else f"cd {args.folder} && "
    print("Next:")
    print(f"  {where}hookviz new 02-your-exercise   (another assignment from the template)")
    print("  hookviz build                    (the exercises students get, after each edit)")
    print("  hookviz site                     (the web edition, in site/)")
    print("  hookviz grade SUBMISSIONS --assignment solutions/01-first-steps.ipynb")
    return EXIT_OK
