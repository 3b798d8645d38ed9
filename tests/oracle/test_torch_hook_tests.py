"""record() against torch's own hooks on the situations torch's hook tests exercise.

PyTorch's ``test/nn/test_module_hooks.py`` checks its hooks on a handful of situations: nested
containers, hooks registered with ``prepend``, hooks that return replacements (inputs, outputs,
gradients), keyword arguments, global hooks, a second backward through a retained graph, inputs
that need no gradient or are not tensors, several inputs of different sizes, a dict output.
Each is rebuilt here as a model and a run (written for this suite), and record()'s events must
be torch's, event for event: alone, and with torch's hooks beside it in the same run.
"""

from __future__ import annotations

import warnings

import pytest
import torch
import torch.nn.modules.module as torch_module
from torch import nn

import hookviz as hv
from tests.oracle.torch_oracle import check_against_torch


class Pair(nn.Module):
    def __init__(self):
        super().__init__()
        self.first = nn.Sequential(nn.Linear(6, 6), nn.Linear(6, 6))
        self.second = nn.Sequential(nn.Linear(6, 6), nn.Linear(6, 6))

    def forward(self, x):
        return self.second(self.first(x))


class Nested(nn.Module):
    def __init__(self):
        super().__init__()
        self.left, self.right = Pair(), Pair()

    def forward(self, x):
        return self.right(self.left(x))


def nested(**_):
    return Nested()


def forward_backward(model, x=None):
    x = torch.randn(4, 6) if x is None else x
    model(x).sum().backward()


def twice(model):
    forward_backward(model)
    forward_backward(model)


def with_user_hooks(model):
    """Hooks of every kind the user might add, prepend among them: record() must not care."""
    fired = []
    target = model.left.second
    for i in range(3):
        target.register_forward_hook(lambda m, a, o, i=i: fired.append(i), prepend=i == 1)
        target.register_forward_pre_hook(lambda m, a, i=i: fired.append(i), prepend=i == 2)
        model.left.register_full_backward_hook(lambda m, gi, go, i=i: fired.append(i), prepend=i)
        model.left.register_full_backward_pre_hook(lambda m, g, i=i: fired.append(i), prepend=i)
    return fired


class KwargModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = Pair()

    def forward(self, x, bias=None):
        if bias is not None:
            x = x + bias
        return self.inner(x)


def double_bias(module, args, kwargs):
    kwargs["bias"] = 2 * kwargs["bias"]
    return args, kwargs


def add_bias(module, args, kwargs, output):
    return output + kwargs["bias"]


class DictInOut(nn.Module):
    def forward(self, inputs):
        return {"x": torch.softmax(inputs["x"], 0)}


class NonTensorFirst(nn.Module):
    def forward(self, flag, tensor):
        return tensor.clone() * 2, flag


class ThreeArgs(nn.Module):
    def forward(self, a, b, c):
        return a.sum() + b.sum() * 2 + c.sum() * 3


class TwoSizes(nn.Module):
    def forward(self, a, b):
        t = a.sum() * b + b.sum() * a.sum()
        return t.sum().view(1).expand(8).contiguous()


class InPlaceOnInput(nn.Module):
    """Adds 1 to its input in place: torch's full hooks raise here, record() must not."""

    def __init__(self, inplace: bool = True):
        super().__init__()
        self.inplace = inplace

    def forward(self, x):
        if self.inplace:
            x += 1
        else:
            x = x + 1
        return x.clone() * 3


def scenario(name):
    return pytest.param(name, id=name)


