"""compare_compiled(): which of a model's hooks still fire under `torch.compile`, and why not.

The same steps run twice, each on a deep copy of the model with its hooks: eagerly, then under
`torch.compile`. Each hook is observed where it sits (same dict, same handle id, same order):

- when eager code calls it (the eager run; a graph break's fallback; a frame past
  `recompile_limit`; the root's own hooks; autograd calling a backward hook), the observer
  notes the call as it happens;
- when dynamo traces it into a graph, the observer stores what the hook saw on an object of its
  own, a side effect dynamo replays after the graph runs: no op, no guard and no frame is added,
  so the graphs, breaks and recompiles are those of the model without hookviz
  (tests/test_compiled.py checks this against the bare model). A traced hook is seen once per
  step, whatever the number of its calls.

What torch's compiler did comes from torch itself (`hookviz.dynamo_reading`): each graph break
with torch's reason and the user code traceback, each recompile with the guard that failed,
the counts from `torch._dynamo.utils.counters`. A hook is given a cause only where torch's record
points at it: a break or a guard failure in its code, a module-level backward hook break, a
guard on its hook dict, or the facts of the run (registered after compiling into a hook dict
that was empty then; the root's hooks; autograd's backward).
"""

from __future__ import annotations

import copy
import dataclasses
import difflib
import functools
import itertools
import re
import time
import traceback
import types
import warnings
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
import torch.nn.modules.module as torch_module
from torch import nn

from . import dynamo_reading
from .hook_kinds import GLOBAL, KINDS, MODULE, TENSOR, acting_as
from .inventory import GLOBAL_LABEL, HookInfo, callable_name, list_hooks
from .tree import check_compiled, check_model, display_name

# How a hook ran in the compiled run: traced into one of dynamo's graphs, or called by eager code.
GRAPH, EAGER = "graph", "eager"
# What happened to a hook, compiled against eager (HookComparison.status), in the report's order.
STATUSES = ("in_graph", "outside_graph", "missed", "extra", "never")
# Why a hook ran outside the graphs, or not at all (Cause.kind).
CAUSES = (
    "graph_break",
    "recompile",
    "recompile_limit",
    "empty_hook_dict",
    "outside_dynamo",
    "autograd",
    "higher_order_op",
    "error",
)
# The name hookviz gives the OptimizedModule wrapper, where global hooks fire too.
WRAPPER = "(OptimizedModule)"
# torch.compile's own keyword arguments: what **compile_kwargs may hold.
COMPILE_KWARGS = ("fullgraph", "dynamic", "mode", "options", "disable")
# Values are compared with torch.testing's float32 tolerances.
RTOL, ATOL = 1.3e-6, 1e-5
SEED = 0  # both runs start from this seed, so that dropout draws the same masks

# Which argument of each kind of hook is the value it can replace (what is compared).
_SEEN_AT = {"forward_pre": 1, "forward": -1, "backward_pre": 1, "backward": 1}
_SEEN_AT |= {"tensor": 0, "post_accumulate_grad": 0}
_TORCH_FILES = ("/torch/", "\\torch\\")
_PACKAGE = str(Path(__file__).resolve().parent)
_GUARD_REF = re.compile(r"#\s*(?P<file>[^\s#]+):(?P<line>\d+) in (?P<function>\S+)\s*$", re.M)
# A guard on the length of a module's hook dict (not on one hook in it), as dynamo writes it.
_HOOK_DICT = re.compile(
    r"len\((?P<owner>[\w.\[\]'\"]*?)\.(?P<attr>_(?:forward_pre|forward|backward_pre|backward)_hooks)\)"
)


@dataclass(frozen=True)
class Cause:
    """Why a hook ran outside the graphs, or did not run: what torch reported, and where."""

    kind: str  # one of CAUSES
    step: int | None  # the step it happened in (None: not tied to one)
    text: str  # torch's words (a break's reason, the guard that failed), or the fact hookviz saw
    where: str  # the user's code it points at, "file:line" ("" when none)
    source: str  # where the fact was read: "graph_breaks log", "compilation metrics", ...
    own: bool = True  # False: torch's record is about another hook, this one ran in its wake

    @property
    def title(self) -> str:
        """The cause in one line: what broke or which guard failed, in torch's words."""
        return _title(self.text)

    def __str__(self) -> str:
        where = f" at {self.where}" if self.where else ""
        step = f"step {self.step}: " if self.step is not None else ""
        wake = " (another hook's, or the model's)" if not self.own else ""
        return f"{step}{self.kind}{wake}{where}: {self.title}"


@dataclass(frozen=True)
class ValueCheck:
    """What a hook saw (and returned) at one step, eager against compiled."""

    step: int
    equal: bool
    max_abs_diff: float | None  # None when the shapes or the number of tensors differ
    note: str = ""


