"""What a student sees of a check in JupyterLab (and Notebook 7): the card drawn from its output.

A student's copy of assignment 01 (from exercises/, as `hookviz build` made it) with a wrong
answer in every answer cell is run in a real JupyterLab: each check draws a card whose ✗ has the
failure colour and a text mark, with the hint folded behind a closed "Hint"; the saved notebook
keeps the plain text nbval and the grader compare, hint unfolded and sentinel last. Every line
of every card, hints opened, reads at WCAG AA contrast in JupyterLab's light and dark themes,
and in Notebook 7's dark one.
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest
from conftest import open_notebook
from jupyter_ui import JupyterServer

from tests.contrast import text_colour, too_faint
from tests.course.test_exercises_card import wrong_copy

REPO = Path(__file__).resolve().parents[2]
ASSIGNMENT = "01-apply"
NAME = "check_card_01.ipynb"


@pytest.fixture(scope="module")
def checked(chromium, jupyter_server):
    """The wrong copy run top to bottom in JupyterLab, then saved."""
    nbformat.write(wrong_copy(), jupyter_server.root / NAME)
    session = open_notebook(chromium, jupyter_server, NAME)
    try:
        session.notebook.run_all(timeout=240_000)
        session.page.evaluate("() => window.jupyterapp.commands.execute('docmanager:save')")
        session.page.wait_for_function(
            "() => !window.jupyterapp.shell.currentWidget.context.model.dirty", timeout=30_000
        )
        yield session
    finally:
        session.page.context.close()
        jupyter_server.delete_sessions()


def test_a_failed_check_is_a_card_with_its_colour_and_a_text_mark(checked):
    page = checked.page
    cards = page.locator(".jp-OutputArea-output .hv-card")
    checks = sum(
        1
        for cell in nbformat.read(REPO / "exercises" / f"{ASSIGNMENT}.ipynb", as_version=4).cells
        if cell.get("metadata", {}).get("nbgrader", {}).get("grade")
    )
    assert cards.count() == checks, "one card per check cell"
    failed = page.locator(".hv-card li.hv-fail")
    assert failed.count() >= checks, "every check has a ✗ for a wrong answer"
    failed.first.scroll_into_view_if_needed()
    mark = failed.first.locator(".hv-mark")
    assert (
        mark.text_content() == "✗" and mark.is_visible()
    )  # the mark itself, for a reader who cannot tell the colours
    red, green, blue = text_colour(mark)
    assert red > green + 60 and red > blue + 60, (
        f"the ✗ is not drawn in the failure colour: {red, green, blue}"
    )
    passed = page.locator(".hv-card li.hv-pass .hv-mark")
    if passed.count():  # a ✓ beside it is not drawn in the same colour
        assert text_colour(passed.first) != (red, green, blue)
    assert "finished" not in cards.first.text_content(), (
        "the sentinel is for the grader, not the card"
    )


def test_the_hint_is_folded_until_the_student_opens_it(checked):
    details = checked.page.locator(".hv-card li.hv-fail details").first
    details.scroll_into_view_if_needed()
    summary = details.locator("summary").first
    assert summary.inner_text() == "Hint"
    assert details.evaluate("(el) => el.open") is False
    hint = details.locator(":scope > div").first
    assert not hint.is_visible()
    summary.click()
    assert details.evaluate("(el) => el.open") is True
    assert hint.is_visible() and hint.inner_text().strip()


def test_the_saved_output_keeps_the_plain_text_nbval_compares(checked, jupyter_server):
    saved = nbformat.reads((jupyter_server.root / NAME).read_text(encoding="utf-8"), as_version=4)
    for cell in saved.cells:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if not meta.get("grade"):
            continue
        grade_id = meta["grade_id"]
        shown = [o for o in cell.outputs if o.output_type == "display_data"]
        assert len(shown) == 1, f"{grade_id}: one output, the card, not {cell.outputs}"
        text = shown[0].data["text/plain"]
        lines = text.splitlines()
        assert lines[-1] == f"[hookviz] {grade_id}: finished", text
        assert re.search(r"^✗ .*\n(.*\n)?    Hint: ", text, re.M), text
        marks = sum(1 for line in lines if line[:2] in ("✓ ", "✗ ", "○ "))
        card = shown[0].data["text/html"]
        assert card.count('<li class="hv-') == marks, f"{grade_id}: the card and the text differ"


def faint_lines_in(page, theme: str) -> dict[int, list[str]]:
    """Switch the app (JupyterLab or Notebook 7) to ``theme``; every card's lines, hints opened,
    that are below WCAG AA there, by the card's index."""
    light = "true" if theme.endswith("Light") else "false"
    page.evaluate(
        "(theme) => window.jupyterapp.commands.execute('apputils:change-theme', {theme})", theme
    )
    page.wait_for_function(f"() => document.body.dataset.jpThemeLight === '{light}'")
    page.wait_for_function(  # the theme's stylesheet has arrived, not only the attribute
        "(dark) => (getComputedStyle(document.body).getPropertyValue('--jp-layout-color0').trim()"
        " === '#111') === dark",
        arg=light == "false",
    )
    cards = page.locator(".jp-OutputArea-output .hv-card")
    faint, read = {}, 0
    for index in range(cards.count()):
        card = cards.nth(index)
        card.scroll_into_view_if_needed()  # the app lays out only what is near the view
        card.evaluate("(el) => el.querySelectorAll('details').forEach((d) => { d.open = true; })")
        read += len(card.locator("li").all())
        if lines := too_faint(card):
            faint[index] = lines
    assert read, "no card was laid out"
    return faint


@pytest.mark.parametrize("theme", ["JupyterLab Dark", "JupyterLab Light"])
def test_every_line_of_a_card_reads_in_the_light_and_the_dark_theme(checked, theme):
    faint = faint_lines_in(checked.page, theme)
    assert not faint, f"text too faint to read in {theme}: {faint}"


@pytest.fixture(scope="module")
def notebook7_server(tmp_path_factory):
    """``jupyter notebook`` (Notebook 7), as students also start it."""
    server = JupyterServer(tmp_path_factory.mktemp("notebook7-home"), app="notebook").start()
    yield server
    server.stop()


def test_notebook7_draws_the_same_card(chromium, notebook7_server):
    nbformat.write(wrong_copy(), notebook7_server.root / NAME)
    session = open_notebook(chromium, notebook7_server, NAME, ui="notebook")
    try:
        session.notebook.run_all(timeout=240_000)
        failed = session.page.locator(".jp-OutputArea-output .hv-card li.hv-fail").first
        failed.scroll_into_view_if_needed()
        mark = failed.locator(".hv-mark")
        assert mark.text_content() == "✗" and mark.is_visible()
        red, green, blue = text_colour(mark)
        assert red > green + 60 and red > blue + 60, (red, green, blue)
        details = failed.locator("details").first
        details.scroll_into_view_if_needed()  # Notebook 7 lays out only what is in view
        summary = details.locator("summary").first
        summary.wait_for(state="visible")
        assert summary.text_content().strip() == "Hint"
        assert details.evaluate("(el) => el.open") is False
        faint = faint_lines_in(session.page, "JupyterLab Dark")
        assert not faint, f"text too faint to read in Notebook 7's dark theme: {faint}"
    finally:
        session.page.context.close()
        notebook7_server.delete_sessions()
