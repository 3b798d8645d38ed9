"""ApplyTraversal: watch ``model.apply(fn)`` walk the module tree, children before parents."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import traitlets
from torch import nn

from ..tracing import ApplyTrace, trace_apply
from ..tree import check_model, module_tree, preorder
from . import static_html
from .base import PlayedWidget, check_speed, front_end
from .messages import say, widget_language

ORDERS = ("apply", "modules")
MAX_PRINTED = 2_000  # characters of fn's output kept per visit
MAX_CHANGES = 20  # parameter changes listed per visit


class ApplyTraversal(PlayedWidget):
    """Animate `model.apply(fn)`: the tree, the current module, visit numbers, the call stack.

    The real `model.apply(fn)` runs once (through `hookviz.trace_apply`) and the browser plays it
    back: no kernel message per frame. `step` (0 = nothing visited yet) is synced both ways, so a
    notebook can set or read it.

    Parameters
    ----------
    model : nn.Module or ApplyTrace
        The model to traverse, or a trace already recorded (for example `error.trace` of an
        `ApplyFnError`).
    fn : callable or None
        The function `apply` calls on each module; None plays the traversal alone.
    order : str
        `"apply"` plays `apply`'s post-order; `"modules"` plays `model.modules()`'s pre-order,
        for comparison.
    speed : float
        Visits per second while playing.
    theme : str
        `"auto"` (follow JupyterLab), `"light"` or `"dark"`.
    echo : bool
        Print what `fn` prints while the trace is recorded.
    lang : str or None
        The language of its words (`"en"` or `"ko"`); None follows
        `hookviz.language.current_language()`.

    Examples
    --------
    >>> import hookviz as hv
    >>> hv.ApplyTraversal(hv.examples.model(), print)  # doctest: +SKIP
    """

    _vocabulary = ("apply",)  # its keys in the message tables (messages/*.json)
    _front_end = "apply_traversal"  # static/apply_traversal.js and .css
    _esm, _css = front_end(_front_end)

    title = traitlets.Unicode("").tag(sync=True)
    nodes = traitlets.List().tag(sync=True)  # [name, class name, parent index, parameters, shared]
    visits = traitlets.List().tag(sync=True)  # [node, stack (node indices), printed, changes]
    preorder = traitlets.List().tag(sync=True)  # node indices in modules() order
    complete = traitlets.Bool(True).tag(sync=True)
    order = traitlets.Unicode("apply").tag(sync=True)

    def __init__(
        self,
        model: nn.Module | ApplyTrace,
        fn: Callable[[nn.Module], Any] | None = None,
        *,
        order: str = "apply",
        speed: float = 2.0,
        theme: str = "auto",
        echo: bool = False,
        lang: str | None = None,
    ):
        """Trace ``model.apply(fn)`` (``fn=None``: a no-op) and show it; ``echo`` also prints fn's output."""
        lang = widget_language(lang)
        _check_order(order)
        check_speed(speed)
        if isinstance(model, ApplyTrace):
            if fn is not None:
                raise TypeError(
                    "pass either a model and fn, or an ApplyTrace alone: the trace already says which fn ran."
                )
            trace = model
            nodes, index = _nodes(trace.model)
            pre = [index[p] for p in preorder(trace.model)]
        else:
            check_model(model, what="ApplyTraversal's first argument")
            nodes, index = _nodes(model)  # the tree apply is about to walk
            pre = [index[p] for p in preorder(model)]
            trace = trace_apply(model, fn, echo=echo)
        self._trace = trace
        visits = _visits(trace, nodes, index, lang)
        self._node_paths = [node.pop() for node in nodes]  # the path travels as the last field
        fn_text = "no-op" if trace.fn_name == "None" else trace.fn_name
        super().__init__(
            title=f"{type(trace.model).__name__}.apply({fn_text})",
            nodes=nodes,
            visits=visits,
            preorder=pre,
            complete=trace.complete,
            order=order,
            speed=float(speed),
            theme=theme,
            lang=lang,
        )

    # -- validation ------------------------------------------------------------------------

    @traitlets.validate("order")
    def _valid_order(self, proposal):
        try:
            return _check_order(proposal["value"])
        except ValueError as error:
            raise traitlets.TraitError(str(error)) from None

    @traitlets.observe("order")
    def _order_changed(self, change):
        self.step = min(self.step, self.total)

    # -- reading ---------------------------------------------------------------------------

    @property
    def trace(self) -> ApplyTrace:
        """The recorded `ApplyTrace` behind the animation."""
        return self._trace

    @property
    def sequence(self) -> list[str]:
        """Module paths in the order being played ('' is the root)."""
        return [self._node_paths[i] for i in self._sequence_nodes()]

    @property
    def current(self) -> str | None:
        """The path of the module highlighted at `step` ('' is the root), None at step 0."""
        return self.sequence[self.step - 1] if self.step else None

    @property
    def total(self) -> int:
        """The number of steps in the order being played."""
        return len(self._sequence_nodes())

    def _sequence_nodes(self) -> list[int]:
        if self.order == "modules":
            return list(self.preorder)
        return [visit[0] for visit in self.visits]

    def __repr__(self) -> str:
        fn = "" if self._trace.fn_name == "None" else f", fn={self._trace.fn_name}"
        stopped = "" if self._trace.complete else " (stopped early: fn raised)"
        order = ", modules() order" if self.order == "modules" else ""
        return (
            f"ApplyTraversal({type(self._trace.model).__name__}{fn}, {len(self.visits)} visits{stopped}"
            f"{order}, step {self.step}/{self.total})"
        )

    # -- static pictures -------------------------------------------------------------------

    def to_html(self, step: int | None = None) -> str:
        """A self-contained HTML picture of the tree at `step` (default: the end); no scripts."""
        step = self.total if step is None else step
        if not isinstance(step, int) or not 0 <= step <= self.total:
            raise ValueError(f"step must be a whole number from 0 to {self.total}, got {step!r}.")
        sequence = self._sequence_nodes()
        number = {node: position + 1 for position, node in enumerate(sequence[:step])}
        current = sequence[step - 1] if step else None
        rows = []
        for i, (name, type_name, parent, params, shared) in enumerate(self.nodes):
            depth = self._depth(i)
            badge = number.get(i)
            classes = ["hvs-node"]
            if i == current:
                classes.append("hvs-current")
            elif badge:
                classes.append("hvs-visited")
            rows.append(
                static_html.tag(
                    "div",
                    static_html.tag("span", str(badge) if badge else "", cls="hvs-badge")
                    + static_html.tag("span", name, cls="hvs-name")
                    + (
                        " " + static_html.tag("span", type_name, cls="hvs-type")
                        if parent >= 0
                        else ""
                    )
                    + (" " + static_html.tag("span", params, cls="hvs-muted") if params else "")
                    + (
                        " " + static_html.tag("span", self.say("apply.shared"), cls="hvs-tag")
                        if shared
                        else ""
                    ),
                    cls=" ".join(classes),
                    style=f"padding-left:{depth * 18}px",
                    raw=True,
                )
            )
        label = self.say("apply.order_modules" if self.order == "modules" else "apply.order_apply")
        order_line = " → ".join(self._label(n) for n in sequence)
        where = self.say("apply.static_step", order=label, step=step, total=self.total)
        body = (
            static_html.tag("div", self.title, cls="hvs-title")
            + static_html.tag("div", where, cls="hvs-muted")
            + static_html.tag("div", "".join(rows), cls="hvs-tree", raw=True)
            + static_html.tag("div", f"{label}: {order_line}", cls="hvs-order")
        )
        return static_html.page("apply", body)

    def plot(self):
        """A matplotlib Figure of the tree with apply's visit numbers (needs matplotlib)."""
        from .. import plots

        return plots.apply_traversal(self._trace)

    def _depth(self, node: int) -> int:
        depth = 0
        while self.nodes[node][2] >= 0:
            node = self.nodes[node][2]
            depth += 1
        return depth

    def _label(self, node: int) -> str:
        path = self._node_paths[node]
        return path if path else self.nodes[node][1]


