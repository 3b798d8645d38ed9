"""The language the course speaks to a student: English, or a language it is translated into.

Chosen by the notebook first (a translated notebook's stamped setup cell calls
``set_language``), then by the ``HOOKVIZ_LANG`` environment variable, then English. What the
library itself prints (reprs, tables, error messages) stays English; the course's messages,
hints, predictions and the widgets' labels follow this.
"""

from __future__ import annotations

import os

__all__ = [
    "ENGLISH",
    "LANGUAGES",
    "LANG_ENV",
    "check_language",
    "current_language",
    "set_language",
]

ENGLISH = "en"
LANGUAGES = ("en", "ko")  # the languages hookviz's own messages and widgets have tables for
LANG_ENV = "HOOKVIZ_LANG"
_chosen: str | None = None  # what this kernel's notebook said


def _checked(lang: str, where: str) -> str:
    if lang not in LANGUAGES:
        raise ValueError(
            f"{where}: hookviz speaks {', '.join(LANGUAGES)}, not {lang!r}. Use one of those "
            "(or leave it out for English)."
        )
    return lang


def check_language(lang: str, where: str = "lang") -> str:
    """Return ``lang`` if hookviz speaks it; otherwise a ValueError that names the choices."""
    return _checked(lang, where)


def set_language(lang: str | None) -> None:
    """The language of this kernel's notebook (None: back to HOOKVIZ_LANG, then English)."""
    global _chosen
    _chosen = None if lang is None else _checked(lang, "set_language")


def current_language() -> str:
    """The notebook's language, else HOOKVIZ_LANG's, else English."""
    if _chosen is not None:
        return _chosen
    named = os.environ.get(LANG_ENV, "").strip()
    return _checked(named, LANG_ENV) if named else ENGLISH
