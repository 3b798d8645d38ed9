"""Flags for a human to look at: answer code that reaches for the grader's machinery.

A flag never changes a score by itself; it puts the submission on the instructor's desk. The
rules look at names and strings in the student's answer cells (ast where the cell parses, a
plain text search where it does not), and at attribute assignments on imported modules and
classes (``torch.equal = ...``, ``setattr(nn.Module, ...)``): monkeypatching, which the
integrity probe also catches at run time when it touches what the checks rely on.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable

from ...course.conventions import SENTINEL_LIKE, Flag
from ...course.format import regions

# flag -> names (identifiers or dotted attribute chains) that raise it
NAME_RULES: dict[str, tuple[str, ...]] = {
    "grader": (
        "hookviz.course",
        "hookviz.grading",
        "nbval",
        "pytest",
        "get_ipython",
        "ipykernel",
        "_hookviz_probe",
    ),
    "traceback-machinery": (
        "showtraceback",
        "_showtraceback",
        "showsyntaxerror",
        "InteractiveShell",
        "InteractiveTB",
        "set_custom_exc",
        "excepthook",
        "CustomTB",
        "input_transformers_cleanup",
        "input_transformers_post",
        "ast_transformers",
        "events.register",
    ),
    "sys.modules": ("sys.modules", "importlib.reload", "__import__"),
    "builtins": ("builtins", "__builtins__"),
    "interpreter": (
        "settrace",
        "setprofile",
        "ctypes",
        "gc.get_objects",
        "gc.get_referrers",
        "os._exit",
        "signal.signal",
        "sys._getframe",
    ),
}
_DOTTED = re.compile(r"[A-Za-z_][\w]*(?:\s*\.\s*[A-Za-z_][\w]*)*")


def _names(source: str) -> set[str]:
    """Identifiers and every dotted prefix/suffix chain (``a.b.c`` gives a, b, c, a.b, b.c, a.b.c)."""
    try:
        tree = ast.parse(regions.python_source(source))
        chains = []
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute):
                parts, inner = [node.attr], node.value
                while isinstance(inner, ast.Attribute):
                    parts.append(inner.attr)
                    inner = inner.value
                if isinstance(inner, ast.Name):
                    parts.append(inner.id)
                chains.append(list(reversed(parts)))
            elif isinstance(node, ast.Name):
                chains.append([node.id])
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                base = getattr(node, "module", None) or ""
                chains += [base.split(".")] if base else []
                for alias in node.names:
                    chains.append((f"{base}.{alias.name}" if base else alias.name).split("."))
    except (SyntaxError, ValueError, RecursionError):
        chains = [re.sub(r"\s+", "", m).split(".") for m in _DOTTED.findall(source)]
    names = set()
    for parts in chains:
        for start in range(len(parts)):
            for end in range(start + 1, len(parts) + 1):
                names.add(".".join(parts[start:end]))
    return names


def _strings(source: str) -> list[str]:
    try:
        tree = ast.parse(regions.python_source(source))
    except (SyntaxError, ValueError, RecursionError):
        return [source]
    found = [
        n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)
    ]
    # f-strings: their literal parts are Constants inside JoinedStr, already included.
    return found


def _parse(source: str) -> ast.AST | None:
    try:
        return ast.parse(regions.python_source(source))
    except (SyntaxError, ValueError, RecursionError):
        return None


def imported_names(source: str) -> set[str]:
    """The names a cell's imports bind (``import torch.nn as nn`` binds nn, ``import a.b`` binds a)."""
    tree = _parse(source)
    names: set[str] = set()
    for node in ast.walk(tree) if tree is not None else ():
        if isinstance(node, ast.Import):
            names.update(a.asname or a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            names.update(a.asname or a.name for a in node.names if a.name != "*")
    return names


def _root(node: ast.AST) -> ast.AST:
    """The innermost object of ``a.b.c`` or ``a.__dict__['x']``: ``a``."""
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        node = node.value
    return node


def _patched_object(node: ast.AST, imported: set[str]) -> bool:
    """True when ``node`` reaches an imported module or class, or the class of an object."""
    root = _root(node)
    if isinstance(root, ast.Name) and root.id in imported:
        return True
    if (
        isinstance(root, ast.Call)
        and isinstance(root.func, ast.Name)
        and root.func.id in ("type", "vars")
    ):
        return bool(root.args) and (
            root.func.id == "type" or _patched_object(root.args[0], imported)
        )
    chain = node
    while isinstance(chain, (ast.Attribute, ast.Subscript)):
        if isinstance(chain, ast.Attribute) and chain.attr in ("__class__", "__dict__"):
            return True
        chain = chain.value
    return False


def monkeypatches(source: str, imported: Iterable[str] = ()) -> list[str]:
    """Attribute assignments on imported modules and classes in ``source``, as written.

    ``imported`` adds the names other cells import (the instructor's setup cell brings torch,
    nn, hv, checks); names bound in ``source`` by an import, or as an alias of one
    (``M = nn.Module``), count too.
    """
    tree = _parse(source)
    if tree is None:
        return []
    known = set(imported) | imported_names(source)
    for _ in range(3):  # aliases of aliases
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Assign)
                and isinstance(node.value, (ast.Name, ast.Attribute))
                and _patched_object(node.value, known)
            ):
                known.update(t.id for t in node.targets if isinstance(t, ast.Name))
    found = []
    for node in ast.walk(tree):
        targets: list[ast.AST] = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            targets = [node.target]
        elif isinstance(node, ast.Delete):
            targets = node.targets
        elif isinstance(node, ast.Call) and node.args:
            name = ast.unparse(node.func)
            if name in ("setattr", "delattr", "object.__setattr__", "type.__setattr__"):
                if _patched_object(node.args[0], known):
                    found.append(f"{name}({ast.unparse(node.args[0])}, ...)")
        for target in targets:
            for part in target.elts if isinstance(target, (ast.Tuple, ast.List)) else [target]:
                if isinstance(part, ast.Subscript) and not _namespace(part.value):
                    continue  # an item of a container (os.environ["X"]), not an attribute
                if isinstance(part, (ast.Attribute, ast.Subscript)) and _patched_object(
                    part, known
                ):
                    found.append(ast.unparse(part))
    return found


def _namespace(node: ast.AST) -> bool:
    """``x.__dict__`` or ``vars(x)``: an object's attributes seen as a dict."""
    if isinstance(node, ast.Attribute):
        return node.attr == "__dict__"
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "vars"


def scan_answers(answers: dict[str, str], imported: Iterable[str] = ()) -> list[Flag]:
    """Sorted flags for the answer sources, each naming its answer's grade_id.

    ``imported``: names the instructor's cells import, for the monkeypatch rule (the imports
    of every answer cell count as well).
    """
    known = set(imported).union(*(imported_names(source) for source in answers.values()))
    flags = set()
    for gid, source in answers.items():
        names = _names(source)
        for flag, needles in NAME_RULES.items():
            if any(needle in names for needle in needles):
                flags.add(Flag(flag, gid))
        if any(SENTINEL_LIKE.search(text) for text in _strings(source)):
            flags.add(Flag("prints-sentinel", gid))
        if monkeypatches(source, known):
            flags.add(Flag("monkeypatch", gid))
    return sorted(flags)
