"""The report, put together: each hook's firings in both runs, the causes torch's records point
at, and the side-by-side timeline.

A hook is given a cause only where torch's record points at it: a break or a guard failure in
its code, a module-level backward hook break, a guard on its hook dict, or the facts of the run
(registered after compiling into a hook dict that was empty then; the root's hooks; autograd's
backward; a higher-order op around it). A hook that ran eagerly with no record of its own is
given the breaks and recompile limits of its run, marked as another's (`Cause.own` False).
"""

from __future__ import annotations

import dataclasses
import difflib
import os
import re
from dataclasses import dataclass
from pathlib import Path

import torch
from torch import nn

from .. import dynamo_reading
from ..hook_kinds import GLOBAL, KINDS, acting_as
from ..tree import display_name
from .report import (
    EAGER,
    GRAPH,
    WRAPPER,
    Cause,
    CompiledReport,
    GraphBreak,
    HookComparison,
    Moment,
    Recompile,
    ValueCheck,
)
from .runs import Firing, Plan, Run, Spec, in_code

_TORCH_FILES = ("/torch/", "\\torch\\")
_PACKAGE = str(Path(__file__).resolve().parents[1])  # hookviz: frames above the model's call
# Paths in torch's words that say nothing to a reader, or change from run to run: an installed
# package's folder, hookviz's own, and a notebook cell's file (named by the kernel's process id;
# torch's short form can cut its first characters: "mp/ipykernel_41/2.py").
_INSTALLED = re.compile(r"""[^\s"'#]*[/\\]site-packages[/\\]""")
_CELL_FILE = re.compile(r"""[^\s"'#]*ipykernel_\d+[/\\]\d+\.py|<ipython-input-\d+-[0-9a-f]+>""")
_GUARD_REF = re.compile(r"#\s*(?P<file>[^\s#]+):(?P<line>\d+) in (?P<function>\S+)\s*$", re.M)
# A guard on the length of a module's hook dict (not on one hook in it), as dynamo writes it.
_HOOK_DICT = re.compile(
    r"len\((?P<owner>[\w.\[\]'\"]*?)\.(?P<attr>_(?:forward_pre|forward|backward_pre|backward)_hooks)\)"
)


# Values are compared with torch.testing's float32 tolerances.
RTOL, ATOL = 1.3e-6, 1e-5


def assemble(
    name, backend, plan, eager, compiled, counts, breaks, compiles, torch_warnings, config, kwargs
) -> CompiledReport:
    """The report of two runs and of what dynamo reported during the compiled one."""
    errors = [e for e in (eager.error, compiled.error) if e is not None]
    graph_breaks = [_graph_break(b) for b in breaks]
    for i, b in enumerate(breaks):
        graph_breaks[i] = _replace_step(graph_breaks[i], compiled.step_at(b.time_us))
    recompiles = [
        Recompile(
            compiled.step_at(c.start_us),
            c.compile_id,
            c.function,
            _short(c.file, c.line),
            readable(
                c.fail_reason.splitlines()[0] if c.hit_recompile_limit else c.recompile_reason
            ),
            c.hit_recompile_limit,
        )
        for c in compiles
        if c.attempt > 0 or c.hit_recompile_limit
    ]
    # torch's own words, paths unshortened, for finding the hook a failed guard points at
    guard_reasons = {c.compile_id: c.recompile_reason for c in compiles}
    hooks, places = _hooks(
        plan, eager, compiled, graph_breaks, recompiles, guard_reasons, breaks, config
    )
    outputs_equal = [
        _compare(a, b).equal for a, b in zip(eager.outputs, compiled.outputs, strict=False)
    ]
    report = CompiledReport(
        name,
        backend,
        plan.steps,
        hooks,
        graph_breaks,
        recompiles,
        counts.graphs,
        counts.graph_break_count,  # counted_graph_breaks
        outputs_equal,
        errors,
        list(dict.fromkeys([*eager.warnings, *compiled.warnings, *torch_warnings])),
        config,
        dict(kwargs),
    )
    report.moments = _moments(report, places, eager, compiled, breaks, compiles)
    return report


def _replace_step(b: GraphBreak, step: int) -> GraphBreak:
    return GraphBreak(step, b.reason, b.gb_id, b.where, b.user_frame, b.frames)


def _graph_break(record: dynamo_reading.BreakRecord) -> GraphBreak:
    frames = tuple(f"{_short(f.file, f.line)} in {f.function}" for f in record.frames)
    return GraphBreak(
        0,
        readable(record.reason),
        record.gb_id,
        _short(record.file, record.line),
        _user_frame(record.frames),
        frames,
    )


