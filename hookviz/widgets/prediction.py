"""Prediction: commit to an answer first, then see whether it was right, and why.

The answer and its explanation stay in Python until the reader commits: the browser only
has the question and the choices, sends the reader's choice as a message, and receives the
verdict, the answer and the why in return. One commitment per widget.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import ipywidgets
import traitlets

from . import static_html
from .base import HookvizWidget, check_theme, front_end
from .messages import widget_language

ACTIONS = ("choose", "answer")
OPEN, ANSWERED = "open", "answered"
LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
_TOKEN_SEPARATORS = re.compile(r"[\s,]+")
_PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n")

# The static picture's own stylesheet, not static_html.STYLE: notebooks store this HTML and nbval
# compares it, so a change to the other widgets' pictures must not change this one.
STYLE = """
.hvs-prediction{font-family:var(--jp-ui-font-family,system-ui,sans-serif);font-size:13px;line-height:1.4;
color:var(--jp-ui-font-color0,#1a1a1a);background:var(--jp-layout-color0,#fff);
border:1px solid var(--jp-border-color2,#d4d4d4);border-radius:6px;padding:8px 10px;max-width:760px}
.hvs-prediction .hvs-title{font-weight:600;font-size:14px}
.hvs-prediction .hvs-muted{color:var(--jp-ui-font-color2,#5f5f5f)}
.hvs-prediction .hvs-question{margin:4px 0 6px}
.hvs-prediction p{margin:0 0 6px}
.hvs-prediction code{font-family:var(--jp-code-font-family,monospace);font-size:12px;
background:var(--jp-layout-color2,#eee);border-radius:3px;padding:0 3px}
.hvs-prediction ol{margin:4px 0 6px;padding-left:28px}
.hvs-prediction details{margin-top:6px;border-top:1px solid var(--jp-border-color2,#e0e0e0);padding-top:4px}
.hvs-prediction summary{cursor:pointer;font-weight:600}
"""


def normalise(text: str) -> str:
    """An answer as compared: case folded, tokens split on whitespace or commas, one space between."""
    return " ".join(token for token in _TOKEN_SEPARATORS.split(text.casefold()) if token)


def inline_html(text: str) -> str:
    """``text`` as HTML: `code spans` in backticks become <code>, everything else is escaped.

    A blank line starts a new paragraph; a lone backtick with no partner stays a backtick.
    """
    paragraphs = [p.strip() for p in _PARAGRAPH_BREAK.split(text.strip()) if p.strip()]
    return "".join(f"<p>{_spans(' '.join(p.split()))}</p>" for p in paragraphs)


def _spans(text: str) -> str:
    parts = text.split("`")
    if len(parts) % 2 == 0:  # an odd number of backticks: the last one has no partner
        parts[-2:] = [parts[-2] + "`" + parts[-1]]
    return "".join(
        f"<code>{static_html.escape(part)}</code>" if i % 2 else static_html.escape(part)
        for i, part in enumerate(parts)
    )


def check_prediction(
    question: Any, choices: Any, answer: Any, why: Any
) -> tuple[str, list[str], int | list[str], str]:
    """Check a prediction's parts; return them as (question, choices, answer, why) or raise.

    ``choices`` comes back as a list ([] for a short answer); ``answer`` as the right index
    (multiple choice) or the list of accepted answers (short answer).
    """
    question = _text("question", question, "the question the reader answers")
    why = _text("why", why, "the explanation shown once the reader has answered")
    if choices is None:
        return question, [], _accepted_answers(answer), why
    if isinstance(choices, (str, bytes)) or not isinstance(choices, Sequence):
        raise TypeError(
            f"choices must be a list of at least 2 strings (or None for a short answer), "
            f"got {type(choices).__name__}."
        )
    choices = list(choices)
    if len(choices) < 2:
        raise ValueError(
            f"choices needs at least 2 options to choose from, got {len(choices)}. "
            "For a question answered in the reader's own words, pass choices=None and "
            "answer=[the accepted answers]."
        )
    for i, choice in enumerate(choices):
        if not isinstance(choice, str) or not choice.strip():
            raise ValueError(f"choices[{i}] must be a non-empty string, got {choice!r}.")
    seen: dict[str, int] = {}
    for i, choice in enumerate(choices):
        if choice.strip() in seen:
            raise ValueError(
                f"choices[{i}] repeats choices[{seen[choice.strip()]}] ({choice!r}): every option must differ."
            )
        seen[choice.strip()] = i
    return question, [c.strip() for c in choices], _right_index(answer, choices), why


def _text(name: str, value: Any, what: str) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a string: {what}; got {type(value).__name__}.")
    if not value.strip():
        raise ValueError(f"{name} is empty: give {what}.")
    return value.strip()


def _right_index(answer: Any, choices: list[str]) -> int:
    last = len(choices) - 1
    if isinstance(answer, bool) or not isinstance(answer, int):
        hint = ""
        if isinstance(answer, str) and answer.strip() in [c.strip() for c in choices]:
            hint = f" (did you mean answer={[c.strip() for c in choices].index(answer.strip())}?)"
        raise TypeError(
            f"with choices, answer must be the index of the right choice, an int from 0 to {last}, "
            f"got {answer!r}{hint}."
        )
    if not 0 <= answer <= last:
        raise ValueError(
            f"answer={answer} is not the index of a choice: there are {len(choices)} choices, "
            f"so answer must be from 0 to {last} (0 is the first)."
        )
    return answer


def _accepted_answers(answer: Any) -> list[str]:
    if isinstance(answer, int) and not isinstance(answer, bool):
        raise TypeError(
            f"answer={answer} is an index, but there are no choices: pass choices=[...] for a "
            "multiple-choice question, or answer=[the accepted answers] for a short answer."
        )
    if isinstance(answer, str):
        raise TypeError(
            f"for a short answer, answer must be a list of accepted answers: write answer=[{answer!r}]."
        )
    if not isinstance(answer, Sequence) or isinstance(answer, bytes):
        raise TypeError(
            f"for a short answer, answer must be a list of accepted answers (strings), got {type(answer).__name__}."
        )
    accepted = list(answer)
    if not accepted:
        raise ValueError(
            "a short answer needs at least one accepted answer: answer=['4 5 2 6 3 1'], for example."
        )
    for i, text in enumerate(accepted):
        if not isinstance(text, str) or not normalise(text):
            raise ValueError(f"answer[{i}] must be a non-empty string, got {text!r}.")
    return [text.strip() for text in accepted]


class Prediction(HookvizWidget):
    """Ask a question, take the reader's prediction, then reveal the answer and why.

    The answer and `why` reach the browser only after the reader commits, once: by clicking, by
    keys, or from Python with `choose(i)` / `answer_with(text)`.

    Parameters
    ----------
    question : str
        The question, in Markdown.
    choices : list of str or None
        The choices of a multiple-choice question; None for a short answer.
    answer : int or list of str
        The right choice's index, or the accepted short answers (compared after normalising
        case, spaces and commas).
    why : str
        The explanation shown with the answer.
    key : str
        The catalogue key it came from (empty when made directly).
    theme : str
        `"auto"` (follow JupyterLab), `"light"` or `"dark"`.
    lang : str or None
        The language of its words (`"en"` or `"ko"`); None follows
        `hookviz.language.current_language()`.

    Examples
    --------
    >>> hookviz.Prediction("Which runs first?", choices=["pre-hook", "forward"], answer=0,
    ...                    why="A pre-hook runs before forward().")  # doctest: +SKIP
    """

    _vocabulary = ("prediction",)  # its keys in the message tables (messages/*.json)
    _front_end = "prediction"  # static/prediction.js and .css
    _esm, _css = front_end(_front_end)

    key = traitlets.Unicode("").tag(sync=True)
    question = traitlets.Unicode("").tag(sync=True)
    choices = traitlets.List(traitlets.Unicode()).tag(sync=True)  # [] for a short answer
    state = traitlets.Unicode(OPEN).tag(sync=True)  # "open", then "answered"
    # Set once the reader has committed (empty or -1 before):
    chosen = traitlets.Int(-1).tag(sync=True)  # the reader's choice (multiple choice)
    given = traitlets.Unicode("").tag(sync=True)  # the reader's words (short answer)
    correct = traitlets.Bool(None, allow_none=True).tag(sync=True)
    answer_index = traitlets.Int(-1).tag(sync=True)  # the right choice (multiple choice)
    answer_text = traitlets.Unicode("").tag(sync=True)
    why = traitlets.Unicode("").tag(sync=True)
    status = traitlets.Unicode("").tag(sync=True)  # a note, e.g. why a message was ignored

    def __init__(
        self,
        question: str,
        *,
        choices: Sequence[str] | None = None,
        answer: int | Sequence[str],
        why: str,
        key: str = "",
        theme: str = "auto",
        lang: str | None = None,
    ):
        """A prediction: ``choices`` + ``answer`` index, or ``choices=None`` + accepted answers."""
        lang = widget_language(lang)
        question, choices, answer, why = check_prediction(question, choices, answer, why)
        if not isinstance(key, str):
            raise TypeError(
                f"key must be a string naming the prediction, got {type(key).__name__}."
            )
        check_theme(theme)
        self._answer = answer
        self._why = why
        super().__init__(key=key, question=question, choices=choices, theme=theme, lang=lang)
        self.on_msg(self._on_message)

    # -- committing ------------------------------------------------------------------------

    @property
    def multiple_choice(self) -> bool:
        """True when the reader picks one of `choices`; False for a short answer."""
        return bool(self.choices)

    @property
    def answered(self) -> bool:
        """Whether the reader has committed to an answer."""
        return self.state == ANSWERED

    def choose(self, choice: int) -> bool:
        """Commit to `choices[choice]`; reveal the answer and why; return whether it was right."""
        if not self.multiple_choice:
            raise TypeError(
                "this prediction takes a short answer, not a choice: use answer_with(text)."
            )
        if isinstance(choice, bool) or not isinstance(choice, int):
            raise TypeError(f"choice must be the index of a choice (an int), got {choice!r}.")
        if not 0 <= choice < len(self.choices):
            raise ValueError(
                f"choice={choice} is not the index of a choice: pick 0 to {len(self.choices) - 1}."
            )
        self._check_open()
        right = choice == self._answer
        with self.hold_sync():
            self.chosen = choice
            self.answer_index = self._answer
            self._reveal(right, self.choices[self._answer])
        return right

    def answer_with(self, text: str) -> bool:
        """Commit to `text` as the short answer; reveal the answer and why; return whether it was right."""
        if self.multiple_choice:
            raise TypeError(
                f"this prediction is multiple choice: use choose(i) with i from 0 to {len(self.choices) - 1}."
            )
        if not isinstance(text, str):
            raise TypeError(f"the answer must be a string, got {type(text).__name__}.")
        if not normalise(text):
            raise ValueError("the answer is empty: write a prediction first.")
        self._check_open()
        right = normalise(text) in {normalise(accepted) for accepted in self._answer}
        with self.hold_sync():
            self.given = " ".join(text.split())
            self._reveal(right, self._answer[0])
        return right

    def _check_open(self) -> None:
        if self.answered:
            raise RuntimeError(
                f"this prediction is already answered ({'right' if self.correct else 'not quite'}): "
                "only the first answer counts. Make a new one to ask again."
            )

    def _reveal(self, right: bool, answer_text: str) -> None:
        self.correct = right
        self.answer_text = answer_text
        self.why = self._why
        self.status = ""
        self.state = ANSWERED  # last: the browser draws the verdict when the state changes

    def _on_message(self, widget: Any, content: Any, buffers: Any = None) -> None:
        """The reader commits in the browser: {'action': 'choose', 'choice': 2} or {'action': 'answer', 'text': '...'}."""
        action = content.get("action") if isinstance(content, dict) else None
        if action not in ACTIONS:
            self.status = self.say(
                "common.status_unknown", action=repr(action), actions=", ".join(ACTIONS)
            )
            return
        if self.answered:
            self.status = self.say("prediction.status_answered")
            return
        try:
            if action == "choose":
                self.choose(content.get("choice"))
            else:
                self.answer_with(content.get("text"))
        except (TypeError, ValueError) as error:
            self.status = self.say("common.status_failed", action=action, error=error)

    def offline_extras(self) -> dict[str, Any]:
        """The answer and why, for a page without a kernel (it keeps them hidden until a choice)."""
        if self.multiple_choice:
            return {"answer_index": self._answer, "why": self._why}
        return {"accepted": list(self._answer), "why": self._why}

    # -- showing ---------------------------------------------------------------------------

    def __repr__(self) -> str:
        name = f"{self.key!r}: " if self.key else ""
        kind = f"{len(self.choices)} choices" if self.multiple_choice else "short answer"
        verdict = f", answered: {'right' if self.correct else 'not quite'}" if self.answered else ""
        return f"Prediction({name}{kind}{verdict})"

    def to_html(self) -> str:
        """Self-contained HTML: the question, the choices, and the answer in a collapsed <details>."""
        if self.multiple_choice:
            options = "".join(f"<li>{_spans(choice)}</li>" for choice in self.choices)
            ask = f'<ol type="A" class="hvs-choices">{options}</ol>'
            right = self._answer
            answer = f"<strong>{LETTERS[right]}.</strong> {_spans(self.choices[right])}"
        else:
            ask = static_html.tag("div", self.say("prediction.static_write"), cls="hvs-muted")
            answer = f"<code>{static_html.escape(self._answer[0])}</code>"
        body = (
            static_html.tag("div", self.say("prediction.title"), cls="hvs-title")
            + static_html.tag("div", inline_html(self.question), cls="hvs-question", raw=True)
            + ask
            + "<details>"
            + static_html.tag("summary", self.say("prediction.static_show"))
            + f"<p>{static_html.escape(self.say('prediction.answer'))}: {answer}</p>"
            + inline_html(self._why)
            + "</details>"
        )
        return f'<div class="hvs hvs-prediction"><style>{STYLE}</style>{body}</div>'

    def _repr_mimebundle_(self, **kwargs):
        """The widget view, its repr as text/plain, and ``to_html()`` for pages without a kernel."""
        bundle = super()._repr_mimebundle_(**kwargs)
        if bundle is None:  # the widget was closed
            return None
        data, metadata = bundle if isinstance(bundle, tuple) else (bundle, {})
        return {**data, "text/plain": repr(self), "text/html": self.to_html()}, metadata

    if hasattr(ipywidgets.Widget, "_ipython_display_"):  # ipywidgets 7: IPython calls this first

        def _ipython_display_(self, **kwargs):
            """Display the same three outputs as ``_repr_mimebundle_`` (ipywidgets 7 shows widgets here)."""
            from IPython.display import display

            data, metadata = self._repr_mimebundle_()
            display(data, raw=True, metadata=metadata)
            self._handle_displayed(**kwargs)
