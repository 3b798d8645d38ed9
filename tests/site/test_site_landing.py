"""The landing page sells the course (a picture of a widget at the top, in both themes;
summaries that are sentences), every notebook page says how to run it in JupyterLab, and the
build prints no warning from the kernels it starts."""

from __future__ import annotations

import pytest

from hookviz.site.article import summary_sentences
from tests.site.pages import soup


@pytest.mark.parametrize(
    ("paragraph", "summary"),
    [
        ("It shows the order. In this notebook:", "It shows the order."),
        ("Write three functions:", "Write three functions."),
        ("A first. B: c. D.", "A first. B: c. D."),
        ("Two   spaces\nand a line.", "Two spaces and a line."),
    ],
)
def test_a_summary_is_sentences(paragraph, summary):
    assert summary_sentences(paragraph) == summary


def test_the_landing_page_opens_with_a_widget_for_both_themes(built_site):
    page = soup(built_site.root, "index.html")
    hero = page.select_one("article figure.site-hero")
    assert hero is not None, "no picture at the top of the landing page"
    first = page.select_one("article").find(["figure", "h2"])
    assert first is hero, "the picture is not before the first section"
    dark = hero.select_one("source[media='(prefers-color-scheme: dark)']")
    img = hero.select_one("img")
    for src in (dark["srcset"], img["src"]):
        assert (built_site.root / src).is_file(), src
    assert img["alt"].startswith("The ApplyTraversal widget")


def test_syllabus_summaries_are_sentences(built_site):
    page = soup(built_site.root, "index.html")
    summaries = [p.get_text(" ", strip=True) for p in page.select(".site-syllabus p")]
    assert len(summaries) >= 10
    stops = [s for s in summaries if not s.endswith((".", "?", "!", ")"))]
    assert not stops, f"summaries that are not sentences: {stops}"


def test_run_in_jupyterlab_says_how(built_site):
    for page in built_site.walkthrough():
        run = soup(built_site.root, page).select_one("details.site-run")
        assert run is not None, f"{page}: no Run in JupyterLab"
        steps = run.get_text("\n")
        notebook = "notebooks/" + page.removeprefix("walkthrough/").replace(".html", ".ipynb")
        assert "git clone https://github.com/" in steps and "make lab" in steps, steps
        assert notebook in steps, f"{page}: the steps do not name {notebook}"


def test_the_build_prints_no_kernel_warning(built_site):
    if built_site.log is None:
        pytest.skip("a site built earlier (HOOKVIZ_TEST_SITE): its build log is not at hand")
    assert "without encryption" not in built_site.log
    assert "WARNING" not in built_site.log, built_site.log[-2000:]
