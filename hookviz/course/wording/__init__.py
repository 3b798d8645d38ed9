"""What the course package says to a student, in each language: the one owner of these words.

``en.py`` and ``ko.py`` beside this file hold one table per language (key -> text, with
``{name}`` placeholders); ``words(key, **values)`` picks the course's language
(``hookviz.language``). What the library prints (reprs, tables, errors raised to authors)
stays English and is not here. Standard library only; a language's table is imported on first use.
"""

from __future__ import annotations

import importlib
import re
from functools import cache

from ... import language

__all__ = ["PLACEHOLDER", "every_language", "has", "table", "words"]

PLACEHOLDER = re.compile(r"\{(\w+)\}")


@cache
def table(lang: str) -> dict[str, str]:
    """Every key of language ``lang``'s table, dotted (``checks.not_done``), with its text."""
    return importlib.import_module(f"{__name__}.{lang}").WORDS


def words(key: str, lang: str | None = None, /, **values: object) -> str:
    """The text of ``key`` in ``lang`` (default: the course's language), its placeholders filled."""
    texts = table(lang or language.current_language())
    if key not in texts:
        raise KeyError(f"no wording {key!r}: add it to hookviz/course/wording/en.py and ko.py.")
    return PLACEHOLDER.sub(lambda m: str(values[m.group(1)]), texts[key])


def has(key: str, lang: str | None = None) -> bool:
    """True when the table of ``lang`` (default: the course's language) has ``key``."""
    return key in table(lang or language.current_language())


def every_language(key: str) -> tuple[str, ...]:
    """The text of ``key`` in every language hookviz speaks (what a reader of any of them parses)."""
    return tuple(dict.fromkeys(table(lang)[key] for lang in language.LANGUAGES))