def _user_frame(frames) -> str:
    """The innermost frame of the traceback in the user's code: below hookviz's own call of the
    model (the frames above it are the caller's), outside torch."""
    inside = list(frames)
    for i, f in enumerate(frames):
        if f.file.startswith(_PACKAGE):
            inside = list(frames[i + 1 :])
    for f in reversed(inside):
        if not any(part in f.file for part in _TORCH_FILES):
            return _short(f.file, f.line)
    return ""


def readable(text: str) -> str:
    """torch's words with their paths as a person reads them (see `_short`), the same on every
    run: an installed package's file from its package (`torch/...`), hookviz's from `hookviz/`,
    a notebook cell's as `<cell>`."""
    text = _CELL_FILE.sub("<cell>", text)
    text = _INSTALLED.sub("", text)
    return text.replace(str(Path(_PACKAGE).parent) + os.sep, "")


def _short(file: str, line: int) -> str:
    """A file:line a person reads: torch's files from `torch/`, a notebook cell as `<cell>`."""
    if not file:
        return ""
    shown = file.replace("\\", "/")
    if "/torch/" in shown and "site-packages" in shown:
        shown = "torch/" + shown.split("/torch/", 1)[1]
    elif re.search(r"ipykernel_\d+|<ipython-input-", shown):
        shown = "<cell>"
    return f"{shown}:{line}"


@dataclass
class _Row:
    """One row of the report as it is built: the hook's spec and its key in the firings."""

    place: tuple  # the firings' key: the spec's key, plus the module's path for a global hook
    path: str
    spec: Spec


def _rows(plan: Plan, eager: Run, compiled: Run) -> list[_Row]:
    """One row per hook, and per module a global hook fired on, in the order hooks were listed."""
    specs = {**compiled.specs, **eager.specs}
    keys = list(eager.specs) + [k for k in compiled.specs if k not in eager.specs]
    fired_on: dict[tuple, list[str]] = {}
    for run in (eager, compiled):
        for f in run.firings:
            if len(f.key) == 5 and f.key[4] not in fired_on.setdefault(f.key[:4], []):
                fired_on[f.key[:4]].append(f.key[4])
    rows = []
    for key in keys:
        spec = specs[key]
        if KINDS[spec.kind].target == GLOBAL:
            for path in _module_order(plan.model, fired_on.get(key, [])):
                rows.append(_Row((*key, path), path, spec))
        else:
            rows.append(_Row(key, spec.path, spec))
    return rows


def _hooks(plan, eager, compiled, breaks, recompiles, guard_reasons, raw_breaks, config):
    rows = _rows(plan, eager, compiled)
    ranked = sorted({id(r.spec): r.spec for r in rows}.values(), key=lambda s: s.handle_id)
    order = {id(spec): i + 1 for i, spec in enumerate(ranked)}
    context = _Context(compiled, breaks, recompiles, raw_breaks, guard_reasons, config)
    hooks = []
    for row in rows:
        h = _hook_row(row.place, row.path, row.spec, order[id(row.spec)], eager, compiled, plan)
        hooks.append(dataclasses.replace(h, causes=tuple(context.causes(h, row.spec))))
    return hooks, [row.place for row in rows]


def _module_order(model: nn.Module, paths: list[str]) -> list[str]:
    known = [p for p, _ in model.named_modules()]
    return sorted(paths, key=lambda p: (p not in known, known.index(p) if p in known else 0))


def _hook_row(place, path, spec, order, eager, compiled, plan) -> HookComparison:
    def steps(run, how=None):
        return tuple(
            sorted(
                {f.step for f in run.firings if f.key == place and (how is None or f.how == how)}
            )
        )

    label = spec.label
    if spec.kind.startswith("global_"):
        module = dict(plan.model.named_modules()).get(path)
        label = "OptimizedModule" if path == WRAPPER else display_name(path, module or plan.model)
    values = []
    for step in sorted(set(steps(eager)) & set(steps(compiled))):
        a = _last(eager, place, step)
        b = _last(compiled, place, step)
        if b.inferred:  # a quiet hook: nothing of its own was kept
            continue
        if a.seen or a.returned or b.seen or b.returned:
            values.append(_compare(a.seen + a.returned, b.seen + b.returned, step))
    return HookComparison(
        order,
        path,
        label,
        spec.kind,
        spec.name,
        spec.registered_at,
        steps(eager),
        steps(compiled),
        steps(compiled, GRAPH),
        values=tuple(values),
        inferred=tuple(sorted({f.step for f in compiled.firings if f.key == place and f.inferred})),
    )


def _last(run: Run, key: tuple, step: int) -> Firing:
    found = [f for f in run.firings if f.key == key and f.step == step]
    graph = [f for f in found if f.how == GRAPH]
    return (graph or found)[-1]


