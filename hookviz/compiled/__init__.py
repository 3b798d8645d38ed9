"""compare_compiled(): which of a model's hooks still fire under `torch.compile`, and why not.

The same steps run twice, each on a deep copy of the model with its hooks: eagerly, then under
`torch.compile`. Every hook is observed where it sits, and what torch's compiler did (its graph
breaks with their reasons and tracebacks, its recompiles with the guard that failed, its counts)
is read from torch itself (`hookviz.dynamo_reading`), then tied to the hooks it points at.

The package, by what each part does:
- `report`: what `compare_compiled` returns (`CompiledReport` and its parts) and its vocabularies;
- `runs`: the two runs and the observer, transparent to dynamo (no op, guard or frame added);
- `causes`: the report put together: each hook's causes, and the side-by-side timeline.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from torch import nn

from .. import dynamo_reading
from ..inventory import callable_name
from ..tree import check_compiled, check_model
from .causes import assemble
from .report import (
    CAUSES,
    EAGER,
    GRAPH,
    STATUSES,
    WRAPPER,
    Cause,
    CompiledReport,
    GraphBreak,
    HookComparison,
    Moment,
    Recompile,
    RunError,
    ValueCheck,
    counted,
)
from .runs import Plan, Run, in_higher_order_ops, infer_quiet_firings

__all__ = [
    "CAUSES",
    "EAGER",
    "GRAPH",
    "STATUSES",
    "WRAPPER",
    "Cause",
    "CompiledReport",
    "GraphBreak",
    "HookComparison",
    "Moment",
    "Recompile",
    "RunError",
    "ValueCheck",
    "compare_compiled",
    "counted",
]

# torch.compile's own keyword arguments: what **compile_kwargs may hold.
COMPILE_KWARGS = ("fullgraph", "dynamic", "mode", "options", "disable")


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
    plan = Plan(model, inputs, loss_fn, backward, steps, before_step)

    eager = plan.run(compiler=None)
    compiled = Run(error=problem) if problem else None
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
        more = in_higher_order_ops(breaks, compiled) - quiet
        if more:  # the observer's store broke a higher-order op: again, those hooks quiet
            quiet, compiled = quiet | more, None
    infer_quiet_firings(compiled)
    return assemble(
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
