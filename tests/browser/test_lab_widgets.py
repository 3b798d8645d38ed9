"""The four widgets in JupyterLab 4, driven by a person's keys and clicks in a real Chromium.

One notebook (tests/browser/notebooks/widgets_lab.ipynb, stored without outputs) is opened on
a fresh kernel and run from the menu; the tests then play, click and read it. Everything on
screen therefore came from the kernel: a saved widget state cannot draw what was never saved.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest
from accessibility import assert_accessible, axe_violations
from conftest import open_notebook
from jupyter_ui import NOTEBOOKS

NOTEBOOK = "widgets_lab.ipynb"
BLOG_POSTORDER = ["ab.a", "ab.b", "ab", "cd.c", "cd.d", "cd", "Model"]
BLOG_PREORDER = ["Model", "ab", "ab.a", "ab.b", "cd", "cd.c", "cd.d"]


@pytest.fixture(scope="module")
def lab(chromium, jupyter_server):
    session = open_notebook(chromium, jupyter_server, NOTEBOOK)
    session.notebook.run_all()
    yield session
    session.page.context.close()


def data(locator, name: str) -> str:
    return locator.evaluate(f"(el) => el.dataset.{name}")


def wait_data(lab, locator, name: str, value: str, timeout: float = 10_000) -> None:
    locator.evaluate("(el) => { window.__hvWaitTarget = el; }")
    lab.page.wait_for_function(
        f"(v) => window.__hvWaitTarget.dataset.{name} === v", arg=value, timeout=timeout
    )


def kernel_prints(lab, code: str, expected: str, timeout: float = 10.0) -> str:
    """What ``code`` prints in the kernel, asked again until it is ``expected`` or ``timeout`` s
    passed: ipywidgets holds a model's next change until the kernel answered the one before, so
    after quick keys the last change may still be on its way after any fixed pause."""
    deadline = time.monotonic() + timeout
    while (printed := lab.notebook.execute(code)) != expected and time.monotonic() < deadline:
        lab.page.wait_for_timeout(100)
    return printed


def record_changes(locator, name: str) -> None:
    """Keep the element's data-<name> and every new value it takes, in window.__hvSeen."""
    locator.evaluate(
        """(el, name) => {
            window.__hvSeen = [el.dataset[name]];
            const note = () => {
                const value = el.dataset[name];
                if (window.__hvSeen[window.__hvSeen.length - 1] !== value) window.__hvSeen.push(value);
            };
            new MutationObserver(note).observe(el, { attributes: true, attributeFilter: ['data-' + name] });
        }""",
        name,
    )


def badges(widget) -> list[str]:
    """The visit number shown on each row of the tree, top to bottom."""
    return widget.locator(".hv-badge").evaluate_all("(spans) => spans.map((s) => s.textContent)")


def messages_after_a_pause(lab, at_least: int, timeout: float = 10.0) -> int:
    """Widget messages the page sent, once there are ``at_least`` and a pause has passed for any
    more: Playwright reports a websocket frame some time after the page sent it."""
    deadline = time.monotonic() + timeout
    while lab.comm_messages_sent() < at_least and time.monotonic() < deadline:
        lab.page.wait_for_timeout(50)
    lab.page.wait_for_timeout(300)
    return lab.comm_messages_sent()


def focus(locator) -> None:
    locator.scroll_into_view_if_needed()
    locator.click(position={"x": 4, "y": 4})


def test_the_stored_notebook_has_no_outputs_to_replay():
    notebook = json.loads((NOTEBOOKS / NOTEBOOK).read_text())
    assert all(not cell.get("outputs") for cell in notebook["cells"])
    assert "widgets" not in notebook["metadata"]


def test_run_all_draws_every_widget_from_the_kernel(lab):
    page = lab.page
    assert (
        page.locator(".hv-apply").count() == 2 and page.locator(".hv-monitor").count() == 2
    )  # the table, the heat map
    for kind in ("timeline", "inventory"):
        assert page.locator(f".hv-{kind}").count() == 1
    assert page.get_by_text("Error displaying widget").count() == 0
    # What the kernel knows is what the page shows.
    totals = lab.notebook.execute(
        "print(traversal.total, timeline.total, len(inventory.hooks), monitor.steps)"
    )
    steps, firings, hooks, monitored = totals.split()
    assert (
        page.locator(".hv-apply").first.locator(".hv-status").text_content() == f"step 0 / {steps}"
    )
    assert page.locator(".hv-timeline .hv-status").text_content() == f"firing 0 / {firings}"
    assert data(page.locator(".hv-inventory"), "count") == hooks
    assert data(page.locator(".hv-monitor").first, "steps") == monitored == "40"
    assert lab.errors == []


