"""An assignment's page: the exercise as students get it, with what each visible check prints.

The exercise (``exercises/NN.ipynb``) holds no solution and no hidden test, and no outputs. Each
check cell gets, as a worked example, the output its solution's check cell stored: what the
visible checks print for a correct answer (hidden tests print nothing when they pass). No other
output of the solution is shown: a "try it" cell's output would give the answer away.
"""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any

from ..course.format.notebooks import read_notebook

EXAMPLE_KEY = "hookviz_site_example"  # in a cell's metadata: its outputs are a worked example
COPY_KEY = "hookviz_site_copy"  # in a cell's metadata: what Copy copies, when not what is shown
_PACKED_CODE = re.compile(r"""checks\.run_check\(\s*(["'])[A-Za-z0-9+/=\s]*\1\s*\)""")


def _grade_id(cell: Any) -> str | None:
    meta = cell.get("metadata", {}).get("nbgrader", {})
    return meta.get("grade_id") if meta.get("grade") else None


def check_outputs(solution: Any) -> dict[str, list]:
    """Each check cell's stored outputs in the solution, by grade_id: its printed text and its
    card (``display_data``); no result or error."""
    outputs = {}
    for cell in solution.cells:
        gid = _grade_id(cell)
        if cell.cell_type == "code" and gid:
            outputs[gid] = [
                o
                for o in cell.get("outputs", [])
                if o.get("output_type") in ("stream", "display_data")
            ]
    return outputs


def shorten_packed_code(source: str) -> str:
    """``source`` with a check's packed code shown as ``checks.run_check(…)``."""
    return _PACKED_CODE.sub("checks.run_check(…)", source)


def exercise_for_page(exercise_path: Path, solution_path: Path | None) -> Any:
    """The exercise notebook with its check cells' worked examples taken from the solution."""
    exercise = read_notebook(exercise_path)
    examples = check_outputs(read_notebook(solution_path)) if solution_path else {}
    for cell in exercise.cells:
        if cell.cell_type != "code":
            continue
        cell.outputs = []  # an exercise has none; make sure no stale one is shown
        gid = _grade_id(cell)
        if gid:
            shown = shorten_packed_code(cell.source)
            if shown != cell.source:  # Copy gives the cell that runs, not the shortened line
                cell.metadata[COPY_KEY] = cell.source
            cell.source = shown
        if gid in examples and examples[gid]:
            cell.outputs = copy.deepcopy(examples[gid])
            cell.metadata[EXAMPLE_KEY] = True
    return exercise
