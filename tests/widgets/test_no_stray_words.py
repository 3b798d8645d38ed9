"""No widget-visible English left in the front end outside the message tables.

A scan of the string literals in hookviz/widgets/static/*.js (and host.js's stand-ins, which
answer for Python on the site): a literal that reads as words (two words or more, a word with
a space beside it as a text node has, a capitalised word, or anything given as a text, title,
placeholder, aria-label or button label) must be a message key, code (``fn(self)``), a class
name, or on the small allow-list below.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from hookviz.widgets.base import STATIC

SITE_HOST = STATIC.parents[1] / "site" / "static" / "host.js"

LITERAL = re.compile(r'"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'|`(?:[^`\\]|\\.)*`')
HOLE = re.compile(r"\$\{((?:[^{}]|\{[^{}]*\})*)\}")  # a template literal's ${...}
KEY = re.compile(r"[a-z]+\.[\w/.-]*")  # a message key: t("apply.now")
CODE = re.compile(r"[\w.]*\([\w ]*\)[\w.]*")  # fn(), apply(fn), .apply(fn): code, not words
CLASS_NAME = re.compile(r"(?<!\S)hv-[\w-]*")
VISIBLE = re.compile(
    r'(?:\btext|\btitle|\bplaceholder|\blabel|"aria-label")\s*:\s*$|\bbutton\(\s*$'
)
# Shown as they are in every language: the two orders' names (code), and what is not text.
ALLOWED = {"apply()", "modules()", "http://www.w3.org/2000/svg", "(prefers-color-scheme: dark)"}
KEY_NAMES = {"Enter", "Home", "End", "Escape", "Backspace", "Delete", "Tab"}


def code_of(text: str) -> str:
    """The file without its comments (whole-line ``//`` ones and those after code)."""
    return "\n".join(
        "" if line.lstrip().startswith("//") else re.sub(r"\s//\s.*$", "", line)
        for line in text.splitlines()
    )


def literals(code: str) -> Iterator[tuple[str, str, str]]:
    """(literal, its text with template holes blanked, the code just before it), the literals
    inside a template's holes included."""
    for match in LITERAL.finditer(code):
        literal = match.group()
        body = literal[1:-1]
        if literal.startswith("`"):
            for hole in HOLE.findall(body):
                yield from literals(hole)
            body = HOLE.sub(" ", body)
        yield literal, body, code[max(0, match.start() - 40) : match.start()]


def reads_as_words(body: str, before: str) -> bool:
    """True when a literal's text is something a person reads, not a key, class or name."""
    body = CLASS_NAME.sub("", body)
    text = body.strip()
    if not re.search(r"[A-Za-z]{2}", text) or text in ALLOWED:
        return False
    if KEY.fullmatch(text) or CODE.fullmatch(text) or text in KEY_NAMES:
        return False
    words = [w for w in body.split() if re.search(r"[A-Za-z]{2}", w) and not w.endswith(":")]
    return (
        len(words) >= 2
        or bool(re.match(r"\s+[A-Za-z]", body) or re.search(r"[A-Za-z]\s+$", body))
        or bool(re.fullmatch(r"[A-Z][a-z]+", text))
        or bool(VISIBLE.search(before))
    )


def stray_words(code: str) -> list[str]:
    return [lit for lit, body, before in literals(code_of(code)) if reads_as_words(body, before)]


@pytest.mark.parametrize("path", sorted(STATIC.glob("*.js")), ids=lambda p: p.name)
def test_no_widget_shows_english_that_is_not_in_the_tables(path: Path):
    assert stray_words(path.read_text(encoding="utf-8")) == []


def test_the_sites_stand_ins_take_their_words_from_the_widgets_table():
    """host.js answers for Python on the site: its statuses come from the widget's table; the
    English beside them is only for a state stored before widgets had tables."""
    code = code_of(SITE_HOST.read_text(encoding="utf-8"))
    for key in (
        "common.status_unknown",
        "common.status_failed",
        "prediction.status_answered",
        "inventory.kernel_note",
    ):
        assert f'"{key}"' in code


@pytest.mark.parametrize(
    "code",
    [
        'h("span", { class: "hv-muted", text: "not seen yet" })',
        'button("Play", () => player.toggle())',
        'h("label", {}, follow, " follow")',
        "const say = `visit ${step} of ${total}: ${what}`;",
        'h("b", {}, `${x ? " more to come" : ""}`)',
        'const title = "Table";',
        's("svg", { role: "img", "aria-label": "histogram" })',
    ],
)
def test_the_scan_finds_english_words(code: str):
    assert stray_words(code) != []


@pytest.mark.parametrize(
    "code",
    [
        'h("span", { class: "hv-muted hv-follow", text: t("apply.follow") })',
        'const cls = `hv-item ${f.who === "user" ? "hv-user" : "hv-torch-item"}`;',
        'h("b", { text: `fn(${n.label})` })',
        'model.on("change:step", onStep); // a comment with words in it',
        'const keys = { Enter: submit, "aria-label": label };',
        'title: t(shownPlaying ? "common.pause_title" : "common.play_title"),',
    ],
)
def test_the_scan_lets_keys_classes_and_code_pass(code: str):
    assert stray_words(code) == []