def test_apply_traversal_plays_post_order_with_no_kernel_message_per_frame(lab):
    widget = lab.page.locator(".hv-apply").first
    focus(widget)
    lab.page.keyboard.press("Home")
    wait_data(lab, widget, "step", "0")
    record_changes(widget, "current")
    before = lab.comm_messages_sent()
    playing = widget.element_handle()
    lab.page.keyboard.press("Space")
    # Any frame before the last, not frame 6 itself: at 8 a second a frame lasts 1/8 s, which a
    # busy machine can skip past between two polls.
    lab.page.wait_for_function("(el) => [1, 2, 3, 4, 5, 6].includes(+el.dataset.step)", arg=playing)
    assert lab.comm_messages_sent() == before  # frames played, nothing sent
    wait_data(lab, widget, "step", "7")
    assert lab.page.evaluate("window.__hvSeen") == ["", *BLOG_POSTORDER]
    assert messages_after_a_pause(lab, before + 1) == before + 1  # the final step, once stopped
    assert lab.notebook.execute("print(traversal.step, repr(traversal.current))") == "7 ''\n"

    lab.page.keyboard.press("ArrowLeft")
    assert data(widget, "current") == "cd"
    widget.get_by_role("button", name="Step back (←)").click()
    assert data(widget, "current") == "cd.d"
    printed = kernel_prints(lab, "print(traversal.step, traversal.current)", "5 cd.d\n")
    assert printed == "5 cd.d\n"
    lab.page.keyboard.press("End")
    assert data(widget, "current") == "Model"
    assert badges(widget) == [
        "7",
        "3",
        "1",
        "2",
        "6",
        "4",
        "5",
    ]  # rows in tree order, numbered post-order
    lab.notebook.execute("traversal.step = 2")
    wait_data(lab, widget, "current", "ab.b")
    printed = widget.locator(".hv-side pre").text_content().strip()
    assert printed == "Function_B.W = 1"
    sent = lab.comm_messages_sent()
    widget.locator(
        ".hv-slider"
    ).evaluate(  # a drag: the slider moves through 4, 5, 6, then is let go
        """(slider) => { for (const v of [4, 5, 6]) { slider.value = v; slider.dispatchEvent(new Event('input')); }
                        slider.dispatchEvent(new Event('change')); }"""
    )
    assert data(widget, "current") == "cd"
    assert messages_after_a_pause(lab, sent + 1) == sent + 1
    assert lab.notebook.execute("print(traversal.step)") == "6\n"
    lab.notebook.execute("traversal.step = 2")
    wait_data(lab, widget, "current", "ab.b")
    lab.page.keyboard.press(
        "ArrowRight"
    )  # fn(ab): both children done first, the heart of post-order
    assert widget.locator(".hv-frame").nth(1).text_content().startswith("ab.apply(fn)children done")
    lab.notebook.screenshot(widget, "apply-traversal")


def test_the_widgets_keys_stay_in_the_widget_and_the_notebooks_keys_still_work(lab):
    widget = lab.page.locator(".hv-apply").first
    focus(widget)
    active = "() => [...document.querySelectorAll('.jp-Notebook .jp-Cell')].findIndex(c => c.classList.contains('jp-mod-active'))"
    cell = lab.page.evaluate(active)
    lab.page.keyboard.press("ArrowDown")  # not the widget's key: JupyterLab selects the next cell
    assert lab.page.evaluate(active) == cell + 1
    focus(widget)
    lab.page.keyboard.press("Home")
    lab.page.keyboard.press(
        "ArrowRight"
    )  # the widget's key: it steps, and the notebook does not move
    assert data(widget, "step") == "1"
    assert lab.page.evaluate(active) == cell


def test_apply_traversal_switches_to_modules_pre_order(lab):
    widget = lab.page.locator(".hv-apply").first
    focus(widget)
    switch = widget.get_by_role(
        "button",
        name="Show the order modules() yields: the module first, then its children (pre-order)",
    )
    assert switch.get_attribute("aria-pressed") == "false"
    switch.click()
    wait_data(lab, widget, "order", "modules")
    seen = []
    for _ in BLOG_PREORDER:
        lab.page.keyboard.press("ArrowRight")
        seen.append(data(widget, "current"))
    assert seen == BLOG_PREORDER
    assert badges(widget) == [
        "1",
        "2",
        "3",
        "4",
        "5",
        "6",
        "7",
    ]  # pre-order numbers follow the tree's rows
    assert kernel_prints(lab, "print(traversal.order, traversal.step)", "modules 7\n") == (
        "modules 7\n"
    )
    assert switch.get_attribute("aria-pressed") == "true"
    widget.get_by_role(
        "button", name="Show the order apply() visits: children first, then the module (post-order)"
    ).click()
    wait_data(lab, widget, "order", "apply")
    assert badges(widget) == [""] * 7 and data(widget, "step") == "0"


def test_a_thousand_module_tree_stays_readable(lab):
    widget = lab.page.locator(".hv-apply").nth(1)
    widget.scroll_into_view_if_needed()
    tree = widget.locator(".hv-tree")
    assert widget.locator(".hv-row").count() == 1000
    visible = widget.locator(".hv-row").evaluate_all(
        "(rows) => rows.filter(r => r.offsetParent !== null).length"
    )
    assert visible <= 20  # subtrees start closed
    focus(widget)
    lab.page.keyboard.press("End")
    wait_data(lab, widget, "step", "1000")
    for _ in range(3):
        lab.page.keyboard.press("ArrowLeft")
    current = widget.locator(".hv-row.hv-current")
    assert current.count() == 1
    counts = widget.locator(".hv-count").evaluate_all("(spans) => spans.map((s) => s.textContent)")
    assert counts.count("111/111 visited") == 8  # finished subtrees fold away, with their count
    tree_box, row_box = tree.bounding_box(), current.bounding_box()
    assert tree_box["height"] <= 440  # the tree scrolls instead of growing
    assert (
        tree_box["y"] <= row_box["y"]
        and row_box["y"] + row_box["height"] <= tree_box["y"] + tree_box["height"]
    )
    lab.notebook.screenshot(widget, "apply-traversal-1000")