def _compare(a: list[torch.Tensor], b: list[torch.Tensor], step: int = 0) -> ValueCheck:
    if len(a) != len(b):
        return ValueCheck(step, False, None, f"{len(a)} tensors eagerly, {len(b)} compiled")
    worst = 0.0
    for x, y in zip(a, b, strict=True):
        if x.shape != y.shape:
            return ValueCheck(step, False, None, f"shape {tuple(x.shape)} against {tuple(y.shape)}")
        if not x.is_floating_point() or not y.is_floating_point():
            if not torch.equal(x, y):
                return ValueCheck(step, False, None, "different values")
            continue
        if x.numel():
            worst = max(worst, float((x.double() - y.double()).abs().max()))
        if not torch.allclose(x.double(), y.double(), rtol=RTOL, atol=ATOL, equal_nan=True):
            return ValueCheck(step, False, worst)
    return ValueCheck(step, True, worst)


class _Context:
    """Gives each hook the causes torch's records point at."""

    def __init__(self, compiled, breaks, recompiles, raw_breaks, guard_reasons, config):
        self.compiled, self.config = compiled, config
        self.breaks, self.recompiles = breaks, recompiles
        self.raw_breaks = raw_breaks
        self.guard_reasons = guard_reasons  # compile id -> the guard that failed, in torch's words

    def causes(self, h: HookComparison, spec: Spec) -> list[Cause]:
        found = self._own(h, spec)
        outside = [s for s in h.compiled if s not in h.in_graph]
        backward = KINDS[acting_as(h.kind)].backward
        if outside and backward:
            why = _AUTOGRAD_WHY[bool(self.config.get("compiled_autograd"))]
            found.append(Cause("autograd", None, _AUTOGRAD.format(why=why), "", "the run"))
        elif outside and h.path in _OUTSIDE:
            found.append(Cause("outside_dynamo", None, _OUTSIDE[h.path], "", "the run"))
        elif outside and not any(c.kind in ("graph_break", "recompile_limit") for c in found):
            found += self._in_the_wake(max(outside))
        if (
            h.missed
            and spec.empty_before
            and not any(c.kind.startswith("recompile") for c in found)
        ):
            found.append(
                Cause(
                    "empty_hook_dict",
                    h.registered_at,
                    _empty_dict_text(h.kind),
                    "",
                    "torch._dynamo.config.skip_nnmodule_hook_guards",
                )
            )
        if spec.key in self.compiled.quiet:
            found.append(Cause("higher_order_op", None, _HIGHER_ORDER_OP, "", "torch's comptime"))
        error = self.compiled.error
        if error and h.missed and error.step is not None and max(h.missed) >= error.step:
            found.append(Cause("error", error.step, str(error), "", "the run"))
        return found

    def _own(self, h: HookComparison, spec: Spec) -> list[Cause]:
        """The breaks and recompiles torch's records tie to this hook: its code in a break's
        traceback or a failed guard's source, a module-level backward hook break, a guard on
        its hook dict."""
        found = []
        module_backward = acting_as(h.kind) in ("backward", "backward_pre")
        for b, raw in zip(self.breaks, self.raw_breaks, strict=True):
            in_its_code = spec.code and any(in_code(spec.code, f.file, f.line) for f in raw.frames)
            by_kind = (
                b.gb_id == dynamo_reading.MODULE_BACKWARD_HOOKS
                and module_backward
                and h.registered_at <= b.step
            )
            if in_its_code or by_kind:
                where = b.user_frame or b.where
                found.append(Cause("graph_break", b.step, b.reason, where, "graph_breaks log"))
        for r in self.recompiles:
            text = self.guard_reasons.get(r.compile_id, "")
            if self._guard_points_at(text, spec, h):
                kind = "recompile_limit" if r.limit_hit else "recompile"
                found.append(Cause(kind, r.step, r.reason, r.where, "compilation metrics"))
        return found

    def _in_the_wake(self, last_step: int) -> list[Cause]:
        """A hook that ran eagerly with no record of its own: the breaks and recompile limits
        that made its frame run eagerly are another hook's (or the model's) doing."""
        found = [
            Cause(
                "graph_break", b.step, b.reason, b.user_frame or b.where, "graph_breaks log", False
            )
            for b in self.breaks
            if b.step <= last_step
        ]
        found += [
            Cause("recompile_limit", r.step, r.reason, r.where, "compilation metrics", False)
            for r in self.recompiles
            if r.limit_hit and r.step <= last_step
        ]
        return found

    def _guard_points_at(self, text: str, spec: Spec, h: HookComparison) -> bool:
        if spec.code:
            for m in _GUARD_REF.finditer(text):
                if in_code(spec.code, m["file"], int(m["line"])):
                    return True
            for m in dynamo_reading._FRAME.finditer(text):
                if in_code(spec.code, m["file"], int(m["line"])):
                    return True
        for m in _HOOK_DICT.finditer(text):
            path = ".".join(re.findall(r"_modules\['([^']*)'\]", m["owner"]))
            if path == h.path and KINDS[h.kind].attribute == m["attr"]:
                return True
        return False


