"""CompiledTimeline in JupyterLab 4: drawn from a kernel that compared a model, played by keys,
its step heard by the kernel, accessible and following the notebook's theme.

The notebook (tests/browser/notebooks/compiled_lab.ipynb, stored without outputs) is run from
the menu on a fresh kernel: what the page shows came from that kernel.
"""

from __future__ import annotations

import json
import time

import pytest
from accessibility import assert_accessible
from conftest import open_notebook
from jupyter_ui import NOTEBOOKS

NOTEBOOK = "compiled_lab.ipynb"


@pytest.fixture(scope="module")
def lab(chromium, jupyter_server):
    session = open_notebook(chromium, jupyter_server, NOTEBOOK)
    session.notebook.run_all()
    yield session
    session.page.context.close()


def kernel_prints(lab, code: str, expected: str, timeout: float = 10.0) -> str:
    """What ``code`` prints in the kernel, asked again until it is ``expected`` or time is up (the
    page's last change may still be on its way)."""
    deadline = time.monotonic() + timeout
    while (printed := lab.notebook.execute(code)) != expected and time.monotonic() < deadline:
        lab.page.wait_for_timeout(100)
    return printed


def focus(widget) -> None:
    widget.scroll_into_view_if_needed()
    widget.click(position={"x": 4, "y": 4})


def test_the_stored_notebook_has_no_outputs():
    notebook = json.loads((NOTEBOOKS / NOTEBOOK).read_text())
    assert all(not cell.get("outputs") for cell in notebook["cells"])


def test_the_kernels_comparison_is_what_the_page_plays(lab):
    widget = lab.page.locator(".hv-compiled")
    assert widget.count() == 1
    total, hooks, missed = lab.notebook.execute(
        "print(timeline.total, len(timeline.report.hooks), len(timeline.report.missed))"
    ).split()
    assert widget.locator(".hv-status").text_content() == f"moment 0 / {total}"
    assert widget.locator("tbody tr").count() == int(hooks)
    assert widget.locator(".hv-badge.hv-s-missed").count() == int(missed) == 1
    assert widget.locator(".hv-side-compiled .hv-ev-graph_break").count() == 1
    assert lab.widget_errors() == []


def test_keys_play_it_and_the_kernel_hears_the_step(lab):
    widget = lab.page.locator(".hv-compiled")
    focus(widget)
    lab.page.keyboard.press("Home")
    for _ in range(3):
        lab.page.keyboard.press("ArrowRight")
    assert widget.get_attribute("data-step") == "3"
    assert kernel_prints(lab, "print(timeline.step)", "3\n") == "3\n"
    total = lab.notebook.execute("print(timeline.total)").strip()
    lab.page.keyboard.press("End")
    assert widget.get_attribute("data-step") == total
    assert kernel_prints(lab, "print(timeline.step)", f"{total}\n") == f"{total}\n"
    lab.notebook.execute("timeline.step = 1")
    lab.page.wait_for_function(
        "() => document.querySelector('.hv-compiled').dataset.step === '1'", timeout=10_000
    )
    assert widget.get_attribute("data-current") == "graph_break"


def test_axe_finds_nothing_serious_light_then_dark(lab):
    widget = lab.page.locator(".hv-compiled")
    assert "hv-dark" not in widget.get_attribute("class")
    assert_accessible(lab.page, {"hv-compiled": 1})
    lab.notebook.screenshot(widget, "compiled-timeline")
    page = lab.page
    page.locator(".lm-MenuBar-itemLabel", has_text="Settings").first.click()
    page.locator(".lm-Menu-itemLabel", has_text="Theme").first.hover()
    page.locator(".lm-Menu-itemLabel", has_text="JupyterLab Dark").first.click()
    page.wait_for_function("() => document.body.dataset.jpThemeLight === 'false'", timeout=15_000)
    page.wait_for_timeout(500)  # the theme's stylesheet
    assert "hv-dark" in widget.get_attribute("class")
    background = widget.evaluate("(el) => getComputedStyle(el).backgroundColor")
    red, green, blue = (int(v) for v in background[background.index("(") + 1 : -1].split(",")[:3])
    assert red + green + blue < 3 * 80
    assert_accessible(lab.page, {"hv-compiled": 1})
    lab.notebook.screenshot(widget, "compiled-timeline-dark")