def test_hook_monitor_updates_live_while_the_loop_runs(lab):
    widget = lab.page.locator(".hv-monitor").first
    widget.scroll_into_view_if_needed()
    mean_cell = widget.locator("tr[data-path='head.1'] td").nth(4)
    loop_cell = lab.page.locator(".jp-CodeCell").nth(5)
    assert "with monitor:" in loop_cell.text_content()
    loop_cell.locator(".jp-InputArea-prompt").click()
    lab.page.keyboard.press("Shift+Enter")
    seen_steps, seen_means = [], set()
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        busy = "[*]" in loop_cell.locator(".jp-InputPrompt").text_content()
        steps = int(data(widget, "steps"))
        if busy and (not seen_steps or steps != seen_steps[-1]):
            seen_steps.append(steps)
            seen_means.add(mean_cell.text_content())
        if not busy and steps == 80:
            break
        time.sleep(0.05)
    lab.notebook.wait_cells_done()
    assert data(widget, "steps") == "80" and data(widget, "running") == "false"
    live = [s for s in seen_steps if 40 < s < 80]
    assert len(live) >= 3, seen_steps  # several updates arrived while the cell was still running
    assert live == sorted(live)
    assert len(seen_means) >= 2  # and the numbers changed with them
    headings = "|".join(widget.locator(".hv-table th").all_text_contents()) + "\n"
    code = "print(*(c['label'] for c in monitor.table_columns), sep='|')"
    assert kernel_prints(lab, code, headings) == headings  # the table's columns come from Python

    widget.locator("tr[data-path='head.1']").click()
    assert widget.locator(".hv-detail-title").text_content().startswith("head.1")
    lab.page.keyboard.press("ArrowDown")
    assert widget.locator(".hv-detail-title").text_content().startswith("head.2")
    lab.page.keyboard.press("ArrowDown")
    heatmap = widget.locator(".hv-detail .hv-heatmap").first
    assert heatmap.locator(".hv-cell").count() == 10  # head.3's 1×10 logits
    assert kernel_prints(lab, "print(monitor.modules[monitor.selected]['label'])", "head.3\n") == (
        "head.3\n"
    )
    lab.notebook.screenshot(widget, "hook-monitor")

    lab.page.keyboard.press("Space")  # freeze the view: new numbers wait
    assert "view frozen" in widget.locator(".hv-status").text_content()
    lab.notebook.execute(
        "with monitor:\n    for _ in range(3):\n        torch.nn.functional.cross_entropy(net(images), labels).backward()"
    )
    lab.page.wait_for_timeout(300)
    assert data(widget, "steps") == "80"
    lab.page.keyboard.press("Space")
    assert data(widget, "steps") == "83"


def test_hook_timeline_shows_the_forward_hook_after_forward(lab):
    widget = lab.page.locator(".hv-timeline")
    focus(widget)
    lab.page.keyboard.press("Home")
    for _ in range(5):
        lab.page.keyboard.press("ArrowRight")
    assert data(widget, "current") == "ab.a forward"
    explanation = widget.locator(".hv-explain").text_content()
    assert "runs AFTER forward() returned" in explanation
    assert "Its return value replaced the output." in explanation
    assert "It runs after forward() of module ab.a returned (firing 4)." in explanation
    assert widget.locator(".hv-diagram .hv-replaced").count() == 1
    backward_hook = lab.notebook.execute(
        "print([k + 1 for k, f in enumerate(timeline.sequence) if f.kind == 'backward'][0])"
    )
    widget.locator(".hv-list li").nth(int(backward_hook) - 1).click()
    assert "Backward is still running" in widget.locator(".hv-explain").text_content()
    lab.notebook.screenshot(widget, "hook-timeline")


def live_text(widget) -> str:
    """What the widget's live region last announced."""
    return widget.locator("[aria-live='polite']").text_content()


def wait_live(lab, widget, text: str, timeout: float = 5_000) -> None:
    widget.locator("[aria-live='polite']").evaluate("(el) => { window.__hvLive = el; }")
    lab.page.wait_for_function(
        "(t) => window.__hvLive.textContent === t", arg=text, timeout=timeout
    )


