"""trace_hooks(): one forward and backward pass as the ordered list of hook firings.

The user's own hooks are wrapped in place for the duration of the pass (same dict, same
handle id, same order), so that the trace sees each one fire and whether it returned a
replacement. Each module's ``forward`` is shadowed the same way, so that the trace shows when
forward itself starts and returns: the only way to *see* that a forward hook runs after it.
Everything is put back in a ``finally``.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch
import torch.nn.modules.module as torch_module
from torch import nn

from .hook_kinds import GLOBAL, KINDS, PHASES, TENSOR, acting_as, of
from .inventory import GLOBAL_LABEL, callable_name, where_label
from .recording import Recording
from .store import BACKWARD_PRE
from .tree import check_compiled, check_model, display_name


@dataclass(frozen=True)
class Firing:
    """One thing that happened: a hook fired, or a module's forward started or returned."""

    seq: int
    path: str
    label: str  # module path, root by its class name; "path.param" for a parameter hook
    kind: str  # one of hook_kinds.TIMELINE: a hook kind, or a marker of torch's (hook_kinds.TORCH)
    who: str  # "user" for the model's own hooks, "torch" for markers of what torch is doing
    name: str  # the hook's name, or a short description of the marker
    replaced: str | None = None  # what the hook's return value replaced, if it returned one
    # Where the autograd engine was when a user's hook fired in backward: the running node's
    # number, and 1 if it is torch's own node for full backward hooks, else -1 (None: no node
    # that orders markers, e.g. in forward). Orders the markers among the hooks.
    at: tuple[int, int] | None = field(default=None, compare=False, repr=False)

    def __str__(self) -> str:
        text = f"{self.seq:>3}  {self.label:<14} {self.kind:<20} {self.name}"
        if self.replaced:
            text += f"  -> replaced {self.replaced}"
        return text


@dataclass
class HookTrace:
    """The firings of one pass, in order."""

    model: nn.Module = field(repr=False)
    firings: list[Firing] = field(default_factory=list)
    output: Any = field(default=None, repr=False)
    loss: float | None = None

    def user_firings(self) -> list[Firing]:
        """Only the model's own hooks."""
        return [f for f in self.firings if f.who == "user"]

    def order(self) -> list[tuple[str, str]]:
        """(label, kind) pairs in order."""
        return [(f.label, f.kind) for f in self.firings]

    def table(self) -> str:
        """One line per firing."""
        return "\n".join(str(f) for f in self.firings)

    def __repr__(self) -> str:
        users = len(self.user_firings())
        return f"HookTrace({type(self.model).__name__}, {len(self.firings)} firings, {users} from the model's own hooks)"


