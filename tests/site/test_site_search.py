"""The site's offline search: "post-order" finds walkthrough 01, from the search page's address,
from the header's box (Enter), and with "/" to reach the box by keyboard."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.browser

QUERY = "post-order"
EXPECTED = "walkthrough/01-module-tree-and-apply.html"


def result_links(tab) -> list[str]:
    """The results' link targets as absolute URLs, once the results are listed."""
    tab.page.wait_for_selector("#search-results li a", timeout=10_000)
    return tab.page.locator("#search-results li a").evaluate_all(
        "(links) => links.map((a) => a.href)"
    )


def assert_finds_notebook_01(tab) -> None:
    links = result_links(tab)
    pages = [link.split("#")[0] for link in links]
    assert tab.guard.base + EXPECTED in pages, f"no result on {EXPECTED}: {links}"


def test_search_page_lists_notebook_01_for_post_order(site_tab):
    site_tab.open(f"search.html?q={QUERY}")
    assert_finds_notebook_01(site_tab)
    status = " ".join(site_tab.page.locator("#search-status").inner_text().split())
    assert QUERY in status and "match" in status, status
    # the result is a link that works: to its page, and to the section it names
    link = site_tab.page.locator(f'#search-results li a[href*="{EXPECTED}"]').first
    href = link.evaluate("(a) => a.href")
    link.focus()
    site_tab.press("Enter")
    site_tab.page.wait_for_url(href)
    site_tab.widgets_ready()
    fragment = href.partition("#")[2]
    if fragment:
        assert site_tab.page.locator(f'[id="{fragment}"]').count() == 1, href


def test_slash_focuses_the_header_search_and_enter_searches(site_tab):
    site_tab.open("walkthrough/00-start-here.html")
    site_tab.page.locator("body").focus()
    site_tab.press("/")
    assert site_tab.focused("#search-box"), "the / key did not focus the header's search box"
    site_tab.page.keyboard.type(QUERY)
    site_tab.press("Enter")
    site_tab.page.wait_for_url(f"**/search.html?q={QUERY}")
    assert site_tab.page.url == f"{site_tab.guard.base}search.html?q={QUERY}"
    assert_finds_notebook_01(site_tab)
    assert site_tab.page.locator("#search-box").input_value() == QUERY  # kept in the box