def test_apply_traversal_and_the_timeline_announce_each_step(lab):
    traversal = lab.page.locator(".hv-apply").first
    region = traversal.locator("[aria-live='polite']")
    assert region.get_attribute("role") == "status" and region.count() == 1
    box = region.bounding_box()
    assert (
        box["width"] <= 1 and box["height"] <= 1
    )  # for screen readers: the page shows the same already
    focus(traversal)
    lab.page.keyboard.press("Home")
    for _ in range(3):
        lab.page.keyboard.press("ArrowRight")
    wait_live(
        lab, traversal, "visit 3 of 7: ab, Layer_AB"
    )  # keys faster than speech: the latest step
    lab.page.keyboard.press("End")
    wait_live(lab, traversal, "visit 7 of 7: Model")

    # Playing: a few announcements, not one per frame, and the last one is where it stopped.
    lab.page.keyboard.press("Home")
    wait_live(lab, traversal, "apply(): nothing visited yet, 7 visits to step through")
    region.evaluate(
        """(el) => { window.__hvSaid = [];
            new MutationObserver(() => window.__hvSaid.push(el.textContent))
              .observe(el, { childList: true, characterData: true, subtree: true }); }"""
    )
    lab.page.keyboard.press("Space")  # 8 steps a second
    wait_data(lab, traversal, "step", "7")
    wait_live(lab, traversal, "visit 7 of 7: Model")
    said = lab.page.evaluate("window.__hvSaid")
    assert 1 <= len(said) <= 3 and said[-1] == "visit 7 of 7: Model", said

    timeline = lab.page.locator(".hv-timeline")
    focus(timeline)
    lab.page.keyboard.press("Home")
    for _ in range(5):
        lab.page.keyboard.press("ArrowRight")
    total = lab.notebook.execute("print(timeline.total)").strip()
    wait_live(
        lab,
        timeline,
        f"firing 5 of {total}: ab.a, forward hook: runs AFTER forward() returned"
        " (your hook double_output); its return value replaced the output",
    )
    assert data(timeline, "current") == "ab.a forward"


def test_hook_inventory_remove_button_takes_the_hook_off_in_python(lab):
    widget = lab.page.locator(".hv-inventory")
    widget.scroll_into_view_if_needed()
    assert widget.locator("tr.hv-dup").count() == 2
    lab.notebook.screenshot(widget, "hook-inventory")
    copy_id = lab.notebook.execute(
        "print([r['id'] for r in inventory.hooks if not r['first']][0])"
    ).strip()
    widget.locator(f"tr[data-id='{copy_id}']").get_by_role("button").click()
    wait_data(lab, widget, "count", "2")
    assert widget.locator("tr.hv-dup").count() == 0
    assert (
        widget.locator(".hv-inv-status").text_content()
        == f"removed ab.a: forward hook double_output (id {copy_id})"
    )
    assert (
        lab.notebook.execute("print(len(blog.ab.a._forward_hooks), len(hv.list_hooks(blog)))")
        == "1 2\n"
    )

    focus(widget)  # keys: choose the second row (cd's backward hook) and delete it
    lab.page.keyboard.press("ArrowDown")
    lab.page.keyboard.press("Delete")
    wait_data(lab, widget, "count", "1")
    assert lab.notebook.execute("print([h.where for h in hv.list_hooks(blog)])") == "['ab.a']\n"


# -- HookMonitor's heat map: each module's histogram over time -----------------------------------

HEAT_LOOP_CELL = 11  # `with heat:` (the notebook's last cell)


def heat_monitor(lab):
    return lab.page.locator(".hv-monitor").nth(1)


def painted_columns(panel) -> list[int]:
    """Per column of a heat-map panel's canvas, how many of its cells hold a colour."""
    return panel.locator("canvas").evaluate(
        """(canvas) => {
            const { width, height } = canvas;
            const pixels = canvas.getContext('2d').getImageData(0, 0, width, height).data;
            return Array.from({ length: width }, (_, x) => {
                let filled = 0;
                for (let y = 0; y < height; y++) if (pixels[(y * width + x) * 4 + 3] > 0) filled += 1;
                return filled;
            });
        }"""
    )


def colour_of(page, css: str) -> str:
    """What a CSS colour (a JupyterLab variable, say) computes to on this page."""
    return page.evaluate(
        "(css) => { const probe = document.createElement('div'); probe.style.background = css;"
        " document.body.append(probe); const c = getComputedStyle(probe).backgroundColor; probe.remove(); return c; }",
        css,
    )


def brightness(rgb: str) -> int:
    return sum(int(v) for v in rgb[rgb.index("(") + 1 : -1].split(",")[:3])


def test_heat_map_draws_each_modules_histogram_over_time_from_the_kernel(lab):
    widget = heat_monitor(lab)
    widget.scroll_into_view_if_needed()
    view = widget.locator(".hv-heat-view")
    assert data(widget, "view") == "heatmap" and data(widget, "steps") == "120"
    assert widget.locator(".hv-table-panel").is_hidden() and view.is_visible()
    kernel = lab.notebook.execute(
        "h = heat.heatmap\nprint(h['columns'], h['span'], *[p['bins'] for p in h['output']], *[m['label'] for m in heat.modules])"
    ).split()
    columns, span, bins, paths = kernel[0], kernel[1], kernel[2:11], kernel[11:]
    assert (columns, span) == ("60", "2") and data(
        view, "columns"
    ) == columns  # 120 steps, 2 a column
    panels = widget.locator(".hv-heat")
    assert (
        panels.evaluate_all("(figures) => figures.map((f) => f.dataset.path)")
        == paths
        == [str(i) for i in range(9)]
    )
    for i, panel in enumerate(panels.all()):
        painted = painted_columns(panel)
        assert len(painted) == 60 and min(painted) > 0, (
            i,
            painted,
        )  # every step of every module drawn
        assert panel.locator("canvas").evaluate("(c) => c.height") == int(bins[i])
        assert "histogram of its outputs over 120 steps" in panel.locator("canvas").get_attribute(
            "aria-label"
        )
    # The last layer's outputs start squeezed near 0, then spread: more bins in use as it trains.
    last = painted_columns(panels.nth(8))
    assert sum(last[-10:]) > 2 * sum(last[:10]), last
    panel_background = panels.first.evaluate("(el) => getComputedStyle(el).backgroundColor")
    assert (
        panel_background == colour_of(lab.page, "var(--jp-layout-color1)")
        and brightness(panel_background) > 3 * 200
    )
    assert lab.errors == []
    lab.notebook.screenshot(widget, "hook-monitor-heatmap")