_OUTSIDE = {
    "": (
        "The root's own hooks run outside dynamo: torch.compile(model) starts compiling at the "
        "root's forward, and the root's __call__, which calls its hooks, runs eagerly."
    ),
    WRAPPER: (
        "torch.compile(model) wraps the model in an OptimizedModule, a module of its own: global "
        "hooks fire for it too, eagerly (torch warns about this)."
    ),
}
_HIGHER_ORDER_OP = (
    "Called inside a higher-order op (torch.utils.checkpoint, torch.cond, ...), where dynamo "
    "refuses any side effect outside the op, hookviz's own too: that it ran in a graph is read "
    "from the compile that traced it (torch._dynamo.comptime) and from the hooks traced beside it "
    "in that compile, which did run; with no such hook beside it, hookviz cannot tell."
)
_AUTOGRAD = (
    "Backward hooks are called by autograd's engine while backward runs, outside dynamo's "
    "graphs ({why})."
)
_AUTOGRAD_WHY = {
    False: "torch._dynamo.config.compiled_autograd is off",
    True: "compiled autograd is on, but it traces only a backward run inside the compiled "
    "function, and each step calls backward after the model returned",
}


def _empty_dict_text(kind: str) -> str:
    where = "the global hook dict" if KINDS[kind].target == GLOBAL else "its module's hook dict"
    return (
        f"Registered after dynamo compiled the frame that calls it, when {where} for this kind "
        "was empty: dynamo installs no guard on an empty hook dict (torch._dynamo.config."
        "skip_nnmodule_hook_guards), so nothing recompiled and the graph traced without this "
        "hook kept running."
    )


# -- the timeline ---------------------------------------------------------------------------------


def _moments(report, places, eager, compiled, breaks, compiles) -> list[Moment]:
    """Both runs side by side: per step, torch's events first (they happen while dynamo compiles
    a frame, before it runs), then the firings, eager and compiled aligned hook by hook."""
    index = {place: i for i, place in enumerate(places)}
    moments: list[Moment] = []
    for step in range(report.steps):
        events = []
        for i, b in enumerate(breaks):
            if report.graph_breaks[i].step == step:
                events.append((b.time_us, "graph_break", i))
        for i, r in enumerate(report.recompiles):
            if r.step == step:
                when = next((c.start_us for c in compiles if c.compile_id == r.compile_id), 0)
                events.append((when, "recompile_limit" if r.limit_hit else "recompile", i))
        for _, kind, i in sorted(events):
            moments.append(Moment(step, None, False, None, kind, i))
        for i, error in enumerate(report.errors):
            if error.step == step:
                moments.append(Moment(step, None, False, None, "error", i))
        left = [index[f.key] for f in eager.firings if f.step == step and f.key in index]
        right = _compiled_order(compiled, step, index, left)
        matcher = difflib.SequenceMatcher(a=[h for h, _ in right], b=left, autojunk=False)
        a = b = 0
        for block in matcher.get_matching_blocks():
            while a < block.a or b < block.b:
                if b < block.b:
                    moments.append(Moment(step, left[b], True, None))
                    b += 1
                else:
                    moments.append(Moment(step, right[a][0], False, right[a][1]))
                    a += 1
            for k in range(block.size):
                moments.append(Moment(step, left[b + k], True, right[a + k][1]))
            a, b = a + block.size, b + block.size
    return moments


def _compiled_order(
    run: Run, step: int, index: dict, eager_order: list[int]
) -> list[tuple[int, str]]:
    """The compiled run's firings of `step`, in the eager run's order where they match it: a
    traced hook leaves no time of its own (it ran inside a graph), so it takes the place of its
    hook's calls in the eager run; a hook called eagerly keeps its calls; a firing the eager run
    does not have goes where its time puts it among the eagerly called ones."""
    found = [f for f in run.firings if f.step == step and f.key in index]
    traced = {index[f.key] for f in found if f.how == GRAPH}
    called: dict[int, list[int]] = {}
    for f in found:
        if f.how == EAGER:
            called.setdefault(index[f.key], []).append(f.clock)
    order: list[tuple[int, str, int | None]] = []
    for h in eager_order:
        if called.get(h):
            order.append((h, EAGER, called[h].pop(0)))
        elif h in traced:
            order.append((h, GRAPH, None))
    for f in found:  # firings the eager run does not have
        h = index[f.key]
        if f.how == GRAPH and h not in eager_order:
            order.append((h, GRAPH, None))
        elif f.how == EAGER and f.clock in called.get(h, []):
            later = [i for i, (_, _, c) in enumerate(order) if c is not None and c > f.clock]
            order.insert(later[0] if later else len(order), (h, EAGER, f.clock))
    return [(h, how) for h, how, _ in order]