def _check_order(order: Any) -> str:
    if order not in ORDERS:
        raise ValueError(
            f"order must be 'apply' (post-order, what apply does) or 'modules' (pre-order, what "
            f"modules() does), got {order!r}."
        )
    return order


def _nodes(model: nn.Module) -> tuple[list[list], dict[str, int]]:
    """The tree as rows [name, class, parent index, parameters, shared, path], pre-order."""
    nodes: list[list] = []
    index: dict[str, int] = {}

    def add(node, parent: int) -> None:
        index[node.path] = len(nodes)
        params = ", ".join(f"{name} {list(shape)}" for name, shape in node.parameters)
        nodes.append([node.name, node.type_name, parent, params, int(node.shared), node.path])
        me = len(nodes) - 1
        for child in node.children:
            add(child, me)

    add(module_tree(model), -1)
    return nodes, index


def _visits(trace: ApplyTrace, nodes: list[list], index: dict[str, int], lang: str) -> list[list]:
    """Each visit as [node, stack of node indices, printed text, change descriptions]."""
    stacks = {call.visit: call.stack for call in trace.calls if call.kind == "visit"}
    rows = []
    for visit in trace.visits:
        node = _node_for(visit.path, visit.module, nodes, index)
        stack = [_node_for(p, None, nodes, index) for p in stacks.get(visit.index, (visit.path,))]
        printed = visit.stdout
        if len(printed) > MAX_PRINTED:
            more = say(lang, "apply.more_characters", count=len(visit.stdout) - MAX_PRINTED)
            printed = f"{printed[:MAX_PRINTED]}\n{more}"
        changes = [c.describe() for c in visit.changes[:MAX_CHANGES]]
        if len(visit.changes) > MAX_CHANGES:
            changes.append(say(lang, "apply.more_changes", count=len(visit.changes) - MAX_CHANGES))
        rows.append([node, stack, printed, changes])
    return rows


def _node_for(path: str, module: nn.Module | None, nodes: list[list], index: dict[str, int]) -> int:
    """The node of ``path``; a module that fn added during apply gets a node of its own."""
    found = index.get(path)
    if found is not None:
        return found
    parent_path, _, name = path.rpartition(".")
    parent = _node_for(parent_path, None, nodes, index) if path else -1
    index[path] = len(nodes)
    nodes.append(
        [name or path, type(module).__name__ if module is not None else "?", parent, "", 0, path]
    )
    return index[path]