def test_heat_map_updates_live_while_the_loop_runs(lab):
    widget = heat_monitor(lab)
    view = widget.locator(".hv-heat-view")
    loop_cell = lab.page.locator(".jp-CodeCell").nth(HEAT_LOOP_CELL)
    assert "with heat:" in loop_cell.text_content()
    loop_cell.locator(".jp-InputArea-prompt").click()
    lab.page.keyboard.press(
        "Control+Enter"
    )  # run in place: Shift+Enter on the last cell would add one
    seen = []
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        busy = "[*]" in loop_cell.locator(".jp-InputPrompt").text_content()
        steps = int(data(view, "steps"))
        if busy and (not seen or steps != seen[-1]):
            seen.append(steps)
        if not busy and steps == 240:
            break
        time.sleep(0.05)
    lab.notebook.wait_cells_done()
    live = [s for s in seen if 120 < s < 240]
    assert len(live) >= 3 and live == sorted(live), seen  # the heat map grew while the cell ran
    assert data(view, "steps") == "240" and data(widget, "running") == "false"
    assert data(view, "columns") == lab.notebook.execute("print(heat.heatmap['columns'])").strip()
    assert min(painted_columns(widget.locator(".hv-heat").first)) > 0


def test_heat_map_is_reached_and_switched_with_the_keyboard(lab):
    widget = heat_monitor(lab)
    view = widget.locator(".hv-heat-view")
    widget.scroll_into_view_if_needed()
    widget.evaluate("(el) => el.focus()")  # as a Tab to the widget would
    lab.page.keyboard.press("g")
    wait_data(lab, view, "signal", "gradient")
    canvas = widget.locator(".hv-heat").nth(3).locator("canvas")
    assert "histogram of its gradients w.r.t. the outputs" in canvas.get_attribute("aria-label")
    assert min(painted_columns(widget.locator(".hv-heat").nth(3))) > 0
    lab.page.keyboard.press("v")
    wait_data(lab, widget, "view", "table")
    assert widget.locator(".hv-table-panel").is_visible() and view.is_hidden()
    lab.page.keyboard.press("ArrowDown")  # the table's own keys still work
    assert widget.locator(".hv-detail-title").text_content().startswith("0")
    lab.page.keyboard.press("Tab")  # the view switch is the first thing the keys reach
    assert (
        active_element(lab.page, "(a) => a.getAttribute('role') + ' ' + a.textContent")
        == "tab Table"
    )
    lab.page.keyboard.press("Tab")
    lab.page.keyboard.press("Enter")
    wait_data(lab, widget, "view", "heatmap")
    assert (
        widget.locator(".hv-heat.hv-selected").get_attribute("data-path") == "0"
    )  # the selection carries over
    assert (
        kernel_prints(
            lab, "print(heat.view, heat.heatmap_signal, heat.selected)", "heatmap gradient 0\n"
        )
        == "heatmap gradient 0\n"
    )
    widget.get_by_role("button", name="Show outputs (G switches)").click()
    wait_data(lab, view, "signal", "output")


# -- Prediction: the answer reaches the page only after the reader commits ----------------------

# Words of the catalogue entries' explanations (hookviz/course/predictions/_examples.toml) that
# appear nowhere else in the notebook: seeing one in the page means the answer is there.
CHOICE_WHY = "comes last"
WORDS_WHY = "is finished first"


def predictions(lab):
    """The three Prediction widgets: clicked, keyed and words, in the notebook's order."""
    return [lab.page.locator(".hv-prediction").nth(i) for i in range(3)]


def page_html(page) -> str:
    return page.evaluate("() => document.body.innerHTML")


def active_element(page, what: str = "(a) => a.dataset.index ?? a.tagName"):
    return page.evaluate(f"() => ({what})(document.activeElement)")


def focus_root(widget) -> None:
    """Give the widget's root the focus, as a Tab from the element before it would."""
    widget.scroll_into_view_if_needed()
    widget.evaluate("(el) => el.focus()")


