"""The system's preferences reach the widgets on a page without JupyterLab: light or dark
(the page and every widget with theme 'auto'), and reduced motion (no animation at all)."""

from __future__ import annotations

import pytest

from tests.site.browsing import tab_with

pytestmark = pytest.mark.browser

PAGE = "walkthrough/01-module-tree-and-apply.html"


def luminance(css_colour: str) -> float:
    """Relative luminance (0 black, 1 white) of an rgb()/rgba() colour from getComputedStyle."""
    red, green, blue = (float(c) / 255 for c in css_colour.split("(")[1].rstrip(")").split(",")[:3])

    def linear(c: float) -> float:
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

    return 0.2126 * linear(red) + 0.7152 * linear(green) + 0.0722 * linear(blue)


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_the_page_and_its_widgets_follow_the_systems_scheme(chromium, built_site, scheme):
    with tab_with(chromium, built_site, color_scheme=scheme) as tab:
        tab.open(PAGE)
        roots = tab.page.evaluate(
            """() => [...document.querySelectorAll('.hv-root')].map((root) => [
                root.classList.contains('hv-dark'), getComputedStyle(root).color])"""
        )
        background = tab.page.evaluate("() => getComputedStyle(document.body).backgroundColor")
    assert roots, f"no widget on {PAGE}"
    dark = scheme == "dark"
    assert [is_dark for is_dark, _ in roots] == [dark] * len(roots)
    assert (luminance(background) < 0.2) == dark, background
    for _, text in roots:  # the widgets' text stands out from the page: light on dark, or dark
        assert (luminance(text) > 0.4) == dark, text


def test_reduced_motion_reveals_a_prediction_at_once(chromium, built_site):
    with tab_with(chromium, built_site, reduced_motion="reduce") as tab:
        tab.open("walkthrough/00-start-here.html")
        tab.skip_to_content()
        tab.tab_to(".hv-root.hv-prediction")
        tab.press("ArrowDown", "Enter")
        tab.page.wait_for_selector('.hv-prediction[data-state="answered"]')
        running = tab.page.evaluate(
            "() => document.getAnimations().map((a) => a.animationName || a.constructor.name)"
        )
    assert running == []
