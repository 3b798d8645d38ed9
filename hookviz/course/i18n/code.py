"""The prose inside code: comments and docstrings, translated like markdown, the code kept.

A code cell (or a hint's ``code``) is never translated as a whole: its code stays byte for byte
the English, so that the grader recognises a cell nobody edited and a student's answer runs
the same in every language. What a reader reads in it, its comments and docstrings, are
units of their own, keyed ``<cell id>:<line>`` (or ``<dotted key>:<line>`` in a hints file),
``line`` being where the unit starts in the English, 1-based:

- a block of whole-line comments, one under the other at the same indentation (the ``# ``
  left out of each line: ``Check your answer: run this cell.\\nIt runs ...``);
- a comment after code on its line (``x = f()  # seeded``: ``seeded``);
- a docstring, as written between its quotes.

``translate_code`` puts translations back by the English they follow (a unit found at another
line, in an exercise whose answer was cut out, is still the same unit); ``code_only`` is what
must stay the same in every language: the code, its comments and docstrings set aside. Markers
(``### BEGIN SOLUTION``, ``# YOUR CODE HERE``, ``# NBVAL_SKIP``, ``# noqa``) are code, not prose.
Standard library only: it runs when a student's kernel loads translated hints.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from dataclasses import dataclass

# Comments that are instructions to a tool, not prose: they stay as they are.
_TOOL_COMMENT = re.compile(
    r"^(?:###|#\s*(?:YOUR CODE HERE|NBVAL_|noqa|type:|fmt:|pragma|pylint|ruff|isort))",
    re.IGNORECASE,
)
_MAGIC = re.compile(r"^\s*[%!?]")


@dataclass(frozen=True)
class Prose:
    """One comment block, trailing comment or docstring of a piece of code."""

    line: int  # where it starts, 1-based
    end: int  # its last line, 1-based
    kind: str  # "comments", "trailing" or "docstring"
    text: str  # the English a translation follows
    column: int  # the column of its "#" or of its string's first character
    end_column: int = 0  # a docstring's: where its token ends on the last line


def _parsable(source: str) -> str:
    """``source`` with IPython's magics and shell lines blanked (the line numbers kept)."""
    return "\n".join("" if _MAGIC.match(line) else line for line in source.split("\n"))


def _tokens(source: str) -> list[tokenize.TokenInfo] | None:
    try:
        return list(tokenize.generate_tokens(io.StringIO(_parsable(source)).readline))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return None


def _docstring_starts(source: str) -> set[tuple[int, int]]:
    """(line, column) of each docstring's string token: a module's, a class's, a function's."""
    try:
        tree = ast.parse(_parsable(source))
    except SyntaxError:
        return set()
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            first = node.body[0] if node.body else None
            if (
                isinstance(first, ast.Expr)
                and isinstance(first.value, ast.Constant)
                and isinstance(first.value.value, str)
            ):
                found.add((first.value.lineno, first.value.col_offset))
    return found


def _string_parts(token: str) -> tuple[str, str, str]:
    """A string token's prefix and quotes, its content as written, and its closing quotes."""
    prefix = re.match(r"[A-Za-z]*", token).group(0)
    rest = token[len(prefix) :]
    quote = rest[:3] if rest[:3] in ('"""', "'''") else rest[:1]
    return prefix + quote, rest[len(quote) : len(rest) - len(quote)], quote


def _comment_text(comment: str) -> str:
    return comment[1:][1:] if comment[1:2] == " " else comment[1:]


def prose(source: str, *, opening_only: bool = False) -> list[Prose]:
    """The comments and docstrings of ``source``, in order ([] when it does not tokenize).
    ``opening_only``: only the comment block a cell opens with (a check cell's: what a student
    reads above its specification; the rest of its code is packed out of sight)."""
    tokens = _tokens(source)
    if tokens is None:
        return []
    lines = source.split("\n")
    docstrings = set() if opening_only else _docstring_starts(source)
    found: list[Prose] = []
    block: list[tokenize.TokenInfo] = []

    def close() -> None:
        if block:
            text = "\n".join(_comment_text(t.string) for t in block)
            found.append(
                Prose(block[0].start[0], block[-1].start[0], "comments", text, block[0].start[1])
            )
            block.clear()

    for token in tokens:
        if token.type == tokenize.COMMENT:
            row, column = token.start
            if _TOOL_COMMENT.match(token.string) or not re.search(r"[^\W\d_]", token.string):
                close()
                continue
            alone = not lines[row - 1][:column].strip()
            if not alone:
                close()
                if not opening_only:
                    found.append(Prose(row, row, "trailing", _comment_text(token.string), column))
                continue
            if block and (row != block[-1].start[0] + 1 or column != block[-1].start[1]):
                close()
                if opening_only:
                    break
            block.append(token)
        elif token.type in (tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT):
            if token.type == tokenize.NL and block and token.start[0] > block[-1].start[0]:
                close()  # a blank line ends a block
                if opening_only:
                    break
            continue
        elif token.type == tokenize.ENDMARKER:
            break
        else:
            if opening_only:
                break
            close()
            if token.type == tokenize.STRING and token.start in docstrings:
                _, content, _ = _string_parts(token.string)
                if content.strip():
                    found.append(
                        Prose(
                            token.start[0],
                            token.end[0],
                            "docstring",
                            content,
                            token.start[1],
                            token.end[1],
                        )
                    )
    close()
    return found