def test_predictions_render_from_the_kernel_with_nothing_of_the_answer_in_the_page(lab):
    clicked, keyed, words = predictions(lab)
    assert lab.page.locator(".hv-prediction").count() == 3
    for widget in (clicked, keyed, words):
        assert data(widget, "state") == "open"
        assert widget.locator(".hv-verdict").text_content() == ""
        assert "hv-dark" not in widget.get_attribute("class")  # JupyterLab Light, to start with
    html = page_html(lab.page)
    assert CHOICE_WHY not in html and WORDS_WHY not in html and "4 5 2 6 3 1" not in html
    assert clicked.locator(".hv-question code").first.text_content() == "model.apply(fn)"
    assert clicked.get_by_role("button").count() == 4
    assert clicked.get_by_role("button", name="C: ab.a").count() == 1
    assert words.get_by_role("textbox", name="your prediction").count() == 1
    assert words.locator(".hv-verdict").get_attribute("aria-live") == "polite"
    background = clicked.evaluate("(el) => getComputedStyle(el).backgroundColor")
    assert (
        sum(int(v) for v in background[background.index("(") + 1 : -1].split(",")[:3]) > 3 * 200
    )  # light
    # What the kernel holds is what the page shows, and the kernel has not revealed anything.
    assert lab.notebook.execute("print(repr(clicked), repr(words), clicked.why == '')") == (
        "Prediction('example-apply-first': 4 choices) Prediction('example-postorder-numbers': short answer) True\n"
    )
    assert lab.errors == []


def test_clicking_a_prediction_choice_reveals_the_verdict_the_answer_then_why(lab):
    widget = predictions(lab)[0]
    widget.scroll_into_view_if_needed()
    sent = lab.comm_messages_sent()
    widget.get_by_role("button", name="A: Model, the root").click()
    wait_data(lab, widget, "state", "answered")
    assert lab.comm_messages_sent() == sent + 1  # one message: the choice
    verdict = widget.locator(".hv-verdict")
    assert verdict.text_content() == "✗ Not quite: you chose A; the answer is C: ab.a."
    assert verdict.get_attribute("aria-live") == "polite" and data(widget, "correct") == "false"
    chosen, right = widget.locator(".hv-choice").nth(0), widget.locator(".hv-choice").nth(2)
    assert (
        "hv-wrong" in chosen.get_attribute("class")
        and chosen.locator(".hv-mark").text_content() == "✗ your choice"
    )
    assert chosen.get_attribute("aria-label") == "A: Model, the root (your choice, not right)"
    assert right.locator(".hv-mark").text_content() == "✓ answer"
    assert right.get_attribute("aria-label") == "C: ab.a (the right answer)"
    assert widget.locator(".hv-answer").text_content() == "Answer Cab.a"
    why = widget.locator(".hv-why")
    why.get_by_text(CHOICE_WHY).wait_for(state="visible")
    assert why.locator("code").first.text_content() == "apply"
    assert (
        lab.notebook.execute("print(clicked.answered, clicked.correct, clicked.chosen)")
        == "True False 0\n"
    )

    widget.locator(".hv-choice").nth(3).click(
        force=True
    )  # aria-disabled, but a click still lands: it sends nothing
    lab.page.wait_for_timeout(300)
    assert lab.comm_messages_sent() == sent + 1
    assert widget.locator(".hv-choice[aria-disabled='true']").count() == 4
    assert lab.notebook.execute("print(clicked.chosen, repr(clicked))") == (
        "0 Prediction('example-apply-first': 4 choices, answered: not quite)\n"
    )
    lab.page.wait_for_timeout(800)  # the reveal's fade, for the picture
    lab.notebook.screenshot(widget, "prediction")


def test_the_keyboard_alone_answers_a_prediction(lab):
    widget = predictions(lab)[1]
    active_cell = "() => [...document.querySelectorAll('.jp-Notebook .jp-Cell')].findIndex(c => c.classList.contains('jp-mod-active'))"
    focus_root(widget)
    cell = lab.page.evaluate(active_cell)  # the widget's cell, once the widget has the focus
    lab.page.keyboard.press("Tab")
    assert active_element(lab.page) == "0"  # the first choice is a real, focusable button
    seen = []
    for key in (
        "ArrowUp",
        "ArrowUp",
        "ArrowDown",
        "Home",
        "End",
        "ArrowRight",
        "ArrowLeft",
        "ArrowLeft",
    ):
        lab.page.keyboard.press(key)
        seen.append(active_element(lab.page))
    assert seen == ["3", "2", "3", "0", "3", "0", "3", "2"]  # arrows wrap around
    assert lab.page.evaluate(active_cell) == cell  # the notebook did not take the arrows
    assert data(widget, "state") == "open"
    lab.page.keyboard.press("Space")
    wait_data(lab, widget, "state", "answered")
    assert (
        widget.locator("[aria-live='polite']").text_content() == "✓ Right! The answer is C: ab.a."
    )
    assert active_element(lab.page) == "2"  # the focus stays on the choice
    assert lab.notebook.execute("print(keyed.correct, keyed.chosen)") == "True 2\n"


