"""What a check cell shows: its lines, kept while the cell runs, then shown once as a card.

The text is exactly what the checks say, line for line: nbval and the grader compare it (the
output's ``text/plain``), and a terminal or nbgrader's feedback shows it. The card
(``text/html``) draws the same lines for a person: each ✓, ✗ or ○ with its colour (the mark
itself is what a colour-blind reader goes by), the problem under its claim, the hint folded
behind "Hint", a sharper one behind "More", the code behind "Code", and "Stuck?" last. The
sentinel line ends the text and is left off the card: it is for the grader.

Outside IPython (a script, pytest) every line is printed at once, as before.
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field
from typing import Any

from .conventions import FAIL_MARK as FAILED
from .conventions import NOT_DONE_MARK as NOT_DONE
from .conventions import NOTE_MARK as NOTE
from .conventions import PASS_MARK as PASSED
from .wording import every_language, words

__all__ = ["card_html", "say", "show"]

_MARKS = {PASSED: "pass", FAILED: "fail", NOT_DONE: "todo", NOTE: "note"}
_pending: list[str] = []  # what the running cell said, not shown yet
_hooked: list[Any] = []  # the shell whose post_run_cell shows what a failed cell said


def _shell() -> Any:
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - hookviz's students have IPython
        return None
    shell = get_ipython()
    return shell if shell is not None and getattr(shell, "kernel", None) is not None else None


def say(text: str) -> None:
    """One line (or block) of the cell's feedback: kept for the card in a notebook, else printed."""
    shell = _shell()
    if shell is None:
        print(text)
        return
    if not _hooked or _hooked[0] is not shell:
        # A cell that stops before its sentinel (an error in it) still shows what it said.
        shell.events.register("post_run_cell", _after_cell)
        _hooked[:] = [shell]
    _pending.append(text)


def show(last_line: str | None = None) -> None:
    """Show what the cell said as one output, ``last_line`` (the sentinel's) ending its text."""
    lines, _pending[:] = list(_pending), []
    text = "\n".join(lines + ([last_line] if last_line else []))
    if not text:
        return
    shell = _shell()
    if shell is None or not lines:  # nothing for a card: the sentinel alone prints, as it did
        print(text)
        return
    from IPython.display import display

    display({"text/plain": text, "text/html": card_html(lines)}, raw=True)


def _after_cell(result: Any = None) -> None:
    if _pending:
        show()


# -- the card ------------------------------------------------------------------------------


@dataclass
class _Item:
    """One ✓, ✗ or ○ and what follows it, or a plain block of text."""

    kind: str  # "pass", "fail", "todo", "note" or "text"
    head: str
    fields: list[tuple[str, list[str]]] = field(default_factory=list)  # (label, lines)


_ROLES = ("why", "hint", "more", "code", "stuck")  # a line's label, in every language, by its role


def _labels() -> list[tuple[str, str]]:
    """(a line's prefix, its role) in every language hookviz speaks: "Hint:" and "힌트:" -> hint."""
    return [(text, role) for role in _ROLES for text in every_language(f"label.{role}")]


def _items(lines: list[str]) -> list[_Item]:
    labels = _labels()
    items: list[_Item] = []
    for line in "\n".join(lines).split("\n"):
        if line[:1] in _MARKS and line[1:2] == " ":
            items.append(_Item(_MARKS[line[:1]], line[2:]))
            continue
        if not items or items[-1].kind == "text":  # before any mark: plain text
            if not items:
                items.append(_Item("text", ""))
            items[-1].fields.append(("", [line]))
            continue
        item = items[-1]
        if line.startswith("    "):
            body = line[4:]
            label = next(((text, role) for text, role in labels if body.startswith(text)), None)
            if label is not None:
                rest = body[len(label[0]) :].strip()
                item.fields.append((label[1], [rest] if rest else []))
            elif item.fields and item.fields[-1][0] == "code" and body.startswith("    "):
                item.fields[-1][1].append(body[4:])
            else:
                item.fields.append(("", [body]))
        elif item.fields:  # a hint's text that runs over several lines
            item.fields[-1][1].append(line)
        else:
            item.head += "\n" + line
    return items


