"""The widgets' words: one message table per language (``en.json``, ``ko.json``).

Every label, button, legend, tooltip and screen-reader announcement a widget shows is a key
here; the JavaScript and the static pictures look it up, never spell it. A text's ``{name}``
placeholders are filled by ``fill`` (Python) and ``t`` (common.js) alike. Numbers, module
paths, shapes and what the library prints (reprs, errors) are not in the tables.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Mapping
from pathlib import Path

from ...language import check_language, current_language

__all__ = ["PLACEHOLDER", "fill", "placeholders", "say", "table", "widget_language"]

FOLDER = Path(__file__).parent
PLACEHOLDER = re.compile(r"\{(\w+)\}")


@functools.cache
def _load(lang: str) -> dict[str, str]:
    return json.loads((FOLDER / f"{lang}.json").read_text(encoding="utf-8"))


def table(lang: str, groups: tuple[str, ...] | None = None) -> dict[str, str]:
    """The message table of ``lang`` (a copy: key -> text with ``{name}`` placeholders); only
    the keys of ``groups`` (a key's group is what comes before its first dot), if given."""
    words = _load(check_language(lang))
    if groups is None:
        return dict(words)
    return {key: text for key, text in words.items() if key.partition(".")[0] in groups}


def placeholders(text: str) -> set[str]:
    """The names of the ``{name}`` placeholders in ``text``."""
    return set(PLACEHOLDER.findall(text))


def fill(text: str, params: Mapping[str, object]) -> str:
    """``text`` with each ``{name}`` replaced by ``params[name]`` (an unknown one stays)."""
    return PLACEHOLDER.sub(lambda m: str(params.get(m[1], m[0])), text)


def say(lang: str, key: str, **params: object) -> str:
    """The text of ``key`` in ``lang``, its placeholders filled."""
    return fill(_load(check_language(lang))[key], params)


def widget_language(lang: str | None) -> str:
    """The language a widget speaks: ``lang`` when given (checked), else the course's."""
    return current_language() if lang is None else check_language(lang)
