"""Flags for a human to look at: answer code that reaches for the grader's machinery.

A flag never changes a score by itself; it puts the submission on the instructor's desk. The
rules look at names and strings in the student's answer cells (ast where the cell parses, a
plain text search where it does not).
"""

from __future__ import annotations

import ast
import re

from ..course import regions

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
SENTINEL_PATTERN = re.compile(r"\[hookviz\]|:\s*finished\b")
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


def scan_answers(answers: dict[str, str]) -> list[str]:
    """Sorted flags for the answer sources, each as ``flag (grade_id)``."""
    flags = set()
    for gid, source in answers.items():
        names = _names(source)
        for flag, needles in NAME_RULES.items():
            if any(needle in names for needle in needles):
                flags.add(f"{flag} ({gid})")
        if any(SENTINEL_PATTERN.search(text) for text in _strings(source)):
            flags.add(f"prints-sentinel ({gid})")
    return sorted(flags)
