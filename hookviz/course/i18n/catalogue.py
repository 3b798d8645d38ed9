"""Printing a check's messages in the course's language: a printed line, matched to a template.

A check cell is code, the same in every language: its claims are formatted in English before
they reach the card. ``translate`` finds the template a line was made from (the most specific
one that matches, placeholders taking any text, even none), and fills the translated template with what
the placeholders held, each itself translated when it is a message too (a model's name).
Imports nothing beyond the standard library: it runs in a student's kernel.
"""

from __future__ import annotations

import re
from functools import lru_cache

_PLACEHOLDER = re.compile(r"\{\{|\}\}|\{([^{}]+)\}")


@lru_cache(maxsize=4096)
def _pattern(template: str) -> tuple[re.Pattern[str], tuple[str, ...], int]:
    """The regex of a template, its placeholders in order (each once), and how much literal text
    it has. A placeholder written twice (``a {n}, for {n}``) matches the same text twice."""
    parts, names, literal, last = [], [], 0, 0
    groups: dict[str, int] = {}  # a placeholder's group number, by its expression
    for match in _PLACEHOLDER.finditer(template):
        text = template[last : match.start()]
        name = match.group(1)
        if not text and name is not None and name not in groups and names and parts[-1] == "(.*?)":
            names.append(names.pop() + "\x00")  # right after another: see _adjacent
        parts.append(re.escape(text))
        literal += len(text)
        if name is None:  # an escaped brace
            parts.append(re.escape(match.group(0)[0]))
            literal += 1
        elif name in groups:  # the same expression again: the same text again
            parts.append(f"(?:\\{groups[name]})")
        else:
            parts.append("(.*?)")  # a value may be empty: {'s' if many else ''}
            names.append(name)
            groups[name] = len(names)
        last = match.end()
    parts.append(re.escape(template[last:]))
    literal += len(template) - last
    return re.compile("".join(parts), re.S), tuple(names), literal


def translate(text: str, table: dict[str, str]) -> str:
    """``text`` in the table's language when a template of ``table`` (English -> translation)
    made it (the one with the most literal text, then the most placeholders); else ``text`` as
    it is."""
    if not table or not text:
        return text
    if text in table:
        return _plain(table[text])
    if "; " in text:  # problems joined into one line: each in its own words
        parts = text.split("; ")
        said = [translate(part, table) for part in parts]
        if all(a != b for a, b in zip(said, parts, strict=True)):
            return "; ".join(said)
    best = None
    for english, translated in table.items():
        if "{" not in english:
            continue
        pattern, names, literal = _pattern(english)
        found = pattern.fullmatch(text)
        rank = (literal, len(names))  # the most literal text; then the finer template
        if found and (best is None or rank > best[0]):
            best = (rank, names, found.groups(), translated)
    if best is None:
        return text
    _, names, values, translated = best
    values = _adjacent(names, list(values), table)
    names = [name.rstrip("\x00") for name in names]
    filled = dict(zip(names, (_value(v, text, table) for v in values), strict=True))
    return _PLACEHOLDER.sub(
        lambda m: m.group(0)[0] if m.group(1) is None else filled.get(m.group(1), m.group(0)),
        translated,
    )


def _adjacent(names: list[str], values: list[str], table: dict[str, str]) -> list[str]:
    """Two placeholders with no text between them (``{a}{b}``) matched as "" and all the rest:
    cut their text where the second part is a message of the table (`` holding …``)."""
    for i, name in enumerate(names[:-1]):
        if not name.endswith("\x00"):
            continue
        both = values[i] + values[i + 1]
        for cut in range(1, len(both)):
            rest = both[cut:]
            if translate(rest, table) != rest:
                values[i], values[i + 1] = both[:cut], rest
                break
    return values


def _value(value: str, text: str, table: dict[str, str]) -> str:
    """What a placeholder held, in the table's language when it is a message too: itself, a
    line a template made (a figure's title inside another), or a list of them (``a, b``)."""
    if value in table:
        return _plain(table[value])
    if value and value != text:
        said = translate(value, table)
        if said != value:
            return said
    items = value.split(", ")
    if len(items) > 1 and any(item in table for item in items):
        return ", ".join(_plain(table[item]) if item in table else item for item in items)
    return value


def _plain(template: str) -> str:
    """A translation without placeholders, its escaped braces undone."""
    return template.replace("{{", "{").replace("}}", "}")
