"""`hookviz grade SUBMISSIONS --assignment FOLDER`: an assignment of several notebooks (nbgrader's
``ps1/problem1.ipynb``, ``ps1/problem2.ipynb``), graded in one run into one gradebook.

Each notebook is graded as its own assignment into ``OUT/<notebook>/`` (results, feedback, its
questions graded by hand); ``OUT/gradebook.csv`` and ``OUT/gradebook.json`` then hold every
student once, with each check as ``<notebook>/<grade_id>``, a total per notebook and the total.
`hookviz merge-manual OUT/<notebook> CSV` rebuilds them; `hookviz gradebook OUT --canvas` reads
them like any gradebook.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import TextIO

from ..course.conventions import Status
from ..course.notebooks import NotebookError, atomic_write_text
from .gradebook import GRADEBOOK_CSV, GRADEBOOK_JSON, _cell

FOLDER_MARKER = "assignment-folder.json"


def assignment_notebooks(folder: Path) -> list[Path]:
    """The notebooks of an assignment folder, at its top level, sorted (checkpoints left out)."""
    return sorted(p for p in Path(folder).glob("*.ipynb") if not p.name.startswith("."))


def grade_assignment_folder(
    submissions: Path, folder: Path, out: Path, options, *, stream: TextIO | None = None
) -> Path:
    """Grade every notebook of ``folder`` into ``out/<notebook>``, then the combined gradebook."""
    from .batch import grade_folder  # the grader proper, imported when grading

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


def combine(out: Path) -> Path:
    """Write ``out``'s gradebook.csv and gradebook.json from its notebooks' gradebooks."""
    out = Path(out)
    marker = json.loads((out / FOLDER_MARKER).read_text(encoding="utf-8"))
    documents = {
        stem: json.loads((out / stem / GRADEBOOK_JSON).read_text(encoding="utf-8"))
        for stem in marker["notebooks"]
    }
    columns = [
        (stem, gid) for stem, document in documents.items() for gid in document["max_points"]
    ]
    students = sorted({s["student"] for d in documents.values() for s in d["students"]})
    rows = []
    for student in students:
        parts = {
            stem: next((s for s in d["students"] if s["student"] == student), None)
            for stem, d in documents.items()
        }
        statuses = {stem: (p["status"] if p else Status.MISSING.value) for stem, p in parts.items()}
        rows.append(
            {
                "student": student,
                "total": sum(p["total"] for p in parts.values() if p),
                "totals": {stem: (p["total"] if p else 0.0) for stem, p in parts.items()},
                "points": {
                    f"{stem}/{gid}": (parts[stem] or {}).get("points", {}).get(gid, 0.0)
                    for stem, gid in columns
                },
                "outcomes": {
                    f"{stem}/{gid}": (parts[stem] or {}).get("outcomes", {}).get(gid, "")
                    for stem, gid in columns
                },
                "statuses": statuses,
                "status": next(
                    (s for s in statuses.values() if s != Status.OK.value), Status.OK.value
                ),
                "flags": [f"{stem}: {f}" for stem, p in parts.items() if p for f in p["flags"]],
                "stale": any(p.get("stale") for p in parts.values() if p),
            }
        )
    table = io.StringIO()
    writer = csv.writer(table, lineterminator="\n")
    stems = list(documents)
    writer.writerow(
        ["student", "total", *stems, *(f"{s}/{g}" for s, g in columns), "status", "flags"]
    )
    for row in rows:
        writer.writerow(
            [
                _cell(row["student"]),
                f"{row['total']:g}",
                *(f"{row['totals'][s]:g}" for s in stems),
                *(f"{row['points'][f'{s}/{g}']:g}" for s, g in columns),
                row["status"],
                _cell("; ".join(row["flags"])),
            ]
        )
    atomic_write_text(out / GRADEBOOK_CSV, table.getvalue())
    document = {
        "assignment": marker["name"],
        "notebooks": stems,
        "max_points": {
            f"{stem}/{gid}": points
            for stem, d in documents.items()
            for gid, points in d["max_points"].items()
        },
        "max_total": sum(float(d["max_total"]) for d in documents.values()),
        "students": rows,
    }
    atomic_write_text(out / GRADEBOOK_JSON, json.dumps(document, indent=1, ensure_ascii=False))
    return out / GRADEBOOK_CSV
