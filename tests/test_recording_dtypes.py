"""record()'s statistics of every dtype, at the edges of its range: no false Inf, no false NaN,
no false zero, a true Inf or NaN still counted, in the whole-tensor, sampled (exact=True) and
sample-only (exact=False) paths, and on the device path (statistics without NaN/Inf counts)."""

from __future__ import annotations

import math

import pytest
import torch
from torch import nn

import hookviz as hv
from hookviz.store import HIST_BINS
from hookviz.summaries import SAMPLE_SIZE, Interner, Lane

SMALL, LARGE = 200, 4 * SAMPLE_SIZE + 3  # kept whole / sampled
# stats=None counts NaN and Inf apart (host path); without them the exact pass stays on the
# device (the path of every accelerator)
STATS = {"all": None, "device path": ("mean", "std", "min", "max", "norm", "zeros", "histogram")}


def sample_of(x: torch.Tensor) -> torch.Tensor:
    """The values record() samples from ``x`` (all of them when it is kept whole)."""
    flat = x.detach().reshape(-1)
    if flat.numel() <= SAMPLE_SIZE:
        return flat
    return flat[Lane(torch.device("cpu"), Interner()).sample_positions(flat.numel())]


def scaled(values: torch.Tensor) -> tuple[torch.Tensor, float]:
    """``values`` (float64, finite) divided by a power of two near their largest magnitude, and
    that power: statistics of the scaled values, times it, hold at both ends of float64."""
    largest = values.abs().max().item() if values.numel() else 0.0
    power = 2.0 ** math.frexp(largest)[1] if largest > 0 else 1.0
    return values / power, power


def expected(x: torch.Tensor, *, exact: bool = True, gradient: bool = False) -> dict:
    """What record() must report for ``x``, from its values in float64: the whole tensor's, or
    for a sampled one the sample's, scaled (exact extremes, counts and a gradient's norm)."""
    whole = x.detach().reshape(-1).to(torch.float64)
    sample = sample_of(x).to(torch.float64)
    sampled = whole.numel() > SAMPLE_SIZE
    finite, power = scaled(sample[torch.isfinite(sample)])
    scale = whole.numel() / sample.numel()
    source = whole if (exact or not sampled) else sample
    source_finite = source[torch.isfinite(source)]
    norm = finite.norm().item() * power * math.sqrt(scale)
    if (not sampled) or (exact and gradient):
        everything, at = scaled(whole[torch.isfinite(whole)])
        norm = everything.norm().item() * at
    return {
        "mean": finite.mean().item() * power if finite.numel() else math.nan,
        "std": finite.std().item() * power
        if finite.numel() > 1
        else (0.0 if finite.numel() else math.nan),
        "min": source_finite.min().item() if source_finite.numel() else math.nan,
        "max": source_finite.max().item() if source_finite.numel() else math.nan,
        "norm": norm,
        "zero_fraction": (sample == 0).sum().item() / sample.numel(),
        "nan_count": round(torch.isnan(source).sum().item() * (1 if source is whole else scale)),
        "inf_count": round(torch.isinf(source).sum().item() * (1 if source is whole else scale)),
    }


def record_output(x: torch.Tensor, *, exact: bool = True, stats=None):
    model = nn.Identity()
    with hv.record(model, phases=["forward"], gradients=False, exact=exact, stats=stats) as rec:
        model(x)
    (event,) = rec.events
    return event.main


def record_gradient(x: torch.Tensor, *, exact: bool = True, stats=None):
    """The statistics of ``x`` as the gradient w.r.t. a module's output (backward_pre)."""
    model = nn.Identity()
    leaf = torch.zeros(x.shape, dtype=x.dtype, requires_grad=True)
    with hv.record(model, phases=["backward_pre"], exact=exact, stats=stats) as rec:
        model(leaf * 1).backward(x)
    (event,) = rec.events
    return event.main


def assert_matches(t, want: dict, rel: float = 1e-6) -> None:
    for name, value in want.items():
        got = getattr(t, name)
        if got is None:
            continue  # not asked for
        if isinstance(value, float) and math.isnan(value):
            assert math.isnan(got), (t.dtype, name, got)
        else:
            assert got == pytest.approx(value, rel=rel, abs=0), (t.dtype, name, got, value)


def assert_histogram(t, x: torch.Tensor) -> None:
    """Every finite value of the sample in one of the bins, each bin holding the values that
    fall in it (read in float64; a value on an edge may sit on either side)."""
    if t.histogram is None:
        return
    sample = sample_of(x).to(torch.float64)
    finite = sample[torch.isfinite(sample)]
    assert sum(t.histogram) == finite.numel(), (t.dtype, t.histogram)
    lo, hi = t.hist_range
    assert math.isfinite(lo) and math.isfinite(hi) and lo <= hi
    if finite.numel() and hi > lo:
        at = ((finite - lo) / (hi - lo) * HIST_BINS).floor().clamp(0, HIST_BINS - 1).long()
        want = torch.bincount(at, minlength=HIST_BINS).tolist()
        assert sum(abs(a - b) for a, b in zip(t.histogram, want, strict=True)) <= 2, (
            t.histogram,
            want,
        )


@pytest.mark.parametrize("stats", STATS)
@pytest.mark.parametrize("size", [SMALL, LARGE])
@pytest.mark.parametrize("value", [1e40, -1e-50])
def test_float64_values_float32_cannot_hold_are_read_in_float64(value, size, stats):
    """1e40 read through float32 became Inf (Inf=12, norm=0); 1e-50 became a false zero."""
    torch.manual_seed(0)
    x = value * (1 + torch.rand(size, dtype=torch.float64))
    t = record_output(x, stats=STATS[stats])
    assert t.dtype == "float64"
    want = expected(x)
    assert_matches(t, want)
    assert_histogram(t, x)
    assert t.inf_count in (None, 0) and t.nan_count in (None, 0)
    assert t.zero_fraction == 0.0 and t.norm > 0 and math.isfinite(t.norm)
    assert t.histogram is None or sum(t.histogram) == min(size, SAMPLE_SIZE)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float64])
@pytest.mark.parametrize("size", [SMALL, LARGE])
def test_the_device_path_reads_half_precision_and_float64(dtype, size):
    """Without NaN/Inf counts the exact pass writes into the lane's cells (out=), which took
    float32 only: float16, bfloat16 and float64 tensors raised 'Expected out tensor to have
    dtype ...'."""
    torch.manual_seed(0)
    x = torch.randn(size, dtype=dtype)
    device = STATS["device path"]
    for t, gradient in (
        (record_output(x, stats=device), False),
        (record_gradient(x, stats=device), True),
    ):
        assert t.dtype == str(dtype).removeprefix("torch.")
        assert_matches(t, expected(x, gradient=gradient), rel=1e-5)
        assert_histogram(t, x)


@pytest.mark.parametrize("size", [SMALL, LARGE])
@pytest.mark.parametrize("exact", [True, False])
def test_std_of_values_whose_spread_is_small_beside_their_mean(size, exact):
    """A row kept whole is padded to SAMPLE_SIZE cells; the padding's mean^2, taken back out
    of the sum of squares, cancelled every digit of a small spread: 1000 +- 0.01 read std 0,
    and a constant 1000 read 0.11."""
    torch.manual_seed(0)
    for x in (1000 + 0.01 * torch.randn(size), torch.full((size,), 1000.0)):
        t = record_output(x, exact=exact)
        want = expected(x, exact=exact)
        assert t.std == pytest.approx(want["std"], rel=1e-3, abs=1e-4 * 0.01)
        assert t.mean == pytest.approx(want["mean"], rel=1e-6)
