"""Solution and hidden-test regions: find them, replace answers by stubs, strip hidden tests.

nbgrader's markers, matched exactly. A line that only looks like a marker (``# BEGIN SOLUTION``)
is an error rather than ordinary code: treated as code, it would leak the answer into exercises/.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from dataclasses import dataclass

BEGIN_SOLUTION = "### BEGIN SOLUTION"
END_SOLUTION = "### END SOLUTION"
BEGIN_HIDDEN = "### BEGIN HIDDEN TESTS"
END_HIDDEN = "### END HIDDEN TESTS"
STUB_LINES = ("# YOUR CODE HERE", "raise NotImplementedError()")
TEXT_STUB_LINES = ("YOUR ANSWER HERE",)  # a markdown answer's stub, as nbgrader writes it

_MARKERS = {
    BEGIN_SOLUTION: ("solution", "begin"),
    END_SOLUTION: ("solution", "end"),
    BEGIN_HIDDEN: ("hidden", "begin"),
    END_HIDDEN: ("hidden", "end"),
}
# Near misses of a marker: "# BEGIN SOLUTION", "### BEGIN SOLUTIONS", "### end hidden test"...
_LOOKALIKE = re.compile(r"^#+\s*(BEGIN|END)[\s_]*(SOLUTIONS?|HIDDEN[\s_]*TESTS?)\b", re.IGNORECASE)


class RegionError(ValueError):
    """Markers that are unbalanced, misspelled, nested, or in the wrong place."""


@dataclass(frozen=True)
class Region:
    """One marked region: its kind, its marker lines (0-based) and the BEGIN line's indentation."""

    kind: str  # "solution" or "hidden"
    begin: int
    end: int
    indent: str


def find_regions(source: str) -> list[Region]:
    """All marked regions of a cell, in order; RegionError when the markers do not pair up."""
    regions: list[Region] = []
    open_region: tuple[str, int, str] | None = None
    for number, line in enumerate(source.splitlines()):
        stripped = line.strip()
        marker = _MARKERS.get(stripped)
        if marker is None:
            if _LOOKALIKE.match(stripped):
                raise RegionError(
                    f"line {number + 1} looks like a marker but is spelled {stripped!r}; "
                    f"write exactly one of: {', '.join(_MARKERS)}."
                )
            continue
        kind, edge = marker
        if edge == "begin":
            if open_region is not None:
                raise RegionError(
                    f"line {number + 1}: {stripped!r} opens a region inside the one opened on line "
                    f"{open_region[1] + 1}; close that one first with its END marker."
                )
            open_region = (kind, number, line[: len(line) - len(line.lstrip())])
            continue
        if open_region is None or open_region[0] != kind:
            raise RegionError(
                f"line {number + 1}: {stripped!r} has no matching BEGIN marker above it."
            )
        regions.append(Region(kind, open_region[1], number, open_region[2]))
        open_region = None
    if open_region is not None:
        end = END_SOLUTION if open_region[0] == "solution" else END_HIDDEN
        raise RegionError(f"line {open_region[1] + 1} opens a region that never ends; add {end!r}.")
    return regions


def _rewrite(source: str, kind: str, replacement: Callable[[Region], list[str]]) -> str:
    lines = source.splitlines(keepends=True)
    regions = [r for r in find_regions(source) if r.kind == kind]
    for region in reversed(regions):
        lines[region.begin : region.end + 1] = replacement(region)
    return "".join(lines)


def replace_solutions(source: str, stub_lines: tuple[str, ...] = STUB_LINES) -> str:
    """Replace every solution region by the stub, indented like its BEGIN marker."""

    def stub(region: Region) -> list[str]:
        return [f"{region.indent}{line}\n" for line in stub_lines]

    result = _rewrite(source, "solution", stub)
    return result.rstrip("\n") if not source.endswith("\n") else result


def remove_hidden_tests(source: str) -> str:
    """Remove every hidden-test region, markers included."""
    result = _rewrite(source, "hidden", lambda region: [])
    return result.rstrip("\n") if not source.endswith("\n") else result


def strip_solution_markers(source: str) -> str:
    """The solution code without its marker lines (what a student who solved it would have)."""
    kept = [
        line
        for line in source.splitlines(keepends=True)
        if line.strip() not in (BEGIN_SOLUTION, END_SOLUTION)
    ]
    return "".join(kept)


def python_source(source: str) -> str:
    """The cell as plain Python: IPython magics and shell escapes become calls, lines kept."""
    try:
        from IPython.core.inputtransformer2 import TransformerManager
    except ImportError:  # pragma: no cover - IPython comes with ipykernel in the dev extra
        return source
    try:
        return TransformerManager().transform_cell(source)
    except Exception:  # an unparsable cell is reported by ast below
        return source


def check_stubs_inside_functions(source: str) -> None:
    """RegionError unless every solution region sits inside a function body.

    The stub raises NotImplementedError; at the top level of a cell it would raise when the
    student runs the cell, instead of when a check calls their function.
    """
    regions = [r for r in find_regions(source) if r.kind == "solution"]
    if not regions:
        return
    stubbed = python_source(replace_solutions(source))
    try:
        tree = ast.parse(stubbed)
    except SyntaxError as error:
        raise RegionError(
            f"with the answer replaced by the stub the cell is not valid Python "
            f"(line {error.lineno}: {error.msg}); keep each solution region inside a function body."
        ) from error
    inside: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for statement in node.body:
                for child in ast.walk(statement):
                    if isinstance(child, ast.Raise):
                        inside.add(child.lineno)
    # Each region shrinks to two lines; find where each stub's raise landed.
    shift = 0
    for region in regions:
        raise_line = region.begin + shift + 2  # 1-based line of "raise NotImplementedError()"
        if raise_line not in inside:
            raise RegionError(
                f"the solution region starting on line {region.begin + 1} is not inside a function "
                "body. Put the answer inside `def ...:` so the stub raises only when a check calls it."
            )
        shift += 2 - (region.end - region.begin + 1)
