"""trace_hooks() against torch: its markers stand where torch fires its full backward hooks.

A marker ("gradient w.r.t. its output is ready") announces the moment torch runs a module's
full backward pre-hooks, so it must come right before them, and the markers' order must be the
order in which torch fires those hooks. The user hooks here are full backward hooks on every
module (and global ones, and prepended ones): the trace shows both, so both can be compared.
"""

from __future__ import annotations

import warnings

import pytest
import torch
import torch.nn.modules.module as torch_module
from torch import nn

import hookviz as hv
from tests.oracle import test_patterns as patterns
from tests.oracle.test_torch_hook_tests import nested

MARKS = {"grad_output_ready": "backward_pre", "grad_input_ready": "backward"}


def hooked_everywhere(model: nn.Module, *, prepend: bool = False) -> None:
    for module in model.modules():
        module.register_full_backward_pre_hook(lambda m, g: None, prepend=prepend)
        module.register_full_backward_hook(lambda m, gi, go: None, prepend=prepend)
        module.register_full_backward_pre_hook(lambda m, g: None)  # a second, after the first


def check_markers(trace) -> int:
    """Every user backward (pre-)hook firing is preceded, past the module's other hooks of that
    kind, by the marker of its moment; the markers' order is the hooks' order. Returns how many
    markers were checked."""
    firings = trace.firings
    marked = 0
    for i, f in enumerate(firings):
        if f.who != "user" or f.kind not in MARKS.values():
            continue
        j = i - 1
        while (
            j >= 0
            and firings[j].who == "user"
            and firings[j].kind == f.kind
            and firings[j].path == f.path
        ):
            j -= 1
        assert j >= 0, f"firing {i} ({f}) has no marker before it"
        marker = firings[j]
        assert (
            marker.who == "torch" and MARKS.get(marker.kind) == f.kind and marker.path == f.path
        ), f"firing {i} ({f}) follows {marker}, not its marker:\n{trace.table()}"
        marked += 1
    markers = [(MARKS[f.kind], f.path) for f in firings if f.who == "torch" and f.kind in MARKS]
    users = []
    for f in firings:
        if (
            f.who == "user"
            and f.kind in MARKS.values()
            and (not users or users[-1] != (f.kind, f.path))
        ):
            users.append((f.kind, f.path))
    assert markers == users, trace.table()
    return marked


def torch_order(model, x) -> list[tuple[str, str]]:
    """(kind, path) of torch's full backward hooks, as torch fires them."""
    order = []
    paths = {id(m): p for p, m in model.named_modules()}
    handles = []
    for m in model.modules():
        handles.append(
            m.register_full_backward_pre_hook(
                lambda m, g: order.append(("backward_pre", paths[id(m)]))
            )
        )
        handles.append(
            m.register_full_backward_hook(
                lambda m, gi, go: order.append(("backward", paths[id(m)]))
            )
        )
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = model(x)
            sum(t.sum() for t in (out if isinstance(out, tuple) else (out,))).backward()
    finally:
        for h in handles:
            h.remove()
    return order


MODELS = {
    "the blog's model": (hv.examples.model, lambda: torch.rand(1, requires_grad=True)),
    "the blog's model, input needs no gradient": (hv.examples.model, lambda: torch.rand(1)),
    "nested containers": (nested, lambda: torch.randn(3, 6)),
    "residual block": (patterns.Residual, lambda: torch.randn(3, 6, requires_grad=True)),
    "q, k and v": (patterns.Attention, lambda: torch.randn(2, 5, 8)),
    "gated MLP": (patterns.GatedMLP, lambda: torch.randn(4, 6)),
    "a module called four times": (patterns.SharedTwice, lambda: torch.randn(2, 4)),
    "LSTM": (lambda: patterns.RecurrentHead("lstm"), lambda: torch.randn(2, 3, 4)),
}


@pytest.mark.parametrize("name", list(MODELS))
@pytest.mark.parametrize("prepend", [False, True])
def test_every_marker_comes_before_the_hooks_it_announces(name, prepend):
    build, make_input = MODELS[name]
    torch.manual_seed(0)
    model = build()
    x = make_input()
    expected = torch_order(model, x)
    hooked_everywhere(model, prepend=prepend)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        trace = hv.trace_hooks(model, x)
    assert check_markers(trace) == 3 * len(expected) // 2
    markers = [(MARKS[f.kind], f.path) for f in trace.firings if f.kind in MARKS]
    assert markers == expected


def test_markers_come_before_global_backward_hooks_too():
    model = patterns.Residual()
    handles = [
        torch_module.register_module_full_backward_pre_hook(lambda m, g: None),
        torch_module.register_module_full_backward_hook(lambda m, gi, go: None),
    ]
    try:
        trace = hv.trace_hooks(model, torch.randn(3, 6, requires_grad=True))
    finally:
        for h in handles:
            h.remove()
    assert check_markers(trace) > 0
    assert [f.seq for f in trace.firings] == list(range(len(trace.firings)))
