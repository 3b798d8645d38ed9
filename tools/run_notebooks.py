"""`hookviz run` under its old name: execute notebooks and store their outputs (what nbval compares).

    .venv/bin/hookviz run notebooks/*.ipynb solutions/*.ipynb

The work is done by ``hookviz.course.authoring.execute``; tests import ``execute`` and ``isolated_env``
from here.
"""

from __future__ import annotations

import sys

from hookviz.cli import main as hookviz_main
from hookviz.course.authoring.execute import (  # noqa: F401 - re-exported for the tests
    CELL_TIMEOUT,
    SETTINGS_DIRS,
    WIDGET_VIEW,
    environment,
    execute,
    isolated_env,
    store_outputs,
)


def main(argv: list[str] | None = None) -> int:
    """Run each notebook given on the command line and store its outputs: `hookviz run`."""
    return hookviz_main(["run", *(sys.argv[1:] if argv is None else argv)])


if __name__ == "__main__":
    sys.exit(main())