@dataclass(frozen=True)
class HookComparison:
    """One hook on one module: when it fired eagerly and compiled, how, and why not."""

    order: int  # registration order across the model (1 = first registered)
    path: str  # the module's path ("" the root, WRAPPER the torch.compile wrapper)
    label: str  # as hookviz names places: the root by its class name, "path.param" for a parameter
    kind: str  # a hook kind of hook_kinds.KINDS (a global hook keeps its global_ kind)
    name: str  # the hook's name
    registered_at: int  # the step before which it was registered (0: before the run)
    eager: tuple[int, ...]  # the steps it fired in, in the eager run
    compiled: tuple[int, ...]  # the steps it fired in, compiled (in a graph or not)
    in_graph: tuple[int, ...]  # of those, the steps dynamo traced it into a graph
    causes: tuple[Cause, ...] = ()
    # of in_graph, the steps known from the compile that traced it and the hooks traced beside
    # it, not from a store of its own (a hook inside a higher-order op: see Cause "higher_order_op")
    inferred: tuple[int, ...] = ()
    values: tuple[ValueCheck, ...] = ()

    @property
    def fired_eagerly(self) -> bool:
        """It fired at least once in the eager run."""
        return bool(self.eager)

    @property
    def fired_compiled(self) -> bool:
        """It fired at least once in the compiled run."""
        return bool(self.compiled)

    @property
    def missed(self) -> tuple[int, ...]:
        """The steps it fired in eagerly but not compiled."""
        return tuple(s for s in self.eager if s not in self.compiled)

    @property
    def status(self) -> str:
        """One of STATUSES: in_graph, outside_graph, missed, extra or never."""
        if self.missed:
            return "missed"
        if any(s not in self.eager for s in self.compiled):
            return "extra"
        if not self.eager:
            return "never"
        return "in_graph" if set(self.compiled) <= set(self.in_graph) else "outside_graph"

    @property
    def values_equal(self) -> bool | None:
        """Whether every step's values agreed (None: no step where both runs saw tensors)."""
        return all(v.equal for v in self.values) if self.values else None

    def __str__(self) -> str:
        return f"{self.label} {self.kind} {self.name}: {self.status}"


@dataclass(frozen=True)
class GraphBreak:
    """One graph break, as torch reported it."""

    step: int
    reason: str  # torch's words (what, its explanation, its hints)
    gb_id: str | None  # torch's id for this kind of break ("gb0083")
    where: str  # "file:line": where torch says the break is (its "in user code at")
    user_frame: str  # the innermost frame of the user's code in its traceback ("" if none)
    frames: tuple[str, ...] = field(default=(), repr=False)  # the traceback, "file:line in fn"

    @property
    def title(self) -> str:
        """What broke, in torch's words: the line before its explanation."""
        return _title(self.reason)


@dataclass(frozen=True)
class Recompile:
    """A frame dynamo compiled again (or refused to, past `recompile_limit`)."""

    step: int
    compile_id: str  # torch's "frame/attempt"
    function: str  # the function of the frame
    where: str  # "file:line" of that function
    reason: str  # the guard(s) that failed, in torch's words
    limit_hit: bool  # True: the frame hit recompile_limit and runs eagerly from now on


@dataclass(frozen=True)
class RunError:
    """An exception that stopped one of the runs."""

    run: str  # "eager", "compiled" or "compile" (torch.compile itself refused)
    step: int | None
    type: str
    message: str
    hook: str = ""  # the hook it came from ("label kind name"), when its traceback passes one

    def __str__(self) -> str:
        where = f" at step {self.step}" if self.step is not None else ""
        hook = f" in hook {self.hook}" if self.hook else ""
        return f"the {self.run} run raised {self.type}{where}{hook}: {self.message}"


@dataclass(frozen=True)
class Moment:
    """One column of the side-by-side timeline: a firing in either run, or one of torch's events."""

    step: int
    hook: int | None  # index into CompiledReport.hooks (None for an event)
    eager: bool  # the eager run has this firing
    compiled: str | None  # GRAPH or EAGER when the compiled run has it, else None
    event: str | None = None  # "graph_break", "recompile", "recompile_limit" or "error"
    index: int | None = None  # the event's index in graph_breaks / recompiles


