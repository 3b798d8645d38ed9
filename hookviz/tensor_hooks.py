"""Tensor hooks at half the price of ``Tensor.register_hook``: what record() hooks gradients with.

``hook_tensor`` puts a hook straight into the tensor's ``_backward_hooks`` dict, which torch
reads when the gradient arrives; ``unhook_tensors`` takes such hooks out again. A torch that no
longer reads hooks that way is detected once, and every hook then goes through register_hook.
A tool that must pay what record() pays for its gradient hooks (bench/bench_record.py's
"gather only" hooks) registers them here too.
"""

from __future__ import annotations

import collections
import functools
import itertools
from collections.abc import Callable, Iterable
from typing import Any

import torch

__all__ = ["direct_hooks_work", "hook_tensor", "unhook_tensors"]

_HOOK_KEYS = itertools.count(-1, -1)  # negative: never the id of a RemovableHandle in the same dict


def hook_tensor(tensor: torch.Tensor, hook: Callable) -> tuple[dict | None, Any]:
    """Register ``hook`` on ``tensor``; returns what ``unhook_tensors`` needs to remove it.

    A plain tensor takes ``_put_hook``, which does what ``Tensor.register_hook`` does without
    its import and RemovableHandle: between two convolutions those cost ~45 us a call, twice
    that route (bench/bench_record.py's floor pays them). ``direct_hooks_work`` checks once
    that this torch still reads hooks that way; if not, every hook goes through register_hook."""
    if type(tensor) is torch.Tensor and direct_hooks_work():
        return _put_hook(tensor, hook)
    return None, tensor.register_hook(hook)


def _put_hook(tensor: torch.Tensor, hook: Callable) -> tuple[dict, int]:
    """Put ``hook`` in the tensor's ``_backward_hooks`` dict, which torch reads when the gradient
    arrives (a non-leaf's dict is registered with the node that made it, as register_hook does)."""
    hooks = tensor._backward_hooks
    if hooks is None:
        hooks = collections.OrderedDict()
        tensor._backward_hooks = hooks
        grad_fn = tensor.grad_fn
        if grad_fn is not None:
            grad_fn._register_hook_dict(tensor)
    key = next(_HOOK_KEYS)
    hooks[key] = hook
    return hooks, key


def unhook_tensors(registered: Iterable[tuple[dict | None, Any]]) -> None:
    """Remove hooks that ``hook_tensor`` registered (what it returned, one entry per hook)."""
    for hooks, key in registered:
        if hooks is None:
            key.remove()  # a RemovableHandle
        else:
            hooks.pop(key, None)


@functools.cache
def direct_hooks_work() -> bool:
    """True if hooks put by ``_put_hook`` fire as register_hook's would (on a leaf, and on a
    non-leaf before an in-place op) and ``unhook_tensors`` leaves no trace."""
    try:
        seen: list[float] = []
        # whatever mode the caller is in (record() may start under no_grad or inference_mode)
        with torch.inference_mode(False), torch.enable_grad():
            leaf = torch.ones(2, requires_grad=True)
            mid = leaf * 2
            put = [
                _put_hook(leaf, lambda grad: seen.append(float(grad.sum()))),
                _put_hook(mid, lambda grad: seen.append(10 * float(grad.sum()))),
            ]
            mid.mul_(3).sum().backward()  # mid's hook sees the gradient before the in-place op
        unhook_tensors(put)
        # d/dleaf = 6 for each of 2 elements; d/dmid = 3 for each (x10 to tell them apart)
        return sorted(seen) == [12.0, 60.0] and not leaf._backward_hooks and not mid._backward_hooks
    except Exception:  # noqa: BLE001 - a torch that works otherwise: use register_hook
        return False
