"""trace_apply(): run the real ``Module.apply`` and record it visit by visit.

``Module.apply`` is three lines: apply to each child, then call ``fn(self)``. Because the
call to ``fn`` comes after the loop over children, every module is visited after all of its
descendants: post-order. To show that, each module's ``apply`` is wrapped for the duration of
the trace (an instance attribute shadowing the method, removed afterwards), so the trace sees
every ``apply`` call enter and leave, and every ``fn`` visit in between.
"""

from __future__ import annotations

import io
import sys
from collections.abc import Callable
from contextlib import redirect_stdout
from dataclasses import dataclass, field
from typing import Any, Literal

import torch
from torch import nn

from .inventory import callable_name
from .tree import check_model, display_name

SMALL_VALUES = 16  # tensors up to this many elements keep their values in a change record
CLONE_LIMIT = 65_536  # larger tensors are compared through a fingerprint instead of a copy


@dataclass(frozen=True)
class ParamChange:
    """One parameter that `fn` added, removed or changed at a visit."""

    name: str  # full dotted path from the root, e.g. "ab.a.W"
    kind: Literal["changed", "rewritten", "added", "removed", "replaced"]
    before: Any  # values (small tensors), a summary dict (big ones) or None
    after: Any
    shape_before: tuple[int, ...] | None
    shape_after: tuple[int, ...] | None
    through_data: bool  # values changed but autograd's version counter did not: `.data` was used

    def describe(self) -> str:
        """One line for people."""
        if self.kind == "added":
            return f"{self.name}: added, shape {self.shape_after}"
        if self.kind == "removed":
            return f"{self.name}: removed"
        if self.kind == "rewritten":
            how = " through .data" if self.through_data else ""
            return f"{self.name}: written again{how}, value unchanged {_value_text(self.after)}"
        text = f"{self.name}: {_value_text(self.before)} -> {_value_text(self.after)}"
        if self.shape_before != self.shape_after:
            text += f" (shape {self.shape_before} -> {self.shape_after})"
        if self.kind == "replaced":
            text += " (a new Parameter object)"
        if self.through_data:
            text += " (through .data: autograd did not see it)"
        return text


@dataclass(frozen=True)
class ApplyVisit:
    """One call of `fn`: the module apply visited, and what `fn` printed and changed there."""

    index: int
    path: str
    module: nn.Module = field(repr=False, compare=False)
    depth: int
    stdout: str
    changes: tuple[ParamChange, ...]

    @property
    def name(self) -> str:
        """The path, or the class name for the root."""
        return display_name(self.path, self.module)


@dataclass(frozen=True)
class ApplyCall:
    """A step of the recursion: an ``apply`` call entering or leaving, or ``fn`` visiting."""

    kind: Literal["enter", "visit", "leave"]
    path: str
    depth: int
    stack: tuple[str, ...]  # paths of the apply calls running at this moment, outermost first
    visit: int | None  # index into ApplyTrace.visits for kind == "visit"


@dataclass
class ApplyTrace:
    """What `model.apply(fn)` did, in order."""

    model: nn.Module = field(repr=False)
    fn_name: str
    visits: list[ApplyVisit] = field(default_factory=list)
    calls: list[ApplyCall] = field(default_factory=list)
    complete: bool = True

    @property
    def order(self) -> list[str]:
        """Paths in visit order ("" is the root)."""
        return [v.path for v in self.visits]

    @property
    def names(self) -> list[str]:
        """Visit order as people read it (the root by its class name)."""
        return [v.name for v in self.visits]

    @property
    def changes(self) -> list[ParamChange]:
        """Every parameter change, in visit order."""
        return [c for v in self.visits for c in v.changes]

    def __len__(self) -> int:
        return len(self.visits)

    def __repr__(self) -> str:
        state = "" if self.complete else ", stopped early"
        return (
            f"ApplyTrace({type(self.model).__name__}, fn={self.fn_name}, "
            f"{len(self.visits)} visits{state}: {', '.join(self.names)})"
        )

    def table(self) -> str:
        """A text table: visit number, path, class, and what fn printed or changed."""
        rows = [f"{'#':>3}  {'module':<24} {'class':<16} notes"]
        for v in self.visits:
            notes = [line for line in v.stdout.splitlines() if line.strip()][:1]
            notes += [c.describe() for c in v.changes]
            indent = "  " * v.depth
            rows.append(
                f"{v.index + 1:>3}  {(indent + v.name):<24} {type(v.module).__name__:<16} "
                + ("; ".join(notes) if notes else "")
            )
        return "\n".join(r.rstrip() for r in rows)


class ApplyFnError(RuntimeError):
    """`fn` raised during `trace_apply`; `.trace` keeps the visits that ran before.

    Parameters
    ----------
    message : str
        What went wrong, and where.
    path : str
        The path of the module `fn` was visiting.
    index : int
        The visit's number.
    trace : ApplyTrace
        The visits that ran before.
    """

    def __init__(self, message: str, *, path: str, index: int, trace: ApplyTrace):
        super().__init__(message)
        self.path = path
        self.index = index
        self.trace = trace


