"""A check's card as Colab shows it, drawn from what this Python's kernel prints.

Colab itself cannot be driven from here (no Google account, no internet). What it does with an
output can be: it draws an output's HTML in a frame of its own, with none of JupyterLab's CSS
variables, over a page whose theme may follow the system's scheme or not. So assignment 01, with
a wrong answer in every answer cell, runs in a kernel of the Python running the tests (`make
test-colab`: ipywidgets and anywidget pinned like Colab), and each check's card, alone on a page,
is read in Chromium on a light or dark page under a light or dark system scheme: every text at
WCAG AA contrast against what is behind it, the ✗ in the failure colour with its mark as text,
the hint folded until opened, no sentinel. tests/browser does the same in JupyterLab and
Notebook 7, and tests/site on the site's pages.
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import nbformat
import pytest

from tests.contrast import text_colour, too_faint
from tests.course.test_exercises_mutants import CATALOGUES

pytestmark = [pytest.mark.notebook, pytest.mark.browser]

REPO = Path(__file__).resolve().parents[2]
ASSIGNMENT = "01-apply"
# (the page's background, the system's colour scheme): Colab's theme "adaptive" follows the
# system; "light" and "dark" do not.
HOSTS = {
    "light-page-light-system": ("#ffffff", "light"),
    "dark-page-dark-system": ("#383838", "dark"),
    "dark-page-light-system": ("#383838", "light"),
    "light-page-dark-system": ("#ffffff", "dark"),
}


def wrong_copy(assignment: str = ASSIGNMENT) -> nbformat.NotebookNode:
    """The student's notebook with the catalogue's first wrong answer in each answer cell."""
    notebook = nbformat.read(REPO / "exercises" / f"{assignment}.ipynb", as_version=4)
    wrong: dict[str, str] = {}
    for answer in importlib.import_module(CATALOGUES[assignment]).ANSWERS:
        if answer.kind == "wrong":
            wrong.setdefault(answer.exercise, answer.source)
    for cell in notebook.cells:
        grade_id = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
        if grade_id in wrong:
            cell.source = wrong[grade_id]
    return notebook


@pytest.fixture(scope="module")
def cards() -> dict[str, dict]:
    """Each check cell's one output (its mime bundle) after a top-to-bottom run, by grade id."""
    from nbclient import NotebookClient

    notebook = wrong_copy()
    NotebookClient(
        notebook,
        timeout=300,
        kernel_name="python3",
        resources={"metadata": {"path": str(REPO / "exercises")}},
    ).execute()  # nbclient shuts the kernel down, even when a cell fails
    shown = {}
    for cell in notebook.cells:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if meta.get("grade"):
            outputs = [o for o in cell.outputs if o.output_type == "display_data"]
            assert len(outputs) == 1, f"{meta['grade_id']}: {cell.outputs}"
            shown[meta["grade_id"]] = outputs[0].data
    assert shown, "the assignment has no check cell"
    return shown


@pytest.fixture(scope="module")
def chromium():
    from tests.browser.jupyter_ui import launch_chromium
    from tests.site.browsing import playwright_driver

    with playwright_driver() as playwright:
        browser = launch_chromium(playwright)
        try:
            yield browser
        finally:
            browser.close()


def frame(card_html: str, background: str) -> str:
    """An output frame as Colab makes one: the output's HTML alone in a page of its own."""
    return (
        '<!doctype html><html><head><meta charset="utf-8"></head>'
        f'<body style="background:{background};margin:8px">{card_html}</body></html>'
    )


def test_the_text_is_the_grader_s_and_the_card_leaves_the_sentinel_out(cards):
    for grade_id, data in cards.items():
        assert data["text/plain"].splitlines()[-1] == f"[hookviz] {grade_id}: finished"
        assert "finished" not in re.sub(r"<[^>]+>", "", data["text/html"])


@pytest.mark.parametrize("host", HOSTS)
def test_every_line_of_the_card_reads_on_the_page(cards, chromium, host):
    background, scheme = HOSTS[host]
    context = chromium.new_context(color_scheme=scheme, viewport={"width": 800, "height": 900})
    try:
        page = context.new_page()
        faint = {}
        for grade_id, data in cards.items():
            page.set_content(frame(data["text/html"], background))
            page.evaluate(
                "() => document.querySelectorAll('.hv-card details').forEach((d) => { d.open = true; })"
            )
            card = page.locator(".hv-card")
            failed = card.locator("li.hv-fail .hv-mark").first
            assert failed.text_content() == "✗" and failed.is_visible(), grade_id
            red, green, blue = text_colour(failed)
            assert red > green + 60 and red > blue + 60, (grade_id, (red, green, blue))
            if lines := too_faint(card):
                faint[grade_id] = lines
        assert not faint, f"text too faint to read on a {host}: {faint}"
    finally:
        context.close()


def test_the_hint_is_folded_until_the_student_opens_it(cards, chromium):
    context = chromium.new_context(viewport={"width": 800, "height": 900})
    try:
        page = context.new_page()
        for grade_id, data in cards.items():
            page.set_content(frame(data["text/html"], "#ffffff"))
            details = page.locator(".hv-card li.hv-fail details").first
            summary = details.locator("summary").first
            assert summary.inner_text() == "Hint", grade_id
            hint = details.locator(":scope > div").first
            assert details.evaluate("(el) => el.open") is False and not hint.is_visible()
            summary.click()
            assert hint.is_visible() and hint.inner_text().strip(), grade_id
    finally:
        context.close()
