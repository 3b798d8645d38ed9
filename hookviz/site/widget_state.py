"""Running a notebook at build time and keeping what its widgets hold, for pages without a kernel.

The stored notebooks keep only a widget's repr (a widget view points at a kernel that is gone),
so the site runs each notebook once more, top to bottom, and asks the kernel at the end for
every hookviz widget still alive: its name, its synced state, what the page needs to answer
its messages (a prediction's answer) and its repr. Nothing is written back to the notebook.
"""

from __future__ import annotations

import json
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..course.authoring.execute import WIDGET_VIEW, execute
from ..course.format.notebooks import nbformat_module, read_notebook


@dataclass(frozen=True)
class WidgetState:
    """One widget as the page replays it."""

    name: str  # its ES module: hookviz/widgets/static/<name>.js
    state: dict[str, Any]
    extras: dict[str, Any]
    text: str  # its repr, shown until the view is drawn

    def as_json(self) -> str:
        """The state and extras as strict JSON, safe inside a <script> element."""
        text = json.dumps(
            {"state": self.state, "extras": self.extras},
            allow_nan=False,
            separators=(",", ":"),
            ensure_ascii=False,
        )
        return text.replace("</", "<\\/")


def collect(path: str) -> int:
    """In the kernel: write every live hookviz widget's state to ``path``; returns how many."""
    from ipywidgets.widgets import widget as widget_module

    from ..widgets.base import HookvizWidget

    instances = getattr(widget_module, "_instances", None)
    if instances is None:  # ipywidgets 7
        instances = widget_module.Widget.widgets
    found = {}
    for model_id, widget in list(instances.items()):
        if isinstance(widget, HookvizWidget) and widget._front_end:
            found[model_id] = {
                "name": widget._front_end,
                "state": widget.offline_state(),
                "extras": widget.offline_extras(),
                "text": repr(widget),
            }
    Path(path).write_text(json.dumps(found, allow_nan=False), encoding="utf-8")
    return len(found)


def run_with_widgets(
    notebook_path: Path, settings: Path | None = None
) -> tuple[Any, dict[str, WidgetState]]:
    """Execute the notebook in a fresh kernel; return it with its outputs and its widgets by model id.

    A widget view in the outputs whose model has no state (closed before the end) keeps its repr.
    """
    nbformat = nbformat_module()
    notebook = read_notebook(notebook_path)
    with tempfile.TemporaryDirectory(prefix="hookviz-site-") as scratch:
        out = Path(scratch) / "widgets.json"
        notebook.cells.append(
            nbformat.v4.new_code_cell(
                f"import hookviz.site.widget_state\nhookviz.site.widget_state.collect({str(out)!r})"
            )
        )
        execute(notebook, Path(notebook_path).parent.resolve(), settings=settings)
        notebook.cells.pop()
        found = json.loads(out.read_text(encoding="utf-8"))
    widgets = {
        model_id: WidgetState(w["name"], w["state"], w["extras"], w["text"])
        for model_id, w in found.items()
    }
    return notebook, widgets


def widget_views(notebook: Any) -> list[str]:
    """The model ids of the widget views in the notebook's outputs, in order."""
    return [
        output["data"][WIDGET_VIEW]["model_id"]
        for cell in notebook.cells
        if cell.cell_type == "code"
        for output in cell.get("outputs", [])
        if WIDGET_VIEW in output.get("data", {})
    ]
