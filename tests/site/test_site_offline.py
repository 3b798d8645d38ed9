"""Every page of the built site in Chromium, from file:// and served under a sub-path: nothing
is fetched from outside the site, no script fails, and every widget mounts from its state."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.browser

WIDGET_NAMES = {
    "apply_traversal",
    "hook_timeline",
    "hook_monitor",
    "hook_inventory",
    "prediction",
    "compiled_timeline",
}


def test_the_guard_counts_a_request_outside_the_site(site_tab):
    """The check itself: a fetch outside the site is aborted and counted (then forgotten here)."""
    site_tab.open("index.html")
    base = site_tab.guard.base
    outside = (
        "file:///etc/hostname" if base.startswith("file:") else base.replace("/hookviz/", "/x")
    )
    for url in (outside, "https://example.com/a.js"):
        site_tab.page.evaluate("(url) => fetch(url).then(() => 'loaded', () => 'refused')", url)
        assert url in site_tab.guard.outside
    site_tab.guard.forget()  # and the console errors Chromium logged for the refused fetches


def test_every_page_loads_with_nothing_from_outside_and_no_script_error(site_tab, built_site):
    seen, problems = {}, []
    for page in built_site.pages:
        seen[page] = site_tab.open(page)
        assert site_tab.page.title(), f"{page} has no title"
        problems += [f"{page}: {problem}" for problem in site_tab.guard.new_problems()]
    assert not problems, "\n".join(problems)
    with_widgets = {page for page, ready in seen.items() if ready is not None}
    assert set(built_site.walkthrough()) <= with_widgets


def test_every_widget_on_every_walkthrough_page_mounts(site_tab, built_site):
    kinds = set()
    for page in built_site.walkthrough():
        ready = site_tab.open(page)
        state = site_tab.page.evaluate(
            """() => [...document.querySelectorAll('.hv-site-widget')].map((el) => ({
                name: el.dataset.widget,
                mounted: el.dataset.hvMounted || null,
                error: el.dataset.hvError === undefined ? null : el.dataset.hvError,
                roots: el.querySelectorAll('.hv-root').length,
                fallback: el.querySelectorAll('.hv-site-fallback').length,
            }))"""
        )
        assert state, f"{page} has no widget"
        assert ready == {"mounted": len(state), "failed": 0}, f"{page}: {state}"
        for i, widget in enumerate(state):
            where = f"{page}, widget {i + 1} ({widget['name']})"
            assert widget["error"] is None, f"{where}: {widget['error']}"
            assert widget["mounted"] == "true", where
            assert (widget["roots"], widget["fallback"]) == (1, 0), f"{where}: {widget}"
            kinds.add(widget["name"])
        # the page's JSON says how many there are: the host found them all
        assert len(state) == built_site.html(page).count('class="hv-site-widget"'), page
    assert kinds == WIDGET_NAMES  # every kind of widget is on some page