def trace_apply(
    model: nn.Module,
    fn: Callable[[nn.Module], Any] | None = None,
    *,
    echo: bool = True,
) -> ApplyTrace:
    """Run the real `model.apply(fn)` and record every visit.

    Each module's `apply` is wrapped for the duration of the call, so the trace sees every call
    enter and leave (the recursion that makes the order post-order) and every visit of `fn`:
    what it printed and which parameters it changed, added or rewrote.

    Parameters
    ----------
    model : nn.Module
        The model whose `apply` runs. Nothing hookviz adds is left on it afterwards.
    fn : callable or None
        The function `apply` calls on each module, as in `model.apply(fn)`; None records the
        traversal alone (a no-op visit).
    echo : bool
        Also print what `fn` prints, as `model.apply(fn)` would; False only keeps it in the trace.

    Returns
    -------
    ApplyTrace
        The visits in order (`.order` lists their paths) and the calls of the recursion.

    Raises
    ------
    ApplyFnError
        When `fn` raised; its `.trace` keeps the visits that ran before.

    Examples
    --------
    >>> import hookviz as hv
    >>> trace = hv.trace_apply(hv.examples.model(), None)
    >>> trace.order
    ['ab.a', 'ab.b', 'ab', 'cd.c', 'cd.d', 'cd', '']
    """
    check_model(model)
    if fn is not None and not callable(fn):
        raise TypeError(
            f"fn must be a function that takes a module, got {type(fn).__name__}. "
            "Pass the function itself, e.g. `trace_apply(model, print_module)`, not its result."
        )
    trace = ApplyTrace(model=model, fn_name=callable_name(fn) if fn else "None")
    stack: list[tuple[str, nn.Module]] = []
    failure: list[tuple[BaseException, str, int]] = []

    def wrap_apply(module: nn.Module, bound_apply: Callable) -> Callable:
        def traced_apply(inner_fn):
            parent_path, parent = stack[-1] if stack else ("", None)
            path = _child_path(parent, parent_path, module)
            stack.append((path, module))
            _log(trace, "enter", path, stack)
            try:
                result = bound_apply(inner_fn)
                _log(trace, "leave", path, stack)  # only a call that returns leaves normally
                return result
            finally:
                stack.pop()

        return traced_apply

    def visit(module: nn.Module) -> None:
        path = stack[-1][0] if stack and stack[-1][1] is module else _find_path(model, module)
        index = len(trace.visits)
        snapshot = _snapshot(module, path) if fn is not None else None
        out = io.StringIO()
        try:
            with redirect_stdout(_Tee(out, sys.stdout) if echo else out):
                if fn is not None:
                    fn(module)
        except BaseException as exc:
            failure.append((exc, path, index))
            _record_visit(trace, index, path, module, out.getvalue(), snapshot, stack)
            raise
        _record_visit(trace, index, path, module, out.getvalue(), snapshot, stack)

    installed = _install(model, wrap_apply)
    try:
        model.apply(visit)
    except BaseException as exc:
        trace.complete = False
        if not failure:
            raise
        if not isinstance(exc, Exception):
            raise  # KeyboardInterrupt and friends pass through untouched
        raise _fn_error(trace, exc, *failure[0][1:]) from exc
    finally:
        _uninstall(installed)
    return trace


def _fn_error(trace: ApplyTrace, exc: Exception, path: str, index: int) -> ApplyFnError:
    """What trace_apply raises when ``fn`` raised at visit ``index``: where, and the trace so far."""
    where = display_name(path, trace.visits[index].module)
    return ApplyFnError(
        f"fn raised {type(exc).__name__} at visit {index + 1} ({where!r}, "
        f"{type(trace.visits[index].module).__name__}): {exc}. "
        f"The trace up to that visit ({index + 1} visits) is kept in this error's .trace.",
        path=path,
        index=index,
        trace=trace,
    )


# -- recursion bookkeeping ---------------------------------------------------------------


def _install(model: nn.Module, wrap: Callable) -> list[tuple[nn.Module, Any]]:
    """Shadow ``apply`` on every module instance; returns what to restore."""
    installed = []
    for module in model.modules():
        previous = module.__dict__.get("apply", _MISSING)
        bound = previous if previous is not _MISSING else module.apply
        object.__setattr__(module, "apply", wrap(module, bound))
        installed.append((module, previous))
    return installed


def _uninstall(installed: list[tuple[nn.Module, Any]]) -> None:
    for module, previous in installed:
        if previous is _MISSING:
            module.__dict__.pop("apply", None)
        else:
            object.__setattr__(module, "apply", previous)


_MISSING = object()


def _child_path(parent: nn.Module | None, parent_path: str, module: nn.Module) -> str:
    if parent is None:
        return ""
    for name, child in parent.named_children():
        if child is module:
            return f"{parent_path}.{name}" if parent_path else name
    return f"{parent_path}.?" if parent_path else "?"


def _find_path(model: nn.Module, module: nn.Module) -> str:
    for path, candidate in model.named_modules():
        if candidate is module:
            return path
    return "?"


