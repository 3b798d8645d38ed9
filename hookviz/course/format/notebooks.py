"""Reading and writing notebooks, and the nbgrader cell metadata that `build` and `grade` share.

nbformat is imported on first use: it is an instructor's tool (the ``dev`` extra), and
``import hookviz.course`` must stay cheap for students.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any

from ..conventions import shorten
from ..wording import every_language, words

SCHEMA_VERSION = 3
OUTPUTS_SOURCE_KEY = "outputs_source_sha256"  # in a check cell's metadata.hookviz
CHECKSUM_KEY = "checksum"  # hookviz's sha256 of a handed-out cell, in its metadata.hookviz


def install_first_line(lang: str = "en") -> str:
    """The first line of the install cell `hookviz build` stamps (authoring/stamp.py), a comment
    in the notebook's language."""
    return "# " + words("stamp.install", lang)


def content_first_line(lang: str = "en") -> str:
    """The first line of the content cell `hookviz build` stamps, in the notebook's language."""
    return "# " + words("stamp.content", lang)


# The first lines of the cells `hookviz build` stamps, by which the grader also knows them, in
# every language a notebook can be handed out in.
INSTALL_FIRST_LINE = install_first_line()
CONTENT_FIRST_LINE = content_first_line()
STAMPED_FIRST_LINES = tuple(
    "# " + text for key in ("stamp.install", "stamp.content") for text in every_language(key)
)
# The roles of the cells `hookviz build` stamps, in their metadata.hookviz.stamp
STAMP_KEY = "stamp"
BADGE, INSTALL, CONTENT = "colab-badge", "install", "content"
NBFORMAT_HINT = "hookviz's instructor commands need nbformat: pip install 'hookviz[dev]'."


class NotebookError(ValueError):
    """A notebook that cannot be read, or whose cells break the course conventions."""


def nbformat_module() -> Any:
    """nbformat, or a NotebookError that says how to install it."""
    try:
        import nbformat
    except ImportError as error:  # pragma: no cover - the dev environment always has it
        raise NotebookError(NBFORMAT_HINT) from error
    return nbformat


def read_notebook(path: Path) -> Any:
    """Read a notebook as nbformat v4, with an error naming the file when it is not one."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise NotebookError(f"{path}: cannot read it ({error}).") from error
    return parse_notebook(text, str(path))


def parse_notebook(text: str, where: str) -> Any:
    """Parse notebook JSON text into nbformat v4 (older formats are converted)."""
    nbformat = nbformat_module()
    if not text.strip():
        raise NotebookError(f"{where}: the file is empty, not a notebook.")
    try:
        raw = json.loads(text)
    except (ValueError, RecursionError) as error:
        raise NotebookError(
            f"{where}: not valid JSON ({error}). Save it again from Jupyter."
        ) from error
    if not isinstance(raw, dict) or not isinstance(raw.get("nbformat"), int):
        raise NotebookError(f"{where}: valid JSON but not a notebook (no 'nbformat' number).")
    try:
        notebook = nbformat.reader.reads(text)
        if notebook.nbformat != 4:
            notebook = nbformat.convert(notebook, 4)
    except Exception as error:  # nbformat raises many kinds for odd files
        raise NotebookError(
            f"{where}: a notebook in format {raw.get('nbformat')} that cannot be read as format 4 "
            f"({type(error).__name__}: {error}). Open and save it in a current Jupyter."
        ) from error
    if not isinstance(notebook.get("cells"), list):
        raise NotebookError(f"{where}: the notebook has no list of cells.")
    for cell in notebook.cells:
        if not isinstance(cell, dict) or not isinstance(cell.get("source", ""), str):
            raise NotebookError(f"{where}: a cell is malformed (no text source).")
        cell.setdefault("metadata", nbformat.NotebookNode())
    return notebook


def notebook_text(notebook: Any) -> str:
    """The file content Jupyter itself would write (sorted keys, one-space indent, newline)."""
    text = nbformat_module().writes(notebook)
    return text if text.endswith("\n") else text + "\n"


def atomic_write_text(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file and a rename: readers never see half a file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        # mkstemp makes the file private (0600); keep the old file's mode, or the usual 0644.
        mode = path.stat().st_mode & 0o777 if path.exists() else 0o666 & ~_umask()
        os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current


def same_content(a: Any, b: Any) -> bool:
    """True when two notebooks hold the same JSON, whatever their file formatting."""
    return json.loads(json.dumps(a, sort_keys=True)) == json.loads(json.dumps(b, sort_keys=True))


# -- nbgrader metadata -------------------------------------------------------------------------


def nbgrader(cell: Any) -> dict:
    """The cell's ``metadata.nbgrader`` dict (empty when it has none)."""
    meta = cell.get("metadata", {}).get("nbgrader", {})
    return meta if isinstance(meta, dict) else {}


def grade_id(cell: Any) -> str | None:
    """The cell's nbgrader grade_id, if any."""
    value = nbgrader(cell).get("grade_id")
    return value if isinstance(value, str) and value else None


def is_answer(cell: Any) -> bool:
    """An answer cell: the student writes its solution region, and check cells grade it."""
    meta = nbgrader(cell)
    return (
        cell.get("cell_type") == "code"
        and meta.get("solution") is True
        and meta.get("grade") is not True
    )


def is_check(cell: Any) -> bool:
    """A check cell: graded by its output, worth ``points``."""
    meta = nbgrader(cell)
    return (
        cell.get("cell_type") == "code"
        and meta.get("grade") is True
        and meta.get("solution") is not True
    )


