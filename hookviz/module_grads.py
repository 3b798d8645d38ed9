"""A module call's own gradients, as torch's full backward hooks see them: record()'s backward side.

torch builds ``register_full_backward_pre_hook`` and ``register_full_backward_hook`` on
``torch.utils.hooks.BackwardHook``: for each call of a module it passes the call's positional
tensor inputs, and then its tensor outputs, through an identity autograd function. The node of
the outputs' identity runs once the gradient w.r.t. all of the call's outputs is complete
(backward pre-hooks fire there); the node of the inputs' identity runs once *this call's own
share* of each input's gradient is ready (backward hooks fire there). A tensor hook on an
input sees something else: the tensor's total gradient, ready only when every module that
read it is done.

``ModuleCall`` does what ``BackwardHook`` does, as an observer, with the nodes made at the same
points of the forward pass (after every forward pre-hook, after every forward hook), so the
autograd engine runs them at the same moments and a call's events come in torch's order, with
torch's values, call by call, through every ``backward()`` or ``torch.autograd.grad`` that
reaches them. Two differences, both so that the model computes exactly what it computes alone:

- the identity returns detached aliases, not the tensors themselves. torch's returns views,
  and an in-place op on a view made by a custom function raises ("Output 0 of
  BackwardHookFunctionBackward is a view and is being modified inplace"), which is why full
  backward hooks fail before ``ReLU(inplace=True)``. An alias shares memory and version counter
  with its tensor, so an in-place op after the module works, autograd's check on saved tensors
  still sees it, and the gradient reported is the one w.r.t. the value before the op;
- a gradient that never arrives stays undefined on its way on. torch's identity turns it into
  zeros (so a leaf reached by no path gets ``.grad`` of zeros); the event still reports zeros
  where torch's hooks see zeros.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

import torch

__all__ = ["GradReceiver", "IdentityNode", "ModuleCall", "through_identity"]


class GradReceiver(Protocol):
    """What a ModuleCall reports to (a ``Recording``): torch's two hooks, as two callbacks."""

    def on_grad_outputs(self, call: ModuleCall, grads: tuple) -> None:
        """The backward pre-hook's moment: ``grads`` is grad_output as torch packs it."""

    def on_grad_inputs(self, call: ModuleCall, grads: tuple) -> None:
        """The backward hook's moment: ``grads`` is grad_input as torch packs it."""


_ONE = (0,)  # the positions of a lone tensor


class IdentityNode(torch.autograd.Function):
    """Detached aliases of its tensors; its backward passes the gradients to ``report(grads, ctx)``
    (None for a gradient that did not come). Made by ``through_identity(report, *tensors)``."""

    @staticmethod
    def forward(ctx, report: Callable, *tensors: torch.Tensor):
        ctx.report = report
        # A gradient that never came stays None, as torch's hooks see it (set_materialize_grads).
        ctx.materialize_grads = False
        if len(tensors) == 1:
            return tensors[0].detach()
        return tuple(t.detach() for t in tensors)

    @staticmethod
    def backward(ctx, *grads):
        ctx.report(grads, ctx)
        return (None, *grads)


# autograd.Function.apply without its Python wrapper, which only unwraps functorch's tensors:
# a third of a node's cost on a small layer (bench/README.md). The wrapper runs under functorch.
_apply_directly = torch._C._FunctionBase.__dict__["apply"].__get__(None, IdentityNode)
_functorch_active = torch._C._are_functorch_transforms_active


def through_identity(report: Callable, *tensors: torch.Tensor):
    """``tensors`` through one IdentityNode: their aliases (one tensor, or a tuple for several)."""
    if _functorch_active():
        return IdentityNode.apply(report, *tensors)
    return _apply_directly(report, *tensors)


