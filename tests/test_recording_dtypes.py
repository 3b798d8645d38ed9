"""record()'s statistics of every dtype, at the edges of its range: no false Inf, no false NaN,
no false zero, a true Inf or NaN still counted, in the whole-tensor, sampled (exact=True) and
sample-only (exact=False) paths, and on the device path (statistics without NaN/Inf counts)."""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
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
    power = math.ldexp(1.0, math.frexp(largest)[1] - 1) if largest > 0 else 1.0
    return values / power, power


def expected(
    x: torch.Tensor, *, exact: bool = True, gradient: bool = False, stats: str = "all"
) -> dict:
    """What record() must report for ``x``, from its values in float64: the whole tensor's, or
    for a sampled one the sample's, scaled (exact extremes, counts and a gradient's norm). On
    the device path a sampled tensor's exact min and max are torch's own (NaN beats all)."""
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
    low = source_finite.min().item() if source_finite.numel() else math.nan
    high = source_finite.max().item() if source_finite.numel() else math.nan
    if stats != "all" and sampled and exact:  # torch's own, NaN and Inf included
        low, high = whole.min().item(), whole.max().item()
        if gradient and not whole.isfinite().all():
            norm = whole.norm().item()
    return {
        "mean": finite.mean().item() * power if finite.numel() else math.nan,
        "std": finite.std().item() * power
        if finite.numel() > 1
        else (0.0 if finite.numel() else math.nan),
        "min": low,
        "max": high,
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


def rounding(x: torch.Tensor) -> float:
    """How far a mean or std of ``x``'s sample, summed in its lane's precision (float64 for
    float64, else float32), may stray from the float64 reference: a few units in the last
    place of its largest finite value (a mean of mixed signs cancels)."""
    sample = sample_of(x).to(torch.float64)
    finite = sample[torch.isfinite(sample)]
    lane = torch.float64 if x.dtype == torch.float64 else torch.float32
    return 16 * torch.finfo(lane).eps * (finite.abs().max().item() if finite.numel() else 0.0)


def assert_matches(t, want: dict, rel: float = 1e-6, x: torch.Tensor | None = None) -> None:
    """``t``'s statistics are ``want``'s (to ``rel``; a mean and std also to ``rounding(x)``)."""
    for name, value in want.items():
        got = getattr(t, name)
        if got is None:
            continue  # not asked for
        if isinstance(value, float) and math.isnan(value):
            assert math.isnan(got), (t.dtype, name, got)
        else:
            slack = rounding(x) if x is not None and name in ("mean", "std") else 0
            assert got == pytest.approx(value, rel=rel, abs=slack), (t.dtype, name, got, value)


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
    middle = (lo + hi) / 2
    if finite.numel() and bool((finite - middle).abs().max() <= 1e-9 * (hi - lo)):
        # constant, at the range's middle (a constant row's range is x +- d): the middle bin
        assert t.histogram[HIST_BINS // 2] == finite.numel(), t.histogram
    elif finite.numel():
        power = math.ldexp(1.0, math.frexp(max(abs(lo), abs(hi)))[1] - 1)
        u = (finite / power - lo / power) / (hi / power - lo / power) * HIST_BINS
        want = torch.bincount(u.floor().clamp(0, HIST_BINS - 1).long(), minlength=HIST_BINS)
        on_edges = int(((u - u.round()).abs() < 1e-4).sum())  # either side, as it rounds
        moved = sum(abs(a - b) for a, b in zip(t.histogram, want.tolist(), strict=True))
        assert moved <= 2 * on_edges + 2, (t.histogram, want)


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


# float32, float16 and bfloat16 share the float32 buffer: float32's squares and sums overflow
# above about 1e19 and lose digits below about 1e-19, inside every one of these ranges
EDGES = {
    torch.float32: [3e38, -1e30, 1e20, 1e-20, 1e-30, 1e-42],  # 1e-42: subnormal
    torch.bfloat16: [3e38, -1e30, 1e-30, 1e-38],
    torch.float16: [6e4, -6.5e4, 1e-4, 6e-8],  # 6e-8: subnormal
    torch.float64: [1e300, -3e306, 1e-300, 5e-320],  # 5e-320: subnormal
}
CASES = [(dtype, value) for dtype, values in EDGES.items() for value in values]


def near(value: float, size: int, dtype: torch.dtype, seed: int = 0) -> torch.Tensor:
    """``size`` values of ``dtype`` between half ``value`` and ``value`` (about), in random order."""
    torch.manual_seed(seed)
    return (value * (0.5 + 0.5 * torch.rand(size, dtype=torch.float64))).to(dtype)


def assert_honest(t, x: torch.Tensor) -> None:
    """No false Inf, NaN or zero: x has none of them."""
    assert t.inf_count in (None, 0) and t.nan_count in (None, 0), t
    for name in ("mean", "std", "min", "max", "norm"):
        value = getattr(t, name)
        assert value is None or math.isfinite(value), (name, t)
    assert t.norm is None or t.norm > 0, t
    assert t.zero_fraction in (None, 0.0), t


@pytest.mark.parametrize("stats", STATS)
@pytest.mark.parametrize("exact", [True, False])
@pytest.mark.parametrize("size", [SMALL, LARGE])
@pytest.mark.parametrize(("dtype", "value"), CASES, ids=[f"{d}-{v:g}" for d, v in CASES])
def test_an_output_near_the_edges_of_its_dtype(dtype, value, size, exact, stats):
    x = near(value, size, dtype)
    t = record_output(x, exact=exact, stats=STATS[stats])
    assert_honest(t, x)
    assert_matches(t, expected(x, exact=exact), rel=1e-5)
    assert_histogram(t, x)


@pytest.mark.parametrize("stats", STATS)
@pytest.mark.parametrize("exact", [True, False])
@pytest.mark.parametrize(("dtype", "value"), CASES, ids=[f"{d}-{v:g}" for d, v in CASES])
def test_a_gradient_near_the_edges_of_its_dtype_keeps_an_honest_norm(dtype, value, exact, stats):
    """A gradient's norm is exact by default: an exploding (1e20) or vanishing (1e-30) gradient
    read Inf or 0 when its squares overflowed or underflowed in float32. On the device path, a
    norm float32 lost is the sample's estimate instead, and says so."""
    x = near(value, LARGE, dtype)
    t = record_gradient(x, exact=exact, stats=STATS[stats])
    assert_honest(t, x)
    want = expected(x, exact=exact, gradient=exact)
    if stats == "all":  # the host path takes the norm again in float64
        assert t.norm_exact is exact
    elif not t.norm_exact:  # the device path keeps the sample's estimate, and says so
        want["norm"] = expected(x, exact=False)["norm"]
    assert_matches(t, want, rel=1e-5)


@pytest.mark.parametrize("exact", [True, False])
@pytest.mark.parametrize("size", [SMALL, LARGE])
@pytest.mark.parametrize(("dtype", "value"), CASES, ids=[f"{d}-{v:g}" for d, v in CASES])
def test_true_nan_and_inf_beside_extreme_values_are_still_counted(dtype, value, size, exact):
    x = near(value, size, dtype)
    positions = sample_of(torch.arange(size)).tolist()[:6]  # in the sample: exact=False sees them
    flat = x.view(-1)
    flat[positions[0]], flat[positions[1]] = math.nan, math.inf
    flat[positions[2]] = -math.inf
    flat[positions[3]] = 0.0
    t = record_output(x, exact=exact)
    want = expected(x, exact=exact)
    assert (t.nan_count, t.inf_count) == (want["nan_count"], want["inf_count"])
    assert t.nan_count >= 1 and t.inf_count >= 2
    assert_matches(t, want, rel=1e-5)  # the rest over the finite values, in range
    assert_histogram(t, x)
    assert t.zero_fraction == pytest.approx(want["zero_fraction"]) and t.zero_fraction > 0


@pytest.mark.parametrize("size", [SMALL, LARGE])
@pytest.mark.parametrize(("dtype", "value"), CASES, ids=[f"{d}-{v:g}" for d, v in CASES])
def test_a_constant_tensor_lands_in_the_middle_bin_at_any_magnitude(dtype, value, size):
    """A constant row's histogram spanned x +- 0.5, which is x itself beyond 2**53: every value
    fell in the discarded bin."""
    x = torch.full((size,), value, dtype=dtype)
    t = record_output(x)
    assert t.histogram[HIST_BINS // 2] == min(size, SAMPLE_SIZE), t.histogram
    lo, hi = t.hist_range
    assert lo < x[0].item() < hi
    assert t.min == t.max == x[0].item()
    assert t.std <= 4 * torch.finfo(dtype).eps * abs(t.mean)  # rounding of the mean, at most


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


FLOATS = [torch.float32, torch.float16, torch.bfloat16, torch.float64]


@st.composite
def awkward_tensors(draw):
    """A tensor of any float dtype whose magnitudes span a random stretch of its whole range
    (subnormals to near its largest value), with a few NaN, Inf and zeros at random places."""
    dtype = draw(st.sampled_from(FLOATS))
    info = torch.finfo(dtype)
    subnormal = math.log2(info.smallest_normal) + math.log2(info.eps)  # about the least
    low = subnormal + 1 if draw(st.booleans()) else math.log2(info.smallest_normal)
    high = math.log2(info.max) - 1
    a, b = sorted(draw(st.floats(low, high)) for _ in range(2))
    size = draw(st.sampled_from([1, 2, 17, SAMPLE_SIZE, SAMPLE_SIZE + 1, 3 * SAMPLE_SIZE + 7]))
    seed = draw(st.integers(0, 2**16))
    g = torch.Generator().manual_seed(seed)
    exponent = a + (b - a) * torch.rand(size, generator=g, dtype=torch.float64)
    sign = torch.where(torch.rand(size, generator=g) < draw(st.floats(0, 1)), -1.0, 1.0)
    values = sign.double() * torch.exp2(exponent)
    for special in (math.nan, math.inf, -math.inf, 0.0):
        if draw(st.booleans()):
            values[torch.randint(size, (draw(st.integers(1, 3)),), generator=g)] = special
    return values.to(dtype)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(awkward_tensors(), st.booleans(), st.sampled_from(list(STATS)), st.booleans())
def test_any_float_tensor_gets_honest_statistics(x, exact, stats, gradient):
    """Whatever the dtype and the magnitudes: every statistic is the reference's (float64,
    scaled), counts of NaN and Inf are what the tensor holds, and nothing is Inf, NaN or zero
    that the finite values do not make so."""
    read = record_gradient if gradient else record_output
    t = read(x, exact=exact, stats=STATS[stats])
    want = expected(x, exact=exact, gradient=gradient and exact, stats=stats)
    if not t.norm_exact and (t.sampled or stats != "all"):
        want["norm"] = expected(x, exact=False)["norm"]
    # Inf from finite values is beyond float64 itself (a sum of squares of 1e300s): nothing to
    # check against; a norm over non-finite values is torch's own (the device path), Inf.
    all_finite = bool(x.isfinite().all())
    for name in ("mean", "std", "norm"):
        if math.isinf(want[name]) and (name != "norm" or all_finite):
            want.pop(name)
    assert_matches(t, want, rel=1e-4, x=x)
    assert_histogram(t, x)


@pytest.mark.parametrize("exact", [True, False])
def test_a_histogram_beside_torchs_own_infinite_min_holds_the_finite_values(exact):
    """Without NaN/Inf counts a sampled tensor's min and max are torch's own (-inf here): the
    histogram's range fell back to -0.5..0.5 and every value fell out of it."""
    x = torch.linspace(-2, 3, 4 * SAMPLE_SIZE)
    x[sample_of(torch.arange(x.numel()))[3]] = -math.inf
    t = record_output(x, exact=exact, stats=STATS["device path"])
    finite = sample_of(x)[sample_of(x).isfinite()]
    assert t.min == (-math.inf if exact else finite.min().item())
    assert t.hist_range == (finite.min().item(), finite.max().item())
    assert_histogram(t, x)


# -- complex tensors: the statistics of |z|, and every view says so ----------------------------

COMPLEX = [torch.complex64, torch.complex128, torch.complex32]


def complex_near(scale: float, size: int, dtype: torch.dtype, seed: int = 0) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    parts = scale * torch.randn(2, size, generator=g, dtype=torch.float64)
    return torch.complex(parts[0], parts[1]).to(dtype)


def magnitude_of(z: torch.Tensor) -> torch.Tensor:
    """|z| as record() reads it: in z's own precision (complex32 via complex64, whose |z| is
    rounded to float16)."""
    if z.dtype == torch.complex32:
        return z.to(torch.complex64).abs().to(torch.float16)
    return z.abs()


@pytest.mark.filterwarnings("ignore:ComplexHalf support is experimental")
@pytest.mark.parametrize("stats", STATS)
@pytest.mark.parametrize("exact", [True, False])
@pytest.mark.parametrize("size", [5, SMALL, LARGE])
@pytest.mark.parametrize("dtype", COMPLEX)
def test_a_complex_output_gets_the_statistics_of_its_magnitude(dtype, size, exact, stats):
    """Complex outputs had events with no statistics at all; now every statistic is |z|'s,
    flagged (magnitude=True, brief() writes |z|), and no values are kept (|z| is not z)."""
    z = complex_near(3.0, size, dtype)
    t = record_output(z, exact=exact, stats=STATS[stats])
    r = magnitude_of(z)
    assert t.dtype == str(dtype).removeprefix("torch.") and t.magnitude is True
    assert f"output {t.dtype}[{size}] |z| mean=" in t.brief()
    assert t.values is None
    assert_matches(t, expected(r, exact=exact, stats=stats), rel=1e-5, x=r)
    assert_histogram(t, r)
    assert t.min >= 0


@pytest.mark.parametrize("stats", STATS)
@pytest.mark.parametrize("dtype", [torch.complex64, torch.complex128])
def test_a_complex_gradient_norm_is_the_tensors_own_norm(dtype, stats):
    """The norm of |z| is the norm of z: a complex gradient's, exact, as torch reads it."""
    z = complex_near(1.0, LARGE, dtype)
    t = record_gradient(z, stats=STATS[stats])
    assert t.magnitude is True and t.norm_exact is True
    assert t.norm == pytest.approx(torch.linalg.vector_norm(z).item(), rel=1e-6)


@pytest.mark.parametrize("exact", [True, False])
@pytest.mark.parametrize("size", [SMALL, LARGE])
def test_complex_nan_and_inf_parts_are_counted_by_magnitude(size, exact):
    z = complex_near(1.0, size, torch.complex64)
    at = sample_of(torch.arange(size)).tolist()
    z[at[0]] = complex(math.nan, 1.0)  # |z| NaN
    z[at[1]] = complex(1.0, math.inf)  # |z| Inf
    z[at[2]] = complex(math.nan, -math.inf)  # |z| Inf: an infinite part wins
    z[at[3]] = 0
    t = record_output(z, exact=exact)
    want = expected(z.abs(), exact=exact)
    assert (t.nan_count, t.inf_count) == (want["nan_count"], want["inf_count"])
    assert t.nan_count >= 1 and t.inf_count >= 2 and t.zero_fraction > 0
    assert_matches(t, want, rel=1e-5)


@pytest.mark.parametrize("value", [1e200, 1e-200, 1e30])
def test_complex128_magnitudes_beyond_float32_stay_honest(value):
    z = complex_near(value, LARGE, torch.complex128)
    t = record_output(z)
    assert_honest(t, z)
    assert_matches(t, expected(z.abs()), rel=1e-6)


def test_real_tensors_are_not_flagged_as_magnitudes():
    t = record_output(torch.randn(10))
    assert t.magnitude is False and "|z|" not in t.brief()
