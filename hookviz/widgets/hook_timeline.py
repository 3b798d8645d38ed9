"""HookTimeline: one forward and backward pass as the ordered sequence of hook firings."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
import traitlets
from torch import nn

from ..hook_kinds import BACKWARD, KINDS, REGISTERED_BY, TIMELINE, TORCH, label
from ..timeline import HookTrace, trace_hooks
from ..tree import check_model, display_name
from . import static_html
from .base import PlayedWidget, check_speed, front_end, number
from .messages import say, table, widget_language


def meanings(lang: str) -> dict[str, str]:
    """What each kind a timeline shows means, in ``lang`` (the table's ``kind.<name>``)."""
    words = table(lang)
    return {name: words[f"kind.{name}"] for name in TIMELINE}


def legend(lang: str) -> list[list[str]]:
    """The legend under the diagram: each hook kind a timeline shows in the course's words
    (its meaning's first part, as `hook_kinds.label` cuts it), with how torch registers it as a
    tooltip, then one of torch's markers (hook_kinds.TIMELINE is the order)."""
    meaning = meanings(lang)
    return [
        [label(name, meaning[name]), name, f"{name}: {REGISTERED_BY[name]}"]
        for name in TIMELINE
        if KINDS[name].target != TORCH
    ] + [
        [
            say(lang, "timeline.legend_torch"),
            "forward_call",
            say(lang, "timeline.legend_torch_title"),
        ]
    ]


class HookTimeline(PlayedWidget):
    """One forward + backward pass as the ordered list of hook firings, the model's own hooks included.

    The model runs once on `inputs` and a backward of `loss_fn(output)` (by default the sum of
    its outputs), through `hookviz.trace_hooks`; the widget shows every hook firing in true
    order, between the moments forward() starts and returns and the moments gradients become
    ready. A hook whose return value replaced an input, an output or a gradient is marked.
    `step` (0 = nothing shown yet) is synced both ways.

    Parameters
    ----------
    model : nn.Module
        The model to run, with its hooks.
    inputs : Tensor, tuple or dict
        A tensor, a tuple of positional arguments, or a dict of keyword arguments.
    kwargs : dict or None
        More keyword arguments for the call.
    loss_fn : callable or None
        Turns the output into the scalar the backward starts from; None sums the outputs.
    backward : bool
        Run the backward pass too.
    show_torch : bool
        Show torch's own moments (forward starts and returns, gradients ready); False keeps
        only the model's hooks.
    speed : float
        Firings per second while playing.
    theme : str
        `"auto"` (follow JupyterLab), `"light"` or `"dark"`.
    lang : str or None
        The language of its words (`"en"` or `"ko"`); None follows
        `hookviz.language.current_language()`.
    """

    _vocabulary = ("timeline", "kind")  # its keys in the message tables (messages/*.json)
    _front_end = "hook_timeline"  # static/hook_timeline.js and .css
    _esm, _css = front_end(_front_end)

    title = traitlets.Unicode("").tag(sync=True)
    lanes = traitlets.List().tag(sync=True)  # [label, depth] per row of the diagram
    firings = traitlets.List().tag(sync=True)  # [lane, kind, who, name, replaced or ""]
    # kind -> {"meaning", "backward", "shape", "colour"}: hook_kinds.KINDS, what the browser draws
    kinds = traitlets.Dict().tag(sync=True)
    legend = traitlets.List().tag(sync=True)  # [label, kind] per legend entry, in order
    show_torch = traitlets.Bool(True).tag(sync=True)

    def __init__(
        self,
        model: nn.Module,
        inputs: Any = (),
        *,
        kwargs: dict[str, Any] | None = None,
        loss_fn: Callable[[Any], torch.Tensor] | None = None,
        backward: bool = True,
        show_torch: bool = True,
        speed: float = 4.0,
        theme: str = "auto",
        lang: str | None = None,
    ):
        """Run one pass of ``model`` on ``inputs`` (and ``kwargs``) and show its hooks."""
        lang = widget_language(lang)
        check_model(model, what="HookTimeline's model")
        if isinstance(inputs, nn.Module):
            raise TypeError(
                "inputs must be what you would pass to the model (a tensor, or a tuple of arguments), "
                f"not a module ({type(inputs).__name__}). Call it as HookTimeline(model, x)."
            )
        if loss_fn is not None and not callable(loss_fn):
            raise TypeError(
                f"loss_fn must be a function of the model's output, got {type(loss_fn).__name__}."
            )
        check_speed(speed)
        trace = trace_hooks(model, inputs, kwargs=kwargs, loss_fn=loss_fn, backward=backward)
        self._trace = trace
        lanes, lane_of = _lanes(model, trace)
        firings = [
            [lane_of[f.label], f.kind, f.who, f.name if f.who == "user" else "", f.replaced or ""]
            for f in trace.firings
        ]
        meaning = meanings(lang)
        super().__init__(
            title=_title(model, trace, lang, custom_loss=loss_fn is not None),
            lanes=lanes,
            firings=firings,
            kinds={
                name: {
                    "meaning": meaning[name],
                    "backward": KINDS[name].backward,
                    "shape": KINDS[name].shape,
                    "colour": KINDS[name].colour,
                }
                for name in TIMELINE
            },
            legend=legend(lang),
            show_torch=bool(show_torch),
            speed=float(speed),
            theme=theme,
            lang=lang,
        )

    @traitlets.observe("show_torch")
    def _filter_changed(self, change):
        self.step = min(self.step, self.total)

    @property
    def trace(self) -> HookTrace:
        """The `HookTrace` behind the picture."""
        return self._trace

    @property
    def sequence(self) -> list:
        """The firings being played: all of them, or only the model's own hooks."""
        if self.show_torch:
            return list(self._trace.firings)
        return self._trace.user_firings()

    @property
    def total(self) -> int:
        """How many firings are played."""
        return len(self.sequence)

    @property
    def current(self):
        """The firing shown at `step` (a `hookviz.timeline.Firing`), None at step 0."""
        return self.sequence[self.step - 1] if self.step else None

    def __repr__(self) -> str:
        users = len(self._trace.user_firings())
        replaced = sum(1 for f in self._trace.firings if f.replaced)
        extra = f", {replaced} replaced a value" if replaced else ""
        return (
            f"HookTimeline({type(self._trace.model).__name__}, {len(self._trace.firings)} firings, "
            f"{users} from the model's own hooks{extra}, step {self.step}/{self.total})"
        )

    def to_html(self) -> str:
        """A self-contained HTML table of the firings in order (no scripts)."""
        rows = []
        backward_started = False
        for position, firing in enumerate(self.sequence, 1):
            if firing.kind in BACKWARD and not backward_started:
                backward_started = True
                rows.append(
                    [static_html.tag("b", self.say("timeline.band_backward")), "", "", "", ""]
                )
            who = (
                static_html.tag("b", firing.name)
                if firing.who == "user"
                else static_html.escape(self.say(f"timeline.torch_{firing.kind}"))
            )
            replaced = (
                static_html.tag(
                    "span", self.say("timeline.replaced", what=firing.replaced), cls="hvs-warn"
                )
                if firing.replaced
                else ""
            )
            rows.append(
                [
                    str(position),
                    static_html.escape(firing.label),
                    static_html.escape(self.kinds[firing.kind]["meaning"]),
                    who,
                    replaced,
                ]
            )
        body = (
            static_html.tag("div", self.title, cls="hvs-title")
            + static_html.tag("div", self.say("timeline.static_bold"), cls="hvs-muted")
            + static_html.table(
                ["#", *(self.say(f"timeline.static_{c}") for c in ("module", "what", "hook")), ""],
                rows,
                numeric={0},
            )
        )
        return static_html.page("timeline", body)

    def plot(self):
        """A matplotlib Figure: modules down, time across, each firing a mark (needs matplotlib)."""
        from .. import plots

        return plots.timeline(self._trace)


def _lanes(model: nn.Module, trace: HookTrace) -> tuple[list[list], dict[str, int]]:
    """Rows of the diagram: modules in pre-order, each followed by lanes of its parameters' hooks."""
    lanes: list[list] = []
    lane_of: dict[str, int] = {}
    extra: dict[str, list[str]] = {}
    module_labels = {display_name(p, m) for p, m in model.named_modules()}
    for firing in trace.firings:
        if firing.label not in module_labels:
            extra.setdefault(firing.path, [])
            if firing.label not in extra[firing.path]:
                extra[firing.path].append(firing.label)
    for path, module in model.named_modules():
        depth = 0 if not path else path.count(".") + 1
        label = display_name(path, module)
        lane_of[label] = len(lanes)
        lanes.append([label, depth])
        for other in extra.pop(path, []):
            lane_of[other] = len(lanes)
            lanes.append([other, depth + 1])
    for labels in extra.values():  # anything left: global hooks on unknown modules
        for other in labels:
            lane_of[other] = len(lanes)
            lanes.append([other, 0])
    return lanes, lane_of


def _title(model: nn.Module, trace: HookTrace, lang: str, *, custom_loss: bool) -> str:
    """What the pass was, and what its backward started from: the loss given, or (by default)
    the sum of the outputs, which is no loss."""
    name = type(model).__name__
    if trace.loss is None:
        return say(lang, "timeline.title_forward", name=name)
    key = "timeline.title_loss" if custom_loss else "timeline.title_sum"
    return say(lang, key, name=name, loss=number(trace.loss))
