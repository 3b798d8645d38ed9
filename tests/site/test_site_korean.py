"""The Korean site, site/ko/: the same pages as the English one, with the English pages'
section ids; a language switch on every page that keeps the reader's section (and works
without JavaScript); a search of its own that finds Korean words inside Korean words; and
Korean lines that break between words."""

from __future__ import annotations

import posixpath
from urllib.parse import quote

import pytest

from tests.site.browsing import new_guarded_context
from tests.site.pages import soup

KO = "ko/"


def english_pages(built_site) -> list[str]:
    return [p for p in built_site.pages if not p.startswith(KO)]


def article_ids(built_site, page: str) -> list[str]:
    return [h["id"] for h in soup(built_site.root, page).select("article :is(h1, h2, h3)[id]")]


@pytest.mark.slow
def test_every_course_page_has_its_korean_page_in_korean(built_site):
    english_only = {"instructors.html", "conventions.html", "reference.html"}
    for page in english_pages(built_site):
        if page in english_only:
            continue
        assert KO + page in built_site.pages, f"no Korean page for {page}"
        html = soup(built_site.root, KO + page).html
        assert html["lang"] == "ko", f"{KO + page}: <html lang={html.get('lang')}>"
    assert soup(built_site.root, "index.html").html["lang"] == "en"
    # the reference stays English: the Korean pages link to it
    nav = soup(built_site.root, "ko/walkthrough/01-module-tree-and-apply.html").select("nav a")
    assert "../../reference.html" in [a["href"] for a in nav]


@pytest.mark.slow
def test_korean_pages_keep_the_english_section_ids(built_site):
    walkthrough = built_site.walkthrough()
    assert len(walkthrough) >= 9
    for page in [*walkthrough, "index.html", "assignments/01-apply.html"]:
        english, korean = article_ids(built_site, page), article_ids(built_site, KO + page)
        assert english and korean == english, f"{page}: {set(english) ^ set(korean)}"


@pytest.mark.slow
def test_every_page_switches_to_the_same_page_in_the_other_language(built_site):
    for page in built_site.pages:
        links = soup(built_site.root, page).select("a.site-language")
        assert len(links) == 1, f"{page}: {len(links)} language links"
        target = posixpath.normpath(posixpath.join(posixpath.dirname(page), links[0]["href"]))
        assert target in built_site.pages, f"{page}: the switch leads to {target}"
        if page.startswith(KO):
            assert target in (page.removeprefix(KO), *english_pages(built_site)), (page, target)
        elif KO + page in built_site.pages:
            assert target == KO + page, (page, target)
        else:  # an English-only page (a guide, the reference): to the Korean landing page
            assert target == "ko/index.html", (page, target)


@pytest.mark.browser
def test_the_switch_keeps_the_section_and_works_without_javascript(site_tab, chromium):
    page = "walkthrough/01-module-tree-and-apply.html"
    anchor = article_ids_in_tab(site_tab, page)[2]
    site_tab.open(f"{page}#{anchor}")
    site_tab.page.locator("a.site-language").click()
    site_tab.page.wait_for_url(f"**/{KO}{page}#{anchor}")
    assert site_tab.page.evaluate("document.documentElement.lang") == "ko"
    assert site_tab.page.locator(f'[id="{anchor}"]').count() == 1
    site_tab.page.locator("a.site-language").click()  # and back
    site_tab.page.wait_for_url(f"**/{page}#{anchor}")
    # without JavaScript, a plain link to the same page
    context, guard = new_guarded_context(chromium, site_tab.guard.base, java_script_enabled=False)
    try:
        tab = context.new_page()
        tab.goto(site_tab.guard.base + page)
        tab.locator("a.site-language").click()
        tab.wait_for_url(f"**/{KO}{page}")
        assert tab.locator("html").get_attribute("lang") == "ko"
    finally:
        context.close()
    guard.assert_clean()


def article_ids_in_tab(tab, page: str) -> list[str]:
    tab.open(page)
    return tab.page.locator("article :is(h2, h3)[id]").evaluate_all("(hs) => hs.map((h) => h.id)")


def korean_results(tab, query: str) -> list[str]:
    tab.open(f"{KO}search.html?q={quote(query)}")
    tab.page.wait_for_function("document.getElementById('search-status').textContent !== ''")
    return tab.page.locator("#search-results li a").evaluate_all(
        "(links) => links.map((a) => a.getAttribute('href'))"
    )


@pytest.mark.browser
@pytest.mark.parametrize(
    ("query", "first_page"),
    [
        ("후위 순회", "ko/walkthrough/01-module-tree-and-apply.html"),
        ("역전파 훅", "ko/walkthrough/04-backward-hooks.html"),
    ],
)
def test_korean_search_ranks_the_page_that_teaches_it_first(site_tab, query, first_page):
    results = korean_results(site_tab, query)
    assert results, f"nothing found for {query!r}"
    # the page's links are relative to ko/search.html, the index's URLs to the site's root
    assert posixpath.normpath(KO + results[0].split("#")[0]) == first_page, results[:5]


@pytest.mark.browser
def test_korean_search_finds_words_inside_words_in_its_own_index(site_tab):
    results = korean_results(site_tab, "전파")  # in 순전파 and 역전파
    docs = site_tab.page.evaluate("window.HOOKVIZ_SEARCH.docs")
    assert docs and all(d["url"].startswith(KO) for d in docs), "not the Korean index"
    assert len(results) >= 5
    marked = site_tab.page.locator("#search-results mark").all_inner_texts()
    assert "전파" in marked
    assert korean_results(site_tab, "훅") and korean_results(site_tab, "훅을")
    status = site_tab.page.locator("#search-status").inner_text()
    assert "훅을" in status and "절이" in status, status  # said in Korean


@pytest.mark.browser
def test_korean_text_breaks_between_words(site_tab):
    site_tab.open(f"{KO}walkthrough/01-module-tree-and-apply.html")
    style = site_tab.page.evaluate(
        """() => { const p = getComputedStyle(document.querySelector('article .site-md p'));
                   return [p.wordBreak, p.overflowWrap]; }"""
    )
    assert style == ["keep-all", "anywhere"], style
    site_tab.open("walkthrough/01-module-tree-and-apply.html")
    english = site_tab.page.evaluate(
        "() => getComputedStyle(document.querySelector('article .site-md p')).wordBreak"
    )
    assert english == "normal"
