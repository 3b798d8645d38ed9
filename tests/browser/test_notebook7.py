"""A smoke test in Notebook 7: the widgets render from the kernel, play, and sync back."""

from __future__ import annotations

import time

import pytest
from accessibility import assert_accessible
from conftest import open_notebook
from jupyter_ui import JupyterServer
from test_lab_widgets import (
    assert_dark_like_the_notebook,
    brightness,
    colour_of,
    data,
    kernel_prints,
    painted_columns,
    switch_to_dark,
    wait_data,
    wait_live,
)

BLOG_POSTORDER = ["ab.a", "ab.b", "ab", "cd.c", "cd.d", "cd", "Model"]
NOTEBOOK7_WIDGETS = {
    "hv-apply": 1,
    "hv-timeline": 1,
    "hv-inventory": 1,
    "hv-monitor": 2,
    "hv-prediction": 2,
}
ACTIVE_CELL = "() => [...document.querySelectorAll('.jp-Notebook .jp-Cell')].findIndex(c => c.classList.contains('jp-mod-active'))"


@pytest.fixture(scope="module")
def notebook_server(tmp_path_factory):
    """``jupyter notebook`` itself, as students start it."""
    server = JupyterServer(tmp_path_factory.mktemp("notebook-home"), app="notebook").start()
    yield server
    server.stop()


def watch_while_running(page, cell: int, element: str, name: str) -> list[int]:
    """Run All is under way: note ``element``'s data-<name> each time it changes while ``cell`` runs."""
    loop_cell = page.locator(".jp-CodeCell").nth(cell)
    seen: list[int] = []
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        busy = "[*]" in (loop_cell.locator(".jp-InputPrompt").text_content() or "")
        found = page.locator(element)
        if busy and found.count():
            value = int(found.evaluate(f"(el) => el.dataset.{name}"))
            if not seen or value != seen[-1]:
                seen.append(value)
        if not busy and seen:
            break
        time.sleep(0.05)
    return seen


@pytest.fixture(scope="module")
def notebook7(chromium, notebook_server):
    """Run All in Notebook 7, noting the monitor's step count (and then the heat map's) each time
    it changes during its cell."""
    session = open_notebook(chromium, notebook_server, "widgets_notebook7.ipynb", ui="notebook")
    page = session.page
    session.notebook.run_all(wait=False)
    session.monitor_steps_while_running = watch_while_running(
        page, 2, ".hv-monitor >> nth=0", "steps"
    )
    session.heat_steps_while_running = watch_while_running(
        page, 5, ".hv-monitor >> nth=1 >> .hv-heat-view", "steps"
    )
    session.notebook.wait_cells_done()
    yield session
    page.context.close()


def test_a_monitor_shows_itself_and_updates_while_its_cell_runs(notebook7):
    seen = notebook7.monitor_steps_while_running
    live = [s for s in seen if 0 < s < 30]
    assert len(live) >= 2 and live == sorted(live), seen
    monitors = notebook7.page.locator(".hv-monitor")
    assert monitors.count() == 2  # each shown once, by its with block
    assert monitors.first.evaluate("(el) => el.dataset.steps") == "30"


def test_the_heat_map_draws_live_in_notebook_7(notebook7):
    page = notebook7.page
    seen = notebook7.heat_steps_while_running
    live = [s for s in seen if 0 < s < 40]
    assert len(live) >= 2 and live == sorted(live), seen  # drawn while its cell was running
    widget = page.locator(".hv-monitor").nth(1)
    view = widget.locator(".hv-heat-view")
    assert (
        widget.evaluate("(el) => el.dataset.view") == "heatmap"
        and view.evaluate("(el) => el.dataset.steps") == "40"
    )
    assert widget.locator(".hv-heat").count() == 6  # the Sequential and its five layers
    assert all(min(painted_columns(panel)) > 0 for panel in widget.locator(".hv-heat").all())
    assert len(painted_columns(widget.locator(".hv-heat").first)) == 40
    widget.evaluate("(el) => el.focus()")
    page.keyboard.press("g")
    page.wait_for_function(
        "() => document.querySelectorAll('.hv-heat-view')[1].dataset.signal === 'gradient'",
        timeout=10_000,
    )
    assert all(min(painted_columns(panel)) > 0 for panel in widget.locator(".hv-heat").all())
    background = widget.locator(".hv-heat").first.evaluate(
        "(el) => getComputedStyle(el).backgroundColor"
    )
    assert (
        background == colour_of(page, "var(--jp-layout-color1)")
        and brightness(background) > 3 * 200
    )  # light
    page.wait_for_timeout(300)
    assert notebook7.notebook.execute("print(heat.heatmap_signal, heat.steps)") == "gradient 40\n"
    notebook7.notebook.screenshot(widget, "notebook7-heatmap")
    assert notebook7.widget_errors() == []


