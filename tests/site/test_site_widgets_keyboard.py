"""Each kind of widget on its page, by keyboard alone, with no kernel and nothing from outside
the site: the traversal plays and steps, the timeline steps to the end, a prediction is
committed, the monitor is explored and scrubbed, the inventory says removing needs a kernel."""

from __future__ import annotations

import pytest

from tests.site.browsing import axe_violations
from tests.site.pages import plain, tree_labels, widgets

# From file:// only: the stricter origin (a null origin; the host imports each module from a
# blob: URL), and the keys are the same once a widget is mounted; test_site_offline.py mounts
# every widget from both origins.
pytestmark = [pytest.mark.browser, pytest.mark.parametrize("site_base", ["file"], indirect=True)]

WALKTHROUGH = "walkthrough/"


def data(tab, selector: str, index: int = 0) -> dict:
    """The dataset of the ``index``-th element matching ``selector``."""
    return tab.page.evaluate(
        "([sel, i]) => ({ ...document.querySelectorAll(sel)[i].dataset })", [selector, index]
    )


def wait_data(tab, selector: str, key: str, value: str, index: int = 0, timeout: float = 5000):
    """Wait until that element's data-``key`` is ``value``; a clear message when it never is."""
    try:
        tab.page.wait_for_function(
            "([sel, i, key, value]) => document.querySelectorAll(sel)[i].dataset[key] === value",
            arg=[selector, index, key, value],
            timeout=timeout,
        )
    except Exception as error:  # Playwright's timeout: say what the widget shows instead
        shown = data(tab, selector, index).get(key)
        raise AssertionError(
            f"{selector}[{index}] data-{key} stayed {shown!r}, not {value!r}"
        ) from error


def text(tab, selector: str) -> str:
    """The text of the first element matching ``selector``, white space folded."""
    return plain(tab.page.locator(selector).first.inner_text())


def wait_text(tab, selector: str, expected: str, timeout: float = 5000) -> None:
    """Wait until ``selector``'s text (white space folded) is ``expected``."""
    try:
        tab.page.wait_for_function(
            "([sel, want]) => { const el = document.querySelector(sel);"
            " return el && el.textContent.split(/\\s+/).filter(Boolean).join(' ') === want; }",
            arg=[selector, expected],
            timeout=timeout,
        )
    except Exception as error:
        raise AssertionError(
            f"{selector} says {text(tab, selector)!r}, not {expected!r}"
        ) from error


def first_page_with(built_site, name: str) -> str:
    for page in built_site.walkthrough():
        if widgets(built_site.root, page, name):
            return page
    raise AssertionError(f"no walkthrough page has a {name} widget")


# -- ApplyTraversal ------------------------------------------------------------------------------


