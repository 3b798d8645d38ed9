"""What a translation must keep of its English, and the words it must use.

A translation rewrites prose, never code: it keeps every fenced block as it is, the same set of
`code spans`, the same link targets, the same number of headings, and the same $math$. And
it uses the glossary's words (``translations/<lang>/glossary.toml``): each term's ``avoid``
patterns are the variants it rejects.
"""

from __future__ import annotations

import re
from pathlib import Path

try:  # Python 3.11+
    import tomllib
except ModuleNotFoundError:  # pragma: no cover - Python 3.10
    import tomli as tomllib

_FENCE = re.compile(r"^(```|~~~)[^\n]*\n.*?^\1[ \t]*$", re.M | re.S)
_SPAN = re.compile(r"(`+)(?!`)(.+?)(?<!`)\1(?!`)", re.S)
_LINK = re.compile(r"\]\(([^)\s]+)[^)]*\)|\b(?:href|src)=\"([^\"]+)\"")
_MATH = re.compile(r"\$\$.+?\$\$|\$[^$\n]+\$", re.S)
_HEADING = re.compile(r"^#{1,6} ", re.M)
_PLACEHOLDER = re.compile(r"(?<!\{)\{[^{}\s][^{}]*\}(?!\})")


def load_glossary(path: Path) -> list[tuple[str, str, re.Pattern[str]]]:
    """(term, the word to use, pattern of a rejected variant) for each variant."""
    if not Path(path).is_file():
        return []
    data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    return [
        (term, table["ko"], re.compile(pattern))
        for term, table in data.items()
        for pattern in table.get("avoid", [])
    ]


def code_parts(text: str) -> tuple[list[str], set[str], set[str], set[str], set[str], int]:
    """What a translation keeps of ``text``: fenced blocks, code spans, links, math, a check
    message's placeholders, headings."""
    fences = [m.group(0) for m in _FENCE.finditer(text)]
    prose = _FENCE.sub("", text)
    spans = {m.group(2).strip() for m in _SPAN.finditer(prose)}
    without_spans = _SPAN.sub("", prose)
    links = {a or b for a, b in _LINK.findall(without_spans)}
    math = {m.group(0) for m in _MATH.finditer(without_spans)}
    placeholders = set(_PLACEHOLDER.findall(_MATH.sub("", without_spans)))
    return fences, spans, links, math, placeholders, len(_HEADING.findall(prose))


def _inflection(placeholder: str) -> bool:
    """An f-string expression that only inflects the English (``{'s' if n > 1 else ''}``): a
    language without that inflection may leave it out."""
    return "'" in placeholder or '"' in placeholder


def lint(english: str, translation: str, glossary=()) -> list[str]:
    """What is wrong with ``translation`` of ``english``; [] when nothing is."""
    problems = []
    en, tr = code_parts(english), code_parts(translation)
    names = ("fenced code blocks", "code spans", "link targets", "math", "placeholders", "headings")
    for name, a, b in zip(names, en, tr, strict=True):
        if name == "placeholders":
            a = {p for p in a if p in b or not _inflection(p)}
        if a == b:
            continue
        if isinstance(a, set):
            lost, added = sorted(a - b), sorted(b - a)
            detail = "; ".join(
                part
                for part in (
                    f"missing {', '.join(map(repr, lost[:3]))}" if lost else "",
                    f"not in the English {', '.join(map(repr, added[:3]))}" if added else "",
                )
                if part
            )
            problems.append(f"{name} differ from the English: {detail}")
        else:
            problems.append(f"{name} differ from the English ({a!r:.60} against {b!r:.60})")
    prose = _SPAN.sub("", _FENCE.sub("", translation))
    for term, word, pattern in glossary:
        found = pattern.search(prose)
        if found:
            problems.append(f"{found.group(0)!r}: the glossary's word for {term} is {word!r}")
    return problems
