"""A check's feedback: the text nbval and the grader compare, and the card drawn from it."""

from __future__ import annotations

import pytest
from bs4 import BeautifulSoup

from hookviz.course import card

FAILED_LINES = [
    "✓ print_module returns None (a Linear)",
    "✗ each line ends with 30 dashes (the blog's Model)\n"
    "    line 2 of the result is 'x', expected '---'\n"
    "    Hint: print the dashes <after> the module.\n"
    "    More: one print for the module, one for the dashes.\n"
    '    Stuck? checks.hint("print_module") shows code.',
    "○ visit_order is not defined yet",
]
SENTINEL = "[hookviz] check_print_module: finished"


class FakeShell:
    """What card needs of IPython's shell: its events, and a kernel."""

    kernel = object()

    def __init__(self):
        self.registered = []
        self.events = self

    def register(self, event, callback):
        self.registered.append((event, callback))


@pytest.fixture
def in_a_notebook(monkeypatch):
    shell, shown = FakeShell(), []
    monkeypatch.setattr(card, "_shell", lambda: shell)
    monkeypatch.setattr(card, "_pending", [])
    monkeypatch.setattr(card, "_hooked", [])
    monkeypatch.setattr(
        "IPython.display.display", lambda data, raw=False: shown.append((data, raw))
    )
    return shell, shown


def test_outside_a_notebook_every_line_prints_at_once(monkeypatch, capsys):
    monkeypatch.setattr(card, "_shell", lambda: None)
    card.say(FAILED_LINES[0])
    assert capsys.readouterr().out == FAILED_LINES[0] + "\n"
    card.show(SENTINEL)
    assert capsys.readouterr().out == SENTINEL + "\n"


def test_in_a_notebook_the_lines_wait_for_the_sentinel_and_go_out_as_one_card(
    in_a_notebook, capsys
):
    shell, shown = in_a_notebook
    for lines in FAILED_LINES:
        card.say(lines)
    assert shown == [] and capsys.readouterr().out == ""
    card.show(SENTINEL)
    [(data, raw)] = shown
    assert raw is True
    assert data["text/plain"] == "\n".join([*FAILED_LINES, SENTINEL])  # as print() gave it
    assert data["text/html"] == card.card_html(FAILED_LINES)
    assert [event for event, _ in shell.registered] == ["post_run_cell"]


def test_a_cell_that_stops_before_its_sentinel_still_shows_what_it_said(in_a_notebook):
    shell, shown = in_a_notebook
    card.say(FAILED_LINES[1])
    [(_, after_cell)] = shell.registered
    after_cell()  # the cell raised: IPython runs post_run_cell all the same
    [(data, _)] = shown
    assert data["text/plain"] == FAILED_LINES[1] and "finished" not in data["text/plain"]
    after_cell()  # nothing said since: nothing shown again
    assert len(shown) == 1


def test_a_sentinel_with_nothing_said_through_checks_prints_as_before(in_a_notebook, capsys):
    _, shown = in_a_notebook
    card.show(SENTINEL)
    assert shown == [] and capsys.readouterr().out == SENTINEL + "\n"


def test_the_card_marks_each_verdict_in_colour_and_text_and_folds_the_hint():
    soup = BeautifulSoup(card.card_html(FAILED_LINES), "html.parser")
    items = soup.select(".hv-card > ul > li")
    assert [item["class"] for item in items] == [["hv-pass"], ["hv-fail"], ["hv-todo"]]
    assert [item.select_one(".hv-mark").get_text() for item in items] == ["✓", "✗", "○"]
    failed = items[1]
    hint = failed.select_one("details")
    assert hint.summary.get_text() == "Hint" and not hint.has_attr("open")
    assert "print the dashes <after> the module." in hint.get_text()  # escaped, then read back
    assert hint.select_one("details > summary").get_text() == "Hint"
    more = hint.select_one("details details")
    assert more.summary.get_text() == "More" and "one print" in more.get_text()
    assert "Stuck?" not in hint.get_text()  # the way out is never folded away
    assert "Stuck? checks.hint" in failed.select_one(".hv-muted").get_text()
    assert "line 2 of the result" in failed.get_text()
    assert "<after>" not in card.card_html(FAILED_LINES)  # the student's text is escaped


def test_the_card_is_the_same_for_the_same_lines():
    assert card.card_html(FAILED_LINES) == card.card_html(list(FAILED_LINES))


def test_a_note_is_drawn_as_a_note_not_a_verdict():
    """A correct earlier answer stood in (course/upstream.py): the card says so, muted, and a
    screen reader hears it as a note; the ✓ after it is drawn as before."""
    lines = ["ⓘ checked with a correct hook, since yours has a ✗ above", FAILED_LINES[0]]
    soup = BeautifulSoup(card.card_html(lines), "html.parser")
    note, passed = soup.select("li")
    assert note["class"] == ["hv-note", "hv-muted"]
    assert note.get_text().startswith("ⓘnote: checked with a correct hook"), note.get_text()
    assert passed["class"] == ["hv-pass"]
