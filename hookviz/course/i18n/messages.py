"""The messages a check cell prints, found in its code: what a check's translation follows.

Every string of a check cell (or of a locked cell of the checks' tools) that reads as a sentence (a space in it) is a message: the claims
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

from ..format.notebooks import is_check, nbgrader
from ..format.regions import strip_solution_markers

NAME_KEYWORDS = frozenset({"hint", "why"})


def _expression(node: ast.AST) -> str:
    """A placeholder for an expression, its own braces (an f-string inside) made parentheses."""
    return "{" + ast.unparse(node).replace("{", "(").replace("}", ")") + "}"


def template(node: ast.AST) -> str | None:
    """The message of a string or f-string node, or None when it is not one."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        # f"e.g. {a}" + (f" holding {b}" if c else ""): one line, one template
        left, right = template(node.left), template(node.right)
        if left is None and right is None:
            return None
        return (left if left is not None else _expression(node.left)) + (
            right if right is not None else _expression(node.right)
        )
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
            if not isinstance(node.value, ast.Call):  # a key; hint=checks.Hint("…") has words
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
    words = _columns(tree)
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        text = template(node)
        if text is not None and (is_message(text) or id(node) in words) and text not in found:
            found.append(text)
    return found


def _columns(tree: ast.AST) -> set[int]:
    """The strings of a table written as tuples (``for column, what in ((0, "mean"), (1,
    "standard deviation"))``) in a column that holds a message, and both branches of an
    if-else one of which is a message: a word there ("mean", "changed") is put into a
    sentence like its neighbour, so it is a message too."""
    found: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.IfExp):  # 'was None and is now set' if ... else 'changed'
            branches = [(b, template(b)) for b in (node.body, node.orelse)]
            if all(t is not None for _, t in branches) and any(is_message(t) for _, t in branches):
                found.update(id(b) for b, t in branches if any(c.isalpha() for c in t))
        if not isinstance(node, (ast.Tuple, ast.List)) or len(node.elts) < 2:
            continue
        rows = [row.elts for row in node.elts if isinstance(row, (ast.Tuple, ast.List))]
        if len(rows) != len(node.elts) or len({len(row) for row in rows}) != 1:
            continue
        for column in zip(*rows, strict=True):
            texts = [(cell, template(cell)) for cell in column]
            if all(t is not None for _, t in texts) and any(is_message(t) for _, t in texts):
                found.update(id(cell) for cell, t in texts if any(c.isalpha() for c in t))
    return found


def notebook_messages(notebook: Any) -> dict[str, str]:
    """The messages of a notebook's check cells, of the locked cells that hold the checks' own
    tools (a helper that words a problem, ``raised(error)``) and of any cell that runs a check
    of its own (a walkthrough showing how checks answer), by key (a hash of the message)."""
    units: dict[str, str] = {}
    for cell in notebook.cells:
        code = cell.cell_type == "code"
        locked = code and nbgrader(cell).get("locked") is True
        if is_check(cell) or locked or (code and "checks.Check(" in cell.source):
            for text in cell_messages(cell.source):
                units.setdefault(message_key(text), text)
    return units


def message_key(text: str) -> str:
    """A message's key: its hash, so that a new message never shifts the others' keys."""
    return "m-" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:10]