def test_a_short_prediction_is_typed_and_checked_with_enter(lab):
    widget = predictions(lab)[2]
    cells = lab.page.locator(".jp-Notebook .jp-Cell").count()
    focus_root(widget)
    lab.page.keyboard.press("Tab")
    assert active_element(lab.page, "(a) => a.getAttribute('aria-label')") == "your prediction"
    sent = lab.comm_messages_sent()
    lab.page.keyboard.press("Enter")
    assert widget.locator(".hv-note").text_content() == "Write a prediction first."
    assert lab.comm_messages_sent() == sent  # nothing to check yet
    lab.page.keyboard.type("4, 5, 2, 6, 3, 1")
    lab.page.keyboard.press("Enter")
    wait_data(lab, widget, "state", "answered")
    assert lab.comm_messages_sent() == sent + 1
    assert (
        widget.locator("[aria-live='polite']").text_content()
        == "✓ Right! The answer is 4 5 2 6 3 1."
    )
    box = widget.get_by_role("textbox", name="your prediction")
    assert box.input_value() == "4, 5, 2, 6, 3, 1" and box.evaluate("(el) => el.readOnly")
    assert widget.locator(".hv-short .hv-mark").text_content() == "✓ right"
    assert widget.locator(".hv-answer").text_content() == "Answer 4 5 2 6 3 1"
    widget.locator(".hv-why").get_by_text(WORDS_WHY).wait_for(state="visible")
    assert (
        lab.page.locator(".jp-Notebook .jp-Cell").count() == cells
    )  # digits typed were not cell shortcuts
    assert (
        lab.notebook.execute("print(words.correct, repr(words.given))")
        == "True '4, 5, 2, 6, 3, 1'\n"
    )
    lab.page.wait_for_timeout(800)  # the reveal's fade, for the picture
    lab.notebook.screenshot(widget, "prediction-short")


# Every element of every widget that animates or has a transition, as "tag.class".
MOVING = """() => {
    const moving = [];
    for (const el of document.querySelectorAll('.hv-root, .hv-root *')) {
        const style = getComputedStyle(el);
        const durations = style.transitionDuration.split(',').map(parseFloat);
        if (style.animationName !== 'none' || durations.some((d) => d > 0)) {
            moving.push(`${el.tagName.toLowerCase()}.${el.getAttribute('class') || ''}`);
        }
    }
    return [...new Set(moving)];
}"""

# Open or close a subtree of the 1,000-module tree: the transitions it starts in the widget.
TOGGLE_A_SUBTREE = """(caret) => {
    caret.click();
    const root = caret.closest('.hv-root');
    return document.getAnimations().filter((a) => root.contains(a.effect.target)).map((a) => a.constructor.name);
}"""


def test_no_widget_moves_under_reduced_motion(lab):
    caret = (
        lab.page.locator(".hv-apply")
        .nth(1)
        .locator(".hv-node.hv-collapsed > .hv-row .hv-caret")
        .first
    )
    caret.scroll_into_view_if_needed()
    moving = lab.page.evaluate(MOVING)
    assert "svg." in moving and "div.hv-why" in moving, (
        moving
    )  # the caret turns, the reveal fades in
    assert caret.evaluate(TOGGLE_A_SUBTREE) == ["CSSTransition"]
    lab.page.emulate_media(reduced_motion="reduce")
    try:
        assert lab.page.evaluate(MOVING) == []  # in every widget: drawn at once
        assert caret.evaluate(TOGGLE_A_SUBTREE) == []  # the caret jumps to its new angle
        why = predictions(lab)[0].locator(".hv-why")
        assert (
            why.evaluate("(el) => getComputedStyle(el).animationName") == "none"
            and why.is_visible()
        )
        traversal = lab.page.locator(".hv-apply").first
        focus(traversal)
        lab.page.keyboard.press("Home")
        lab.page.keyboard.press("ArrowRight")  # a step is still a step
        assert data(traversal, "current") == "ab.a"
    finally:
        lab.page.emulate_media(reduced_motion="no-preference")


LAB_WIDGETS = {
    "hv-apply": 2,
    "hv-timeline": 1,
    "hv-inventory": 1,
    "hv-monitor": 2,
    "hv-prediction": 3,
}


def test_axe_finds_nothing_serious_in_any_widget_in_the_light_theme(lab):
    """After the tests above played, clicked, removed and answered: the widgets in many states."""
    assert "hv-dark" not in lab.page.locator(".hv-apply").first.get_attribute("class")
    assert_accessible(lab.page, LAB_WIDGETS)
    # The check can fail: a scrolling box that a keyboard cannot reach is reported.
    lab.page.locator(".hv-inventory").evaluate(
        """(root) => root.append(Object.assign(document.createElement('div'), {
            className: 'hv-probe', style: 'height: 20px; overflow: auto', innerHTML: '<p style="height: 80px">x</p>' }))"""
    )
    try:
        assert [v.split(" ")[0] for v in axe_violations(lab.page)] == [
            "scrollable-region-focusable"
        ]
    finally:
        lab.page.locator(".hv-probe").evaluate("(el) => el.remove()")