def is_solution(cell: Any) -> bool:
    """Any cell, code or markdown, whose text the student writes (its model answer never ships)."""
    return nbgrader(cell).get("solution") is True


def is_manual(cell: Any) -> bool:
    """A question graded by hand, as nbgrader has them: an answer cell (code or markdown) that
    is also a grade cell, or a task cell (``task: true``), worth ``points``."""
    meta = nbgrader(cell)
    return (meta.get("solution") is True and meta.get("grade") is True) or meta.get("task") is True


def is_graded_or_locked(cell: Any) -> bool:
    """Any cell that carries nbgrader duties (answer, check or locked)."""
    meta = nbgrader(cell)
    return any(meta.get(key) is True for key in ("solution", "grade", "locked", "task"))


def points(cell: Any) -> float:
    """The check cell's points (validated by the build, so a number here)."""
    return float(nbgrader(cell).get("points", 0))


def cell_checksum(cell: Any) -> str:
    """A checksum of what the student must not change: type, source and grading metadata."""
    meta = nbgrader(cell)
    payload = {
        "cell_type": cell.get("cell_type"),
        "source": cell.get("source", "").replace("\r\n", "\n"),
        "grade_id": meta.get("grade_id"),
        "points": float(meta["points"]) if "points" in meta else None,
        "grade": meta.get("grade") is True,
        "solution": meta.get("solution") is True,
        "locked": meta.get("locked") is True,
    }
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode("utf-8")).hexdigest()


def nbgrader_checksum(cell: Any) -> str:
    """The checksum nbgrader writes and compares (``nbgrader.utils.compute_checksum``), mirrored.

    An md5 of the source, the cell type, ``str()`` of nbgrader's is_grade, is_solution and
    is_locked (a grade cell is locked unless it is a solution), the grade_id and, for a grade
    cell, ``str(float(points))``.
    """
    meta = nbgrader(cell)
    is_grade = meta.get("grade", False)
    is_solution = meta.get("solution", False)
    is_locked = False if is_solution else True if is_grade else meta.get("locked", False)
    digest = hashlib.md5(usedforsecurity=False)
    for part in (cell.get("source", ""), cell.get("cell_type"), is_grade, is_solution, is_locked):
        digest.update(str(part).encode("utf-8"))
    digest.update(str(meta.get("grade_id")).encode("utf-8"))
    if is_grade:
        digest.update(str(float(meta["points"])).encode("utf-8"))
    return digest.hexdigest()


def unchanged_since_release(cell: Any) -> bool:
    """True when a cell still matches the checksum written when it was handed out.

    Either checksum counts: nbgrader's in ``metadata.nbgrader`` (from `hookviz build` or
    `nbgrader generate_assignment`), or hookviz's own sha256 in ``metadata.hookviz``.
    """
    own = cell.get("metadata", {}).get("hookviz", {})
    own = own.get(CHECKSUM_KEY) if isinstance(own, dict) else None
    theirs = nbgrader(cell).get("checksum")
    try:
        return (isinstance(own, str) and own == cell_checksum(cell)) or (
            isinstance(theirs, str) and theirs == nbgrader_checksum(cell)
        )
    except (KeyError, TypeError, ValueError):  # points missing or not a number
        return False


def source_sha256(source: str) -> str:
    """The sha256 of a cell's source (line endings normalised)."""
    return hashlib.sha256(source.replace("\r\n", "\n").encode("utf-8")).hexdigest()


def record_outputs_source(notebook: Any) -> None:
    """Mark each check cell with the sha256 of the source its stored outputs came from.

    `hookviz run` calls this after a run; `build` and `grade` then refuse a check cell
    edited since (its stored output, what students must print, would be stale).
    """
    for cell in notebook.cells:
        if is_check(cell):
            cell.metadata.setdefault("hookviz", {})[OUTPUTS_SOURCE_KEY] = source_sha256(cell.source)


def describe_cell(notebook_path: str | Path, cells: list, index: int) -> str:
    """'solutions/x.ipynb, code cell 3 (grade_id check_x)': how errors point at a cell.

    Cells are counted from 1 among the cells of their kind that the author wrote (the badge and
    install cell `build` adds are not counted); a cell without grade_id is also named by its id
    and first line.
    """
    cell = cells[index]
    kind = cell.get("cell_type", "code")
    role = stamp_role(cell)
    if role:
        return f"{notebook_path}, the {role} cell that hookviz build adds"
    number = sum(1 for c in cells[: index + 1] if c.get("cell_type") == kind and not stamp_role(c))
    gid = grade_id(cell)
    if gid:
        return f"{notebook_path}, {kind} cell {number} (grade_id {gid})"
    first = next((line.strip() for line in cell.get("source", "").splitlines() if line.strip()), "")
    first = shorten(first, 40, "...")
    label = ", ".join(
        part
        for part in (f"id {cell['id']}" if cell.get("id") else "", f"{first!r}" if first else "")
        if part
    )
    return f"{notebook_path}, {kind} cell {number}" + (f" ({label})" if label else "")


def stamp_role(cell: Any) -> str | None:
    """'colab-badge', 'install' or 'content' for a cell `hookviz build` stamped, else None."""
    meta = cell.get("metadata", {}).get("hookviz", {})
    return meta.get(STAMP_KEY) if isinstance(meta, dict) else None
