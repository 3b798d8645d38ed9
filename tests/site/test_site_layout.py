"""Every page as a reader sees it on a phone and on a desktop: no page wider than a 375-px or a
320-px screen (a full-page screenshot is exactly the screen's width), code blocks that stay in
their column at 1280 px, figures whose text is readable at 100% zoom, and no figure that is a
white slab on the dark theme."""

from __future__ import annotations

import io
from contextlib import contextmanager

import pytest

from tests.site.browsing import SiteTab, new_guarded_context

pytestmark = pytest.mark.browser

PHONES = (375, 320)
MIN_FIGURE_TEXT_PX = 9.0  # the smallest figure text, as shown at 1280 px and 100% zoom
WHITE = 0.92  # a figure whose mean luminance is above this is a white slab


@contextmanager
def tab_with(chromium, built_site, **options):
    context, guard = new_guarded_context(chromium, built_site.root.as_uri() + "/", **options)
    try:
        yield SiteTab(context.new_page(), guard)
    finally:
        context.close()
    guard.assert_clean()


def too_wide(tab, width: int) -> list[str]:
    """The elements that stick out past the screen's right edge (what makes a page scroll)."""
    return tab.page.evaluate(
        """(width) => [...document.querySelectorAll('body *')]
            .filter((e) => e.getBoundingClientRect().right > width + 1)
            .filter((e) => !e.parentElement.closest('[data-scrolls]'))
            .slice(0, 5)
            .map((e) => `${e.tagName.toLowerCase()}.${e.className} ` +
                        `(${Math.round(e.getBoundingClientRect().right)} px): ` +
                        (e.textContent || '').trim().slice(0, 50))""",
        width,
    )


@pytest.mark.parametrize("width", PHONES)
def test_no_page_scrolls_sideways_on_a_phone(chromium, built_site, width, tmp_path):
    from PIL import Image

    over = {}
    with tab_with(chromium, built_site, viewport={"width": width, "height": 740}) as tab:
        for page in built_site.pages:
            tab.open(page)
            scroll = tab.page.evaluate("document.documentElement.scrollWidth")
            shot = Image.open(io.BytesIO(tab.page.screenshot(full_page=True)))
            if scroll > width or shot.width != width:
                over[page] = (scroll, shot.width, too_wide(tab, width))
    assert not over, f"pages wider than {width} px (scroll width, screenshot width, why): {over}"


def test_outputs_keep_their_columns_and_scroll_in_their_box(chromium, built_site):
    page = "walkthrough/07-diagnosing-with-hooks.html"
    with tab_with(chromium, built_site, viewport={"width": 375, "height": 740}) as tab:
        tab.open(page)
        outputs = tab.page.evaluate(
            """() => [...document.querySelectorAll('pre.site-out')].map((pre) => ({
                wraps: getComputedStyle(pre).whiteSpace !== 'pre',
                scrolls: pre.scrollWidth > pre.clientWidth,
                overflow: getComputedStyle(pre).overflowX,
                focusable: pre.tabIndex === 0,
            }))"""
        )
    assert outputs, f"{page} has no printed output"
    assert not any(o["wraps"] for o in outputs), "a printed output wraps its lines"
    scrolling = [o for o in outputs if o["scrolls"]]
    assert scrolling, "no output of 07 is wider than a phone: the test no longer tests anything"
    assert all(o["overflow"] == "auto" and o["focusable"] for o in scrolling), scrolling


def test_code_blocks_stay_in_the_article_at_desktop_width(chromium, built_site):
    with tab_with(chromium, built_site) as tab:  # 1280 px
        for page in ("instructors.html", "conventions.html", "reference.html"):
            tab.open(page)
            out = tab.page.evaluate(
                """() => {
                    const main = document.querySelector('main').getBoundingClientRect();
                    return [...document.querySelectorAll('main pre')]
                        .filter((pre) => pre.getBoundingClientRect().right > main.right + 1)
                        .map((pre) => pre.textContent.slice(0, 40));
                }"""
            )
            assert not out, f"{page}: code blocks run past the article: {out}"
            unstyled = tab.page.evaluate(
                """() => [...document.querySelectorAll('main pre')].filter((pre) =>
                    getComputedStyle(pre).overflowX !== 'auto' &&
                    getComputedStyle(pre).whiteSpace === 'pre').length"""
            )
            assert unstyled == 0, f"{page}: {unstyled} code blocks neither wrap nor scroll"


def figures_on(tab) -> list[dict]:
    return tab.page.evaluate(
        """() => [...document.querySelectorAll('figure.site-figure img')].map((img, i) => {
            img.dataset.figure = String(i);
            return {
                i,
                themed: img.closest('.site-themed') !== null,
                fontPx: Number(img.dataset.fontPx || 0),
                shown: img.getBoundingClientRect().width,
                natural: Number(img.getAttribute('width') || img.naturalWidth),
            };
        })"""
    )


def test_figure_text_is_readable_on_every_page(chromium, built_site):
    measured = 0
    with tab_with(chromium, built_site) as tab:  # 1280 px, 100% zoom
        for page in built_site.pages:
            tab.open(page)
            for figure in figures_on(tab):
                if page.startswith("walkthrough/"):  # drawn by the build: both themes, measured
                    assert figure["themed"], f"{page}: figure {figure['i']} has one rendering"
                if not figure["themed"]:
                    continue
                shown_px = figure["fontPx"] * figure["shown"] / figure["natural"]
                assert shown_px >= MIN_FIGURE_TEXT_PX, (
                    f"{page}: figure {figure['i']}'s smallest text shows at {shown_px:.1f} px"
                )
                measured += 1
    assert measured >= 5, f"only {measured} figures measured"


def mean_luminance(png: bytes) -> float:
    from PIL import Image, ImageStat

    grey = Image.open(io.BytesIO(png)).convert("L")
    return ImageStat.Stat(grey).mean[0] / 255


def test_no_figure_is_a_white_slab_in_the_dark_theme(chromium, built_site):
    checked = 0
    with tab_with(chromium, built_site, color_scheme="dark") as tab:
        for page in built_site.pages:
            tab.open(page)
            for figure in figures_on(tab):
                img = tab.page.locator(f'img[data-figure="{figure["i"]}"]')
                img.scroll_into_view_if_needed()
                light = mean_luminance(img.screenshot())
                assert light < WHITE, f"{page}: figure {figure['i']} is white on the dark page"
                checked += 1
    assert checked >= 5, f"only {checked} figures checked"
    with tab_with(chromium, built_site, color_scheme="light") as tab:  # and the test can fail
        tab.open("walkthrough/07-diagnosing-with-hooks.html")
        first = tab.page.locator("figure.site-themed img").first
        first.scroll_into_view_if_needed()
        assert mean_luminance(first.screenshot()) > 0.6, "the light rendering is not light"