def trace_hooks(
    model: nn.Module,
    inputs: Any = (),
    *,
    kwargs: dict[str, Any] | None = None,
    loss_fn: Callable[[Any], torch.Tensor] | None = None,
    backward: bool = True,
    keep_grads: bool = False,
) -> HookTrace:
    """Run `model` once, then a backward, and return every hook firing in order.

    The backward starts from `loss_fn(output)`: by default the sum of the model's
    floating-point outputs, a stand-in for a loss. torch's markers come from `record()`'s
    backward events, the moments torch's full backward hooks fire, and each is put before the
    user's hooks it announces.

    Parameters
    ----------
    model : nn.Module
        The model to run, with whatever hooks it already has.
    inputs : Tensor, tuple, list or dict
        A tensor (the one argument), a tuple or list (the positional arguments), or a dict
        (keyword arguments: `model(**inputs)`, as a tokenizer's batch is passed). A model whose
        one argument is a dict takes `(the_dict,)`.
    kwargs : dict or None
        More keyword arguments for the call.
    loss_fn : callable or None
        Turns the output into the scalar the backward starts from; None sums the outputs.
    backward : bool
        Run the backward pass; False records the forward alone.
    keep_grads : bool
        Keep the gradients the backward left in the parameters' `.grad`; by default they are
        restored to what they were.

    Returns
    -------
    HookTrace
        The firings in order, the output, and the loss the backward started from.
    """
    check_compiled(check_model(model), "trace_hooks()")
    args, keywords = _as_call(inputs, kwargs)
    trace = HookTrace(model=model)
    clock = itertools.count()
    labels = {id(m): display_name(p, model if not p else m) for p, m in model.named_modules()}
    paths = {id(m): p for p, m in model.named_modules()}

    def note(module_or_none, kind, who, name, replaced=None, label=None, path=None):
        if path is None:
            path = paths.get(id(module_or_none), "") if module_or_none is not None else ""
        if label is None:
            label = (
                labels.get(id(module_or_none), GLOBAL_LABEL)
                if module_or_none is not None
                else GLOBAL_LABEL
            )
        at = _engine_position() if who == "user" else None
        trace.firings.append(Firing(next(clock), path, label, kind, who, name, replaced, at))

    restore: list[Callable[[], None]] = []
    saved_grads = {id(p): (p, p.grad) for p in model.parameters()}
    # One clock for markers and user hooks: one true order.
    markers = Recording(
        model, phases=("backward_pre", "backward"), stats=(), gradients=True, clock=clock
    )
    keys = markers._keep_event_keys()
    try:
        _wrap_module_hooks(model, note, restore)
        _wrap_global_hooks(note, restore)
        _wrap_forwards(model, note, restore)
        markers.start()
        output = model(*args, **keywords)
        trace.output = output
        if backward:
            loss = loss_fn(output) if loss_fn is not None else _default_loss(output)
            if loss is not None:
                trace.loss = None if loss.is_meta else float(loss.detach())
                loss.backward()
    finally:
        markers.stop()
        for undo in reversed(restore):
            undo()
        if not keep_grads:
            for p, grad in saved_grads.values():
                p.grad = grad
    found = []
    for event in markers.events:
        kind = "grad_output_ready" if event.phase == PHASES[BACKWARD_PRE] else "grad_input_ready"
        what = (
            "gradient w.r.t. its output is ready"
            if kind == "grad_output_ready"
            else "gradient w.r.t. its input is ready"
        )
        label = labels.get(id(event.module), event.path)
        found.append((keys[event.seq], Firing(event.seq, event.path, label, kind, "torch", what)))
    trace.firings.sort(key=lambda f: f.seq)
    trace.firings = _place_markers(trace.firings, found)
    return trace


def _place_markers(firings: list[Firing], markers: list[tuple[tuple[int, int], Firing]]) -> list:
    """The markers put among the firings, the firings renumbered. A marker stands where torch's
    node for the event runs: record() gives each the number that node has, or would have (when
    no hook asks torch to make it), and on one thread the engine runs nodes from the highest
    number down. So a marker comes before the first hook that fired at a node with a lower
    number, or at torch's own node for it (the same number) of the kind it announces."""
    ordered = list(firings)
    start = 0
    for (number, _), marker in sorted(markers, key=lambda m: m[0], reverse=True):
        announced = _ANNOUNCES[marker.kind]
        i = start
        while i < len(ordered):
            f = ordered[i]
            if f.at is not None and (
                f.at[0] < number or (f.at[0] == number and f.at[1] > 0 and f.kind == announced)
            ):
                break
            i += 1
        ordered.insert(i, marker)
        start = i + 1
    return [dataclasses.replace(f, seq=i) for i, f in enumerate(ordered)]


_HOOK_NODE = "BackwardHookFunctionBackward"  # torch's node for full backward hooks
# A marker and the user hook kind torch fires at the moment it marks.
_ANNOUNCES = {"grad_output_ready": "backward_pre", "grad_input_ready": "backward"}


def _engine_position() -> tuple[int, int] | None:
    """The node the autograd engine runs now: its number, and 1 for torch's full-hook node (None
    outside backward, or at a leaf's node, which runs as soon as its gradient comes)."""
    if torch._C._current_graph_task_id() == -1:
        return None
    node = torch._C._current_autograd_node()
    if node is None or not hasattr(node, "_sequence_nr"):
        return None
    name = node.name()
    if name == "torch::autograd::AccumulateGrad":
        return None
    return node._sequence_nr(), 1 if name == _HOOK_NODE else -1


