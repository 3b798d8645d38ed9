"""Property tests: random module trees, shared submodules, forwards that raise.

For any tree, trace_apply's order is torch's own apply order; for any chain of modules with
the user's own hooks, record()'s events come in torch's hook order; and whatever happens,
no hook is left behind.
"""

from __future__ import annotations

import warnings

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from torch import nn

import hookviz as hv
from tests.helpers import assert_no_hooks, torch_hook_order

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def module_trees(draw):
    """A random container tree whose leaves are Linear/Tanh/Identity, some of them shared."""
    pool: list[nn.Module] = []

    def build(depth: int) -> nn.Module:
        if depth >= 3 or draw(st.integers(0, 3)) == 0:
            if pool and draw(st.booleans()):
                return draw(st.sampled_from(pool))  # a shared module: a second parent
            leaf = draw(st.sampled_from([lambda: nn.Linear(2, 2), nn.Tanh, nn.Identity]))()
            pool.append(leaf)
            return leaf
        children = [build(depth + 1) for _ in range(draw(st.integers(1, 3)))]
        if draw(st.booleans()):
            return nn.Sequential(*children)
        return nn.ModuleDict({f"m{i}": c for i, c in enumerate(children)})

    return nn.Sequential(*[build(1) for _ in range(draw(st.integers(1, 3)))])


@SETTINGS
@given(module_trees())
def test_apply_order_equals_torch_for_random_trees(model):
    seen: list[nn.Module] = []
    model.apply(seen.append)
    trace = hv.trace_apply(model)
    assert [v.module for v in trace.visits] == seen
    assert trace.order == hv.postorder(model)
    for visit in trace.visits:  # each path really names the module visited
        assert (model.get_submodule(visit.path) if visit.path else model) is visit.module
    assert sorted(set(hv.preorder(model))) == sorted({p for p, _ in model.named_modules()})
    assert_no_hooks(model)


@SETTINGS
@given(module_trees(), st.integers(0, 30))
def test_a_raising_fn_leaves_nothing_behind(model, stop_at):
    count = {"n": 0}

    def fn(module):
        count["n"] += 1
        if count["n"] > stop_at:
            raise ValueError("stop")

    try:
        trace = hv.trace_apply(model, fn, echo=False)
        assert len(trace) <= stop_at
    except hv.ApplyFnError as error:
        assert len(error.trace) == stop_at + 1
    assert_no_hooks(model)


class Chain(nn.Module):
    """Modules applied one after another, optionally nested in a block."""

    def __init__(self, layers: list[nn.Module], nested: bool):
        super().__init__()
        self.block = nn.Sequential(*layers) if nested else None
        self.layers = None if nested else nn.ModuleList(layers)

    def forward(self, x):
        if self.block is not None:
            return self.block(x)
        for layer in self.layers:
            x = layer(x)
        return x


class Raises(nn.Module):
    def forward(self, x):
        raise RuntimeError("forward raised")


@st.composite
def chains(draw):
    kinds = st.sampled_from(["linear", "tanh", "relu", "scale"])
    layers: list[nn.Module] = []
    for _ in range(draw(st.integers(1, 5))):
        kind = draw(kinds)
        layers.append(
            {
                "linear": lambda: nn.Linear(3, 3),
                "tanh": nn.Tanh,
                "relu": nn.ReLU,
                "scale": lambda: nn.Sequential(nn.Linear(3, 3), nn.Sigmoid()),
            }[kind]()
        )
    model = Chain(layers, draw(st.booleans()))
    user_hooks = draw(
        st.lists(st.tuples(st.integers(0, 20), st.sampled_from(["pre", "fwd", "bwd"])), max_size=4)
    )
    return model, user_hooks, draw(st.booleans())


def add_user_hooks(model: nn.Module, user_hooks, fired: list) -> None:
    modules = [m for _, m in model.named_modules()]
    for index, kind in user_hooks:
        module = modules[index % len(modules)]
        if kind == "pre":
            module.register_forward_pre_hook(lambda m, a, i=index: fired.append(("pre", i)))
        elif kind == "fwd":
            module.register_forward_hook(lambda m, a, o, i=index: fired.append(("fwd", i)))
        else:
            module.register_full_backward_hook(lambda m, gi, go, i=index: fired.append(("bwd", i)))


@SETTINGS
@given(chains())
def test_event_order_equals_torchs_hook_order_and_user_hooks_are_untouched(case):
    model, user_hooks, input_grad = case
    fired: list = []
    add_user_hooks(model, user_hooks, fired)
    torch.manual_seed(0)
    x = torch.randn(2, 3, requires_grad=input_grad)
    expected = torch_hook_order(model, x)
    fired.clear()
    torch.manual_seed(0)
    reference_out = model(x)
    reference_fired = list(fired)
    fired.clear()
    with hv.record(model) as rec, warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch's note on backward hooks with no input gradient
        out = model(x)
        if out.requires_grad:  # a chain without parameters and an input without grad: forward only
            out.sum().backward()
    assert torch.equal(out, reference_out)
    assert fired[: len(reference_fired)] == reference_fired  # the user's hooks fire, in order
    assert rec.order() == expected
    assert len(hv.list_hooks(model)) == len(user_hooks)
    hv.remove_hooks(model)
    assert_no_hooks(model, out)


@SETTINGS
@given(chains(), st.integers(0, 4))
def test_a_raising_forward_leaves_no_hook_behind(case, where):
    model, user_hooks, _ = case
    add_user_hooks(model, user_hooks, [])
    container = model.block if model.block is not None else model.layers
    container.insert(where % (len(container) + 1), Raises())
    with pytest.raises(RuntimeError, match="forward raised"), hv.record(model):
        model(torch.randn(2, 3))
    assert len(hv.list_hooks(model)) == len(user_hooks)
    hv.remove_hooks(model)
    assert_no_hooks(model)
