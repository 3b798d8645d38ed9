"""torch as the oracle: torch's own hooks on every module, beside or instead of record().

``torch_events`` registers, on every module of a model, a forward pre-hook (with keyword
arguments), a forward hook, ``register_full_backward_pre_hook`` and
``register_full_backward_hook``, each registered last, and keeps what each one sees as a
``Seen``: its phase, the module's path, and every value it carried (name, type, shape, and the
exact norm, min and max of a tensor's finite values). ``recorded_events`` reads a Recording the
same way, and ``agree`` compares two lists event by event, with a readable diff.

It is written apart from hookviz on purpose: it flattens values and names gradients by itself,
so that a mistake in record() cannot hide in a helper both sides share.
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

import hookviz as hv
from hookviz.recording import PHASES

FORWARD_PRE, FORWARD, BACKWARD_PRE, BACKWARD = PHASES
MAX_VALUES = 32  # record() summarises at most this many values per event


@dataclass(frozen=True)
class Value:
    """One value an event carried: a tensor's shape and exact norm, min and max; else its type."""

    name: str
    value_type: str
    shape: tuple[int, ...] | None = None
    norm: float | None = None
    min: float | None = None
    max: float | None = None
    norm_estimated: bool = False  # record()'s norm of a large output is a sample's: not compared
    any_values: bool = False  # a share that torch splits by position and autograd cannot (below)

    def close_to(self, other: Value, rtol: float) -> bool:
        if (self.name, self.value_type, self.shape) != (other.name, other.value_type, other.shape):
            return False
        if self.any_values or other.any_values:
            return True
        fields = (
            ("min", "max")
            if self.norm_estimated or other.norm_estimated
            else ("norm", "min", "max")
        )
        return all(_close(getattr(self, f), getattr(other, f), rtol) for f in fields)

    def __str__(self) -> str:
        if self.value_type != "tensor":
            return f"{self.name}={self.value_type}"
        return f"{self.name}{list(self.shape)} norm={_fmt(self.norm)} [{_fmt(self.min)}, {_fmt(self.max)}]"


@dataclass(frozen=True)
class Seen:
    """One hook firing: phase, module path, and the values it carried."""

    phase: str
    path: str
    values: tuple[Value, ...]

    def __str__(self) -> str:
        return f"{self.phase:<12} {self.path or '(root)':<24} " + "; ".join(map(str, self.values))


def _close(a, b, rtol: float) -> bool:
    if a is None or b is None:
        return a is None and b is None
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return math.isclose(a, b, rel_tol=rtol, abs_tol=1e-6)


def _fmt(x) -> str:
    return "-" if x is None else f"{x:.5g}"


def value(name: str, v: Any) -> Value:
    """What torch's hook saw of one value, in the oracle's own terms."""
    if not isinstance(v, torch.Tensor):
        return Value(name, "None" if v is None else type(v).__name__)
    shape = tuple(v.shape)
    if v.is_meta or v.numel() == 0 or v.layout != torch.strided:
        return Value(name, "tensor", shape)
    d = v.detach().abs().double() if v.is_complex() else v.detach().double()  # record(): |z|
    finite = d[torch.isfinite(d)]
    if finite.numel() == 0:
        return Value(name, "tensor", shape, 0.0, None, None)
    return Value(
        name,
        "tensor",
        shape,
        float(torch.linalg.vector_norm(finite)),
        float(finite.min()),
        float(finite.max()),
    )


def flatten(v: Any, name: str) -> list[tuple[str, Any]]:
    """Values in a nested structure, depth first: ``name[0]``, ``name['key']``."""
    if isinstance(v, (tuple, list)):
        return [pair for i, item in enumerate(v) for pair in flatten(item, f"{name}[{i}]")]
    if isinstance(v, dict):
        return [pair for k, item in v.items() for pair in flatten(item, f"{name}[{k!r}]")]
    return [(name, v)]


def _values(pairs: list[tuple[str, Any]]) -> tuple[Value, ...]:
    return tuple(value(n, v) for n, v in pairs[:MAX_VALUES])


