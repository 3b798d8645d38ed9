"""What a translation must keep of its English, and the words and the voice it must use.

A translation rewrites prose, never code: it keeps every fenced block as it is, the same set of
`code spans`, the same link targets, the same number of headings, and the same $math$. And
it uses the glossary's words (``translations/<lang>/glossary.toml``): each term's ``avoid``
patterns are the variants it rejects, its ``first`` the form a notebook uses the first time
(``전체(full) 역전파 훅``), and the ``[style]`` table's rules the one voice of the course (a
sentence ending another speech level is a problem wherever it is).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
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
STYLE = "style"  # the glossary's table of the voice's rules, not a term


@dataclass(frozen=True)
class Glossary:
    """A language's words and voice: what the lint enforces."""

    variants: list[tuple[str, str, re.Pattern[str]]] = field(default_factory=list)
    style: list[tuple[re.Pattern[str], str]] = field(default_factory=list)  # (rule, advice)
    first: dict[str, tuple[str, str]] = field(default_factory=dict)  # term -> (word, first use)
    voice: str = ""

    def __iter__(self):  # the variants, as `load_glossary` gives them
        return iter(self.variants)


def read_glossary(path: Path) -> Glossary:
    """The glossary at ``path`` (an empty one when there is none)."""
    if not Path(path).is_file():
        return Glossary()
    data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    style = data.get(STYLE, {})
    terms = {term: table for term, table in data.items() if term != STYLE}
    return Glossary(
        [
            (term, table["ko"], re.compile(pattern))
            for term, table in terms.items()
            for pattern in table.get("avoid", [])
        ],
        [(re.compile(rule["pattern"]), rule["say"]) for rule in style.get("rules", [])],
        {term: (table["ko"], table["first"]) for term, table in terms.items() if "first" in table},
        style.get("voice", ""),
    )


def load_glossary(path: Path) -> list[tuple[str, str, re.Pattern[str]]]:
    """(term, the word to use, pattern of a rejected variant) for each variant."""
    return read_glossary(path).variants


def code_parts(text: str) -> tuple[list[str], set[str], set[str], set[str], set[str], int]:
    """What a translation keeps of ``text``: fenced blocks, code spans, links, math, a check
    message's placeholders, headings."""
    fences = [_code_of(m.group(0)) for m in _FENCE.finditer(text)]
    prose = _FENCE.sub("", text)
    spans = {m.group(2).strip() for m in _SPAN.finditer(prose)}
    without_spans = _SPAN.sub("", prose)
    links = {a or b for a, b in _LINK.findall(without_spans)}
    math = {m.group(0) for m in _MATH.finditer(without_spans)}
    placeholders = set(_PLACEHOLDER.findall(_MATH.sub("", without_spans)))
    return fences, spans, links, math, placeholders, len(_HEADING.findall(prose))


_COMMENT = re.compile(r"(?:^|(?<=\s))#(?: .*)?$", re.M)


def _code_of(fence: str) -> str:
    """A fenced block as a translation must keep it: its comments may be translated."""
    return "\n".join(_COMMENT.sub("", line).rstrip() for line in fence.split("\n"))


def _inflection(placeholder: str) -> bool:
    """An f-string expression that only inflects the English (``{'s' if n > 1 else ''}``): a
    language without that inflection may leave it out."""
    return "'" in placeholder or '"' in placeholder


def lint(english: str, translation: str, glossary=(), lang: str = "") -> list[str]:
    """What is wrong with ``translation`` of ``english``; [] when nothing is. With ``lang``, a
    code span that quotes what the course shows (``○ ... not done yet``) may show it as a
    reader of ``lang`` sees it."""
    problems = []
    en, tr = code_parts(english), code_parts(translation)
    names = ("fenced code blocks", "code spans", "link targets", "math", "placeholders", "headings")
    for name, a, b in zip(names, en, tr, strict=True):
        if name == "placeholders":
            a = {p for p in a if p in b or not _inflection(p)}
        if name == "code spans" and lang:
            a = {_shown(span, b, lang) for span in a}
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
    return problems + words_problems(translation, glossary)


