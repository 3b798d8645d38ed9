"""record() computes its statistics with autograd off, whatever mode the user's code runs in:
no_grad, inference_mode, enable_grad inside either, forward-mode AD, all mixed in one
recording, with tensors that require grad, inference tensors and views. Each gives the same
statistics as the same values read in plain grad mode, and the user's graph is left alone."""

from __future__ import annotations

import contextlib
import math

import pytest
import torch
import torch.autograd.forward_ad as fwAD
from torch import nn

import hookviz as hv
from hookviz.summaries import BUFFER_ROWS, SAMPLE_SIZE

# both sides of the sample size: kept whole, and sampled with an exact pass
SIZES = (3, 4 * SAMPLE_SIZE)


def enable_grad_in_inference():
    stack = contextlib.ExitStack()
    stack.enter_context(torch.inference_mode())
    stack.enter_context(torch.enable_grad())
    return stack


def inference_in_no_grad():
    stack = contextlib.ExitStack()
    stack.enter_context(torch.no_grad())
    stack.enter_context(torch.inference_mode())
    return stack


def no_grad_in_enable_grad_in_inference():
    stack = enable_grad_in_inference()
    stack.enter_context(torch.no_grad())
    return stack


MODES = {
    "grad": contextlib.nullcontext,
    "no_grad": torch.no_grad,
    "inference_mode": torch.inference_mode,
    "set_grad_enabled(False)": lambda: torch.set_grad_enabled(False),
    "enable_grad in inference_mode": enable_grad_in_inference,
    "inference_mode in no_grad": inference_in_no_grad,
    "no_grad in enable_grad in inference_mode": no_grad_in_enable_grad_in_inference,
}


def expected(x: torch.Tensor) -> dict[str, float]:
    """What record() reports for ``x`` (every value finite), read in float64 by torch."""
    d = x.detach().double()
    return {
        "min": d.min().item(),
        "max": d.max().item(),
        "nan_count": 0,
        "inf_count": 0,
        **(
            {}
            if x.numel() > SAMPLE_SIZE
            else {"mean": d.mean().item(), "std": d.std().item(), "norm": d.norm().item()}
        ),
    }


def assert_stats(t: hv.recording.TensorStats, x: torch.Tensor) -> None:
    for name, value in expected(x).items():
        got = getattr(t, name)
        assert got == pytest.approx(value, rel=1e-5, abs=1e-6), (t.name, name, got, value)


@pytest.mark.parametrize("stats", [None, ("min", "max", "norm")], ids=["all", "no-nan-inf"])
@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("mode", MODES)
def test_an_input_that_requires_grad_gives_statistics_in_every_mode(mode, size, stats):
    """The issue's crash: a module called under inference_mode with an input that requires
    grad ('nan_to_num(): functions with out=... arguments don't support automatic
    differentiation') at the flush, or aminmax's in the hook for a large input."""
    torch.manual_seed(0)
    model = nn.Linear(size, 2)
    x = torch.randn(2, size, requires_grad=True)
    with hv.record(model, stats=stats) as rec:
        with MODES[mode]():
            model(x)
    (pre,) = rec.select(phase="forward_pre")
    if stats is None:
        assert_stats(pre.main, x)
    assert pre.main.min == pytest.approx(x.min().item())
    assert pre.main.max == pytest.approx(x.max().item())
    assert x.grad is None and x.grad_fn is None and x.is_leaf


