"""What the course package says to a student, in each language: the one owner of these words.

``en.toml`` and ``ko.toml`` beside this file hold one table per language (key -> text, with
``{name}`` placeholders); ``words(key, **values)`` picks the course's language
(``hookviz.language``). What the library prints (reprs, tables, errors raised to authors)
stays English and is not here. Standard library only, and nothing is read before it is needed.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

from ... import language

try:  # Python 3.11+
    import tomllib
except ModuleNotFoundError:  # pragma: no cover - Python 3.10
    import tomli as tomllib

__all__ = ["PLACEHOLDER", "every_language", "table", "words"]

PLACEHOLDER = re.compile(r"\{(\w+)\}")
_FOLDER = Path(__file__).parent


def _flat(data: dict, prefix: str = "") -> dict[str, str]:
    flat: dict[str, str] = {}
    for key, value in data.items():
        if isinstance(value, dict):
            flat.update(_flat(value, f"{prefix}{key}."))
        else:
            flat[f"{prefix}{key}"] = value
    return flat


@cache
def table(lang: str) -> dict[str, str]:
    """Every key of language ``lang``'s table, dotted (``checks.not_done``), with its text."""
    return _flat(tomllib.loads((_FOLDER / f"{lang}.toml").read_text(encoding="utf-8")))


def words(key: str, lang: str | None = None, **values: object) -> str:
    """The text of ``key`` in ``lang`` (default: the course's language), its placeholders filled."""
    texts = table(lang or language.current_language())
    if key not in texts:
        raise KeyError(f"no wording {key!r}: add it to hookviz/course/wording/en.toml and ko.toml.")
    return PLACEHOLDER.sub(lambda m: str(values[m.group(1)]), texts[key])


def has(key: str, lang: str | None = None) -> bool:
    """True when the table of ``lang`` (default: the course's language) has ``key``."""
    return key in table(lang or language.current_language())


def every_language(key: str) -> tuple[str, ...]:
    """The text of ``key`` in every language hookviz speaks (what a reader of any of them parses)."""
    return tuple(dict.fromkeys(table(lang)[key] for lang in language.LANGUAGES))
