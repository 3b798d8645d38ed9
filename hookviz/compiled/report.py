"""What `compare_compiled` returns: the report, per hook and per torch event, and its words.

The vocabularies (`STATUSES`, `CAUSES`, how a hook ran) have their one owner here; the widget
and the check cells import them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

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
# Values are compared with torch.testing's float32 tolerances.
RTOL, ATOL = 1.3e-6, 1e-5
# Where a hook runs outside dynamo whatever it does: the root, and the compiled wrapper.
OUTSIDE_DYNAMO = ("", WRAPPER)


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
        return title_of(self.text)

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
        return title_of(self.reason)


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


def title_of(reason: str) -> str:
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