def torch_events(
    model: nn.Module,
    run: Callable[[], Any],
    *,
    backward: bool = True,
    skip: Callable[[nn.Module], bool] = lambda m: False,
) -> tuple[list[Seen], Any]:
    """Run ``run()`` with torch's own hooks on every module of ``model`` (``skip``: modules that
    get none); return what they saw, in firing order, and what ``run`` returned."""
    seen: list[Seen] = []
    paths = {id(m): p for p, m in model.named_modules()}
    single: dict[int, bool] = {}  # module -> its output is one tensor (grad_output, unnumbered)
    # One tensor passed at several positions is one input to autograd: record() reports its
    # whole share at each of them, where torch's own identity node splits it by position. So
    # torch's shares of such a tensor are added up; where a module's calls group their
    # arguments differently, which call a backward event belongs to is unknown, and the
    # values are not compared (shapes still are).
    groupings: dict[int, set] = {}  # module -> the groupings of its calls' positions

    def pre(module, args, kwargs):
        groups: dict[int, list[int]] = {}
        for i, a in enumerate(args):
            if isinstance(a, torch.Tensor):
                groups.setdefault(id(a), []).append(i)
        groupings.setdefault(id(module), set()).add(
            tuple(tuple(g) for g in groups.values() if len(g) > 1)
        )
        pairs = flatten(args, "input") if isinstance(args, tuple) else [("input", args)]
        if not kwargs and len(args) == 1 and isinstance(args[0], torch.Tensor):
            pairs = [("input[0]", args[0])]
        pairs += flatten(kwargs, "input") if kwargs else []
        seen.append(Seen(FORWARD_PRE, paths[id(module)], _values(pairs)))

    def fwd(module, args, output):
        single[id(module)] = isinstance(output, torch.Tensor)
        pairs = (
            [("output", output)] if isinstance(output, torch.Tensor) else flatten(output, "output")
        )
        seen.append(Seen(FORWARD, paths[id(module)], _values(pairs)))

    def bwd_pre(module, grad_output):
        if single.get(id(module)):
            pairs = [("grad_output", grad_output[0])]
        else:
            pairs = [(f"grad_output[{i}]", g) for i, g in enumerate(grad_output)]
        seen.append(Seen(BACKWARD_PRE, paths[id(module)], _values(pairs)))

    def bwd(module, grad_input, grad_output):
        grads = list(grad_input)
        (grouping, *others) = groupings.get(id(module), {()})
        if others:
            values = tuple(
                dataclasses.replace(value(f"grad_input[{i}]", g), any_values=True)
                for i, g in enumerate(grads)
            )
            seen.append(Seen(BACKWARD, paths[id(module)], values[:MAX_VALUES]))
            return
        for group in grouping:
            parts = [grads[i] for i in group if grads[i] is not None]
            total = sum(parts[1:], parts[0]) if parts else None
            for i in group:
                grads[i] = total
        pairs = [(f"grad_input[{i}]", g) for i, g in enumerate(grads)]
        seen.append(Seen(BACKWARD, paths[id(module)], _values(pairs)))

    handles = []
    for _, module in model.named_modules():
        if skip(module):
            continue
        handles.append(module.register_forward_pre_hook(pre, with_kwargs=True))
        handles.append(module.register_forward_hook(fwd))
        if backward:
            handles.append(module.register_full_backward_pre_hook(bwd_pre))
            handles.append(module.register_full_backward_hook(bwd))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "no inputs require gradients", "should be a Tensor"
            result = run()
    finally:
        for handle in handles:
            handle.remove()
    return seen, result


def recorded_events(rec) -> list[Seen]:
    """A Recording's events in the oracle's terms."""
    found = []
    for event in rec.events:
        values = []
        for t in event.tensors:
            if t.value_type != "tensor":
                values.append(Value(t.name, t.value_type))
                continue
            shape = tuple(t.shape) if t.shape is not None else None
            estimated = not t.norm_exact
            # a gradient's norm must be exact: a flag rests on it
            if event.phase.startswith("backward"):
                assert t.norm_exact or t.numel == 0, f"{event}: {t.name}'s norm is not exact"
            if t.numel == 0 or t.norm is None:
                values.append(Value(t.name, "tensor", shape))
            elif t.min is None or (isinstance(t.min, float) and math.isnan(t.min)):
                values.append(Value(t.name, "tensor", shape, t.norm, None, None, estimated))
            else:
                values.append(Value(t.name, "tensor", shape, t.norm, t.min, t.max, estimated))
        found.append(Seen(event.phase, event.path, tuple(values)))
    return found


