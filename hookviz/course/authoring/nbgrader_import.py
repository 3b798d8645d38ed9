"""`hookviz import-nbgrader SOURCE_DIR`: an nbgrader source assignment as a hookviz one.

nbgrader's conventions are hookviz's (cell metadata, solution and hidden-test markers, bare
assert tests, written answers and tasks graded by hand), so an import is mostly a copy: the
folder goes to ``solutions/<name>/`` with every file beside its notebooks, and each notebook
is changed only where hookviz needs it, each change said in the report:

- nbgrader's own checksums and cell states in a release copy are dropped (`hookviz build`
  writes the student copy's);
- the notebook is run and its outputs stored (`hookviz run`), since a check cell written the
  hookviz way is graded against its stored output;
- what `hookviz build` would refuse (an ``### AUTOTEST`` directive hookviz does not expand, a
  test cell worth no points) is named with its cell and its fix, and what it would warn about
  is listed apart.
"""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from ..format.notebooks import (
    NotebookError,
    atomic_write_text,
    describe_cell,
    is_answer,
    is_check,
    is_manual,
    nbgrader,
    notebook_text,
    read_notebook,
)
from ..format.steps import Context, validate_grading_metadata, validate_stored_outputs
from .build import SOLUTIONS

_RELEASE_KEYS = ("checksum", "cell_type")  # what nbgrader adds to a released copy's metadata


@dataclass
class ImportReport:
    """What an import wrote, changed, and left for the instructor."""

    target: Path
    notebooks: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    changes: list[str] = field(default_factory=list)
    attention: list[str] = field(default_factory=list)  # to fix before `hookviz build`
    notes: list[str] = field(default_factory=list)  # what `hookviz build` would warn about


def import_nbgrader(
    source: Path, root: Path, *, name: str | None = None, run: bool = True
) -> ImportReport:
    """Copy the nbgrader assignment ``source`` into ``root/solutions/<name>`` and adapt it."""
    source, root = Path(source), Path(root)
    if not source.is_dir():
        raise NotebookError(
            f"{source} is not a folder; pass an nbgrader source assignment, such as "
            "source/ps1 (the folder that holds its notebooks)."
        )
    notebooks = sorted(p for p in source.glob("*.ipynb") if not p.name.startswith("."))
    if not notebooks:
        raise NotebookError(f"{source} holds no notebook (.ipynb) at its top level.")
    name = name or source.resolve().name
    target = root / SOLUTIONS / name
    if target.exists():
        raise NotebookError(
            f"{target} already exists; pass --name for another folder, or delete it first."
        )
    report = ImportReport(target)
    for path in sorted(source.rglob("*")):
        parts = path.relative_to(source).parts
        if any(part.startswith(".") or part == "__pycache__" for part in parts):
            continue
        if path.is_file() and path.suffix != ".ipynb":
            destination = target / path.relative_to(source)
            destination.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, destination)
            report.files.append(path.relative_to(source).as_posix())
    for path in notebooks:
        relative = (target / path.name).relative_to(root).as_posix()
        notebook = read_notebook(path)
        summary, changes, attention = adapt(notebook, relative)
        report.notebooks.append(f"{path.name}: {summary}")
        report.changes += changes
        report.attention += attention
        atomic_write_text(target / path.name, notebook_text(notebook))
    if run:
        from .execute import store_outputs

        with tempfile.TemporaryDirectory(prefix="hookviz-settings-") as settings:
            for path in notebooks:
                relative = (target / path.name).relative_to(root).as_posix()
                try:
                    store_outputs(target / path.name, Path(settings))
                except Exception as error:  # a cell that raised: the instructor must see which
                    report.attention.append(
                        f"{relative}: running it stopped ({type(error).__name__}: "
                        f"{str(error).strip().splitlines()[-1] if str(error).strip() else ''}); "
                        f"fix the cell, then `hookviz run {relative}`."
                    )
                    continue
                report.changes.append(f"{relative}: ran it and stored its outputs (hookviz run)")
    for path in notebooks:
        relative = (target / path.name).relative_to(root).as_posix()
        notebook = read_notebook(target / path.name)
        context = Context(config=None, source=relative, target=relative)
        steps = (validate_grading_metadata, validate_stored_outputs)
        for step in steps if run else steps[:1]:
            try:
                step(notebook, context)
            except NotebookError as error:
                report.attention.append(str(error))
                break
        report.notes += list(getattr(context, "warnings", []))
    return report


def adapt(notebook, relative: str) -> tuple[str, list[str], list[str]]:
    """Change ``notebook`` in place where hookviz needs it; its summary, changes, and problems."""
    changes: list[str] = []
    attention: list[str] = []
    counts = {"answers": 0, "checks": 0, "graded by hand": 0}
    dropped = 0
    for index, cell in enumerate(notebook.cells):
        meta = nbgrader(cell)
        if not meta:
            continue
        where = describe_cell(relative, notebook.cells, index)
        for key in _RELEASE_KEYS:
            if key in meta:
                del cell.metadata["nbgrader"][key]
                dropped += 1
        if is_answer(cell):
            counts["answers"] += 1
        elif is_manual(cell):
            counts["graded by hand"] += 1
        elif is_check(cell):
            counts["checks"] += 1
            if not meta.get("points"):
                attention.append(
                    f"{where}: a test cell worth no points; give it points in "
                    "metadata.nbgrader, or make it an ordinary cell."
                )
    if dropped:
        changes.append(
            f"{relative}: dropped {dropped} nbgrader release fields (checksum, cell_type); "
            "hookviz build writes the student copy's"
        )
    summary = ", ".join(f"{n} {what}" for what, n in counts.items())
    return summary, changes, attention