@dataclass
class CompiledReport:
    """What `compare_compiled` saw: per hook, eager against compiled, and what torch reported."""

    model_name: str
    backend: str
    steps: int
    hooks: list[HookComparison]
    graph_breaks: list[GraphBreak]
    recompiles: list[Recompile]
    graph_count: int  # graphs dynamo made (counters["stats"]["unique_graphs"])
    # the graph breaks torch._dynamo.utils.counters["graph_break"] counted: those at a call it
    # could not trace (it leaves out a break at a data-dependent branch, or in a frame it skips)
    counted_graph_breaks: int
    outputs_equal: list[bool]  # per step: the model's outputs, eager against compiled
    errors: list[RunError] = field(default_factory=list)  # what stopped a run, eager's first
    # what torch warned, each once (kept here, not written to stderr)
    warnings: list[str] = field(default_factory=list)
    config: dict[str, Any] = field(default_factory=dict)  # dynamo's settings that mattered
    compile_kwargs: dict[str, Any] = field(default_factory=dict)
    moments: list[Moment] = field(default_factory=list, repr=False)

    @property
    def ok(self) -> bool:
        """Both runs went through every step."""
        return not self.errors

    @property
    def error(self) -> RunError | None:
        """The first error that stopped a run (None when both went through)."""
        return self.errors[0] if self.errors else None

    @property
    def graph_break_count(self) -> int:
        """Every graph break torch logged (what `TORCH_LOGS="graph_breaks"` prints), each once."""
        return len(self.graph_breaks)

    @property
    def recompile_count(self) -> int:
        """Frames compiled again (the one refused past recompile_limit included)."""
        return len(self.recompiles)

    @property
    def missed(self) -> list[HookComparison]:
        """The hooks that fired eagerly at some step where they did not fire compiled."""
        return [h for h in self.hooks if h.status == "missed"]

    def hook(self, path: str, kind: str, name: str | None = None) -> HookComparison:
        """The hook on module `path` of `kind` (and `name`, when there are several)."""
        found = [
            h
            for h in self.hooks
            if h.path == path and h.kind == kind and (name is None or h.name == name)
        ]
        if len(found) != 1:
            have = ", ".join(f"({h.path!r}, {h.kind!r}, {h.name!r})" for h in self.hooks)
            what = "no hook" if not found else f"{len(found)} hooks"
            raise KeyError(
                f"{what} on {path!r} of kind {kind!r}"
                + (f" named {name!r}" if name else "")
                + f". The report has: {have or 'no hooks'}."
                + (" Pass name= to choose one." if found else "")
            )
        return found[0]

    def statuses(self) -> dict[str, int]:
        """How many hooks have each status, in STATUSES order (zeros left out)."""
        counts = {s: sum(h.status == s for h in self.hooks) for s in STATUSES}
        return {s: n for s, n in counts.items() if n}

    def table(self) -> str:
        """One line per hook: where, kind, the steps it fired in each run, and its first cause."""
        lines = [f"{'#':>2}  {'hook':<28} {'eager':<10} {'compiled':<14} status"]
        for h in self.hooks:
            compiled = ",".join(f"{s}{'' if s in h.in_graph else '*'}" for s in h.compiled)
            hook = f"{h.label} {h.kind}"
            lines.append(
                f"{h.order:>2}  {hook:<28} {_steps(h.eager):<10} {compiled or '-':<14} {h.status}"
            )
            for cause in h.causes[:2]:
                lines.append(f"{'':>4}{cause}")
        lines.append("(* ran outside the graphs)")
        return "\n".join(lines)

    def __repr__(self) -> str:
        statuses = ", ".join(f"{n} {s.replace('_', ' ')}" for s, n in self.statuses().items())
        error = ""
        if self.error and self.error.run == "compile":
            error = ", torch.compile failed"
        elif self.error:
            at = f" at step {self.error.step}" if self.error.step is not None else ""
            error = f", the {self.error.run} run failed{at}"
        return (
            f"CompiledReport({self.model_name}, backend={self.backend!r}, "
            f"{counted(self.steps, 'step')}: "
            f"{counted(len(self.hooks), 'hook')} ({statuses or 'none fired'}), "
            f"{counted(self.graph_break_count, 'graph break')}, "
            f"{counted(self.recompile_count, 'recompile')}{error})"
        )


def _title(reason: str) -> str:
    """The line of torch's reason that names the break (the one before "Explanation:")."""
    lines = [line for line in reason.splitlines() if line.strip()]
    for i, line in enumerate(lines):
        if line.strip().startswith("Explanation:") and i:
            return lines[i - 1].strip()
    return lines[0].strip() if lines else ""


def counted(n: int, noun: str) -> str:
    """`n` and `noun`, plural unless `n` is 1: "1 hook", "3 hooks"."""
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _steps(steps: tuple[int, ...]) -> str:
    return ",".join(map(str, steps)) or "-"


