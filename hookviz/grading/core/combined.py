"""The out folder of an assignment of several notebooks: one gradebook over its notebooks'.

``hookviz grade --assignment FOLDER`` grades each notebook into ``OUT/<notebook>/`` and marks
``OUT`` with FOLDER_MARKER; ``combine`` then writes ``OUT/gradebook.csv`` and ``gradebook.json``
with every student once. `hookviz merge-manual OUT/<notebook>` calls it again.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from ...course.conventions import Status
from ...course.format.notebooks import atomic_write_text
from .gradebook import GRADEBOOK_CSV, GRADEBOOK_JSON, spreadsheet_cell

FOLDER_MARKER = "assignment-folder.json"


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
                spreadsheet_cell(row["student"]),
                f"{row['total']:g}",
                *(f"{row['totals'][s]:g}" for s in stems),
                *(f"{row['points'][f'{s}/{g}']:g}" for s, g in columns),
                row["status"],
                spreadsheet_cell("; ".join(row["flags"])),
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
