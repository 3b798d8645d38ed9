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
    for warning in report.warnings:
        print(f"hookviz build: warning: {warning}", file=sys.stderr)
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


def _site(args: argparse.Namespace) -> int:
    from .course.stamp import find_course_root
    from .site.build import build_site

    root = Path(args.root) if args.root else find_course_root(Path.cwd())
    report = build_site(root, Path(args.out) if args.out else None, jobs=args.jobs)
    for note in report.stateless:
        print(f"note: {note}; the page shows its text instead", file=sys.stderr)
    print(
        f"hookviz site: {len(report.pages)} pages, {report.widgets} widgets, in "
        f"{report.seconds:.0f} s. Open {report.out / 'index.html'}"
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
    if Path(args.assignment).is_dir():  # an assignment of several notebooks: one gradebook
        from .grading.folder import grade_assignment_folder

        gradebook = grade_assignment_folder(
            Path(args.submissions), Path(args.assignment), out, options
        )
        print(f"gradebook: {gradebook}")
        return EXIT_OK
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
    print(
        "  1. replace the example with your exercise (docs/CONVENTIONS.md), then store its outputs:"
    )
    print(f"     hookviz run {relative}")
    print("  2. hookviz build   (writes the exercise students get)")
    return EXIT_OK


def _export_gradescope(args: argparse.Namespace) -> int:
    from .grading.gradescope_export import ExportOptions, check_solution, export_gradescope

    options = ExportOptions(
        sandbox=args.sandbox,
        hidden_visibility=args.hidden_tests_visibility,
        cell_timeout=args.timeout,
        submission_timeout=args.submission_timeout,
        memory_mb=args.memory_mb,
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


def _gradebook(args: argparse.Namespace) -> int:
    from .grading.canvas import canvas_gradebook

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


def _merge_manual(args: argparse.Namespace) -> int:
    from .grading.manual import merge_manual

    report = merge_manual(Path(args.out), Path(args.csv))
    print(
        f"merged {report.graded} grades given by hand into {args.out}: gradebook.csv, "
        f"gradebook.json and the feedback of {len(report.students)} students"
        + "".join(f", {path.name}" for path in report.exports)
    )
    if report.left:
        print(f"{report.left} answers still wait for a grade (their points are empty).")
    return EXIT_OK


def _import_nbgrader(args: argparse.Namespace) -> int:
    from .course.nbgrader_import import import_nbgrader
    from .course.stamp import find_course_root

    root = Path(args.root) if args.root else find_course_root(Path.cwd())
    report = import_nbgrader(Path(args.source), root, name=args.name, run=not args.no_run)
    target = report.target.relative_to(root)
    print(f"imported {args.source} into {target}/:")
    for line in report.notebooks:
        print(f"  {line}")
    if report.files:
        print(f"  files beside them, copied: {', '.join(report.files)}")
    print("What changed:" if report.changes else "Nothing needed changing.")
    for change in report.changes:
        print(f"  - {change}")
    if report.notes:
        print("Worth a look (hookviz build warns about them):")
        for note in report.notes:
            print(f"  - {note}")
    if report.attention:
        print("To fix before `hookviz build`:", file=sys.stderr)
        for problem in report.attention:
            print(f"  - {problem}", file=sys.stderr)
    print(f"Next: hookviz build, then hookviz grade SUBMISSIONS --assignment {target}")
    return EXIT_OK


def _run(args: argparse.Namespace) -> int:
    import tempfile

    from .course.execute import store_outputs
    from .course.notebooks import NotebookError

    for path in args.notebooks:
        if path.suffix != ".ipynb" or not path.is_file():
            raise NotebookError(
                f"{path} is not a notebook file (.ipynb); pass the notebooks to run."
            )
    with tempfile.TemporaryDirectory(prefix="hookviz-settings-") as settings:
        for path in args.notebooks:
            seconds = store_outputs(path, Path(settings))
            print(f"{path}: executed and stored in {seconds:.1f} s")
    return EXIT_OK


def _report(args: argparse.Namespace) -> int:
    from .grading.report import write_report

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


def _add_lms_and_report_commands(commands) -> None:
    """`hookviz export gradescope`, `hookviz gradebook --canvas`, `hookviz report`."""
    from .grading.sandbox import AUTOGRADER_MODES

    export = commands.add_parser(
        "export",
        help="write an assignment's autograder for a course platform",
        description="Write an assignment's autograder for a course platform (Gradescope).",
    )
    platforms = export.add_subparsers(dest="platform", required=True)
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
    _add_limits(gradescope, "the whole notebook")
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
    gradescope.set_defaults(run=_export_gradescope)

    gradebook = commands.add_parser(
        "gradebook",
        help="the gradebook in a course platform's import layout (Canvas)",
        description="Write OUT's scores in the layout of Canvas's gradebook export, which Canvas "
        "imports back: the roster's student columns as they are, then one column for the assignment. "
        "Students are matched by SIS Login ID or SIS User ID.",
    )
    gradebook.add_argument("out", help="the out folder of `hookviz grade`")
    gradebook.add_argument(
        "--canvas", required=True, metavar="ROSTER.csv", help="a gradebook exported from Canvas"
    )
    gradebook.add_argument("-o", "--output", help="the CSV to write (default: OUT/canvas.csv)")
    gradebook.add_argument(
        "--column",
        help="the assignment's column title (default: the roster's column for it, else its name)",
    )
    gradebook.set_defaults(run=_gradebook)

    report = commands.add_parser(
        "report",
        help="an item analysis of a graded batch, as a web page",
        description="Write OUT/report.html (self-contained: figures inlined) and its PNGs: scores, "
        "the pass rate of every check, the most common failure messages, time per submission, "
        "flags, and near-identical answers. For you, not students; it changes no score.",
    )
    report.add_argument("out", help="the out folder of `hookviz grade`")
    report.add_argument("-o", "--output", help="the page to write (default: OUT/report.html)")
    report.add_argument(
        "--assignment", help="the instructor's notebook (default: the one OUT was graded with)"
    )
    report.add_argument(
        "--submissions", help="where the submissions are now, if they moved since grading"
    )
    report.add_argument(
        "--similarity",
        choices=("auto", "ast", "copydetect", "off"),
        default="auto",
        help="how answers are compared (default auto: copydetect when installed, else ast)",
    )
    report.add_argument(
        "--threshold",
        type=_positive(float),
        default=0.9,
        help="how alike two answers must be to be listed, 0 to 1 (default 0.9)",
    )
    report.add_argument(
        "--min-tokens",
        type=_positive(int),
        default=30,
        help="answers shorter than this are not compared (default 30)",
    )
    report.set_defaults(run=_report)

    merge = commands.add_parser(
        "merge-manual",
        help="merge the grades given by hand into a graded batch",
        description="Merge CSV (OUT/manual/manual-grades.csv, filled in: student, question, "
        "points, comment) into OUT's gradebook.csv and gradebook.json, each student's feedback, "
        "and OUT/canvas.csv when there is one. The whole CSV is checked first: a row naming an "
        "unknown student or question, or points that are no number or over the maximum, stops "
        "it with every such row named, and nothing is merged.",
    )
    merge.add_argument("out", help="the out folder of `hookviz grade`")
    merge.add_argument("csv", help="the filled-in CSV")
    merge.set_defaults(run=_merge_manual)


def _add_limits(parser: argparse.ArgumentParser, whole: str) -> None:
    """--timeout, --submission-timeout and --memory-mb, defaulting to the grader's own Limits."""
    from .grading.sandbox import Limits

    parser.add_argument(
        "--timeout",
        type=_positive(float),
        default=Limits.cell_timeout,
        help=f"seconds one cell may run (default {Limits.cell_timeout:g})",
    )
    parser.add_argument(
        "--submission-timeout",
        type=_positive(float),
        default=Limits.submission_timeout,
        help=f"seconds {whole} may take (default {Limits.submission_timeout:g})",
    )
    parser.add_argument(
        "--memory-mb",
        type=_positive(int),
        default=Limits.memory_mb,
        help=f"address-space limit of each grading process, in MB (default {Limits.memory_mb})",
    )


def _positive(kind: type) -> Callable[[str], float]:
    def parse(text: str) -> float:
        value = kind(text)
        if value <= 0:
            raise argparse.ArgumentTypeError(f"must be more than 0, got {text}")
        return value

    return parse


def parser() -> argparse.ArgumentParser:
    """The argument parser of the `hookviz` command."""
    from .grading.sandbox import GRADE_MODES

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

    site = commands.add_parser(
        "site",
        help="build the course as a static site whose widgets play without a kernel",
        description="Run each walkthrough notebook once and write site/: a page per notebook "
        "and per assignment (as students get it), the guides, the package reference and an "
        "offline search. Every widget plays in the browser from the state it recorded; no page "
        "requests anything outside site/, so it works from file:// and on any static host.",
    )
    site.add_argument(
        "--root", help="the course folder (default: the nearest folder with course.toml)"
    )
    site.add_argument("--out", help="where to write the site (default: ROOT/site)")
    site.add_argument(
        "-j", "--jobs", type=int, default=None, help="notebooks run at once (default: 2)"
    )
    site.set_defaults(run=_site)

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

    run = commands.add_parser(
        "run",
        help="run notebooks and store their outputs (what nbval and the grader compare)",
        description="Run each notebook top to bottom in a fresh kernel, in its own folder, and "
        "store its outputs; each check cell records the source its output came from, so that "
        "`hookviz build` and `hookviz grade` refuse a check cell edited since.",
    )
    run.add_argument("notebooks", nargs="+", type=Path, help="the notebooks (.ipynb)")
    run.set_defaults(run=_run)

    imports = commands.add_parser(
        "import-nbgrader",
        help="turn an nbgrader source assignment into a hookviz one, in solutions/",
        description="Copy an nbgrader source assignment (source/NAME: its notebooks and the files "
        "beside them) into solutions/NAME/, run each notebook to store its outputs, and say what "
        "changed and what hookviz will not grade as nbgrader does (an ### AUTOTEST directive, a "
        "test cell without points). Written answers and tasks are graded by hand.",
    )
    imports.add_argument("source", help="the nbgrader source assignment folder, e.g. source/ps1")
    imports.add_argument("--name", help="the folder in solutions/ (default: the source's name)")
    imports.add_argument(
        "--root", help="the course folder (default: the nearest folder with course.toml)"
    )
    imports.add_argument(
        "--no-run", action="store_true", help="do not run the notebooks (store outputs later)"
    )
    imports.set_defaults(run=_import_nbgrader)

    grade = commands.add_parser(
        "grade",
        help="grade a folder of submissions with nbval",
        description="Grade SUBMISSIONS/<student>/<NAME>.ipynb (or SUBMISSIONS/<student>.ipynb) against "
        "the instructor's solutions/NAME.ipynb. Writes gradebook.csv, gradebook.json and "
        "feedback/<student>.md to the out folder.",
    )
    grade.add_argument("submissions", help="the folder of student submissions")
    grade.add_argument(
        "--assignment",
        required=True,
        help="the instructor's notebook, solutions/NAME.ipynb, or a folder of notebooks graded "
        "into one gradebook (files beside the notebooks are copied into every grading folder)",
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
    _add_limits(grade, "one whole submission")
    grade.add_argument("--force", action="store_true", help="grade again students already graded")
    grade.add_argument(
        "--sandbox",
        choices=GRADE_MODES,
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
    _add_lms_and_report_commands(commands)
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