def _as_call(inputs: Any, kwargs: dict[str, Any] | None) -> tuple[tuple, dict[str, Any]]:
    """(args, kwargs) for one call of the model, from ``trace_hooks``' inputs and kwargs."""
    if kwargs is not None and not isinstance(kwargs, dict):
        raise TypeError(
            f"kwargs must be a dict of keyword arguments for the model, got {type(kwargs).__name__}."
        )
    keywords = dict(kwargs or {})
    if isinstance(inputs, dict):
        clash = sorted(set(inputs) & set(keywords))
        if clash:
            raise TypeError(
                f"{', '.join(map(repr, clash))} given both in inputs and in kwargs: pass each once."
            )
        return (), {**inputs, **keywords}
    return _as_args(inputs), keywords


def _as_args(inputs: Any) -> tuple:
    if isinstance(inputs, tuple):
        return inputs
    if isinstance(inputs, list):
        return tuple(inputs)
    return (inputs,)


def _default_loss(output: Any) -> torch.Tensor | None:
    tensors = [t for t in _tensors(output) if t.requires_grad and t.is_floating_point()]
    if not tensors:
        return None
    return sum(t.sum() for t in tensors)


def _tensors(value: Any):
    if isinstance(value, torch.Tensor):
        yield value
    elif isinstance(value, (tuple, list)):
        for v in value:
            yield from _tensors(v)
    elif isinstance(value, dict):
        for v in value.values():
            yield from _tensors(v)


def _replaced(kind: str, result: Any) -> str | None:
    """What a hook of ``kind`` that returned ``result`` replaced (None: it returned nothing)."""
    return KINDS[kind].replaces if result is not None else None


def _wrapper(hook, on_fire: Callable[[Any], None]):
    def traced(*args, **kwargs):
        result = hook(*args, **kwargs)
        on_fire(result)
        return result

    traced.__wrapped__ = hook
    return traced


def _wrap_dict(hooks: dict, make: Callable[[Any], Callable], restore: list) -> None:
    originals = dict(hooks)
    for key, hook in originals.items():
        hooks[key] = make(hook)

    def undo():
        for key, hook in originals.items():
            if key in hooks:
                hooks[key] = hook

    restore.append(undo)


def _wrap_module_hooks(model: nn.Module, note, restore: list) -> None:
    for path, module in model.named_modules():
        for kind in PHASES:  # the module hooks of one pass
            hooks = getattr(module, KINDS[kind].attribute)

            def make(hook, module=module, kind=kind):
                name = callable_name(hook)
                return _wrapper(
                    hook,
                    lambda result: note(module, kind, "user", name, _replaced(kind, result)),
                )

            _wrap_dict(hooks, make, restore)
        for pname, param in module.named_parameters(recurse=False):
            for kind in (k.name for k in of(TENSOR)):
                hooks = getattr(param, KINDS[kind].attribute, None)
                if not hooks:
                    continue
                label = where_label(path, module, pname)

                def make(hook, kind=kind, label=label, path=path):
                    name = callable_name(hook)
                    return _wrapper(
                        hook,
                        lambda result: note(
                            None,
                            kind,
                            "user",
                            name,
                            _replaced(kind, result),
                            label=label,
                            path=path,
                        ),
                    )

                _wrap_dict(hooks, make, restore)


def _wrap_global_hooks(note, restore: list) -> None:
    for kind in of(GLOBAL):
        hooks = getattr(torch_module, kind.attribute)
        base = acting_as(kind.name)

        def make(hook, base=base):
            name = callable_name(hook) + " (global)"

            def traced(module, *args, **kwargs):
                result = hook(module, *args, **kwargs)
                note(module, base, "user", name, _replaced(base, result))
                return result

            return traced

        _wrap_dict(hooks, make, restore)


def _wrap_forwards(model: nn.Module, note, restore: list) -> None:
    for module in model.modules():
        previous = module.__dict__.get("forward")
        original = module.forward

        def traced_forward(*args, __module=module, __original=original, **kwargs):
            note(__module, "forward_call", "torch", "forward() starts")
            result = __original(*args, **kwargs)
            note(__module, "forward_return", "torch", "forward() returns")
            return result

        object.__setattr__(module, "forward", traced_forward)

        def undo(module=module, previous=previous):
            if previous is None:
                module.__dict__.pop("forward", None)
            else:
                object.__setattr__(module, "forward", previous)

        restore.append(undo)
