"""The messages a check cell prints, found in its code: what a check's translation follows.

Every string of a check cell that reads as a sentence (a space in it) is a message: the claims
of its ✓ and ✗ lines, the problems under them, the names of the models it runs on. An f-string
is kept as a template whose placeholders are its expressions, as written (``{name}``,
``{len(calls)}``): the translation keeps them, and ``catalogue`` fills them from the printed
line. Hint keys (``hint=``, ``why=``) and docstrings are names, not messages.
"""

from __future__ import annotations

import ast
import hashlib
import re
from typing import Any

from ..format.notebooks import is_check
from ..format.regions import strip_solution_markers

NAME_KEYWORDS = frozenset({"hint", "why"})


def template(node: ast.AST) -> str | None:
    """The message of a string or f-string node, or None when it is not one."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if not isinstance(node, ast.JoinedStr):
        return None
    parts = []
    for value in node.values:
        if isinstance(value, ast.Constant):
            parts.append(str(value.value).replace("{", "{{").replace("}", "}}"))
        elif isinstance(value, ast.FormattedValue):
            text = ast.unparse(value.value)
            if value.conversion != -1:
                text += "!" + chr(value.conversion)
            if value.format_spec is not None:
                text += ":" + "".join(
                    str(v.value) if isinstance(v, ast.Constant) else "{…}"
                    for v in value.format_spec.values
                )
            parts.append("{" + text + "}")
    return "".join(parts)


def is_message(text: str) -> bool:
    """A sentence, not a key, a name or a piece of code (placeholders aside)."""
    literal = re.sub(r"\{[^{}]*\}", "", text)
    spaced = literal if literal != text else literal.strip()  # "{n} samples" is a phrase
    return " " in spaced and any(c.isalpha() for c in literal) and "\n" not in text.strip()


def cell_messages(source: str) -> list[str]:
    """The messages of one check cell's code, in order, each once."""
    try:
        tree = ast.parse(strip_solution_markers(source))
    except SyntaxError:
        return []
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.keyword) and node.arg in NAME_KEYWORDS:
            skip.update(id(n) for n in ast.walk(node.value))
        if isinstance(node, (ast.FunctionDef, ast.ClassDef, ast.Module)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr):
                skip.update(id(n) for n in ast.walk(first))
        if isinstance(node, ast.JoinedStr):  # its literal parts belong to its template
            skip.update(id(v) for v in node.values if isinstance(v, ast.Constant))
            for value in node.values:
                if isinstance(value, ast.FormattedValue) and value.format_spec is not None:
                    skip.update(id(n) for n in ast.walk(value.format_spec))
    found: list[str] = []
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        text = template(node)
        if text is not None and is_message(text) and text not in found:
            found.append(text)
    return found


def notebook_messages(notebook: Any) -> dict[str, str]:
    """The messages of a notebook's check cells, by key (a hash of the message)."""
    units: dict[str, str] = {}
    for cell in notebook.cells:
        if is_check(cell):
            for text in cell_messages(cell.source):
                units.setdefault(message_key(text), text)
    return units


def message_key(text: str) -> str:
    """A message's key: its hash, so that a new message never shifts the others' keys."""
    return "m-" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:10]
