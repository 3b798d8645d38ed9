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
from .code import code_units, is_code_key, translate_code
from .files import read_translation
from .status import TRANSLATIONS


def strings_for(root: Path, lang: str, english_path: str) -> dict[str, tuple[str, str]]:
    """key -> (the English it follows, the translation), for one English file of the course."""
    relative = Path(english_path).with_suffix(".toml")
    entries = read_translation(Path(root) / TRANSLATIONS / lang / relative, lang)
    return {k: (e.en, e.text) for k, e in entries.items() if e.text.strip() and e.honest}


def translate_notebook(notebook: Any, strings: dict[str, tuple[str, str]], lang: str) -> list[str]:
    """Put the translations into ``notebook``'s markdown cells and into the comments and
    docstrings of its code cells (in place: the code stays the English); return the ids of the
    markdown cells left in English (no translation, or one of other English)."""
    left = []
    for cell in notebook.cells:
        if stamp_role(cell):
            continue
        if cell.cell_type == "code":
            cell.source = translate_code(cell.source, code_strings(strings, cell.get("id")))
            continue
        if cell.cell_type != "markdown":
            continue
        english, translation = strings.get(cell.get("id"), (None, None))
        if english is not None and english == cell.source:
            cell.source = translation
        elif cell.source.strip():
            left.append(cell.get("id", "?"))
    notebook.metadata.setdefault("hookviz", {})["lang"] = lang
    return left


def code_strings(strings: dict[str, tuple[str, str]], cell_id: str | None) -> dict[str, str]:
    """English -> translation for the comments and docstrings of one code cell."""
    if not cell_id:
        return {}
    head = f"{cell_id}:"
    return {
        english: text
        for key, (english, text) in strings.items()
        if key.startswith(head) and is_code_key(key)
    }


def translate_table(data: Any, strings: dict[str, str], prefix: str = "") -> Any:
    """A copy of a TOML table with each string whose dotted key has a translation replaced (a
    ``code`` string keeps its code and takes the translations of its comments)."""
    if isinstance(data, dict):
        return {
            k: translate_table(v, strings, f"{prefix}.{k}" if prefix else str(k))
            for k, v in data.items()
        }
    if isinstance(data, list):
        return [translate_table(v, strings, f"{prefix}.{i}") for i, v in enumerate(data)]
    if isinstance(data, str) and prefix in strings:
        return strings[prefix]
    if isinstance(data, str) and prefix.rpartition(".")[2] == "code":
        units = code_units(data, prefix)
        return translate_code(data, {units[k]: strings[k] for k in units if k in strings})
    return copy.copy(data)


def following(strings: dict[str, tuple[str, str]], units: dict[str, str]) -> dict[str, str]:
    """key -> translation for the units whose English is still what was translated."""
    return {k: t for k, (en, t) in strings.items() if units.get(k) == en}


def content_strings(
    content: Any, lang: str, assignments: list[str], keys: list[str], english: str = ""
) -> dict:
    """The translations a notebook packs beside its English content: its assignments' hints
    and its predictions (dotted key -> text), only where they follow today's English, and, when
    ``english`` names the English notebook it is made from, the words of the figures its code
    draws and the messages of the checks a walkthrough runs itself (English -> text)."""
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
    walkthrough = Path(english).stem if english.startswith("notebooks/") else None
    # a walkthrough's own checks (no assignment): their messages under ""
    for assignment in [*assignments, *([walkthrough] if walkthrough else [])]:
        path = content.root / TRANSLATIONS / lang / MESSAGES / f"{assignment}.toml"
        entries = read_translation(path, lang)
        found = {e.en: e.text for e in entries.values() if e.text.strip() and e.honest}
        if found:
            messages["" if assignment == walkthrough else assignment] = found
    found = {
        "hints": {a: s for a, s in hints.items() if s},
        "predictions": predictions,
        "messages": messages,
    }
    figures = figure_strings(content.root, lang, english) if english else {}
    if figures:
        found["figures"] = figures
    return found


def figure_strings(root: Path, lang: str, english: str) -> dict[str, str]:
    """English -> translation of the words the figures of notebook ``english`` show (only the
    translations that follow a word its code draws today)."""
    from ..format.notebooks import read_notebook
    from .figures import notebook_figures

    path = Path(root) / english
    if not path.is_file() or path.suffix != ".ipynb":
        return {}
    units = notebook_figures(read_notebook(path))
    strings = strings_for(root, lang, english)
    return {units[k]: t for k, (en, t) in strings.items() if units.get(k) == en}
