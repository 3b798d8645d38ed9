"""CompiledTimeline: each hook's firings eagerly and under torch.compile, side by side."""

from __future__ import annotations

from typing import Any

import traitlets
from torch import nn

from ..compiled import CAUSES, STATUSES, CompiledReport, compare_compiled, counted
from ..hook_kinds import KINDS, TIMELINE, TORCH, acting_as, label
from . import static_html
from .base import PlayedWidget, check_speed, front_end
from .hook_timeline import meanings
from .messages import say, widget_language

# The torch events a moment can be, in the order the legend lists them.
EVENTS = ("graph_break", "recompile", "recompile_limit", "error")


class CompiledTimeline(PlayedWidget):
    """Two timelines side by side: each hook's firings eagerly (left) and compiled (right).

    Each row is a hook; each column of a side is one firing of that run, in order, step after
    step. On the compiled side a filled mark is a hook dynamo traced into a graph, a hollow one
    a hook called eagerly (a graph break's fallback, the root's hooks, autograd), and torch's
    graph breaks and recompiles are bands, each with its reason. Playing walks both runs at
    once: a firing the compiled run does not have shows where it is missing. `step` (0 =
    nothing shown yet) is synced both ways.

    Parameters
    ----------
    report : CompiledReport or nn.Module
        What `hookviz.compare_compiled` returned; or a model, which is then compared with
        `inputs` and `compare` (its hooks in place).
    inputs : Any
        With a model: the positional arguments of one call.
    speed : float
        Moments per second while playing.
    theme : str
        `"auto"` (follow JupyterLab), `"light"` or `"dark"`.
    lang : str or None
        The language of its words (`"en"` or `"ko"`); None follows
        `hookviz.language.current_language()`.
    compare : Any
        With a model: `compare_compiled`'s keyword arguments (`steps`, `backend`, `loss_fn`,
        `before_step`, ...).
    """

    _vocabulary = ("compiled", "kind")  # its keys in the message tables (messages/*.json)
    _front_end = "compiled_timeline"  # static/compiled_timeline.js and .css
    _esm, _css = front_end(_front_end)

    title = traitlets.Unicode("").tag(sync=True)
    totals = traitlets.Unicode("").tag(sync=True)
    steps = traitlets.Int(0).tag(sync=True)
    # per hook: [label, kind, name, status, global?, eager steps, compiled steps]
    lanes = traitlets.List().tag(sync=True)
    # per hook: [[cause kind, title, where, own (0/1), how many of that kind]]
    causes = traitlets.List().tag(sync=True)
    # per moment: [step, hook (-1 for an event), eager (0/1), compiled ("graph", "eager", ""),
    # event (-1, or its index in events)]
    moments = traitlets.List().tag(sync=True)
    events = traitlets.List().tag(sync=True)  # [kind (EVENTS), step, title, where, text]
    kinds = traitlets.Dict().tag(sync=True)  # kind -> {"meaning", "shape", "colour"}
    statuses = traitlets.List().tag(sync=True)  # STATUSES, the order of the table's badges

    def __init__(
        self,
        report: CompiledReport | nn.Module,
        *inputs: Any,
        speed: float = 4.0,
        theme: str = "auto",
        lang: str | None = None,
        **compare: Any,
    ):
        """Show `report`, or compare `report` (a model) on `inputs` first."""
        lang = widget_language(lang)
        check_speed(speed)
        if isinstance(report, nn.Module):
            report = compare_compiled(report, *inputs, **compare)
        elif not isinstance(report, CompiledReport):
            raise TypeError(
                "CompiledTimeline shows a CompiledReport (what hv.compare_compiled returns) or "
                f"compares a model: got {type(report).__name__}. Call it as "
                "CompiledTimeline(hv.compare_compiled(model, x)) or CompiledTimeline(model, x)."
            )
        elif inputs or compare:
            raise TypeError(
                "a CompiledReport is already compared: pass it alone, CompiledTimeline(report)."
            )
        self._report = report
        events, event_of = _events(report)
        meaning = meanings(lang)
        super().__init__(
            title=say(
                lang,
                "compiled.title",
                name=report.model_name,
                steps=report.steps,
                backend=report.backend,
            ),
            totals=say(
                lang,
                "compiled.totals",
                breaks=report.graph_break_count,
                recompiles=report.recompile_count,
                graphs=report.graph_count,
            ),
            steps=report.steps,
            lanes=[
                [
                    h.label,
                    acting_as(h.kind),
                    h.name,
                    h.status,
                    int(KINDS[h.kind].target == "global"),
                    ",".join(map(str, h.eager)),
                    ",".join(f"{s}{'' if s in h.in_graph else '*'}" for s in h.compiled),
                ]
                for h in report.hooks
            ],
            causes=[_grouped(h.causes) for h in report.hooks],
            moments=[
                [
                    m.step,
                    -1 if m.hook is None else m.hook,
                    int(m.eager),
                    m.compiled or "",
                    event_of.get((m.event, m.index), -1) if m.event else -1,
                ]
                for m in report.moments
            ],
            events=events,
            kinds={
                name: {
                    "meaning": meaning[name],
                    "shape": KINDS[name].shape,
                    "colour": KINDS[name].colour,
                }
                for name in TIMELINE
                if KINDS[name].target != TORCH
            },
            statuses=list(STATUSES),
            speed=float(speed),
            theme=theme,
            lang=lang,
        )

    @property
    def report(self) -> CompiledReport:
        """The `CompiledReport` behind the picture."""
        return self._report

    @property
    def total(self) -> int:
        """How many moments are played."""
        return len(self.moments)

    def __repr__(self) -> str:
        # Short: ipywidgets 7 (Colab) cuts a widget's text/plain after 110 characters.
        r = self._report
        return (
            f"CompiledTimeline({r.model_name}, {r.backend}, {counted(len(r.hooks), 'hook')}, "
            f"{len(r.missed)} missed, {counted(r.graph_break_count, 'break')}, "
            f"{counted(r.recompile_count, 'recompile')}, moment {self.step}/{self.total})"
        )

    def to_html(self) -> str:
        """A self-contained HTML picture: a row per hook, then what torch reported (no scripts)."""
        r, esc = self._report, static_html.escape
        rows = []
        for lane, h in zip(self.lanes, r.hooks, strict=True):
            status = self.say(f"compiled.status_{h.status}")
            warn = h.status in ("missed", "extra")
            first = h.causes[0] if h.causes else None
            why = (
                f"{esc(self.say(f'compiled.cause_{first.kind}'))}: {esc(first.title)}"
                if first
                else ""
            )
            rows.append(
                [
                    static_html.tag("b", lane[0]),
                    esc(self._kind_words(h.kind)),
                    static_html.tag("code", h.name),
                    esc(lane[5] or "–"),
                    esc(lane[6] or "–"),
                    static_html.tag("span", status, cls="hvs-warn") if warn else esc(status),
                    why,
                ]
            )
        columns = ("hook", "kind", "name", "eager", "compiled", "status", "why")
        events = [
            static_html.tag(
                "li",
                esc(f"{self.say('compiled.step_band', step=step)}: ")
                + static_html.tag("b", self.say(f"compiled.event_{kind}"))
                + esc(f" {title}" + (f" ({where})" if where else "")),
                raw=True,
            )
            for kind, step, title, where, _ in self.events
        ]
        body = (
            static_html.tag("div", self.title, cls="hvs-title")
            + static_html.tag("div", self.totals, cls="hvs-muted")
            + static_html.table([self.say(f"compiled.col_{c}") for c in columns], rows)
            + static_html.tag("div", self.say("compiled.static_stars"), cls="hvs-muted")
            + (
                static_html.tag("div", self.say("compiled.static_events"), cls="hvs-title")
                + f"<ul>{''.join(events)}</ul>"
                if events
                else ""
            )
        )
        return static_html.page("compiled", body)

    def _kind_words(self, kind: str) -> str:
        """A kind in the widget's words ("forward hook"), a global one marked as such."""
        words = label(acting_as(kind), self.kinds[acting_as(kind)]["meaning"])
        if KINDS[kind].target == "global":
            words = f"{words} ({self.say('compiled.global')})"
        return words