def _log(trace: ApplyTrace, kind: str, path: str, stack: list, visit: int | None = None) -> None:
    trace.calls.append(
        ApplyCall(
            kind=kind,
            path=path,
            depth=len(stack) - 1,
            stack=tuple(p for p, _ in stack),
            visit=visit,
        )
    )


def _record_visit(trace, index, path, module, stdout, snapshot, stack) -> None:
    changes = _diff(snapshot, module, path) if snapshot is not None else ()
    depth = max(len(stack) - 1, 0)
    trace.visits.append(ApplyVisit(index, path, module, depth, stdout, tuple(changes)))
    _log(trace, "visit", path, stack, visit=index)


class _Tee(io.TextIOBase):
    """Write to a buffer and to the real stdout, so prints stay visible in the notebook."""

    def __init__(self, buffer: io.StringIO, through):
        self.buffer_, self.through = buffer, through

    def write(self, text: str) -> int:
        self.buffer_.write(text)
        self.through.write(text)
        return len(text)

    def flush(self) -> None:
        self.through.flush()


# -- parameter snapshots -----------------------------------------------------------------


@dataclass
class _ParamState:
    param: torch.Tensor
    version: int
    data_ptr: int
    shape: tuple[int, ...]
    copy: torch.Tensor | None  # exact copy for small tensors
    fingerprint: tuple | None  # for large ones


def _snapshot(module: nn.Module, path: str) -> dict[str, _ParamState]:
    states = {}
    for name, p in module.named_parameters():
        full = f"{path}.{name}" if path else name
        data = p.detach()
        small = data.numel() <= CLONE_LIMIT and not data.is_meta  # meta tensors hold no values
        states[full] = _ParamState(
            param=p,
            version=p._version,
            data_ptr=p.data_ptr(),
            shape=tuple(p.shape),
            copy=data.clone() if small else None,
            fingerprint=None if small else _fingerprint(data),
        )
    return states


def _fingerprint(data: torch.Tensor) -> tuple:
    if data.is_meta:  # no values to read: its shape and dtype are all there is to compare
        return ("meta", tuple(data.shape), data.dtype)
    flat = data.reshape(-1).double()
    return (data.data_ptr(), float(flat.sum()), float((flat * flat).sum()), float(flat[::97].sum()))


def _diff(before: dict[str, _ParamState], module: nn.Module, path: str) -> list[ParamChange]:
    changes: list[ParamChange] = []
    after = {}
    for name, p in module.named_parameters():
        after[f"{path}.{name}" if path else name] = p
    for name, state in before.items():
        p = after.get(name)
        if p is None:
            changes.append(
                ParamChange(
                    name,
                    "removed",
                    _describe(state.copy, state.shape),
                    None,
                    state.shape,
                    None,
                    False,
                )
            )
            continue
        data = p.detach()
        replaced = p is not state.param
        if state.copy is not None:
            same = tuple(data.shape) == state.shape and _equal(state.copy, data)
        else:
            same = tuple(data.shape) == state.shape and _fingerprint(data) == state.fingerprint
        written = p._version != state.version or data.data_ptr() != state.data_ptr
        if same and not replaced and not written:
            continue
        through_data = not replaced and p._version == state.version
        kind = "replaced" if replaced else ("changed" if not same else "rewritten")
        changes.append(
            ParamChange(
                name,
                kind,
                _describe(state.copy, state.shape),
                _describe(data, tuple(data.shape)),
                state.shape,
                tuple(data.shape),
                through_data,
            )
        )
    for name, p in after.items():
        if name not in before:
            changes.append(
                ParamChange(
                    name,
                    "added",
                    None,
                    _describe(p.detach(), tuple(p.shape)),
                    None,
                    tuple(p.shape),
                    False,
                )
            )
    return changes


def _equal(a: torch.Tensor, b: torch.Tensor) -> bool:
    if a.dtype != b.dtype:
        return False
    if a.is_floating_point() or a.is_complex():
        return bool(((a == b) | (torch.isnan(a) & torch.isnan(b))).all())
    return torch.equal(a, b)


def _describe(data: torch.Tensor | None, shape: tuple[int, ...]) -> Any:
    if data is None or data.is_meta:
        return {"shape": shape}
    if data.numel() <= SMALL_VALUES:
        return data.tolist()
    flat = data.detach().reshape(-1).double()
    return {
        "shape": shape,
        "mean": round(float(flat.mean()), 6),
        "std": round(float(flat.std()), 6) if flat.numel() > 1 else 0.0,
        "min": round(float(flat.min()), 6),
        "max": round(float(flat.max()), 6),
    }


def _value_text(value: Any) -> str:
    if isinstance(value, dict):
        if "mean" in value:
            return f"mean {value['mean']:.4g}, std {value['std']:.4g}"
        return f"shape {value.get('shape')}"
    return _round_list(value)


def _round_list(value: Any) -> str:
    if isinstance(value, list):
        return "[" + ", ".join(_round_list(v) for v in value) + "]"
    if isinstance(value, float):
        return f"{value:.4g}"
    return repr(value)
