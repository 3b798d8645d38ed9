"""`hookviz grade SUBMISSIONS --assignment FOLDER`: an assignment of several notebooks (nbgrader's
``ps1/problem1.ipynb``, ``ps1/problem2.ipynb``), graded in one run into one gradebook.

Each notebook is graded as its own assignment into ``OUT/<notebook>/`` (results, feedback, its
questions graded by hand); ``OUT/gradebook.csv`` and ``OUT/gradebook.json`` then hold every
student once, with each check as ``<notebook>/<grade_id>``, a total per notebook and the total.
`hookviz merge-manual OUT/<notebook> CSV` rebuilds them; `hookviz gradebook OUT --canvas` reads
them like any gradebook.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TextIO

from ...course.format.notebooks import NotebookError, atomic_write_text
from ..core.combined import FOLDER_MARKER, combine
from .batch import grade_folder


def assignment_notebooks(folder: Path) -> list[Path]:
    """The notebooks of an assignment folder, at its top level, sorted (checkpoints left out)."""
    return sorted(p for p in Path(folder).glob("*.ipynb") if not p.name.startswith("."))


def grade_assignment_folder(
    submissions: Path, folder: Path, out: Path, options, *, stream: TextIO | None = None
) -> Path:
    """Grade every notebook of ``folder`` into ``out/<notebook>``, then the combined gradebook."""
    folder, out = Path(folder), Path(out)
    notebooks = assignment_notebooks(folder)
    if not notebooks:
        raise NotebookError(
            f"{folder} holds no notebook; pass --assignment solutions/NAME.ipynb, or a folder "
            "with the assignment's notebooks (and its data files) in it."
        )
    out.mkdir(parents=True, exist_ok=True)
    atomic_write_text(
        out / FOLDER_MARKER,
        json.dumps({"name": folder.name, "notebooks": [p.stem for p in notebooks]}, indent=1),
    )
    for notebook in notebooks:
        grade_folder(submissions, notebook, out / notebook.stem, options, stream=stream)
    return combine(out)