def _grouped(causes) -> list[list]:
    """A hook's causes as the browser lists them: one per kind (the first, and how many of that
    kind there are), the hook's own before those of another hook it ran in the wake of."""
    first: dict[tuple[str, bool], list] = {}
    for c in causes:
        key = (c.kind, c.own)
        if key in first:
            first[key][4] += 1
        else:
            first[key] = [c.kind, c.title, c.where, int(c.own), 1]
    return sorted(first.values(), key=lambda c: (not c[3], CAUSES.index(c[0])))


def _events(report: CompiledReport) -> tuple[list[list], dict[tuple[str, int], int]]:
    """torch's events as the browser shows them, and where each of the report's lands in them."""
    events: list[list] = []
    where: dict[tuple[str, int], int] = {}
    for i, b in enumerate(report.graph_breaks):
        where[("graph_break", i)] = len(events)
        events.append(["graph_break", b.step, b.title, b.user_frame or b.where, b.reason])
    for i, r in enumerate(report.recompiles):
        kind = "recompile_limit" if r.limit_hit else "recompile"
        where[(kind, i)] = len(events)
        title = r.reason.splitlines()[0] if r.reason else ""
        events.append([kind, r.step, title, r.where, r.reason])
    for i, e in enumerate(report.errors):
        where[("error", i)] = len(events)
        events.append(["error", e.step if e.step is not None else 0, e.type, e.hook, str(e)])
    return events, where
