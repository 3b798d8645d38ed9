"""The words of the figures a notebook draws itself, found in its code: what their translation
follows.

A notebook's own plotting code (``ax.set_xlabel("step")``) stays the English, as every code
cell does; the words it puts on a figure are units of the notebook's translation, keyed by
their hash (``f-…``) like a check's messages, and `hookviz build` packs their translations
into the notebook's content cell. In a translated notebook's kernel, `hookviz.figure_words`
puts them on the figure as it is drawn, through the same catalogue that translates a check's
lines (``catalogue.translate``: an f-string is a template, its placeholders filled from the
drawn text).

A figure's words are the strings (and f-strings, and either branch of ``a if c else b``) given
to matplotlib's text calls (``set_title``, ``set_xlabel``, ``suptitle``, ``text``,
``annotate``, ``legend(title=...)``, ``label=...``), and, in a cell that draws, the strings of a
list or tuple that a loop walks (``for ax, name in zip(axes, ("digit", "Grad-CAM"))``) or that is
passed to a function the cell defines to draw. Standard library only.
"""

from __future__ import annotations

import ast
import hashlib

from .messages import template

TEXT_CALLS = frozenset(
    {
        "set_title",
        "set_xlabel",
        "set_ylabel",
        "suptitle",
        "supxlabel",
        "supylabel",
        "title",
        "xlabel",
        "ylabel",
        "text",
        "figtext",
        "annotate",
        "set_label",
        "set_text",
        "set_label_text",
    }
)
TEXT_KEYWORDS = frozenset({"label", "title", "xlabel", "ylabel", "s", "text"})
_FIRST_TEXT_ARGUMENT = {"text": 2, "figtext": 2}  # text(x, y, s): the rest take the text first


def _strings(node: ast.AST) -> list[tuple[int, int, str]]:
    """The templates a value can be (a string, an f-string, either branch of an if-else), each
    with where it is written."""
    if isinstance(node, ast.IfExp):
        return _strings(node.body) + _strings(node.orelse)
    if isinstance(node, ast.BoolOp):
        return [t for value in node.values for t in _strings(value)]
    found = template(node)
    return [(node.lineno, node.col_offset, found)] if found is not None else []


def _literal_strings(node: ast.AST) -> list[tuple[int, int, str]]:
    """The strings of a list or tuple literal (or of those given to ``zip``/``enumerate``)."""
    if isinstance(node, (ast.List, ast.Tuple)):
        return [t for element in node.elts for t in _strings(element)]
    if isinstance(node, ast.Call) and ast.unparse(node.func) in ("zip", "enumerate", "reversed"):
        return [t for argument in node.args for t in _literal_strings(argument)]
    return []


def _name(function: ast.AST) -> str:
    if isinstance(function, ast.Attribute):
        return function.attr
    return function.id if isinstance(function, ast.Name) else ""


def _draws(node: ast.AST) -> bool:
    return any(
        isinstance(n, ast.Call) and _name(n.func) in TEXT_CALLS | {"subplots", "figure", "plot"}
        for n in ast.walk(node)
    )


def figure_texts(source: str) -> list[str]:
    """The words (templates) ``source`` puts on figures, in order, each once."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    found: list[tuple[int, int, str]] = []
    drawing = {
        node.name for node in ast.walk(tree) if isinstance(node, ast.FunctionDef) and _draws(node)
    }
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            name = _name(node.func)
            if name in TEXT_CALLS:
                first = _FIRST_TEXT_ARGUMENT.get(name, 0)
                for argument in node.args[first : first + 1]:
                    found += _strings(argument)
            found += [
                t
                for keyword in node.keywords
                if keyword.arg in TEXT_KEYWORDS
                for t in _strings(keyword.value)
            ]
            if name in drawing:
                for argument in node.args:
                    found += _literal_strings(argument)
        elif isinstance(node, ast.For) and _draws(node):
            found += _literal_strings(node.iter)
    texts = (text for _, _, text in sorted(found))
    return [t for t in dict.fromkeys(texts) if any(c.isalpha() for c in t)]


def figure_key(text: str) -> str:
    """A figure's word's key: its hash, so that a new word never shifts the others' keys."""
    return "f-" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:10]


def is_figure_key(key: str) -> bool:
    """True for the key of a figure's word."""
    return key.startswith("f-") and len(key) == 12


def notebook_figures(notebook) -> dict[str, str]:
    """The words of the figures a notebook's code cells draw, by key."""
    units: dict[str, str] = {}
    for cell in notebook.cells:
        if cell.cell_type == "code":
            for text in figure_texts(cell.source):
                units.setdefault(figure_key(text), text)
    return units


__all__ = ["figure_key", "figure_texts", "is_figure_key", "notebook_figures"]