def test_the_stored_prediction_html_shows_a_collapsed_answer(lab, tmp_path):
    """Save the notebook, export it as nbconvert does for a page without a kernel, and read it."""
    saved = lab.notebook.server.root / NOTEBOOK
    before = saved.stat().st_mtime_ns
    lab.page.evaluate("() => window.jupyterapp.commands.execute('docmanager:save')")
    deadline = time.monotonic() + 15
    while saved.stat().st_mtime_ns == before and time.monotonic() < deadline:
        time.sleep(0.1)
    notebook = json.loads(saved.read_text())
    cell = next(c for c in notebook["cells"] if "clicked = predict(" in "".join(c["source"]))
    data_ = {
        kind: "".join(value)
        if isinstance(value, list)
        else value  # a notebook splits text in lines
        for kind, value in cell["outputs"][-1]["data"].items()
    }
    assert (
        data_["text/plain"] == "Prediction('example-apply-first': 4 choices)"
    )  # as it was displayed
    assert "application/vnd.jupyter.widget-view+json" in data_ and "<details>" in data_["text/html"]
    notebook["metadata"].pop(
        "widgets", None
    )  # no widget state: as GitHub or nbviewer would have it
    exported = tmp_path / "exported.ipynb"
    exported.write_text(json.dumps(notebook))
    subprocess.run(
        [sys.executable, "-m", "nbconvert", "--to", "html", str(exported)],
        check=True,
        capture_output=True,
        timeout=120,
    )
    page = lab.page.context.new_page()
    try:
        page.route("http*://**", lambda route: route.abort())  # offline, like a saved page
        page.goto((tmp_path / "exported.html").as_uri())
        pictures = page.locator(".hvs-prediction")
        assert pictures.count() == 3 and page.locator(".hv-prediction").count() == 0
        first = pictures.first
        assert first.locator("details").evaluate("(d) => d.open") is False
        assert first.locator("ol > li").count() == 4
        assert not first.get_by_text(CHOICE_WHY).is_visible()
        first.locator("summary", has_text="Show the answer").click()
        assert first.get_by_text(CHOICE_WHY).is_visible()
        assert first.locator("details strong").text_content() == "C."
    finally:
        page.close()


def switch_to_dark(page) -> None:
    """Settings > Theme > JupyterLab Dark (the same menu in JupyterLab and Notebook 7)."""
    page.locator(".lm-MenuBar-itemLabel", has_text="Settings").first.click()
    page.locator(".lm-Menu-itemLabel", has_text="Theme").first.hover()
    page.locator(".lm-Menu-itemLabel", has_text="JupyterLab Dark").first.click()
    page.wait_for_function("() => document.body.dataset.jpThemeLight === 'false'", timeout=15_000)
    page.wait_for_timeout(500)  # the theme's stylesheet


def assert_dark_like_the_notebook(page, widget) -> None:
    """The widget follows the notebook's dark theme: class, and JupyterLab's own background."""
    assert "hv-dark" in widget.get_attribute("class")
    background = widget.evaluate("(el) => getComputedStyle(el).backgroundColor")
    lab_background = page.evaluate(
        "() => { const probe = document.createElement('div');"
        " probe.style.background = 'var(--jp-layout-color0)'; document.body.append(probe);"
        " const c = getComputedStyle(probe).backgroundColor; probe.remove(); return c; }"
    )
    assert background == lab_background
    red, green, blue = (int(v) for v in background[background.index("(") + 1 : -1].split(",")[:3])
    assert red + green + blue < 3 * 80  # dark


def test_predictions_follow_jupyterlab_dark_theme(lab):
    switch_to_dark(lab.page)
    for widget in predictions(lab):
        assert_dark_like_the_notebook(lab.page, widget)
        text = widget.locator(".hv-question").evaluate("(el) => getComputedStyle(el).color")
        assert (
            sum(int(v) for v in text[text.index("(") + 1 : -1].split(",")[:3]) > 3 * 180
        )  # light text
    lab.page.wait_for_timeout(800)  # the reveal's fade, for the picture
    lab.notebook.screenshot(predictions(lab)[0], "prediction-dark")
    assert lab.errors == []


def test_widgets_follow_jupyterlab_dark_theme(lab):
    page = lab.page
    switch_to_dark(page)
    for kind in ("apply", "monitor", "timeline", "inventory"):
        widget = page.locator(f".hv-{kind}").first
        assert_dark_like_the_notebook(page, widget)
        lab.notebook.screenshot(widget, f"{kind}-dark")
    assert lab.errors == []


def test_heat_map_follows_jupyterlab_dark_theme(lab):
    page = lab.page
    switch_to_dark(page)
    widget = heat_monitor(lab)
    assert_dark_like_the_notebook(page, widget)
    panel = widget.locator(".hv-heat").first
    background = panel.evaluate("(el) => getComputedStyle(el).backgroundColor")
    assert (
        background == colour_of(page, "var(--jp-layout-color1)") and brightness(background) < 3 * 80
    )
    caption = panel.locator("figcaption").evaluate("(el) => getComputedStyle(el).color")
    assert brightness(caption) > 3 * 180  # light text on the dark panel
    assert min(painted_columns(panel)) > 0
    lab.notebook.screenshot(widget, "monitor-heatmap-dark")
    assert lab.errors == []


def test_axe_finds_nothing_serious_in_any_widget_in_the_dark_theme(lab):
    switch_to_dark(lab.page)
    assert "hv-dark" in lab.page.locator(".hv-apply").first.get_attribute("class")
    assert_accessible(lab.page, LAB_WIDGETS)