def test_apply_traversal_plays_steps_jumps_and_switches_order_by_keyboard(site_tab, built_site):
    page = WALKTHROUGH + "01-module-tree-and-apply.html"
    traversal = widgets(built_site.root, page, "apply_traversal")[0]
    labels = tree_labels(traversal.state["nodes"])
    apply_order = [labels[visit[0]] for visit in traversal.state["visits"]]
    pre_order = [labels[i] for i in traversal.state["preorder"]]
    assert apply_order != pre_order  # else switching the order would show nothing
    root = ".hv-root.hv-apply"
    site_tab.open(page)
    site_tab.skip_to_content()
    site_tab.tab_to(root)
    assert data(site_tab, root) == {"step": "0", "order": "apply", "current": ""}

    widget = site_tab.page.locator(root).first
    site_tab.press(" ")  # play: it advances by itself
    site_tab.page.wait_for_function(
        "(sel) => Number(document.querySelector(sel).dataset.step) >= 2", arg=root, timeout=5000
    )
    assert widget.locator(".hv-play").get_attribute("aria-pressed") == "true"
    site_tab.press(" ")  # pause: it stays where it is
    assert widget.locator(".hv-play").get_attribute("aria-pressed") == "false"
    paused_at = data(site_tab, root)["step"]
    site_tab.page.wait_for_timeout(1000 / traversal.state["speed"] + 300)  # longer than a step
    assert data(site_tab, root)["step"] == paused_at

    site_tab.press("Home")
    wait_data(site_tab, root, "step", "0")
    for step, label in enumerate(apply_order, start=1):  # → steps through apply()'s post-order
        site_tab.press("ArrowRight")
        assert data(site_tab, root) == {"step": str(step), "order": "apply", "current": label}
        assert text(site_tab, f"{root} .hv-status") == f"step {step} / {len(apply_order)}"
    site_tab.press("ArrowRight")  # past the end: stays there
    assert data(site_tab, root)["step"] == str(len(apply_order))
    last = f"visit {len(apply_order)} of {len(apply_order)}: {apply_order[-1]}"
    wait_text(site_tab, f"{root} [role=status][aria-live=polite]", last)  # the live region
    site_tab.press("ArrowLeft")
    assert data(site_tab, root)["current"] == apply_order[-2]
    site_tab.press("Home")
    assert data(site_tab, root)["step"] == "0"
    site_tab.press("End")
    assert data(site_tab, root)["step"] == str(len(apply_order))

    site_tab.tab_to(f"{root} .hv-order-modules")  # the order switch, by Tab and Enter
    site_tab.press("Enter")
    wait_data(site_tab, root, "order", "modules")
    assert data(site_tab, root)["step"] == "0"
    assert widget.locator(".hv-order-modules").get_attribute("aria-pressed") == "true"
    for step, label in enumerate(pre_order, start=1):  # the arrows still step, from the switch
        site_tab.press("ArrowRight")
        assert data(site_tab, root) == {"step": str(step), "order": "modules", "current": label}
    site_tab.tab_to(f"{root} .hv-order-apply", backwards=True)
    site_tab.press("Enter")
    wait_data(site_tab, root, "order", "apply")
    assert data(site_tab, root)["step"] == "0"


# -- HookTimeline --------------------------------------------------------------------------------


def test_every_hook_timeline_steps_through_every_firing_to_the_end(site_tab, built_site):
    pages = [p for p in built_site.walkthrough() if widgets(built_site.root, p, "hook_timeline")]
    assert pages
    root = ".hv-root.hv-timeline"
    for page in pages:
        timeline = widgets(built_site.root, page, "hook_timeline")[0]
        lanes = timeline.state["lanes"]
        firings = timeline.state["firings"]
        if not timeline.state["show_torch"]:
            firings = [f for f in firings if f[2] == "user"]
        expected = [f"{lanes[lane][0]} {kind}" for lane, kind, *_ in firings]
        site_tab.open(page)
        site_tab.skip_to_content()
        site_tab.tab_to(root)
        assert data(site_tab, root) == {"step": "0", "current": ""}, page
        for step, current in enumerate(expected, start=1):
            site_tab.press("ArrowRight")
            shown = site_tab.page.evaluate(
                """(sel) => { const root = document.querySelector(sel);
                    const items = [...root.querySelectorAll('.hv-list .hv-item')];
                    return [root.dataset.step, root.dataset.current,
                            root.querySelector('.hv-status').textContent,
                            items.findIndex((li) => li.classList.contains('hv-now'))]; }""",
                root,
            )
            assert shown == [str(step), current, f"firing {step} / {len(expected)}", step - 1], page
        site_tab.press("ArrowRight")  # the end: nothing further
        assert data(site_tab, root)["step"] == str(len(expected)), page
        assert site_tab.page.locator(f"{root} .hv-list .hv-future").count() == 0, page
        site_tab.press("Home")
        assert data(site_tab, root)["step"] == "0", page
        site_tab.press(" ")  # and it plays
        site_tab.page.wait_for_function(
            "(sel) => Number(document.querySelector(sel).dataset.step) >= 1", arg=root
        )
        site_tab.press(" ")