def code_units(source: str, prefix: str, *, opening_only: bool = False) -> dict[str, str]:
    """``<prefix>:<line>`` -> the English of each comment block, trailing comment and docstring."""
    return {f"{prefix}:{p.line}": p.text for p in prose(source, opening_only=opening_only)}


def is_code_key(key: str) -> bool:
    """True for the key of a unit of prose in code (``cell-id:12``, ``answer.key.code:3``)."""
    head, colon, line = key.rpartition(":")
    return bool(colon and head and line.isdigit())


def translate_code(source: str, translations: dict[str, str]) -> str:
    """``source`` with each comment block, trailing comment and docstring whose English has a
    translation (English -> translation) replaced by it; everything else byte for byte."""
    if not translations:
        return source
    lines = source.split("\n")
    for unit in reversed(prose(source)):
        said = translations.get(unit.text)
        if said is None and unit.kind == "comments":
            unit, said = _leading(unit, translations)
        if said is None or said == unit.text:
            continue
        first = lines[unit.line - 1]
        if unit.kind == "comments":
            indent = first[: unit.column]
            lines[unit.line - 1 : unit.end] = [
                f"{indent}# {text}" if text else f"{indent}#" for text in said.split("\n")
            ]
        elif unit.kind == "trailing":
            lines[unit.line - 1] = f"{first[: unit.column]}# {said.replace(chr(10), ' ')}"
        else:
            last = lines[unit.end - 1]
            token = (
                "\n".join(
                    [first[unit.column :]]
                    + lines[unit.line : unit.end - 1]
                    + [last[: unit.end_column]]
                )
                if unit.end > unit.line
                else first[unit.column : unit.end_column]
            )
            opening, _, closing = _string_parts(token)
            replaced = f"{first[: unit.column]}{opening}{said}{closing}{last[unit.end_column :]}"
            lines[unit.line - 1 : unit.end] = replaced.split("\n")
    return "\n".join(lines)


def _leading(unit: Prose, translations: dict[str, str]) -> tuple[Prose, str | None]:
    """The longest translated comment block that the lines of ``unit`` begin with (a check
    cell's opening comment, which an exercise follows with its specification), as a unit of
    its own, and its translation."""
    lines = unit.text.split("\n")
    for count in range(len(lines) - 1, 0, -1):
        text = "\n".join(lines[:count])
        if text in translations:
            end = unit.line + count - 1
            return Prose(unit.line, end, unit.kind, text, unit.column), translations[text]
    return unit, None


def code_only(source: str) -> list[tuple[int, str]]:
    """What every language's copy of ``source`` shares: its tokens, comments left out and each
    docstring's text replaced by one mark, as (type, text) pairs. Two sources whose code is the
    same give the same list, whatever their comments and docstrings say."""
    tokens = _tokens(source)
    if tokens is None:
        return [(-1, source)]
    docstrings = _docstring_starts(source)
    kept = []
    for token in tokens:
        if token.type in (tokenize.COMMENT, tokenize.NL):
            continue
        if token.type == tokenize.STRING and token.start in docstrings:
            kept.append((token.type, "<docstring>"))
            continue
        kept.append((token.type, token.string))
    magics = [line.strip() for line in source.split("\n") if _MAGIC.match(line)]
    return kept + [(-2, line) for line in magics]


def unit_problems(english: str, translation: str, kind_of_source: str = "") -> list[str]:
    """What is wrong with the translation of one unit of prose in code: a docstring that would
    end its string early or a comment that would break out of its line."""
    problems = []
    for quote in ('"""', "'''"):
        if quote in translation and quote not in english:
            problems.append(f"the translation holds {quote}, which would end the docstring")
    if translation.endswith(("\\", '"', "'")) and not english.endswith(translation[-1]):
        problems.append(
            "the translation ends with a quote or a backslash; the docstring would break"
        )
    return problems


__all__ = ["Prose", "code_only", "code_units", "is_code_key", "prose", "translate_code"]
