"""What every widget shares: lazy imports, front-end files, themes, strict JSON state, reprs."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
import torch
import traitlets

import hookviz as hv
from hookviz.widgets.base import STATIC, front_end, number, shape_text


def all_widgets():
    model = hv.examples.model()
    model.ab.a.register_forward_hook(lambda module, inputs, output: None)
    return [
        hv.ApplyTraversal(model),
        hv.HookMonitor(model),
        hv.HookTimeline(model, torch.ones(1)),
        hv.HookInventory(model, include_globals=False),
        hv.CompiledTimeline(model, torch.ones(1), steps=2),
    ]


def test_import_hookviz_loads_no_widget_or_plot_library():
    code = (
        "import sys, hookviz\n"
        "print(sorted(m for m in ('ipywidgets', 'anywidget', 'matplotlib') if m in sys.modules))\n"
        "import hookviz.widgets\n"
        "print(sorted(m for m in ('ipywidgets', 'anywidget', 'matplotlib') if m in sys.modules))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.splitlines() == ["[]", "['anywidget', 'ipywidgets']"]


def test_lazy_names_are_the_widget_classes():
    from hookviz import widgets

    assert hv.ApplyTraversal is widgets.ApplyTraversal
    assert hv.HookMonitor is widgets.HookMonitor
    assert hv.HookTimeline is widgets.HookTimeline
    assert hv.HookInventory is widgets.HookInventory
    assert hv.CompiledTimeline is widgets.CompiledTimeline


@pytest.mark.parametrize(
    ("name", "root_class"),
    [
        ("apply_traversal", ".hv-apply"),
        ("hook_monitor", ".hv-monitor"),
        ("hook_timeline", ".hv-timeline"),
        ("hook_inventory", ".hv-inventory"),
        ("compiled_timeline", ".hv-compiled"),
    ],
)
def test_each_widget_is_one_esm_file_after_the_shared_helpers(name, root_class):
    esm, css = front_end(name)
    own = (STATIC / f"{name}.js").read_text()
    assert 'from "./common.js";' in own  # the file imports its helpers...
    shared = (STATIC / "common.js").read_text().replace("\nexport function ", "\nfunction ")
    assert esm.startswith(shared.replace("\nexport const ", "\nconst "))  # ...inlined first
    assert esm.endswith(own[own.index('} from "./common.js";\n') + 22 :])
    assert esm.count("export default { render }") == 1
    assert "import " not in esm  # no bundler, no CDN
    assert css.startswith((STATIC / "common.css").read_text())
    assert "var(--jp-layout-color0" in css and root_class in css


def test_every_widget_sends_strict_json_and_says_what_it_is():
    for widget in all_widgets():
        state = widget.get_state()
        json.dumps(state, allow_nan=False)
        assert state["_esm"].count("export default") == 1
        text = widget._repr_mimebundle_()[0]["text/plain"]
        assert text == repr(widget) and " at 0x" not in text
        assert text.startswith(type(widget).__name__ + "(")


def test_reprs_are_the_same_in_a_second_run():
    first = [repr(w) for w in all_widgets()]
    second = [repr(w) for w in all_widgets()]
    assert first == second


def test_theme_is_checked_and_synced():
    for widget in all_widgets():
        widget.theme = "dark"
        assert widget.get_state()["theme"] == "dark"
        with pytest.raises(traitlets.TraitError, match="'auto', 'light', 'dark'"):
            widget.theme = "night"


def test_numbers_are_json_safe():
    assert number(float("nan")) == "nan"
    assert number(float("inf")) == "inf" and number(float("-inf")) == "-inf"
    assert number(0.123456789) == 0.1235
    assert number(12345678.9) == 1.235e7
    assert number(True) == 1 and number(7) == 7 and number(None) is None
    assert shape_text((2, 3)) == "2×3" and shape_text(()) == "scalar"


def test_every_widget_has_a_static_picture_without_scripts():
    for widget in all_widgets():
        page = widget.to_html()
        assert page.startswith('<div class="hvs ') and page.endswith("</div>")
        assert "<script" not in page and "src=" not in page