def compare_compiled(
    model: nn.Module,
    *inputs: Any,
    loss_fn: Callable[[Any], torch.Tensor] | None = None,
    backward: bool = True,
    backend: str | Callable = "eager",
    steps: int = 3,
    before_step: Callable[[nn.Module, int], Any] | None = None,
    **compile_kwargs: Any,
) -> CompiledReport:
    """Run `steps` steps eagerly and under `torch.compile`, and report which hooks fired in each.

    Each run works on a deep copy of `model` with its hooks (module, parameter and global
    hooks); the model you pass, its hooks and your inputs are left as they were, and every hook
    hookviz wraps or `before_step` adds is gone afterwards. Your hooks do run, twice per step
    (once per run): what they write outside the module they are given, they write.

    `torch._dynamo.reset()` is called before and after the compiled run so that no compiled code
    leaks from one comparison into the next: it is global, so every other compiled function in
    this process compiles again on its next call.

    Parameters
    ----------
    model : nn.Module
        The model, with the hooks to compare. Not a `torch.compile`'d one: pass the original.
    inputs : Any
        The positional arguments of one call, the same at every step.
    loss_fn : callable or None
        Turns the output into the scalar each step's backward starts from; None sums the
        floating-point outputs that need a gradient.
    backward : bool
        Run a backward each step (backward hooks fire only then).
    backend : str or callable
        `torch.compile`'s backend; `"eager"` (the default) runs dynamo's graphs as they are,
        which is quick and shows every graph break and recompile.
    steps : int
        How many steps each run takes (a recompile limit of 8 needs 9 steps to show).
    before_step : callable or None
        Called as `before_step(model_copy, step)` before each step of each run, on the copy
        being run (the module, never the compiled wrapper): register a hook here to see what a
        hook added after the first compiled call does.
    compile_kwargs : Any
        More arguments for `torch.compile`: `fullgraph`, `dynamic`, `mode`, `options`.

    Returns
    -------
    CompiledReport
        Per hook: the steps it fired in each run, whether it was traced into a graph, its
        causes and its values compared; the graph breaks and recompiles; and, when a run failed
        (the model does not compile, the backend is missing, a hook raises), the error.

    Raises
    ------
    TypeError
        When `model` is not a module, is a compiled wrapper, or an argument has the wrong type.

    Examples
    --------
    >>> import torch
    >>> from torch import nn
    >>> import hookviz as hv
    >>> model = nn.Sequential(nn.Linear(3, 3), nn.ReLU(), nn.Linear(3, 1))
    >>> handle = model[0].register_forward_hook(lambda module, inputs, output: None)
    >>> report = hv.compare_compiled(model, torch.ones(2, 3), steps=2)
    >>> report.hook("0", "forward").status
    'in_graph'
    >>> report.graph_break_count, report.recompile_count
    (0, 0)
    >>> handle.remove()
    """
    check_compiled(check_model(model, what="compare_compiled's model"), "compare_compiled()")
    _check_arguments(inputs, loss_fn, backend, steps, before_step, compile_kwargs)
    name = type(model).__name__
    backend_name = backend if isinstance(backend, str) else callable_name(backend)
    problem = _backend_problem(backend)
    plan = _Plan(model, inputs, loss_fn, backward, steps, before_step)

    eager = plan.run(compiler=None)
    compiled = _Run(error=problem) if problem else None
    config: dict[str, Any] = {}
    counts = dynamo_reading.Counts()
    breaks: list[dynamo_reading.BreakRecord] = []
    compiles: list[dynamo_reading.CompileRecord] = []
    torch_warnings: list[str] = []
    quiet: frozenset = frozenset()
    while compiled is None:
        with dynamo_reading.Watch(plan.clock) as watch:
            config = dynamo_reading.config()
            compiled = plan.run(
                compiler=lambda module: torch.compile(module, backend=backend, **compile_kwargs),
                quiet=quiet,
            )
            counts, compiles = watch.counts(), watch.compiles()
            breaks = watch.breaks
            torch_warnings = watch.warnings
            compiled.quiet = quiet
            compiled.traced = [
                (compiled.key_of[n], cid)
                for n, cid in dynamo_reading.TRACED
                if n in compiled.key_of
            ]
        more = _in_higher_order_ops(breaks, compiled) - quiet
        if more:  # the observer's store broke a higher-order op: again, those hooks quiet
            quiet, compiled = quiet | more, None
    _infer_quiet_firings(compiled)
    return _report(
        name,
        backend_name,
        plan,
        eager,
        compiled,
        counts,
        breaks,
        compiles,
        torch_warnings,
        config,
        compile_kwargs,
    )


def _in_higher_order_ops(breaks: list, run: _Run) -> frozenset:
    """The hooks whose store broke the graph: dynamo refuses, inside a higher-order op
    (`torch.utils.checkpoint`, `torch.cond`...), any side effect outside it, the observer's too.
    They are the forward hooks that then ran eagerly, in the step of such a break."""
    steps = {
        run.step_at(b.time_us)
        for b in breaks
        if b.frames and b.frames[-1].file == __file__ and b.frames[-1].function == "observed"
    }
    return frozenset(
        f.key[:4]
        for f in run.firings
        if f.step in steps
        and f.how == EAGER
        and not KINDS[acting_as(f.key[1])].backward
        and (f.key[4] if len(f.key) == 5 else f.key[0]) not in _OUTSIDE
    )


def _infer_quiet_firings(run: _Run) -> None:
    """A quiet hook ran in a graph at step s when a hook dynamo traced beside it, in the same
    compile (its last attempt), ran in a graph at step s: a graph runs whole or not at all."""
    last: dict[str, str] = {}  # frame compile ("0/1") -> its last attempt ("0/1_2")
    for _, cid in run.traced:
        base, _, attempt = cid.partition("_")
        if int(attempt or 0) >= int(last.get(base, base).partition("_")[2] or 0):
            last[base] = cid
    kept = set(last.values())
    beside: dict[str, set] = {}
    for key, cid in run.traced:
        if cid in kept:
            beside.setdefault(cid, set()).add(key)
    in_graph = {(f.key, f.step) for f in run.firings if f.how == GRAPH}
    for quiet in run.quiet:
        for keys in beside.values():
            if quiet not in keys:
                continue
            for step in range(len(run.step_starts)):
                loud = [k for k in keys - run.quiet if (k, step) in in_graph]
                if loud and (quiet, step) not in in_graph:
                    run.firings.append(_Firing(-1, step, quiet, GRAPH, [], [], inferred=True))
                    in_graph.add((quiet, step))


