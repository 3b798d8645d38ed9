"""Widgets on a page say what a page can do: nothing about a removal that happened in the
kernel, no Freeze on a recording that has ended, HookMonitor's warnings in view, HookTimeline
in the course's words and across its width, ApplyTraversal's tags in view, a row that jumps to
its visit, and a tree that prints."""

from __future__ import annotations

from contextlib import contextmanager

import pytest

from tests.site import pages
from tests.site.browsing import SiteTab, new_guarded_context

pytestmark = pytest.mark.browser

MONITOR_PAGE = "walkthrough/07-diagnosing-with-hooks.html"
TRAVERSAL_PAGE = "walkthrough/01-module-tree-and-apply.html"


@contextmanager
def tab_with(chromium, built_site, **options):
    context, guard = new_guarded_context(chromium, built_site.root.as_uri() + "/", **options)
    try:
        yield SiteTab(context.new_page(), guard)
    finally:
        context.close()
    guard.assert_clean()


def test_hook_inventory_says_nothing_of_a_removal_made_in_the_kernel(chromium, built_site):
    found = [
        (page, w)
        for page in built_site.walkthrough()
        for w in pages.widgets(built_site.root, page, "hook_inventory")
    ]
    assert found, "no HookInventory on any page"
    assert all(w.state["status"] == "" for _, w in found), [w.state["status"] for _, w in found]
    with tab_with(chromium, built_site) as tab:
        for page in sorted({p for p, _ in found}):
            tab.open(page)
            texts = tab.page.locator(".hv-inventory").all_inner_texts()
            assert texts and not any("removed" in t.lower() for t in texts), (page, texts)


@pytest.mark.parametrize("width", [1280, 375])
def test_hook_monitor_on_a_page_shows_its_warnings_and_offers_no_freeze(
    chromium, built_site, width
):
    with tab_with(chromium, built_site, viewport={"width": width, "height": 900}) as tab:
        tab.open(MONITOR_PAGE)
        monitors = tab.page.locator(".hv-monitor")
        assert monitors.count() >= 1
        for i in range(monitors.count()):
            monitor = monitors.nth(i)
            monitor.scroll_into_view_if_needed()
            assert monitor.get_attribute("data-running") == "false"
            assert not monitor.locator(".hv-freeze").is_visible(), "Freeze on an ended recording"
            assert "freeze" not in monitor.locator(".hv-keys").inner_text().lower()
            if monitor.get_attribute("data-view") != "table":
                continue
            cells = monitor.evaluate(
                """(root) => {
                    const panel = root.querySelector('.hv-table-panel').getBoundingClientRect();
                    return [...root.querySelectorAll('td.hv-c-warnings')].map((td) => {
                        const r = td.getBoundingClientRect();
                        return {text: td.textContent, shown: getComputedStyle(td).display !== 'none',
                                inside: r.right <= panel.right + 1 && r.width > 0};
                    });
                }"""
            )
            assert cells, "no warnings column"
            warned = [c for c in cells if c["text"]]
            assert all(c["shown"] and c["inside"] for c in cells), (width, warned[:3])
            assert warned or i > 0, "07's first monitor flags vanishing gradients"


def test_hook_timeline_speaks_the_course_and_spends_its_width(chromium, built_site):
    found = [
        (page, w)
        for page in built_site.walkthrough()
        for w in pages.widgets(built_site.root, page, "hook_timeline")
    ]
    assert found
    for page, w in found:
        assert "loss" not in w.state["title"] or "sum of the outputs" not in w.state["title"]
        for words, _kind, tooltip in w.state["legend"]:
            assert "_" not in words and tooltip, (page, words)
    with tab_with(chromium, built_site) as tab:
        page = found[0][0]
        tab.open(page)
        timeline = tab.page.locator(".hv-timeline").first
        timeline.scroll_into_view_if_needed()
        legend = timeline.locator(".hv-legend-item").evaluate_all(
            "(items) => items.map((i) => [i.textContent.trim(), i.title])"
        )
        assert ["forward hook", "forward: Module.register_forward_hook"] in legend, legend
        box = timeline.evaluate(
            """(root) => {
                const d = root.querySelector('.hv-diagram');
                const svg = d.querySelector('svg');
                return {box: d.clientWidth, svg: svg.getBoundingClientRect().width,
                        scrolls: d.scrollWidth > d.clientWidth + 1,
                        faint: [...svg.querySelectorAll('.hv-firing')].filter(
                            (g) => Number(getComputedStyle(g).opacity) < 0.9).length};
            }"""
        )
        assert box["scrolls"] or box["svg"] >= 0.9 * box["box"], box
        assert box["faint"] == 0, "before playing, the marks are faint"
        text = timeline.inner_text()
        assert "had already returned at #" not in text


def test_apply_traversal_tags_in_view_rows_jump_and_the_tree_prints(chromium, built_site):
    with tab_with(chromium, built_site, viewport={"width": 375, "height": 900}) as tab:
        tab.open(TRAVERSAL_PAGE)
        widget = tab.page.locator(".hv-apply").filter(has=tab.page.locator(".hv-shared")).first
        widget.scroll_into_view_if_needed()
        outside = widget.evaluate(
            """(root) => {
                const tree = root.querySelector('.hv-tree').getBoundingClientRect();
                return [...root.querySelectorAll('.hv-shared')].filter((tag) => {
                    const r = tag.getBoundingClientRect();
                    return r.right > tree.right || r.width === 0;
                }).length;
            }"""
        )
        assert outside == 0, "a 'shared' tag is cut off by the tree's pane"
        rows = widget.locator(".hv-row")
        last = rows.count() - 1
        rows.nth(last).click()
        path = rows.nth(last).get_attribute("data-path")
        assert widget.get_attribute("data-step") != "0"
        assert widget.get_attribute("data-current") == path, "a row's click did not go there"
        tab.page.emulate_media(media="print")
        empty = widget.evaluate(
            """(root) => [...root.querySelectorAll('.hv-row')].filter(
                (row) => getComputedStyle(row).contentVisibility === 'auto' ||
                         row.getBoundingClientRect().height === 0).length"""
        )
        assert empty == 0, "tree rows are skipped when the page is printed"