def test_widgets_render_play_and_sync_in_notebook_7(notebook7):
    page = notebook7.page
    assert page.url.split("?")[0].endswith("/notebooks/widgets_notebook7.ipynb")
    assert (
        page.locator("#main-panel .jp-NotebookPanel").count() == 1
    )  # Notebook 7's shell, not Lab's
    traversal = page.locator(".hv-apply")
    traversal.scroll_into_view_if_needed()
    traversal.click(position={"x": 4, "y": 4})
    traversal.evaluate(
        """(el) => { window.__hvSeen = [el.dataset.current];
            new MutationObserver(() => { const c = el.dataset.current;
              if (window.__hvSeen[window.__hvSeen.length - 1] !== c) window.__hvSeen.push(c); })
            .observe(el, { attributes: true, attributeFilter: ['data-current'] }); }"""
    )
    page.keyboard.press("Space")
    page.wait_for_function(
        "() => document.querySelector('.hv-apply').dataset.step === '7'", timeout=10_000
    )
    assert page.evaluate("window.__hvSeen") == ["", *BLOG_POSTORDER]
    page.wait_for_timeout(300)
    assert notebook7.notebook.execute("print(traversal.step, monitor.steps)") == "7 30\n"
    notebook7.notebook.screenshot(traversal, "notebook7-apply-traversal")
    # Notebook 7.6.5 itself logs "Cannot read properties of undefined (reading 'schema')" on every
    # page, with or without hookviz; only errors from widget code count here.
    assert notebook7.widget_errors() == []


def test_a_prediction_answers_by_keys_and_by_click_in_notebook_7(notebook7):
    page = notebook7.page
    guess, typed = page.locator(".hv-prediction").nth(0), page.locator(".hv-prediction").nth(1)
    assert page.locator(".hv-prediction").count() == 2
    html = page.evaluate("() => document.body.innerHTML")
    assert "comes last" not in html and "is finished first" not in html  # the explanations: not yet
    assert guess.evaluate("(el) => el.dataset.state") == "open"

    guess.scroll_into_view_if_needed()
    guess.evaluate("(el) => el.focus()")  # as a Tab to the widget would
    for key in ("Tab", "ArrowDown", "ArrowDown", "Enter"):
        page.keyboard.press(key)
    page.wait_for_function(
        "() => document.querySelector('.hv-prediction').dataset.state === 'answered'",
        timeout=10_000,
    )
    assert guess.locator("[aria-live='polite']").text_content() == "✓ Right! The answer is C: ab.a."
    guess.locator(".hv-why").get_by_text("comes last").wait_for(state="visible")

    typed.scroll_into_view_if_needed()
    typed.get_by_role("textbox", name="your prediction").fill("1 3 6 2 5 4")
    typed.get_by_role("button", name="Check my prediction (Enter)").click()
    typed.locator(".hv-why").get_by_text("is finished first").wait_for(state="visible")
    assert typed.locator("[aria-live='polite']").text_content() == (
        "✗ Not quite: you wrote “1 3 6 2 5 4”; the answer is 4 5 2 6 3 1."
    )
    assert typed.locator(".hv-short .hv-mark").text_content() == "✗ not quite"
    page.wait_for_timeout(300)
    assert notebook7.notebook.execute("print(guess.correct, typed.correct, repr(typed))") == (
        "True False Prediction('example-postorder-numbers': short answer, answered: not quite)\n"
    )
    notebook7.page.wait_for_timeout(800)  # the reveal's fade, for the picture
    notebook7.notebook.screenshot(typed, "notebook7-prediction")
    assert notebook7.widget_errors() == []