@pytest.mark.parametrize("size", SIZES)
def test_several_steps_in_every_mode_nested_in_one_recording(size):
    """Steps in plain grad mode (with backward), under no_grad, inference_mode and nested
    modes, in one recording: every tensor has statistics, and training is what it is
    without hookviz."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(size, 16), nn.ReLU(), nn.Linear(16, size))
    twin = nn.Sequential(nn.Linear(size, 16), nn.ReLU(), nn.Linear(16, size))
    twin.load_state_dict(model.state_dict())
    inputs = [torch.randn(4, size, requires_grad=i % 2 == 0) for i in range(2 * len(MODES))]

    def train(net, watch):
        outputs = []
        with hv.record(net) if watch else contextlib.nullcontext() as rec:
            for i, x in enumerate(inputs):
                mode = list(MODES)[i % len(MODES)]
                with MODES[mode]():
                    y = net(x)
                outputs.append(y.detach().clone())
                if y.requires_grad:
                    y.square().mean().backward()
        return rec, outputs

    rec, seen = train(model, watch=True)
    _, unseen = train(twin, watch=False)
    for a, b in zip(seen, unseen, strict=True):
        torch.testing.assert_close(a, b)
    for p, q in zip(model.parameters(), twin.parameters(), strict=True):
        torch.testing.assert_close(p.grad, q.grad)
    assert rec.steps_recorded == len(inputs)
    for event in rec.events:
        for t in event.tensors:
            if t.value_type == "tensor":
                assert t.mean is not None and math.isfinite(t.mean), event
                assert math.isfinite(t.norm) and t.nan_count == 0 and t.inf_count == 0, event
    backward_steps = {e.step for e in rec.select(phase="backward")}
    assert backward_steps == {i for i, x in enumerate(inputs) if i % len(MODES) == 0}


def test_a_flush_inside_a_hook_under_inference_mode():
    """A full buffer is flushed at the next step's start, inside the root's pre-hook, in the
    user's mode (here inference_mode with enable_grad, and an input that requires grad)."""
    torch.manual_seed(0)
    model = nn.Sequential(*[nn.Linear(8, 8) for _ in range(16)])
    x = torch.randn(2, 8, requires_grad=True)
    steps = 2 * BUFFER_ROWS // 32 + 2  # 32 rows a step: several flushes come from hooks
    with hv.record(model, phases=["forward_pre", "forward"]) as rec:
        for _ in range(steps):
            with enable_grad_in_inference():
                model(x)
    first = rec.select(phase="forward_pre", path="0")
    assert len(first) == steps
    for event in first:
        assert_stats(event.main, x)


def test_inference_tensors_and_views_of_tensors_that_require_grad():
    torch.manual_seed(0)
    with torch.inference_mode():
        made_in_inference = torch.randn(4, 3 * SAMPLE_SIZE)
    base = torch.randn(8, 3 * SAMPLE_SIZE, requires_grad=True)
    views = {
        "inference tensor": made_in_inference,
        "a view of a leaf that requires grad": base[::2],
        "a transposed view": base.t(),
        "an expanded view": base[:1].expand(4, -1),
    }
    for name, x in views.items():
        model = nn.Identity()
        for mode in ("grad", "no_grad", "inference_mode"):
            with hv.record(model, gradients=False) as rec:
                with MODES[mode]():
                    model(x)
            (out,) = rec.select(phase="forward")
            assert out.main.min == pytest.approx(x.min().item()), (name, mode)
            assert out.main.max == pytest.approx(x.max().item()), (name, mode)
    assert base.grad is None


# torch's forward AD scripts its decompositions the first time it runs: torch's own warning
@pytest.mark.filterwarnings("ignore:`torch.jit.script` is deprecated:DeprecationWarning")
@pytest.mark.parametrize("size", SIZES)
def test_forward_mode_ad_is_watched_and_left_as_it_is(size):
    """Dual tensors (torch.autograd.forward_ad) refuse out= reads; record() reads their
    primal values, and the tangents that flow through the model are unchanged."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(size, 8), nn.Tanh(), nn.Linear(8, size))
    primal, tangent = torch.randn(3, size), torch.randn(3, size)

    def jvp(watch):
        with hv.record(model, gradients=False) if watch else contextlib.nullcontext() as rec:
            with fwAD.dual_level():
                y = model(fwAD.make_dual(primal, tangent))
                again = model(fwAD.make_dual(primal, tangent))  # after a buffer held a dual row
                found = fwAD.unpack_dual(y)
                result = (found.primal.clone(), found.tangent.clone())
                torch.testing.assert_close(fwAD.unpack_dual(again).tangent, result[1])
        return rec, result

    rec, (value, slope) = jvp(watch=True)
    _, (value_bare, slope_bare) = jvp(watch=False)
    torch.testing.assert_close(value, value_bare)
    torch.testing.assert_close(slope, slope_bare)
    pre = rec.select(phase="forward_pre", path="0")
    assert len(pre) == 2
    for event in pre:
        assert_stats(event.main, primal)
