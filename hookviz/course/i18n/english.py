"""English left in a translated text: what a reader of the translation would read in English.

A translated line may name code (``apply``, ``torch.no_grad()``, ``requires_grad=False``),
quote a value or the student's own output (``'Function_A'``), gloss a term on its first use
(``후위 순회(post-order traversal)``) and show an exception as Python raised it
(``RuntimeError: …``, its own words): none of that is English prose. What is left is: two
English words or more in a row (``one sample of shape``, ``the root``), or a count with an
English noun (``2 samples``). Standard library only.
"""

from __future__ import annotations

import re

_SENTINEL = re.compile(r"^\[hookviz\] \S+: finished$")
_PLACEHOLDER = re.compile(r"\{[^{}\n]*\}")  # a template's placeholder: code
_INDEXED = re.compile(r"\[[^\[\]\n]*\]")  # [a for a in b], x[0], ['a', 'b']: code
_QUOTED = re.compile(r"'(?:[^'\\\n]|\\.)*'|\"(?:[^\"\\\n]|\\.)*\"|`[^`\n]*`")
_ERROR = re.compile(r"\b[A-Z]\w*(?:Error|Exception|Warning|Interrupt|Exit)\b: .*$")
_QUOTED_LINES = re.compile(r"\"[^\"\n]*\n[^\"\n]*\"|“[^”]*”")
_GLOSS = re.compile(r"(?<=[\uac00-\ud7a3])\([A-Za-z][A-Za-z0-9' ,.-]*\)")
# names, paths, calls, keywords and flags; a capitalised word is a name (Linear, Model, Colab)
_CODE = re.compile(
    r"[^\s,;]*[_.()\[\]=<>/\\{}@#*+:|%$][^\s,;]*|\b\w*[a-z][A-Z]\w*|\b[A-Z]\w*|--?[a-z][\w-]*"
)
_WORDS = re.compile(
    r"(?<![A-Za-z0-9_'-])[a-z]{2,}(?: (?:[a-z]+|[0-9]+))* [a-z]{2,}(?![A-Za-z0-9_'-])"
)
_COUNTED = re.compile(r"(?<![A-Za-z0-9_.])\d+ [a-z]{3,}s(?![A-Za-z0-9_'-])")
_PLAIN = re.compile(r"[^\s가-힣]")  # anything but Hangul and spaces


def english_phrases(text: str, *, allowed: tuple[str, ...] = ()) -> list[str]:
    """The English phrases of ``text`` that a reader of its translation would read, in order;
    ``allowed``: phrases that are names in this course (a flag, a label), never reported."""
    found: list[str] = []
    text = _QUOTED_LINES.sub(" ; ", text)  # a quotation a line break cuts in two
    for line in text.splitlines():
        if _SENTINEL.match(line.strip()):
            continue
        for phrase in allowed:
            line = line.replace(phrase, " ")
        line = _ERROR.sub(" ", line)
        line = _PLACEHOLDER.sub(" ; ", line)
        line = _QUOTED.sub(" ; ", line)
        line = _INDEXED.sub(" ; ", line)
        line = _GLOSS.sub(" ; ", line)
        found += _COUNTED.findall(line)
        line = _CODE.sub(" ; ", line)
        found += [m.group(0) for m in _WORDS.finditer(line)]
    return found


def has_hangul(text: str) -> bool:
    """True when ``text`` holds a Hangul syllable."""
    return any("\uac00" <= c <= "\ud7a3" for c in text)


__all__ = ["english_phrases", "has_hangul"]
