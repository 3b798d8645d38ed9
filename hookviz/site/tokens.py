"""The site search's tokeniser at build time: ``tokenize()`` of ``static/search-core.js``, term
for term and offset for offset, so that the index the build writes and the words the page looks
up are cut the same way (``tests/site/test_search_tokens.py`` feeds both the same texts).

A word is a run of letters, digits and underscores (JavaScript's ``[\\p{L}\\p{N}_]+``), lower
case; an identifier also gives its parts (register_full_backward_hook: register, full, backward,
hook). A word with Hangul in it gives each syllable and each pair of neighbouring syllables
(Korean attaches particles to words: 훅을 holds 훅, and 순전파 holds 전파), and its other runs
as words. Offsets count UTF-16 code units, as JavaScript's strings do.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass

HANGUL_FIRST, HANGUL_LAST = 0xAC00, 0xD7A3  # the precomposed Hangul syllables


@dataclass(frozen=True)
class Token:
    term: str
    start: int  # in UTF-16 code units, as the page counts
    end: int
    pos: int  # the word's position: the terms of a phrase are at consecutive positions
    part: bool = False  # a part of an identifier
    pair: bool = False  # a pair of Hangul syllables (it covers the next position too)


def _units(text: str) -> int:
    """``text``'s length in UTF-16 code units (JavaScript's ``length``)."""
    return len(text) + sum(1 for ch in text if ord(ch) > 0xFFFF)


def _is_word_char(ch: str) -> bool:
    return ch == "_" or unicodedata.category(ch)[0] in "LN"


def _is_hangul(ch: str) -> bool:
    return HANGUL_FIRST <= ord(ch) <= HANGUL_LAST


def _words(text: str) -> list[tuple[str, int]]:
    """The runs of word characters and their offsets (UTF-16)."""
    words, at, current, start = [], 0, [], 0
    for ch in text:
        if _is_word_char(ch):
            if not current:
                start = at
            current.append(ch)
        elif current:
            words.append(("".join(current), start))
            current = []
        at += _units(ch)
    if current:
        words.append(("".join(current), start))
    return words


def tokenize(text: str) -> list[Token]:
    """The terms of ``text`` in order, as search-core.js's ``tokenize`` gives them."""
    tokens: list[Token] = []
    pos = 0
    for word, start in _words(text):
        if any(_is_hangul(ch) for ch in word):
            pos = _hangul(word, start, pos, tokens)
            continue
        term = word.lower()
        tokens.append(Token(term, start, start + _units(word), pos))
        if "_" in term:
            offset = 0
            for part in term.split("_"):
                if part and part != term:
                    at = start + offset
                    tokens.append(Token(part, at, at + _units(part), pos, part=True))
                offset += _units(part) + 1
        pos += 1
    return tokens


def _hangul(word: str, start: int, pos: int, tokens: list[Token]) -> int:
    """A word with Hangul in it: each syllable, each pair of neighbouring syllables, and any
    other run as a word of its own; returns the next position."""
    offset, latin, latin_start = 0, "", 0

    def flush() -> None:
        nonlocal latin, pos
        if latin:
            at = start + latin_start
            tokens.append(Token(latin.lower(), at, at + _units(latin), pos))
            pos += 1
            latin = ""

    for i, ch in enumerate(word):
        if _is_hangul(ch):
            flush()
            at = start + offset
            tokens.append(Token(ch, at, at + 1, pos))
            if i + 1 < len(word) and _is_hangul(word[i + 1]):
                tokens.append(Token(ch + word[i + 1], at, at + 2, pos, pair=True))
            pos += 1
        else:
            if not latin:
                latin_start = offset
            latin += ch
        offset += _units(ch)
    flush()
    return pos
