"""The `hookviz` command: `hookviz build` (exercises from solutions) and `hookviz grade`."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from .commands import (
    build,
    export,
    grade,
    gradebook,
    i18n,
    import_nbgrader,
    init,
    merge_manual,
    new,
    report,
    run,
    site,
)
from .commands.common import EXIT_ERROR, EXIT_OK, EXIT_STALE  # noqa: F401 (the exit codes of main)

# Each command's module (hookviz/commands/<name>.py) owns its parser and its run; in help order.
COMMANDS = (
    init,
    build,
    site,
    new,
    run,
    i18n,
    import_nbgrader,
    grade,
    export,
    gradebook,
    report,
    merge_manual,
)


def parser() -> argparse.ArgumentParser:
    """The argument parser of the `hookviz` command."""
    top = argparse.ArgumentParser(
        prog="hookviz",
        description=__doc__,
        epilog="Exit codes: 0 done (whatever the students' statuses); 1 build --check found files "
        "out of date; 2 an error to fix first, named with the notebook's cell and the fix.",
    )
    commands = top.add_subparsers(dest="command", required=True)
    for command in COMMANDS:
        command.add_parser(commands).set_defaults(run=command.run)
    return top


def main(argv: Sequence[str] | None = None) -> int:
    """Run the `hookviz` command; returns its exit code."""
    args = parser().parse_args(argv)
    from .course.format.notebooks import NotebookError

    try:
        return args.run(args)
    except NotebookError as error:
        print(f"hookviz {args.command}: {error}", file=sys.stderr)
        return EXIT_ERROR


if __name__ == "__main__":
    sys.exit(main())
