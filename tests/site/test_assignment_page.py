"""An assignment's page shows a check as a student reads it: the specification, the packed code
shortened, and what a correct answer gets, drawn as the card a notebook draws; read from the
page's HTML, and in Chromium as a reader sees it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from bs4 import BeautifulSoup

from hookviz.course.format.notebooks import read_notebook
from hookviz.site.article import Links, notebook_article
from hookviz.site.assignment import exercise_for_page, shorten_packed_code
from tests.contrast import text_colour, too_faint
from tests.site.browsing import tab_with

ROOT = Path(__file__).resolve().parents[2]
EXERCISES = sorted((ROOT / "exercises").glob("*.ipynb"))


def test_only_a_checks_packed_code_is_shortened():
    source = 'from x import y\nchecks.run_check("eNrLSM3JyVcozy/KSQEAGgQEXQ==")\nrun_check("keep")'
    assert shorten_packed_code(source) == 'from x import y\nchecks.run_check(…)\nrun_check("keep")'
    assert shorten_packed_code("checks.run_check(code)") == "checks.run_check(code)"


@pytest.mark.parametrize("exercise", EXERCISES, ids=lambda p: p.stem)
def test_an_assignment_page_shows_the_specification_not_the_packed_code(exercise: Path):
    source, page = f"exercises/{exercise.name}", f"assignments/{exercise.stem}.html"
    links = Links({source: page}, "https://github.com/o/n/blob/main", ROOT)
    notebook = exercise_for_page(exercise, ROOT / "solutions" / exercise.name)
    soup = BeautifulSoup(notebook_article(notebook, {}, source, page, links).html, "html.parser")
    code = "\n".join(block.get_text() for block in soup.select(".site-input"))
    assert "What it checks" in code
    assert "checks.run_check(…)" in code
    assert re.search(r"[A-Za-z0-9+/=]{60,}", code) is None, "a packed payload is on the page"
    # Copy gives the cell that runs: the exercise's own check cell, payload and all
    sources = {cell.source for cell in read_notebook(exercise).cells if cell.cell_type == "code"}
    copies = [button["data-copy"] for button in soup.select(".site-copy[data-copy]")]
    assert copies and all(copy in sources and 'checks.run_check("' in copy for copy in copies)
    shortened = [
        block for block in soup.select(".site-input") if "checks.run_check(…)" in block.get_text()
    ]
    assert len(copies) == len(shortened)
    examples = soup.select(".site-outputs:has(.site-example-label)")
    assert examples, "no check shows what a correct answer gets"
    for example in examples:  # the card, with ✓ marks only, and no sentinel line on it
        card = example.select_one(".hv-card")
        assert card is not None, example.get_text()[:200]
        assert card.select(".hv-pass .hv-mark") and not card.select(".hv-fail, .hv-todo")
        assert "finished" not in card.get_text()


@pytest.mark.browser
@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_in_a_browser_a_check_reads_as_its_specification_then_a_card(chromium, built_site, scheme):
    """What a reader sees of each check on every assignment page, English and Korean: the packed
    code as one short line and no payload; under it the card a correct answer gets, each ✓ in the
    pass colour with its mark as text, and every line at WCAG AA contrast in light and dark."""
    pages = [page for page in built_site.pages if "assignments/" in page]
    assert len(pages) == 2 * len(EXERCISES), pages
    with tab_with(chromium, built_site, color_scheme=scheme) as tab:
        for page in pages:
            tab.open(page)
            main = tab.page.locator("main")
            shown = main.inner_text()
            assert "checks.run_check(…)" in shown, page
            assert re.search(r"[A-Za-z0-9+/=]{60,}", shown) is None, f"{page}: a payload shows"
            if not page.startswith("ko/"):
                assert "What it checks" in shown, page
            cards = main.locator(".hv-card")
            assert cards.count() >= 1, f"{page}: no card"
            for index in range(cards.count()):
                card = cards.nth(index)
                mark = card.locator(".hv-pass .hv-mark").first
                mark.scroll_into_view_if_needed()
                assert mark.is_visible() and mark.text_content() == "✓", page
                red, green, blue = text_colour(mark)
                assert green > red + 40 and green > blue, f"{page}: ✓ drawn {red, green, blue}"
                assert not (faint := too_faint(card)), f"{page} ({scheme}): {faint}"
