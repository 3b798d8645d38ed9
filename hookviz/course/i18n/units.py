"""The English units of a course a translation follows, each with a stable key.

A notebook's units are its markdown cells (by cell id; the Colab badge `hookviz build` stamps
is left out: it is generated) and the prose of its code cells, comments and docstrings (by
cell id and line, ``cell-id:3``: ``code``) and the words of the figures its code draws (by
hash, ``f-…``: ``figures``); a hints or predictions file's are its strings (by
dotted key, ``answer.key.nudge``, ``prediction.choices.0``) and the prose of its code
(``answer.key.code:2``). Code itself stays as it is.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..content import COURSE_FILE
from ..format.notebooks import NotebookError, is_check, read_notebook, stamp_role
from .code import code_units
from .figures import notebook_figures
from .messages import notebook_messages

try:  # Python 3.11+
    import tomllib
except ModuleNotFoundError:  # pragma: no cover - Python 3.10
    import tomli as tomllib

UNTRANSLATED_KEYS = frozenset({"code", "answer"})  # code, and a short answer's accepted tokens
NOTEBOOK_FOLDERS = ("notebooks", "solutions")  # exercises/ are generated from solutions/
MESSAGES = "messages"  # translations/<lang>/messages/<assignment>.toml: its checks' messages


@dataclass(frozen=True)
class Source:
    """One English file of the course and its units, key -> English text."""

    path: str  # relative to the course root, with forward slashes
    units: dict[str, str]
    kind: str = ""  # "messages": the messages of a solution's check cells

    @property
    def translation_name(self) -> str:
        """Where its translation lives, relative to ``translations/<lang>``."""
        if self.kind == MESSAGES:
            return f"{MESSAGES}/{Path(self.path).stem}.toml"
        return str(Path(self.path).with_suffix(".toml").as_posix())


def notebook_units(notebook: Any, where: str) -> dict[str, str]:
    """A notebook's markdown cells by id, then the prose of its code cells by id and line (of a
    check cell only its opening comment: the rest is packed out of a student's sight), then
    the words of the figures it draws by hash; an error names cells whose id is missing or
    repeated."""
    units: dict[str, str] = {}
    code: dict[str, str] = {}
    for index, cell in enumerate(notebook.cells):
        if stamp_role(cell):
            continue
        if cell.cell_type == "code" and cell.get("id"):
            code.update(code_units(cell.source, cell["id"], opening_only=is_check(cell)))
        if cell.cell_type != "markdown":
            continue
        cell_id = cell.get("id")
        if not cell_id:
            raise NotebookError(
                f"{where}: markdown cell {index + 1} has no id, so no translation can follow it. "
                "Open and save the notebook in JupyterLab (nbformat 4.5 gives every cell an id)."
            )
        if cell_id in units:
            raise NotebookError(
                f"{where}: two markdown cells have the id {cell_id!r}; a translation would not "
                "know which it follows. Give one of them a new id in its JSON."
            )
        units[cell_id] = cell.source
    return units | code | notebook_figures(notebook)


def table_units(data: Any, prefix: str = "") -> dict[str, str]:
    """The strings of a TOML table by dotted key (lists by index), code and answers left out."""
    units: dict[str, str] = {}
    if isinstance(data, dict):
        items = data.items()
    elif isinstance(data, list):
        items = ((str(i), v) for i, v in enumerate(data))
    else:
        return units
    for key, value in items:
        dotted = f"{prefix}.{key}" if prefix else str(key)
        if key == "code" and isinstance(value, str):
            units.update(code_units(value, dotted))  # its comments: code stays as it is
        if key in UNTRANSLATED_KEYS:
            continue
        if isinstance(value, str):
            if value.strip():
                units[dotted] = value
        else:
            units.update(table_units(value, dotted))
    return units


def content_folders(root: Path) -> tuple[Path, Path]:
    """The course's hints and predictions folders ([content] in course.toml)."""
    from ..content import content_of

    content = content_of(root, optional=not (root / COURSE_FILE).is_file())
    return content.hints, content.predictions


def course_sources(root: Path) -> list[Source]:
    """Every English file of the course that a translation follows, sorted by path."""
    root = Path(root).resolve()
    sources: list[Source] = []
    for folder in NOTEBOOK_FOLDERS:
        base = root / folder
        for path in sorted(base.glob("*.ipynb")) if base.is_dir() else []:
            relative = path.relative_to(root).as_posix()
            notebook = read_notebook(path)
            sources.append(Source(relative, notebook_units(notebook, relative)))
            messages = notebook_messages(notebook)
            if folder == "solutions" or messages:  # a walkthrough that runs checks of its own
                sources.append(Source(relative, messages, MESSAGES))
    for folder in content_folders(root):
        for path in sorted(folder.glob("*.toml")) if folder.is_dir() else []:
            relative = path.relative_to(root).as_posix()
            data = tomllib.loads(path.read_text(encoding="utf-8"))
            sources.append(Source(relative, table_units(data)))
    return sources