def _check_arguments(inputs, loss_fn, backend, steps, before_step, compile_kwargs) -> None:
    if len(inputs) == 1 and isinstance(inputs[0], nn.Module):
        raise TypeError(
            "inputs must be what you would pass to the model (tensors), not a module "
            f"({type(inputs[0]).__name__}). Call it as compare_compiled(model, x)."
        )
    if isinstance(steps, bool) or not isinstance(steps, int) or steps < 1:
        raise TypeError(f"steps must be a whole number of steps, 1 or more; got {steps!r}.")
    for what, value in (("loss_fn", loss_fn), ("before_step", before_step)):
        if value is not None and not callable(value):
            raise TypeError(f"{what} must be a function or None, got {type(value).__name__}.")
    if not (isinstance(backend, str) or callable(backend)):
        raise TypeError(
            f"backend must be a backend's name (such as 'eager' or 'inductor') or a compiler "
            f"function, got {type(backend).__name__}."
        )
    unknown = sorted(set(compile_kwargs) - set(COMPILE_KWARGS))
    if unknown:
        raise TypeError(
            f"compare_compiled() got {', '.join(map(repr, unknown))}: besides its own arguments "
            f"it takes only torch.compile's ({', '.join(COMPILE_KWARGS)}). Pass the model's "
            "inputs positionally: compare_compiled(model, x, y)."
        )


def _backend_problem(backend: str | Callable) -> RunError | None:
    """A RunError when `backend` names no backend torch.compile knows here."""
    if not isinstance(backend, str) or backend in dynamo_reading.backends():
        return None
    known = ", ".join(dynamo_reading.backends())
    return RunError(
        "compile",
        None,
        "InvalidBackend",
        f"torch.compile has no backend {backend!r} here. Pass one of: {known} "
        "('eager' runs dynamo's graphs as they are; 'inductor' is torch.compile's default).",
    )


# -- the two runs ---------------------------------------------------------------------------------


@dataclass
class _Spec:
    """A hook being observed, the same in both runs: where it is and what it is."""

    key: tuple  # (path, kind, parameter, ordinal among hooks of that place and kind)
    path: str
    label: str
    kind: str
    name: str
    registered_at: int
    handle_id: int
    code: tuple[str, int, int] | None  # its code: (file, first line, last line)
    empty_before: bool  # its hook dict was empty just before it was registered


@dataclass
class _Firing:
    clock: int
    step: int
    key: tuple  # the spec's key, and for a global hook the module's path last
    how: str  # GRAPH or EAGER
    seen: list[torch.Tensor]
    returned: list[torch.Tensor]
    inferred: bool = False  # in a graph, read from the compile that traced it (a quiet hook)


@dataclass
class _Run:
    """One run's record."""

    firings: list[_Firing] = field(default_factory=list)
    outputs: list[list[torch.Tensor]] = field(default_factory=list)
    specs: dict[tuple, _Spec] = field(default_factory=dict)
    error: RunError | None = None
    warnings: list[str] = field(default_factory=list)
    step_starts: list[int] = field(default_factory=list)  # when each step started (µs, epoch)
    quiet: frozenset = frozenset()  # keys of the hooks not watched inside graphs
    key_of: dict[int, tuple] = field(default_factory=dict)  # the observer's number -> key
    traced: list[tuple[tuple, str]] = field(default_factory=list)  # (key, compile id) traced

    def step_at(self, time_us: int) -> int:
        """The step that was running at `time_us` (microseconds since the epoch)."""
        step = 0
        for s, start in enumerate(self.step_starts):
            if start <= time_us:
                step = s
        return step


class _Signals:
    """Where a hook traced into a graph leaves what it saw: dynamo replays the store after the graph."""