def prose_of(text: str) -> str:
    """``text`` without its fenced blocks and code spans: what the glossary's rules read."""
    return _SPAN.sub("", _FENCE.sub("", text))


def words_problems(text: str, glossary=()) -> list[str]:
    """The glossary's variants and the voice's rules that ``text`` (its prose) breaks."""
    prose = prose_of(text)
    problems = []
    for term, word, pattern in glossary:
        found = pattern.search(prose)
        if found:
            problems.append(f"{found.group(0)!r}: the glossary's word for {term} is {word!r}")
    for rule, advice in getattr(glossary, "style", ()):
        found = rule.search(prose)
        if found:
            problems.append(f"{found.group(0)!r}: {advice}")
    return problems


_FENCE_COMMENT = re.compile(r"(?:^|\s)#\s+(.*)$")
_URL = re.compile(r"\]\([^)]*\)|https?://\S+")


def english_problems(text: str) -> list[str]:
    """English a reader of a translated page (Markdown) reads: in its prose, and in the
    comments of its code blocks (code itself is code)."""
    from .english import english_phrases

    readable = [_URL.sub("]", prose_of(text))]
    for fence in _FENCE.finditer(text):
        for line in fence.group(0).split("\n")[1:-1]:
            comment = _FENCE_COMMENT.search(line)
            if comment:
                readable.append(comment.group(1))
    return [
        f"English where the translation has words: {p!r}"
        for t in readable
        for p in english_phrases(t)
    ]


def ui_problems(text: str, lang: str) -> list[str]:
    """Where ``text`` names what the course shows in English (a check's ``not done yet``, a
    widget's button) though a reader of ``lang`` sees it in ``lang``. A widget's words inside
    a code span may quote what the library prints, which stays English (a trace's rows)."""
    problems = []
    prose = _SPAN.sub(" ", _FENCE.sub(" ", text))
    for english, translated, course in _ui_words(lang):
        if _names(english, text if course else prose):
            problems.append(f"names {english!r}, which a {lang} reader sees as {translated!r}")
    return problems


def _names(phrase: str, text: str) -> bool:
    return re.search(rf"(?<![\w-]){re.escape(phrase)}(?![\w-])", text) is not None


def _shown(span: str, translated_spans: set[str], lang: str) -> str:
    """A code span of the English, or its words as a reader of ``lang`` sees them when the
    translation quotes it so."""
    if span in translated_spans:
        return span
    for english, translated, _ in _ui_words(lang):
        if _names(english, span) and span.replace(english, translated) in translated_spans:
            return span.replace(english, translated)
    return span


@functools.cache
def _ui_words(lang: str) -> tuple[tuple[str, str, bool], ...]:
    """(English, ``lang``, from the course's own messages) for every label the course and its
    widgets show that is more than a word: what a text must name as its reader sees it."""
    from ...widgets.messages import table as widget_table
    from ..wording import table as wording_table

    found = []
    for english, translated, course in (
        (wording_table("en"), wording_table(lang), True),
        (widget_table("en"), widget_table(lang), False),
    ):
        for key, text in english.items():
            said = translated.get(key, text)
            plain = "{" not in text and len(text.split()) >= 2 and text != said
            if plain and len(text) >= 8 and not text.startswith(("(", "…")):
                found.append((text.rstrip(".:"), said.rstrip(".:"), course))
    return tuple(found)


def first_use_problems(texts: list[str], glossary: Glossary) -> list[str]:
    """Where a notebook (its translated texts, in order) first uses a term otherwise than the
    glossary's first-use form (``전체(full) 역전파 훅``)."""
    prose = "\n".join(prose_of(text) for text in texts)
    problems = []
    for term, (word, first) in glossary.first.items():
        found = [(prose.find(form), rank, form) for rank, form in enumerate((first, word))]
        found = [place for place in found if place[0] >= 0]
        if found and min(found)[2] != first:
            problems.append(
                f"its first {word!r} should read {first!r}: the glossary's first use of {term}"
            )
    return problems