class ModuleCall:
    """One call of one module, from its forward pre-hook to its backward hook."""

    __slots__ = (
        "receiver",
        "path_id",
        "step",
        "index",
        "n_inputs",
        "input_positions",
        "idle_inputs",
        "n_outputs",
        "output_positions",
        "ready",
    )

    def __init__(self, receiver: GradReceiver, path_id: int, step: int, index: int):
        self.receiver, self.path_id, self.step, self.index = receiver, path_id, step, index
        self.n_inputs = 0  # positional arguments, tensors or not (grad_input has one entry each)
        self.input_positions: tuple[int, ...] | list[int] | None = None  # None: no input node
        self.idle_inputs: list[tuple[int, Any, Any, Any]] = []  # tensor inputs needing no gradient
        self.n_outputs = -1  # entries of grad_output; -1: the output is one tensor
        self.output_positions: tuple[int, ...] | list[int] = _ONE
        self.ready = False  # grad_output came; grad_input has not yet

    # -- the forward pass: where torch's BackwardHook makes its nodes --------------------------

    def wrap_inputs(self, args: tuple) -> tuple | None:
        """``args`` with each tensor that needs a gradient passed through this call's input node,
        or None if none does (torch's backward hook then fires with no input gradients)."""
        if type(args) is tuple and len(args) == 1 and type(args[0]) is torch.Tensor:  # the usual
            self.n_inputs = 1
            if not args[0].requires_grad:
                return None
            self.input_positions = _ONE
            return (through_identity(self.on_input_node, args[0]),)
        self.n_inputs = len(args)
        positions, tensors = [], []
        for i, value in enumerate(args):
            if isinstance(value, torch.Tensor):
                if value.requires_grad:
                    positions.append(i)
                    tensors.append(value)
                else:  # torch's hook reports zeros for it: keep what makes them, not the tensor
                    self.idle_inputs.append((i, value.shape, value.dtype, value.device))
        if not tensors:
            return None
        self.input_positions = positions
        aliases = through_identity(self.on_input_node, *tensors)
        if len(tensors) == 1:
            aliases = (aliases,)
        new = list(args)
        for i, alias in zip(positions, aliases, strict=True):
            new[i] = alias
        return tuple(new) if type(args) is tuple else type(args)(*new)

    def wrap_outputs(self, output: Any) -> Any:
        """``output`` with each tensor that needs a gradient passed through this call's output
        node, as torch does it: a tensor, or the tensors at the top of a tuple. None when torch's
        full hooks would fire nothing (no such tensor; a dict, a list or another type)."""
        if isinstance(output, torch.Tensor):
            return through_identity(self.on_output_node, output) if output.requires_grad else None
        if not isinstance(output, tuple):
            return None
        positions = [i for i, v in enumerate(output) if isinstance(v, torch.Tensor)]
        tensors = [output[i] for i in positions if output[i].requires_grad]
        if not tensors:
            return None
        self.n_outputs = len(output)
        self.output_positions = [i for i in positions if output[i].requires_grad]
        aliases = through_identity(self.on_output_node, *tensors)
        if len(tensors) == 1:
            aliases = (aliases,)
        new = list(output)
        for i, alias in zip(self.output_positions, aliases, strict=True):
            new[i] = alias
        return tuple(new) if type(output) is tuple else type(output)(*new)

    def watch_outputs(self, output: Any, hook: Callable[[torch.Tensor, Callable], Any]) -> None:
        """Without an output node (a module keeping a legacy ``register_backward_hook``, which
        torch attaches to the output's node and ours would take over): gradients from tensor
        hooks put by ``hook(tensor, fn)``, reported once every tensor's has come."""
        single = isinstance(output, torch.Tensor)
        items = [(0, output)] if single else list(enumerate(output))
        watched = [(i, t) for i, t in items if isinstance(t, torch.Tensor) and t.requires_grad]
        if not watched:
            return
        if not single:
            self.n_outputs = len(output)
            self.output_positions = [i for i, _ in watched]
        grads: list = [None] * len(watched)
        missing = [len(watched)]

        def arrived(k: int, grad: torch.Tensor) -> None:
            if grads[k] is None:
                missing[0] -= 1
            grads[k] = grad
            if missing[0] == 0:
                self.on_output_node(tuple(grads), None)
                grads[:] = [None] * len(watched)
                missing[0] = len(watched)

        for k, (_, tensor) in enumerate(watched):
            hook(tensor, lambda grad, k=k: arrived(k, grad))

    # -- the backward pass: the two nodes' moments ----------------------------------------------

    def on_output_node(self, grads: tuple, ctx: Any) -> None:
        packed = (
            grads if self.n_outputs < 0 else _pack(grads, self.output_positions, self.n_outputs)
        )
        self.receiver.on_grad_outputs(self, packed)
        if self.input_positions is None:
            # No input needs a gradient: torch's backward hook fires here, with None for each.
            self.receiver.on_grad_inputs(self, (None,) * self.n_inputs)
        else:
            self.ready = True

    def on_input_node(self, grads: tuple, ctx: Any) -> None:
        if not self.ready:
            # The gradient reached the inputs without passing the outputs (a backward from inside
            # the module, or a second backward that skipped them): torch's hook does not fire.
            return
        self.ready = False
        if self.input_positions is _ONE and self.n_inputs == 1 and grads[0] is not None:
            self.receiver.on_grad_inputs(self, grads)
            return
        # torch's identity turns a missing gradient into zeros, and reports zeros for a tensor
        # input that needs none: so does the event (the model's own gradients stay as they are).
        metas = getattr(ctx, "_input_metadata", None)
        packed: list = [None] * self.n_inputs
        for k, (i, grad) in enumerate(zip(self.input_positions, grads, strict=True)):
            if grad is None and metas is not None:
                meta = metas[k]
                grad = torch.zeros(meta.shape, dtype=meta.dtype, device=meta.device)
            packed[i] = grad
        for i, shape, dtype, device in self.idle_inputs:
            packed[i] = torch.zeros(shape, dtype=dtype, device=device)
        self.receiver.on_grad_inputs(self, tuple(packed))


def _pack(grads: tuple, positions, size: int) -> tuple:
    """torch's ``_pack_with_none``: ``grads`` at ``positions`` in a tuple of ``size``, None elsewhere."""
    packed: list = [None] * size
    for i, grad in zip(positions, grads, strict=True):
        packed[i] = grad
    return tuple(packed)