class _Plan:
    """The steps to run, the same for both runs."""

    def __init__(self, model, inputs, loss_fn, backward, steps, before_step):
        self.model, self.inputs, self.loss_fn = model, inputs, loss_fn
        self.backward, self.steps, self.before_step = backward, steps, before_step
        self._clock = itertools.count()

    def clock(self) -> int:
        return next(self._clock)

    def run(
        self, compiler: Callable[[nn.Module], Callable] | None, quiet: frozenset = frozenset()
    ) -> _Run:
        """The steps on a fresh deep copy: eagerly (`compiler` None) or through `compiler`;
        the hooks of `quiet` are not watched inside graphs (they run in a higher-order op)."""
        run = _Run()
        try:
            module = _deep_copy(self.model)
        except Exception as error:  # noqa: BLE001 (the report says what deepcopy refused)
            run.error = RunError(
                "eager" if compiler is None else "compiled",
                None,
                type(error).__name__,
                f"compare_compiled runs on deep copies of the model (yours stays untouched), and "
                f"copy.deepcopy(model) raised: {error}",
            )
            return run
        observer = _Observer(module, run, self.clock, compiled=compiler is not None, quiet=quiet)
        with warnings.catch_warnings(record=True) as caught, torch.random.fork_rng(devices=[]):
            warnings.simplefilter("always")
            torch.manual_seed(SEED)
            try:
                observer.wrap_new(step=0)
                call = module if compiler is None else compiler(module)
                for step in range(self.steps):
                    self._step(module, call, observer, step)
            except Exception as error:  # noqa: BLE001 (the report says which run, step and hook)
                run.error = observer.error(error, "eager" if compiler is None else "compiled")
            finally:
                observer.restore()
        run.warnings = [f"{w.category.__name__}: {w.message}" for w in caught]
        return run

    def _step(self, module: nn.Module, call: Callable, observer: _Observer, step: int) -> None:
        observer.step = step
        observer.run.step_starts.append(time.time_ns() // 1000)
        if self.before_step is not None:
            observer.note_dicts()
            self.before_step(module, step)
            observer.wrap_new(step)
        for p in module.parameters():
            p.grad = None
        output = call(*_fresh(self.inputs))
        observer.run.outputs.append(_tensors(output))
        if self.backward:
            loss = self.loss_fn(output) if self.loss_fn is not None else _default_loss(output)
            if loss is not None and loss.requires_grad:
                loss.backward()
        observer.end_step(step)


def _deep_copy(model: nn.Module) -> nn.Module:
    """A deep copy with the parameters' hooks too (deepcopy drops a tensor's hook dicts)."""
    clone = copy.deepcopy(model)
    for (_, mine), (_, theirs) in zip(
        model.named_parameters(remove_duplicate=False),
        clone.named_parameters(remove_duplicate=False),
        strict=True,
    ):
        for kind in (k for k in KINDS.values() if k.target == TENSOR):
            hooks = getattr(mine, kind.attribute, None)
            if hooks:
                setattr(theirs, kind.attribute, OrderedDict(hooks))
    return clone


def _fresh(value: Any) -> Any:
    """The inputs again, each tensor a copy (its requires_grad kept): no .grad lands on yours."""
    if isinstance(value, torch.Tensor):
        return value.detach().clone().requires_grad_(value.requires_grad)
    if isinstance(value, tuple) and hasattr(value, "_fields"):  # a named tuple
        return type(value)(*(_fresh(v) for v in value))
    if isinstance(value, (tuple, list)):
        return type(value)(_fresh(v) for v in value)
    if isinstance(value, dict):
        return {k: _fresh(v) for k, v in value.items()}
    return value


def _default_loss(output: Any) -> torch.Tensor | None:
    tensors = [t for t in _tensors(output) if t.requires_grad and t.is_floating_point()]
    return sum(t.sum() for t in tensors) if tensors else None


def _tensors(value: Any) -> list[torch.Tensor]:
    """The tensors in `value` (a tensor, a tuple, list or dict of them, nested)."""
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (tuple, list)):
        return [t for v in value for t in _tensors(v)]
    if isinstance(value, dict):
        return [t for v in value.values() for t in _tensors(v)]
    return []


