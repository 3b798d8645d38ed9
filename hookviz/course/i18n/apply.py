"""A notebook, a hints table or a prediction in another language, from today's translations.

Only translations that follow today's English are used; any other unit stays English (and
`hookviz i18n status` says why). A markdown cell is replaced only when its text is the English
its translation follows, so an exercise's answer stub is never given the solution's text.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

try:  # Python 3.11+
    import tomllib
except ModuleNotFoundError:  # pragma: no cover - Python 3.10
    import tomli as tomllib

from ..format.notebooks import stamp_role
from .files import read_translation
from .status import TRANSLATIONS


def strings_for(root: Path, lang: str, english_path: str) -> dict[str, tuple[str, str]]:
    """key -> (the English it follows, the translation), for one English file of the course."""
    relative = Path(english_path).with_suffix(".toml")
    entries = read_translation(Path(root) / TRANSLATIONS / lang / relative, lang)
    return {k: (e.en, e.text) for k, e in entries.items() if e.text.strip() and e.honest}


def translate_notebook(notebook: Any, strings: dict[str, tuple[str, str]], lang: str) -> list[str]:
    """Put the translations into ``notebook``'s markdown cells (in place); return the ids of the
    markdown cells left in English (no translation, or one of other English)."""
    left = []
    for cell in notebook.cells:
        if cell.cell_type != "markdown" or stamp_role(cell):
            continue
        english, translation = strings.get(cell.get("id"), (None, None))
        if english is not None and english == cell.source:
            cell.source = translation
        elif cell.source.strip():
            left.append(cell.get("id", "?"))
    notebook.metadata.setdefault("hookviz", {})["lang"] = lang
    return left


def translate_table(data: Any, strings: dict[str, str], prefix: str = "") -> Any:
    """A copy of a TOML table with each string whose dotted key has a translation replaced."""
    if isinstance(data, dict):
        return {
            k: translate_table(v, strings, f"{prefix}.{k}" if prefix else str(k))
            for k, v in data.items()
        }
    if isinstance(data, list):
        return [translate_table(v, strings, f"{prefix}.{i}") for i, v in enumerate(data)]
    if isinstance(data, str) and prefix in strings:
        return strings[prefix]
    return copy.copy(data)


def following(strings: dict[str, tuple[str, str]], units: dict[str, str]) -> dict[str, str]:
    """key -> translation for the units whose English is still what was translated."""
    return {k: t for k, (en, t) in strings.items() if units.get(k) == en}


def content_strings(content: Any, lang: str, assignments: list[str], keys: list[str]) -> dict:
    """The translations a notebook packs beside its English content: its assignments' hints
    and its predictions (dotted key -> text), only where they follow today's English."""
    from .units import MESSAGES, table_units

    def file_strings(path: Path) -> dict[str, str]:
        relative = path.resolve().relative_to(content.root).as_posix()
        units = table_units(tomllib.loads(path.read_text(encoding="utf-8")))
        return following(strings_for(content.root, lang, relative), units)

    hints = {a: file_strings(content.hints_file(a)) for a in assignments}
    predictions: dict[str, str] = {}
    wanted = tuple(f"{key}." for key in keys)
    for path in sorted(content.predictions.glob("*.toml")) if keys else []:
        predictions.update({k: t for k, t in file_strings(path).items() if k.startswith(wanted)})
    messages = {}
    for assignment in assignments:
        path = content.root / TRANSLATIONS / lang / MESSAGES / f"{assignment}.toml"
        entries = read_translation(path, lang)
        found = {e.en: e.text for e in entries.values() if e.text.strip() and e.honest}
        if found:
            messages[assignment] = found
    return {
        "hints": {a: s for a, s in hints.items() if s},
        "predictions": predictions,
        "messages": messages,
    }
