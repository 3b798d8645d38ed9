"""grading/ is laid out by command over a shared core, and its imports run one way only.

The map is grading/__init__.py's docstring; these tests keep the code to it: a subpackage
imports only the ones below it (RANKS), no module imports itself back through others, and no
module reaches into another's private names.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import hookviz
import hookviz.grading

PACKAGE = Path(hookviz.__file__).resolve().parent
# Lower imports nothing higher; the same rank never imports across (report and platforms are peers).
RANKS = {"core": 0, "run": 1, "platforms": 2, "report": 2, "manual": 3, "grade": 4}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path) -> list[tuple[str, list[str]]]:
    """Every hookviz import in ``path`` (inside functions too): (module, names imported from it)."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(a.name, []) for a in node.names if a.name.startswith("hookviz")]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            if module.startswith("hookviz"):
                names = [a.name for a in node.names]
                found.append((module, names))
                # `from pkg import module` imports that module
                found += [(f"{module}.{n}", []) for n in names if _is_module(f"{module}.{n}")]
    return found


def _is_module(dotted: str) -> bool:
    path = PACKAGE.parent.joinpath(*dotted.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def python_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*.py") if "plugin" not in p.relative_to(PACKAGE).parts)


def subpackage(module: str) -> str | None:
    parts = module.split(".")
    return parts[2] if len(parts) > 3 and parts[1] == "grading" else None


def test_every_grading_module_sits_in_a_subpackage_the_map_names() -> None:
    doc = hookviz.grading.__doc__ or ""
    for path in python_files(PACKAGE / "grading"):
        name = module_name(path)
        if name == "hookviz.grading":
            continue
        assert subpackage(name + ".x" if path.name == "__init__.py" else name) in RANKS, name
    for folder in RANKS:
        assert f"{folder}/" in doc, f"grading/__init__.py's map does not name {folder}/"


def test_grading_imports_point_down() -> None:
    wrong = []
    for path in python_files(PACKAGE / "grading"):
        here = subpackage(module_name(path))
        for module, _ in imports_of(path):
            there = subpackage(module)
            if here and there and here != there and RANKS[there] >= RANKS[here]:
                wrong.append(f"{module_name(path)} imports {module}")
            if module.startswith("hookviz.widgets"):
                wrong.append(f"{module_name(path)} imports {module}: grading never imports widgets")
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize("folder", ["grading", "course", "site"])
def test_no_import_circle(folder: str) -> None:
    graph: dict[str, set[str]] = {}
    for path in python_files(PACKAGE / folder):
        if path.name == "__init__.py":
            continue
        graph[module_name(path)] = {m for m, _ in imports_of(path) if _is_module(m)}
    circles = []
    for start in graph:
        stack, seen = [(start, [start])], set()
        while stack:
            node, trail = stack.pop()
            for nxt in graph.get(node, ()):
                if nxt == start:
                    circles.append(" -> ".join([*trail, start]))
                elif nxt not in seen:
                    seen.add(nxt)
                    stack.append((nxt, [*trail, nxt]))
    assert not circles, "\n".join(sorted(set(circles)))


def test_no_private_name_is_imported_across_modules() -> None:
    reached = [
        f"{module_name(path)} imports {name} from {module}"
        for path in python_files(PACKAGE)
        for module, names in imports_of(path)
        for name in names
        if name.startswith("_") and not name.startswith("__")
    ]
    assert not reached, "\n".join(reached)


def test_the_checks_find_what_they_forbid(tmp_path: Path) -> None:
    """The import reader sees an import inside a function, and a relative one."""
    fake = PACKAGE / "grading" / "core" / "_layout_probe.py"
    try:
        fake.write_text("def f():\n    from ..grade.batch import _x\n", encoding="utf-8")
        assert imports_of(fake)[0] == ("hookviz.grading.grade.batch", ["_x"])
    finally:
        fake.unlink()