class _Observer:
    """Wraps every hook of one copy (and the global hooks) to see it fire; puts them back."""

    def __init__(
        self,
        module: nn.Module,
        run: _Run,
        clock: Callable[[], int],
        *,
        compiled: bool,
        quiet: frozenset = frozenset(),
    ):
        self.module, self.run, self.clock, self.compiled = module, run, clock, compiled
        self.quiet = quiet  # the keys of hooks that must leave no store in a graph
        self.comptime = dynamo_reading.comptime() if compiled else None
        self.step = 0
        self.signals = _Signals()
        self.kept: dict[tuple, tuple[str, list, list, int]] = {}  # key -> the last firing
        self.paths = {id(m): p for p, m in module.named_modules()}
        self.numbers = {p: i for i, p in enumerate(self.paths.values())}
        for path, m in module.named_modules():
            m.__dict__["_hookviz_number"] = self.numbers[path]
        self._globals: list[tuple[dict, int, Any]] = []  # (dict, handle id, original hook)
        self._dicts_before: dict[tuple[int, str], int] = {}
        self._globals_at_start = {
            kind.attribute: set(getattr(torch_module, kind.attribute)) for kind in _global_kinds()
        }
        self.record = self._recorder()
        self._ordinals: dict[tuple, int] = {}

    # -- wrapping -------------------------------------------------------------------------------

    def note_dicts(self) -> None:
        """How many hooks each dict holds now, before `before_step` may add some."""
        self._dicts_before = {
            (id(d), attr): len(d) for d, attr in self._all_dicts() if d is not None
        }

    def _all_dicts(self):
        for m in self.module.modules():
            for kind in KINDS.values():
                if kind.target == MODULE and kind.attribute:
                    yield getattr(m, kind.attribute, None), kind.attribute
        for p in self.module.parameters():
            for kind in KINDS.values():
                if kind.target == TENSOR:
                    yield getattr(p, kind.attribute, None), kind.attribute
        for kind in _global_kinds():
            yield getattr(torch_module, kind.attribute), kind.attribute

    def wrap_new(self, step: int) -> None:
        """Wrap every hook not wrapped yet: the copy's own, and those `before_step` added."""
        for info in list_hooks(self.module):
            if info.kind not in _SEEN_AT and acting_as(info.kind) not in _SEEN_AT:
                continue  # state_dict hooks and friends: not fired by a step
            hooks = _dict_of(info)
            if getattr(hooks[info.handle_id], "_hookviz_observed", False):
                continue
            spec = self._spec(info, step, hooks)
            wrapper = self._wrap(hooks[info.handle_id], spec, info)
            if info.target == "global":
                self._globals.append((hooks, info.handle_id, hooks[info.handle_id]))
            hooks[info.handle_id] = wrapper

    def _spec(self, info: HookInfo, step: int, hooks: dict) -> _Spec:
        place = (info.path, info.kind, info.parameter)
        ordinal = self._ordinals.get(place, 0)
        self._ordinals[place] = ordinal + 1
        key = (*place, ordinal)
        empty_before = self._dicts_before.get((id(hooks), _attribute(info)), 1) == 0
        if info.target == "global":
            empty_before = (
                step > 0 and not self._globals_at_start[_attribute(info)] and empty_before
            )
        spec = _Spec(
            key,
            info.path,
            GLOBAL_LABEL if info.target == "global" else info.where,
            info.kind,
            info.name,
            step,
            info.handle_id,
            _code_range(info.hook),
            empty_before and step > 0,
        )
        self.run.specs[key] = spec
        return spec

    def _wrap(self, hook: Callable, spec: _Spec, info: HookInfo) -> Callable:
        at = _SEEN_AT[acting_as(info.kind)]
        number = len(self.run.specs) - 1
        signals, record = self.signals, self.record
        is_global = info.target == "global"
        key = spec.key
        loud = key not in self.quiet  # quiet: inside a higher-order op, no store
        comptime, note = self.comptime, dynamo_reading.note_traced

        def observed(*args, **kwargs):
            result = hook(*args, **kwargs)
            if torch.compiler.is_compiling():  # dynamo is tracing this call into a graph
                hook_number = number  # noqa: F841 (note reads it while dynamo traces)
                comptime(note)
                if loud:
                    name = f"h{number}"
                    if is_global:
                        name = f"h{number}m{getattr(args[0], '_hookviz_number', -1)}"
                    setattr(signals, name, (_tensors(args[at]), _tensors(result)))
            else:
                record(key, args, result, at, is_global)
            return result

        if self.compiled:
            dynamo_reading.run_eagerly_when_called_from_eager_code(observed.__code__)
        functools.update_wrapper(observed, hook, updated=())  # its name, as list_hooks shows it
        observed._hookviz_observed = True
        self.run.key_of[number] = key
        return observed

    def _recorder(self) -> Callable:
        """The eager side of the observer, run with dynamo off (it must compile nothing)."""

        def record(key, args, result, at, is_global):
            if is_global:
                path = self.paths.get(id(args[0]), WRAPPER)
                key = (*key, path)
            self._keep(key, EAGER, _tensors(args[at]), _tensors(result))

        return torch.compiler.disable(record) if self.compiled else record

    def _keep(self, key, how, seen, returned) -> None:
        clock = self.clock()
        self.run.firings.append(_Firing(clock, self.step, key, how, [], []))
        self.kept[key] = (how, seen, returned, len(self.run.firings) - 1)

    # -- each step ------------------------------------------------------------------------------

    def end_step(self, step: int) -> None:
        """The firings traced into graphs this step, and the values each hook last saw."""
        by_path = {n: p for p, n in self.numbers.items()}
        for name, (seen, returned) in self.signals.__dict__.items():
            number, _, module_number = name[1:].partition("m")
            key = self.run.key_of[int(number)]
            if module_number:
                key = (*key, by_path.get(int(module_number), WRAPPER))
            self._keep(key, GRAPH, seen, returned)
        self.signals.__dict__.clear()
        for _, seen, returned, index in self.kept.values():
            firing = self.run.firings[index]
            firing.seen = [_snapshot(t) for t in seen]
            firing.returned = [_snapshot(t) for t in returned]
        self.kept.clear()
        self.run.outputs[-1] = [_snapshot(t) for t in self.run.outputs[-1]]

    def error(self, error: BaseException, run: str) -> RunError:
        """The exception as the report tells it, with the hook it came from when there is one."""
        frames = traceback.extract_tb(error.__traceback__)
        hook = ""
        for spec in self.run.specs.values():
            if spec.code and any(_in_code(spec.code, f.filename, f.lineno) for f in frames):
                hook = f"{spec.label} {spec.kind} {spec.name}"
        message = str(error).strip().split("\n\n")[0]
        return RunError(run, self.step, type(error).__name__, message, hook)

    def restore(self) -> None:
        """Put the global hooks back; remove those `before_step` added; untag the modules."""
        for hooks, handle_id, original in self._globals:
            if handle_id in hooks:
                hooks[handle_id] = original
        for kind in _global_kinds():
            hooks = getattr(torch_module, kind.attribute)
            for handle_id in set(hooks) - self._globals_at_start[kind.attribute]:
                del hooks[handle_id]
                for flags in kind.flags.values():
                    getattr(torch_module, flags, {}).pop(handle_id, None)
        for m in self.module.modules():
            m.__dict__.pop("_hookviz_number", None)