def build(name):  # noqa: C901 - one branch per scenario, each a few lines
    if name == "nested containers":
        return nested(), forward_backward
    if name == "two passes":
        return nested(), twice
    if name == "user hooks with prepend":
        model = nested()
        with_user_hooks(model)
        return model, forward_backward
    if name == "backward pre-hook zeroes grad_output":
        model = nested()
        model.right.register_full_backward_pre_hook(lambda m, g: (g[0] * 0,))
        return model, forward_backward
    if name == "backward pre-hook halves, backward hook doubles":
        model = nn.Sequential(nn.Linear(3, 3), nn.Sigmoid(), nn.Linear(3, 2))
        model[1].register_full_backward_pre_hook(lambda m, g: (g[0] * 0.5,))
        model[1].register_full_backward_hook(lambda m, gi, go: (gi[0] * 2,))
        return model, lambda m: m(torch.ones(2, 3, requires_grad=True)).sum().backward()
    if name == "hooks on the root of every kind":
        model = nested()
        model.register_forward_pre_hook(lambda m, a: None)
        model.register_forward_hook(lambda m, a, o: None)
        model.register_full_backward_pre_hook(lambda m, g: None)
        model.register_full_backward_hook(lambda m, gi, go: None)
        return model, twice
    if name == "keyword arguments replaced by hooks":
        model = KwargModel()
        model.register_forward_pre_hook(double_bias, with_kwargs=True)
        model.register_forward_hook(add_bias, with_kwargs=True)

        def run(m):
            bias = torch.ones(4, 6, requires_grad=True)
            m(torch.ones(4, 6, requires_grad=True), bias=bias).sum().backward()

        return model, run
    if name == "always_call and with_kwargs forward hooks":
        model = nested()
        model.left.register_forward_hook(lambda m, a, o: o * 2, always_call=True)
        model.right.register_forward_hook(
            lambda m, a, k, o: o + 1, with_kwargs=True, always_call=True
        )
        model.right.first.register_forward_pre_hook(
            lambda m, a, k: ((a[0] * 3,), k), with_kwargs=True
        )
        return model, forward_backward
    if name == "forward pre-hook and forward hook replace":
        model = nn.Sequential(nn.Sigmoid(), nn.Linear(5, 5))
        model[0].register_forward_pre_hook(lambda m, a: torch.relu(a[0]))
        model[0].register_forward_hook(lambda m, a, o: -o)
        return model, lambda m: m(torch.randn(5, 5, requires_grad=True)).sum().backward()
    if name == "a hook that removes itself":
        model = nn.Sequential(nn.Sigmoid(), nn.Tanh())
        handles = []

        def once(module, args):
            handles[0].remove()

        handles.append(model[0].register_forward_pre_hook(once))
        return model, twice_small
    if name == "dict in, dict out":
        model = nn.Sequential()
        model.add_module("soft", DictInOut())
        return model, lambda m: m({"x": torch.ones(2, requires_grad=True)})["x"].sum().backward()
    if name == "input needs no gradient":
        return nn.Linear(2, 3), lambda m: m(torch.rand(1, 2)).sum().backward()
    if name == "several inputs, one detached":

        def run(m):
            x = torch.rand(2, requires_grad=True)
            m(x, x.detach(), x).backward()

        return ThreeArgs(), run
    if name == "last argument alone needs a gradient":

        def run(m):
            x = torch.rand(3, requires_grad=True)
            m(x.detach(), x).backward()

        return nn.L1Loss(), run
    if name == "a non-tensor argument and output":

        def run(m):
            out, _ = m(True, torch.rand(2, requires_grad=True))
            out.sum().backward()

        return NonTensorFirst(), run
    if name == "inputs of two sizes":

        def run(m):
            m(
                torch.randn(5, 5, requires_grad=True), torch.randn(10, 10, requires_grad=True)
            ).sum().backward()

        return TwoSizes(), run
    if name == "batch norm":
        return nn.BatchNorm1d(
            5
        ), lambda m: m(torch.randn(5, 5, requires_grad=True)).sum().backward()
    if name == "retained graph, backward twice":

        def run(m):
            out = m(torch.ones(5, 5, requires_grad=True))
            out.backward(torch.ones(5, 5) * 2, retain_graph=True)
            out.backward(torch.ones(5, 5) * 2, retain_graph=True)

        return nn.Sequential(nn.Sigmoid(), nn.Linear(5, 5)), run
    if name == "three calls, separate backwards":

        def run(m):
            x = torch.ones(5, 5, requires_grad=True)
            outs = [m(x) for _ in range(3)]
            outs[0].backward(torch.ones(5, 5) * 2, retain_graph=True)
            outs[1].backward(torch.ones(5, 5) * 2)
            outs[2].backward(torch.ones(5, 5) * 2)
            outs[0].backward(torch.ones(5, 5) * 2)

        return nn.Sequential(nn.Sigmoid()), run
    raise ValueError(name)


def twice_small(model):
    for _ in range(2):
        model(torch.randn(2, 2, requires_grad=True)).sum().backward()