# The card carries its own background: a host whose page is dark while the system's scheme is
# light (Colab's dark theme) must not put dark text on a dark page. The ✗ and ○ tints are
# translucent, so they read over JupyterLab's light and dark layouts alike (its *-color3 are
# light in both); on a tint, muted lines take the text's colour. Outside JupyterLab (no --jp-
# variables) the system's scheme picks the colours.
_STYLE = """<style>
.hv-card{font-family:var(--jp-content-font-family,system-ui,sans-serif);font-size:13px;
line-height:1.45;color:var(--jp-content-font-color1,#1f1f1f);background:var(--jp-layout-color0,#fff);
border:1px solid var(--jp-border-color2,#d0d7de);border-radius:6px;padding:4px 6px;margin:2px 0;
max-width:100%;box-sizing:border-box;overflow-wrap:break-word}
.hv-card ul{list-style:none;margin:0;padding:0}
.hv-card li{display:grid;grid-template-columns:1.4em 1fr;column-gap:.3em;padding:2px 0}
.hv-card .hv-mark{font-weight:700;text-align:center}
.hv-card .hv-pass .hv-mark{color:var(--jp-success-color1,#1b7f3a)}
.hv-card .hv-fail .hv-mark{color:var(--jp-error-color1,#c62828)}
.hv-card .hv-todo .hv-mark{color:var(--jp-warn-color1,#a15c00)}
.hv-card .hv-fail{background:rgba(211,47,47,.08);border-radius:4px}
.hv-card .hv-todo{background:rgba(245,124,0,.1);border-radius:4px}
.hv-card .hv-body>div,.hv-card details{margin-top:2px}
.hv-card summary{cursor:pointer;font-weight:600}
.hv-card pre{margin:2px 0;padding:4px 6px;background:var(--jp-layout-color2,#f3f3f3);
border-radius:3px;overflow-x:auto;white-space:pre;font-size:12px}
.hv-card .hv-muted{color:var(--jp-content-font-color2,#555)}
.hv-card :is(.hv-fail,.hv-todo) .hv-muted{color:inherit}
.hv-card .hv-text{white-space:pre-wrap;font-family:var(--jp-code-font-family,monospace);
font-size:12px}
@media (prefers-color-scheme:dark){body:not([data-jp-theme-light]) .hv-card{color:#e8e8e8;
background:#1e1e1e;border-color:#444}
body:not([data-jp-theme-light]) .hv-card .hv-pass .hv-mark{color:#56d364}
body:not([data-jp-theme-light]) .hv-card .hv-fail .hv-mark{color:#ff7b72}
body:not([data-jp-theme-light]) .hv-card .hv-todo .hv-mark{color:#f0b35a}
body:not([data-jp-theme-light]) .hv-card .hv-fail{background:rgba(255,123,114,.14)}
body:not([data-jp-theme-light]) .hv-card .hv-todo{background:rgba(240,179,90,.14)}
body:not([data-jp-theme-light]) .hv-card .hv-muted{color:#b0b0b0}
body:not([data-jp-theme-light]) .hv-card pre{background:#2b2b2b}}
</style>"""


def card_html(lines: list[str]) -> str:
    """The card of ``lines`` (what checks said), as self-contained HTML (deterministic)."""
    lang = words("card.lang")
    lang = f' lang="{lang}"' if lang != "en" else ""  # English cards stay as they always were
    parts = [
        _STYLE,
        f'<div class="hv-card"{lang} role="group" aria-label="{words("card.results")}"><ul>',
    ]
    for item in _items(lines):
        if item.kind == "text":
            text = "\n".join(line for _, block in item.fields for line in block)
            parts.append(f'<li><span></span><div class="hv-text">{html.escape(text)}</div></li>')
            continue
        mark = next(m for m, k in _MARKS.items() if k == item.kind)
        body = [f"<div>{html.escape(item.head)}</div>"]
        hint: list[str] = []
        for label, block in item.fields:
            text = html.escape("\n".join(block))
            if label == "why":
                body.append(f'<div class="hv-muted">{words("label.why")} {text}</div>')
            elif label == "hint":
                if text in every_language("label.as_above"):
                    same = f"{words('label.hint')} {words('label.as_above')}"
                    body.append(f'<div class="hv-muted">{same}</div>')
                else:
                    hint.append(_opened("hint", text, "div"))
            elif label == "more":
                hint.append(_opened("more", text, "div") + "</details>")
            elif label == "code":
                hint.append(_opened("code", text, "pre") + "</details>")
            elif label == "stuck":
                if hint:
                    body.append("".join(hint) + "</details>")
                    hint = []
                body.append(f'<div class="hv-muted">{words("label.stuck")} {text}</div>')
            else:
                body.append(f"<div>{text}</div>")
        if hint:
            opened = hint[0].startswith(f"<details><summary>{words('card.hint')}</summary>")
            body.append("".join(hint) + ("</details>" if opened else ""))
        muted = " hv-muted" if item.kind == "note" else ""  # how the check ran, not a verdict
        parts.append(
            f'<li class="hv-{item.kind}{muted}"><span class="hv-mark" aria-hidden="true">{mark}</span>'
            f'<div class="hv-body">{_spoken(item.kind)}' + "".join(body) + "</div></li>"
        )
    parts.append("</ul></div>")
    return "".join(parts)


def _spoken(kind: str) -> str:
    """What a screen reader says for a mark (the mark itself is hidden from it)."""
    keys = {"pass": "card.passed", "fail": "card.failed", "todo": "card.todo", "note": "card.note"}
    word = words(keys[kind])
    return f'<span style="position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0)">{word}: </span>'


def _opened(role: str, text: str, tag: str) -> str:
    """A hint's level folded behind its label: ``<details><summary>Hint</summary><div>...``."""
    return f"<details><summary>{words('card.' + role)}</summary><{tag}>{text}</{tag}>"
