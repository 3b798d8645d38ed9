"""trace_hooks: one pass as the ordered list of firings; everything put back afterwards."""

from __future__ import annotations

import pytest
import torch

import hookviz as hv
from tests.helpers import assert_no_hooks


def test_forward_hook_fires_after_forward_and_pre_hook_before():
    model = hv.examples.model()

    def pre(module, args):
        return None

    def after(module, args, output):
        return output * 2

    model.ab.a.register_forward_pre_hook(pre)
    model.ab.a.register_forward_hook(after)
    trace = hv.trace_hooks(model, torch.rand(1))
    a = [
        (f.kind, f.name)
        for f in trace.firings
        if f.path == "ab.a" and not f.kind.startswith("grad")
    ]
    assert a == [
        ("forward_pre", "pre"),
        ("forward_call", "forward() starts"),
        ("forward_return", "forward() returns"),
        ("forward", "after"),
    ]
    replaced = [f for f in trace.firings if f.replaced]
    assert [(f.path, f.replaced) for f in replaced] == [("ab.a", "output")]


def test_full_backward_hooks_fire_per_module_during_backward():
    model = hv.examples.model()
    for name in ("cd.d", "ab.a"):
        model.get_submodule(name).register_full_backward_hook(lambda m, gi, go: None)
    trace = hv.trace_hooks(model, torch.rand(1, requires_grad=True))
    order = [(f.label, f.kind) for f in trace.firings if f.kind in ("backward", "grad_input_ready")]
    # cd.d's hook fires long before ab.a's input gradient exists: per module, during backward
    assert order.index(("cd.d", "backward")) < order.index(("ab.a", "grad_input_ready"))
    assert order.index(("ab.a", "backward")) > order.index(("cd.d", "grad_input_ready"))


def test_everything_is_restored_even_when_forward_raises():
    model = hv.examples.model()

    def fragile(module, args, output):
        raise RuntimeError("hook broke")

    handle = model.cd.c.register_forward_hook(fragile)
    before = dict(model.cd.c._forward_hooks)
    with pytest.raises(RuntimeError, match="hook broke"):
        hv.trace_hooks(model, torch.rand(1))
    assert dict(model.cd.c._forward_hooks) == before
    handle.remove()
    assert_no_hooks(model)


def test_parameter_grads_are_restored_unless_kept():
    model = hv.examples.model()
    trace = hv.trace_hooks(model, torch.rand(1))
    assert all(p.grad is None for p in model.parameters())
    assert trace.loss is not None
    hv.trace_hooks(model, torch.rand(1), keep_grads=True)
    assert all(p.grad is not None for p in model.parameters())


def test_tensor_hooks_on_parameters_are_seen():
    model = hv.examples.model()
    model.cd.c.W.register_hook(lambda g: g * 0)
    trace = hv.trace_hooks(model, torch.rand(1))
    hits = [f for f in trace.user_firings() if f.kind == "tensor"]
    assert [(f.label, f.replaced) for f in hits] == [("cd.c.W", "gradient")]
    assert repr(trace).startswith("HookTrace(Model, ")


def test_keyword_arguments_and_a_dict_of_inputs_reach_the_model():
    class Keyworded(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.proj = torch.nn.Linear(3, 3)

        def forward(self, x, *, scale=1.0, mask=None):
            out = self.proj(x) * scale
            return out if mask is None else out * mask

    model, x = Keyworded(), torch.randn(2, 3)
    mask = torch.tensor([1.0, 0.0, 1.0])
    expected = model(x, scale=3.0, mask=mask)
    for trace in (
        hv.trace_hooks(model, x, kwargs={"scale": 3.0, "mask": mask}),
        hv.trace_hooks(model, {"x": x, "scale": 3.0, "mask": mask}),
        hv.trace_hooks(model, {"x": x}, kwargs={"scale": 3.0, "mask": mask}),
    ):
        assert torch.equal(trace.output, expected)
        assert trace.loss == pytest.approx(float(expected.detach().sum()))
    with pytest.raises(TypeError, match="'scale' given both in inputs and in kwargs"):
        hv.trace_hooks(model, {"x": x, "scale": 1.0}, kwargs={"scale": 2.0})
    with pytest.raises(TypeError, match="kwargs must be a dict of keyword arguments"):
        hv.trace_hooks(model, x, kwargs=[("scale", 2.0)])
    widget = hv.HookTimeline(model, x, kwargs={"scale": 3.0})
    assert "Keyworded" in repr(widget)
    assert_no_hooks(model)


def test_a_meta_device_model_is_traced_without_values():
    with torch.device("meta"):
        model = torch.nn.Sequential(torch.nn.Linear(3, 3), torch.nn.ReLU(), torch.nn.Linear(3, 1))
    trace = hv.trace_hooks(model, torch.randn(2, 3, device="meta"))
    assert trace.loss is None  # a meta tensor holds no value to show
    kinds = [f.kind for f in trace.firings if f.label == "0"]
    assert kinds == ["forward_call", "forward_return", "grad_output_ready", "grad_input_ready"]
    widget = hv.HookTimeline(model, torch.randn(2, 3, device="meta"))
    assert repr(widget).startswith("HookTimeline(Sequential, ")
    assert_no_hooks(model)


def test_a_compiled_model_is_refused_with_what_to_trace_instead():
    compiled = torch.compile(hv.examples.model(), backend="eager")
    with pytest.raises(TypeError, match=r"model\._orig_mod"):
        hv.trace_hooks(compiled, torch.rand(1))