SCENARIOS = [
    "nested containers",
    "two passes",
    "user hooks with prepend",
    "backward pre-hook zeroes grad_output",
    "backward pre-hook halves, backward hook doubles",
    "hooks on the root of every kind",
    "keyword arguments replaced by hooks",
    "always_call and with_kwargs forward hooks",
    "forward pre-hook and forward hook replace",
    "a hook that removes itself",
    "dict in, dict out",
    "input needs no gradient",
    "several inputs, one detached",
    "last argument alone needs a gradient",
    "a non-tensor argument and output",
    "inputs of two sizes",
    "batch norm",
    "retained graph, backward twice",
    "three calls, separate backwards",
]


@pytest.mark.parametrize("name", SCENARIOS)
def test_record_sees_what_torchs_hooks_see(name):
    events = check_against_torch(lambda: build(name), what=name)
    assert events, "the scenario fired no hook at all"


def test_global_hooks_of_every_kind_leave_the_events_torchs():
    """Global forward and full backward hooks that replace values, on modules called three times
    and run backward separately, one graph twice."""
    handles = [
        torch_module.register_module_forward_pre_hook(lambda m, a: (a[0] * 1.5,)),
        torch_module.register_module_forward_hook(lambda m, a, o: o - 0.25),
        torch_module.register_module_full_backward_pre_hook(lambda m, g: (g[0] * 2,)),
        torch_module.register_module_full_backward_hook(lambda m, gi, go: None),
    ]
    try:

        def make():
            def run(m):
                x = torch.ones(5, 5, requires_grad=True)
                outs = [m(x) for _ in range(3)]
                outs[0].backward(torch.ones(5, 5), retain_graph=True)
                outs[1].backward(torch.ones(5, 5))
                outs[2].backward(torch.ones(5, 5))
                outs[0].backward(torch.ones(5, 5))

            return nn.Sequential(nn.Sigmoid(), nn.Linear(5, 5)), run

        check_against_torch(make, what="global hooks")
    finally:
        for handle in handles:
            handle.remove()


def test_in_place_on_the_input_works_where_torchs_hooks_raise():
    """torch's full hooks raise when a module changes its input in place; record() records the
    same events as torch's hooks give on the same module without the in-place op."""
    model = InPlaceOnInput()
    model.register_full_backward_hook(lambda m, gi, go: None)
    with pytest.raises(RuntimeError, match="is a view and is being modified inplace"):
        model(torch.rand(3, requires_grad=True) * 1)

    def run(m):
        m(torch.rand(3, requires_grad=True) * 1).sum().backward()

    check_against_torch(
        lambda: (nn.Sequential(InPlaceOnInput(True)), run),
        reference=lambda: (nn.Sequential(InPlaceOnInput(False)), run),
        what="in place on the input",
    )


def test_a_legacy_backward_hook_keeps_its_meaning_and_the_others_agree():
    """torch refuses full hooks beside a legacy register_backward_hook; record() leaves the legacy
    hook its addmm view (bias, input, weightᵀ) and agrees with torch on every other module."""
    seen = {}

    def make():
        model = nn.Sequential(nn.Linear(3, 2), nn.Tanh(), nn.Linear(2, 2))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the legacy hook's deprecation warning
            model[0].register_backward_hook(
                lambda m, gi, go: seen.__setitem__("shapes", [tuple(g.shape) for g in gi])
            )
        return model, lambda m: m(torch.randn(2, 3, requires_grad=True)).sum().backward()

    legacy = {"0"}
    check_against_torch(
        make,
        what="a legacy hook on '0'",
        skip=lambda m: isinstance(m, nn.Linear) and m.in_features == 3,
        record_options={"modules": lambda path, m: path not in legacy},
    )
    model, run = make()
    seen.clear()
    with hv.record(model) as rec, warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch's "non-full backward hook" warning
        run(model)
    assert seen["shapes"] == [(2,), (2, 3), (3, 2)]  # the legacy hook's addmm view, unchanged
    assert [e.phase for e in rec.select(path="0")] == [
        "forward_pre",
        "forward",
        "backward_pre",
        "backward",
    ]
    left = [(h.path, h.kind, h.flags) for h in hv.list_hooks(model)]
    assert left == [("0", "backward", ("legacy",))]  # the user's legacy hook alone is left