# -- Prediction ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("page", "index", "right"),
    [
        (WALKTHROUGH + "00-start-here.html", 0, False),
        (WALKTHROUGH + "01-module-tree-and-apply.html", 1, True),
    ],
    ids=["a-wrong-answer", "the-right-answer"],
)
def test_a_prediction_committed_by_keys_shows_verdict_answer_and_why(
    site_tab, built_site, page, index, right
):
    prediction = widgets(built_site.root, page, "prediction")[index]
    choices = prediction.state["choices"]
    answer = prediction.extras["answer_index"]
    pick = answer if right else next(i for i in range(len(choices)) if i != answer)
    why = plain(prediction.extras["why"])
    root = ".hv-root.hv-prediction"
    site_tab.open(page)
    widget = site_tab.page.locator(root).nth(index)
    assert why[:60] not in plain(widget.inner_text())  # nothing of the answer shows before
    site_tab.skip_to_content()
    site_tab.tab_to(root, index)
    site_tab.press("ArrowDown")  # into the choices
    for _ in range(pick):
        site_tab.press("ArrowDown")
    assert widget.locator(f'.hv-choice[data-index="{pick}"]').evaluate(
        "(el) => el === document.activeElement"
    )
    assert data(site_tab, root, index)["state"] == "open"
    site_tab.press("Enter")
    wait_data(site_tab, root, "state", "answered", index)
    assert data(site_tab, root, index)["correct"] == str(right).lower()
    letter = "ABCDEFGHIJ"[answer]
    verdict = plain(widget.locator(".hv-verdict").inner_text())
    right_text = plain(choices[answer])
    if right:
        assert verdict == f"✓ Right! The answer is {letter}: {right_text}."
    else:
        assert verdict == (
            f"✗ Not quite: you chose {'ABCDEFGHIJ'[pick]}; the answer is {letter}: {right_text}."
        )
    assert right_text in plain(widget.locator(".hv-answer").inner_text())
    assert why in plain(widget.locator(".hv-why").inner_text())
    assert "hv-chosen" in widget.locator(f'.hv-choice[data-index="{pick}"]').get_attribute("class")
    assert "hv-right" in widget.locator(f'.hv-choice[data-index="{answer}"]').get_attribute("class")
    site_tab.press("ArrowDown", "Enter")  # only the first answer counts
    assert data(site_tab, root, index)["correct"] == str(right).lower()
    assert plain(widget.locator(".hv-verdict").inner_text()) == verdict
    assert axe_violations(site_tab.page, root) == []  # answered, too


# -- HookMonitor ---------------------------------------------------------------------------------


def column_text(column: int, span: int, steps: int) -> str:
    """What the heat map's readout says for a column: the recorded steps it holds."""
    first = column * span
    last = min(first + span, steps) - 1
    return f"steps {first}–{last} of {steps}" if last > first else f"step {first} of {steps}"