def agree(
    expected: list[Seen],
    got: list[Seen],
    *,
    rtol: float = 1e-4,
    what: str = "",
    restricted: bool = False,
) -> None:
    """Assert two event lists agree event for event; the message shows where they part.
    ``restricted``: the pass computes only some gradients (``torch.autograd.grad`` with inputs):
    a share autograd does not compute there is None in record()'s grad_input, where torch's
    identity node, which makes it wanted, shows its value."""
    for i, (a, b) in enumerate(zip(expected, got, strict=False)):
        same = (a.phase, a.path, len(a.values)) == (b.phase, b.path, len(b.values)) and all(
            x.close_to(y, rtol) or (restricted and a.phase == BACKWARD and y.value_type == "None")
            for x, y in zip(a.values, b.values, strict=True)
        )
        if not same:
            raise AssertionError(_diff(expected, got, i, what))
    if len(expected) != len(got):
        raise AssertionError(_diff(expected, got, min(len(expected), len(got)), what))


def _diff(expected: list[Seen], got: list[Seen], at: int, what: str) -> str:
    lines = [
        f"{what}: torch's hooks and record() part at event {at} ({len(expected)} against {len(got)} events)"
    ]
    for i in range(max(0, at - 3), min(max(len(expected), len(got)), at + 4)):
        mark = ">>" if i == at else "  "
        lines.append(f"{mark} torch  {i:>3} {expected[i] if i < len(expected) else '(none)'}")
        lines.append(f"{mark} record {i:>3} {got[i] if i < len(got) else '(none)'}")
    return "\n".join(lines)


def phases_only(events: list[Seen], phases: tuple[str, ...]) -> list[Seen]:
    return [e for e in events if e.phase in phases]


def check_against_torch(
    build: Callable[[], tuple[nn.Module, Callable[[nn.Module], Any]]],
    *,
    what: str = "",
    rtol: float = 1e-4,
    reference: Callable[[], tuple[nn.Module, Callable[[nn.Module], Any]]] | None = None,
    skip: Callable[[nn.Module], bool] = lambda m: False,
    record_options: dict | None = None,
    restricted: bool = False,
) -> list[Seen]:
    """The differential check: torch's hooks alone, record() alone, and both in one run, on
    three models ``build()`` makes alike (seeded); every list must agree with torch's.
    ``reference``: where torch's full hooks cannot run on the model (an in-place op after a
    module), the model whose hooks torch can run and that computes the same (in-place off)."""
    options = record_options or {}
    torch.manual_seed(0)
    model, run = (reference or build)()
    torch.manual_seed(1)
    expected, _ = torch_events(model, lambda: run(model), skip=skip)

    torch.manual_seed(0)
    model, run = build()
    torch.manual_seed(1)
    with hv.record(model, **options) as rec, warnings.catch_warnings():
        warnings.simplefilter("ignore")  # what the scenario's own hooks make torch say
        run(model)
    alone = recorded_events(rec)
    agree(expected, alone, rtol=rtol, what=f"{what} (record() alone)", restricted=restricted)

    if reference is None:
        torch.manual_seed(0)
        model, run = build()
        torch.manual_seed(1)
        rec = hv.record(model, **options)

        def both():
            with rec:
                return run(model)

        beside, _ = torch_events(model, both, skip=skip)
        agree(expected, beside, rtol=rtol, what=f"{what} (torch's hooks, record() beside them)")
        agree(
            expected,
            recorded_events(rec),
            rtol=rtol,
            what=f"{what} (record(), torch's beside it)",
            restricted=restricted,
        )
    return expected
