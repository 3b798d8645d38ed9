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


def search_results(tab, query: str) -> list[dict]:
    """The results for ``query``: each one's link, title, snippet and marked words."""
    from urllib.parse import quote

    tab.open(f"search.html?q={quote(query)}")
    tab.page.wait_for_function("document.getElementById('search-status').textContent !== ''")
    return tab.page.locator("#search-results li").evaluate_all(
        """(items) => items.map((li) => ({
            href: li.querySelector('a').getAttribute('href'),
            title: li.querySelector('a').textContent,
            snippet: li.querySelector('p').textContent,
            marked: [...li.querySelectorAll('p mark')].map((m) => m.textContent.toLowerCase()),
        }))"""
    )


@pytest.mark.parametrize(
    ("query", "first_page"),
    [
        ("post-order", "walkthrough/01-module-tree-and-apply.html"),
        ("register_full_backward_hook", "walkthrough/04-backward-hooks.html"),
        ("forward pre-hook", "walkthrough/03-forward-hooks.html"),
    ],
)
def test_the_first_result_is_the_page_that_teaches_it(site_tab, query, first_page):
    results = search_results(site_tab, query)
    assert results, f"nothing found for {query!r}"
    assert results[0]["href"].split("#")[0] == first_page, [r["href"] for r in results[:5]]


def test_every_word_must_match_and_is_highlighted_in_a_snippet_around_it(site_tab):
    results = search_results(site_tab, "hook order")
    assert results and len(results) < 60, f"{len(results)} results: words OR-ed?"
    docs = {d["url"]: d for d in site_tab.page.evaluate("window.HOOKVIZ_SEARCH.docs")}
    for r in results:
        doc = docs[r["href"]]
        text = f"{doc['title']} {doc['page']} {doc['text']}".lower()
        assert "hook" in text and "order" in text, r
        if "order" in doc["text"].lower():  # the snippet is cut around a match, marked
            assert r["marked"], r
    both = [
        r
        for r in results
        if any(m.startswith("hook") for m in r["marked"])
        and any(m.startswith("order") for m in r["marked"])
    ]
    assert len(both) >= len(results) // 2, "snippets seldom show both words"
    status = site_tab.page.locator("#search-status").inner_text()
    assert f"{len(results)} section" in status, status  # a count of results
    # one result per section
    hrefs = [r["href"] for r in results]
    assert len(hrefs) == len(set(hrefs)), hrefs


def test_a_quoted_phrase_matches_only_as_a_phrase(site_tab):
    loose = search_results(site_tab, "full backward hook")
    phrase = search_results(site_tab, '"full backward hook"')
    assert phrase and len(phrase) < len(loose)
    for r in phrase:
        assert "full backward hook" in r["marked"] or "full backward hook" in r["title"].lower(), r


def test_no_code_tokens_or_button_labels_in_the_index(site_tab, built_site):
    site_tab.open("search.html")
    docs = site_tab.page.evaluate("window.HOOKVIZ_SEARCH.docs")
    assert len(docs) > 100
    texts = [d["text"] for d in docs]
    assert not any(t.startswith("Copy") or " Copy def " in t for t in texts)
    assert not any("def print_module ( module )" in t for t in texts)  # tokenised code
    code = "hookviz.course.predictions import predict"  # in a code cell of 01, not in prose
    page = "walkthrough/01-module-tree-and-apply.html"
    assert "predict" in built_site.html(page), f"{page} no longer has that code cell"
    assert not any(code in t for t in texts), "a code cell was indexed"
    urls = [d["url"] for d in docs]
    assert len(urls) == len(set(urls)), "a section is indexed twice"


def test_the_snippet_is_taken_around_the_match(site_tab):
    results = search_results(site_tab, "register_full_backward_hook")
    first = results[0]
    assert "register_full_backward_hook" in first["marked"], first


def test_one_tokeniser_for_words_identifiers_and_hangul(site_tab):
    """search-core.js's tokenize(), as the page runs it: identifiers whole and in parts, and
    Hangul as syllables and syllable pairs (issue 35's Korean pages will need it), so that a
    word finds its inflected forms (등록 in 등록합니다, 훅 in 훅을)."""
    site_tab.open("search.html")
    found = site_tab.page.evaluate(
        """() => {
            const s = window.HookvizSearch;
            const terms = (text) => s.tokenize(text).map((t) => t.term);
            const index = s.buildIndex([
                {url: 'ko.html#a', page: '훅', title: '역전파 훅', text: '훅을 등록합니다. 훅은 역전파 중에 실행됩니다.'},
                {url: 'en.html#b', page: 'hooks', title: 'Backward', text: 'call register_full_backward_hook(fn) first'},
                {url: 'list.html#c', page: '목록', title: '노트북 목록', text: '훅 위생: 훅 위생, 훅 위생, 또 훅 위생'},
                {url: 'hygiene.html#d', page: '과제 4: 훅 위생', title: '뒷정리', text: '핸들을 제거합니다'},
            ]);
            const first = (q) => (s.search(index, q).results[0] || {doc: {}}).doc.url || null;
            return {
                identifier: terms('register_full_backward_hook'),
                hangul: terms('훅을'),
                found: ['등록', '역전파', '훅은', 'backward hook', 'full_backward', '"hook first"', 'nothing', '훅 위생']
                    .map((q) => [q, first(q)]),
            };
        }"""
    )
    assert found["identifier"] == [
        "register_full_backward_hook",
        "register",
        "full",
        "backward",
        "hook",
    ]
    assert found["hangul"] == ["훅", "훅을", "을"]
    assert dict(found["found"]) == {
        "등록": "ko.html#a",
        "역전파": "ko.html#a",
        "훅은": "ko.html#a",
        "backward hook": "en.html#b",
        "full_backward": "en.html#b",
        '"hook first"': None,  # a phrase: "hook(fn) first" has a word between
        "nothing": None,
        "훅 위생": "hygiene.html#d",  # the page named for it, before a section that says it often
    }