def test_hook_monitor_selects_switches_views_and_scrubs_the_recorded_steps(site_tab, built_site):
    page = first_page_with(built_site, "hook_monitor")
    monitor = next(
        w
        for w in widgets(built_site.root, page, "hook_monitor")
        if w.state["view"] == "table" and w.state["gradients"] and w.state["heatmap"]
    )
    index = widgets(built_site.root, page, "hook_monitor").index(monitor)
    modules = [m["label"] for m in monitor.state["modules"]]
    heat = monitor.state["heatmap"]
    columns, span, steps = heat["columns"], heat.get("span") or 1, heat["steps"]
    root = ".hv-root.hv-monitor"
    site_tab.open(page)
    widget = site_tab.page.locator(root).nth(index)
    site_tab.skip_to_content()
    site_tab.tab_to(root, index)
    assert data(site_tab, root, index)["view"] == "table"
    headings = widget.locator(".hv-table th").evaluate_all(
        "(ths) => ths.map((th) => th.textContent)"
    )
    assert headings == [c["label"] for c in monitor.state["table_columns"]]  # from the state

    def selected() -> list[str]:
        return widget.locator('tr.hv-mrow[aria-selected="true"]').evaluate_all(
            "(rows) => rows.map((r) => r.dataset.path)"
        )

    assert selected() == []
    site_tab.press("ArrowDown")  # ↑/↓ choose a module; its details show
    assert selected() == [modules[0]]
    site_tab.press("ArrowDown", "ArrowDown", "ArrowUp")
    assert selected() == [modules[1]]
    assert plain(widget.locator(".hv-detail-title").inner_text()).startswith(modules[1])
    site_tab.press("End")
    assert selected() == [modules[-1]]
    site_tab.press("Home")
    assert selected() == [modules[0]]

    site_tab.press("v")  # V: the heat map
    wait_data(site_tab, root, "view", "heatmap", index)
    box = widget.locator(".hv-heat-view")
    assert box.is_visible() and not widget.locator(".hv-table-panel").is_visible()
    assert box.get_attribute("data-signal") == "output"
    painted = sum(1 for panel in heat["output"] if panel)
    assert widget.locator('.hv-heat[data-filled="true"]').count() == painted > 0
    site_tab.press("g")  # G: gradients
    assert box.get_attribute("data-signal") == "gradient"
    assert box.locator('.hv-signal[data-signal="gradient"]').get_attribute("aria-pressed") == "true"
    assert widget.locator('.hv-heat[data-filled="true"]').count() == sum(
        1 for panel in heat["gradient"] if panel
    )

    readout = widget.locator(".hv-heat-cursor")
    assert readout.inner_text() == ""  # no cursor until a key moves it
    for column in range(columns):  # → through every column of recorded steps
        site_tab.press("ArrowRight")
        assert (box.get_attribute("data-cursor"), readout.inner_text()) == (
            str(column),
            column_text(column, span, steps),
        )
    site_tab.press("ArrowRight")  # the last column holds the last recorded step
    assert box.get_attribute("data-cursor") == str(columns - 1)
    assert readout.inner_text().split(" of ")[0].endswith(str(steps - 1))
    site_tab.press("ArrowLeft")
    assert readout.inner_text() == column_text(columns - 2, span, steps)
    site_tab.press("Home")
    assert readout.inner_text() == column_text(0, span, steps)
    site_tab.press("End")
    assert readout.inner_text() == column_text(columns - 1, span, steps)
    assert axe_violations(site_tab.page, root) == []  # the heat map of gradients, too
    site_tab.press("g", "v")  # back to outputs, back to the table
    assert box.get_attribute("data-signal") == "output"
    wait_data(site_tab, root, "view", "table", index)


# -- HookInventory -------------------------------------------------------------------------------


def test_hook_inventory_lists_its_hooks_and_says_removing_needs_a_kernel(site_tab, built_site):
    page = first_page_with(built_site, "hook_inventory")
    hooks = widgets(built_site.root, page, "hook_inventory")[0].state["hooks"]
    assert hooks
    root = ".hv-root.hv-inventory"
    site_tab.open(page)
    site_tab.skip_to_content()
    site_tab.tab_to(root)
    widget = site_tab.page.locator(root).first
    assert data(site_tab, root)["count"] == str(len(hooks))
    rows = widget.locator("tr.hv-hook")
    assert rows.count() == len(hooks)
    for i, hook in enumerate(hooks):
        row = plain(rows.nth(i).inner_text())
        assert hook["name"] in row and hook["kind"] in row, row
    removers = widget.locator(
        "button.hv-remove, .hv-remove-all, .hv-remove-duplicates, .hv-refresh"
    )
    assert removers.count() == len(hooks) + 3
    assert removers.evaluate_all("(buttons) => buttons.every((b) => b.disabled)")
    note = plain(widget.locator(".hv-kernel-note").inner_text())
    assert widget.locator(".hv-kernel-note").is_visible() and "needs a running kernel" in note
    site_tab.press("ArrowDown", "Delete")  # the key that removes in a kernel: nothing removed
    wait_text(site_tab, f"{root} .hv-inv-status", f"Not removed. {note}")
    assert rows.count() == len(hooks)
    site_tab.press("r")
    wait_text(site_tab, f"{root} .hv-inv-status", f"Not refreshed. {note}")