def test_arrows_step_apply_traversal_and_the_timeline_in_notebook_7(notebook7):
    """Notebook 7 reads its shortcuts (the arrows among them) before a key reaches the widget:
    the widgets take their own keys first, and announce the step."""
    page = notebook7.page
    first = (
        notebook7.notebook.execute(
            "from hookviz.hook_kinds import KINDS\n"
            "f = timeline.sequence[0]\nprint(timeline.total, f.label, KINDS[f.kind].meaning, sep='|')"
        )
        .strip()
        .split("|")
    )
    for widget, after_one, said in [
        (page.locator(".hv-apply"), "ab.a", "visit 1 of 7: ab.a, Function_A"),
        (
            page.locator(".hv-timeline"),
            f"{first[1]} forward_call",
            f"firing 1 of {first[0]}: {first[1]}, {first[2]}",
        ),
    ]:
        widget.scroll_into_view_if_needed()
        widget.click(position={"x": 4, "y": 4})
        cell = page.evaluate(ACTIVE_CELL)
        page.keyboard.press("Home")
        wait_data(notebook7, widget, "step", "0")
        page.keyboard.press("ArrowRight")
        page.keyboard.press("ArrowRight")
        assert data(widget, "step") == "2"
        page.keyboard.press("ArrowLeft")
        assert data(widget, "step") == "1" and data(widget, "current") == after_one
        wait_live(notebook7, widget, said)
        assert page.evaluate(ACTIVE_CELL) == cell  # the notebook did not move
    assert kernel_prints(notebook7, "print(traversal.step, timeline.step)", "1 1\n") == "1 1\n"
    assert notebook7.widget_errors() == []


def test_a_widgets_buttons_answer_enter_in_notebook_7(notebook7):
    page = notebook7.page
    widget = page.locator(".hv-monitor").nth(1)
    widget.scroll_into_view_if_needed()
    widget.evaluate("(el) => el.focus()")  # as a Tab to the widget would
    page.keyboard.press("Tab")  # the view switch's first button: Table
    page.keyboard.press("Enter")
    wait_data(notebook7, widget, "view", "table")
    assert (
        page.locator(".jp-Notebook.jp-mod-editMode").count() == 0
    )  # Enter did not open a cell's editor
    page.keyboard.press("v")  # the widget's key again: back to the heat map
    wait_data(notebook7, widget, "view", "heatmap")
    assert kernel_prints(notebook7, "print(heat.view)", "heatmap\n") == "heatmap\n"


def test_axe_finds_nothing_serious_in_notebook_7_light(notebook7):
    assert_accessible(notebook7.page, NOTEBOOK7_WIDGETS)


def test_a_prediction_follows_notebook_7_dark_theme(notebook7):
    page = notebook7.page
    switch_to_dark(page)
    for i in range(2):
        assert_dark_like_the_notebook(page, page.locator(".hv-prediction").nth(i))
    notebook7.notebook.screenshot(page.locator(".hv-prediction").first, "notebook7-prediction-dark")
    assert notebook7.widget_errors() == []


def test_the_heat_map_follows_notebook_7_dark_theme(notebook7):
    page = notebook7.page
    switch_to_dark(page)
    widget = page.locator(".hv-monitor").nth(1)
    assert_dark_like_the_notebook(page, widget)
    background = widget.locator(".hv-heat").first.evaluate(
        "(el) => getComputedStyle(el).backgroundColor"
    )
    assert (
        background == colour_of(page, "var(--jp-layout-color1)") and brightness(background) < 3 * 80
    )
    assert all(min(painted_columns(panel)) > 0 for panel in widget.locator(".hv-heat").all())
    notebook7.notebook.screenshot(widget, "notebook7-heatmap-dark")
    assert notebook7.widget_errors() == []


def test_axe_finds_nothing_serious_in_notebook_7_dark(notebook7):
    switch_to_dark(notebook7.page)
    assert "hv-dark" in notebook7.page.locator(".hv-timeline").get_attribute("class")
    assert_accessible(notebook7.page, NOTEBOOK7_WIDGETS)