def _snapshot(t: torch.Tensor) -> torch.Tensor:
    return t.detach().to("cpu", copy=True)


def _global_kinds():
    return tuple(k for k in KINDS.values() if k.target == GLOBAL)


def _attribute(info: HookInfo) -> str:
    return KINDS[info.kind].attribute


def _dict_of(info: HookInfo) -> dict:
    if info.target == "global":
        return getattr(torch_module, _attribute(info))
    return getattr(info.owner, _attribute(info))


def _code_range(hook: Any) -> tuple[str, int, int] | None:
    """The file and lines of a hook's code (a function, a partial, a method, a callable object),
    nested functions included."""
    target = hook
    while isinstance(target, functools.partial):
        target = target.func
    target = getattr(target, "__func__", target)
    code = getattr(target, "__code__", None)
    if code is None:
        call = getattr(type(target), "__call__", None)  # noqa: B004 (a callable object)
        code = getattr(getattr(call, "__func__", call), "__code__", None)
    if code is None:
        return None
    lines = list(_lines(code))
    return (code.co_filename, min(lines, default=code.co_firstlineno), max(lines, default=0))


def _lines(code: types.CodeType):
    yield code.co_firstlineno
    for _, _, line in code.co_lines():
        if line is not None:
            yield line
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _lines(const)


def _in_code(code: tuple[str, int, int], file: str, line: int) -> bool:
    name, first, last = code
    return (file == name or (file and name.endswith(file.lstrip(".")))) and first <= line <= last


# -- the report -----------------------------------------------------------------------------------


def _report(
    name, backend, plan, eager, compiled, counts, breaks, compiles, torch_warnings, config, kwargs
) -> CompiledReport:
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
            (c.fail_reason.splitlines()[0] if c.hit_recompile_limit else c.recompile_reason),
            c.hit_recompile_limit,
        )
        for c in compiles
        if c.attempt > 0 or c.hit_recompile_limit
    ]
    limit_reasons = {c.compile_id: c.recompile_reason for c in compiles if c.hit_recompile_limit}
    hooks, places = _hooks(
        plan, eager, compiled, graph_breaks, recompiles, limit_reasons, breaks, config
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
        record.reason,
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
    spec: _Spec


def _rows(plan: _Plan, eager: _Run, compiled: _Run) -> list[_Row]:
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


def _hooks(plan, eager, compiled, breaks, recompiles, limit_reasons, raw_breaks, config):
    rows = _rows(plan, eager, compiled)
    ranked = sorted({id(r.spec): r.spec for r in rows}.values(), key=lambda s: s.handle_id)
    order = {id(spec): i + 1 for i, spec in enumerate(ranked)}
    context = _Context(compiled, breaks, recompiles, raw_breaks, limit_reasons, config)
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


def _last(run: _Run, key: tuple, step: int) -> _Firing:
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

    def __init__(self, compiled, breaks, recompiles, raw_breaks, limit_reasons, config):
        self.compiled, self.config = compiled, config
        self.breaks, self.recompiles = breaks, recompiles
        self.raw_breaks = raw_breaks
        self.limit_reasons = limit_reasons  # compile id -> the guard failure it was refused for

    def causes(self, h: HookComparison, spec: _Spec) -> list[Cause]:
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

    def _own(self, h: HookComparison, spec: _Spec) -> list[Cause]:
        """The breaks and recompiles torch's records tie to this hook: its code in a break's
        traceback or a failed guard's source, a module-level backward hook break, a guard on
        its hook dict."""
        found = []
        module_backward = acting_as(h.kind) in ("backward", "backward_pre")
        for b, raw in zip(self.breaks, self.raw_breaks, strict=True):
            in_code = spec.code and any(_in_code(spec.code, f.file, f.line) for f in raw.frames)
            by_kind = (
                b.gb_id == dynamo_reading.MODULE_BACKWARD_HOOKS
                and module_backward
                and h.registered_at <= b.step
            )
            if in_code or by_kind:
                where = b.user_frame or b.where
                found.append(Cause("graph_break", b.step, b.reason, where, "graph_breaks log"))
        for r in self.recompiles:
            text = self.limit_reasons.get(r.compile_id, "") if r.limit_hit else r.reason
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

    def _guard_points_at(self, text: str, spec: _Spec, h: HookComparison) -> bool:
        if spec.code:
            for m in _GUARD_REF.finditer(text):
                if _in_code(spec.code, m["file"], int(m["line"])):
                    return True
            for m in dynamo_reading._FRAME.finditer(text):
                if _in_code(spec.code, m["file"], int(m["line"])):
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
    run: _Run, step: int, index: dict, eager_order: list[int]
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
