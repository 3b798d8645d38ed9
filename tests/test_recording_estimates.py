"""record(exact=False): a large tensor's min, max and NaN/Inf counts come from its sample, and
every view says so; exact=True (the default) keeps them exact and unflagged."""

from __future__ import annotations

import pytest
import torch
from torch import nn

import hookviz as hv
from hookviz.summaries import SAMPLE_SIZE, Interner, Lane


def sample_positions(n: int) -> torch.Tensor:
    """Where record() samples a tensor of ``n`` elements (flat positions)."""
    return Lane(torch.device("cpu"), Interner()).sample_positions(n)


def outside_sample(n: int, count: int = 1) -> list[int]:
    """``count`` flat positions that the sample of an ``n``-element tensor does not read."""
    taken = set(sample_positions(n).tolist())
    return [p for p in range(n) if p not in taken][:count]


def forward_stats(x: torch.Tensor, *, exact: bool, stats=None):
    model = nn.Identity()
    with hv.record(model, phases=["forward"], gradients=False, exact=exact, stats=stats) as rec:
        model(x)
    return rec, rec.events[0].main


def with_outlier() -> tuple[torch.Tensor, int]:
    torch.manual_seed(0)
    x = torch.randn(64, 1000)
    (at,) = outside_sample(x.numel())
    x.view(-1)[at] = 1e4
    return x, at


def test_exact_false_takes_min_and_max_from_the_sample_and_flags_them():
    x, _ = with_outlier()
    _, s = forward_stats(x, exact=False)
    assert s.sampled and s.exact is False
    sample = torch.take(x, sample_positions(x.numel()))
    assert (s.min, s.max) == (float(sample.min()), float(sample.max()))
    assert s.max < 1e4 and s.max != float(x.max())  # the outlier is outside the sample: missed
    lo, hi = s.hist_range
    assert (lo, hi) == (s.min, s.max) and sum(
        s.histogram
    ) == SAMPLE_SIZE  # every sampled value in a bin


def test_exact_true_keeps_min_and_max_exact_and_unflagged():
    x, _ = with_outlier()
    _, s = forward_stats(x, exact=True)
    assert s.sampled and s.exact is True
    assert (s.min, s.max) == (float(x.min()), 1e4)


def test_small_tensors_are_kept_whole_and_stay_exact_with_exact_false():
    torch.manual_seed(1)
    x = torch.randn(SAMPLE_SIZE)  # at most SAMPLE_SIZE elements: the row holds the whole tensor
    x[3] = 50.0
    x[7] = float("nan")
    _, s = forward_stats(x, exact=False)
    assert not s.sampled and s.exact is True
    finite = x[torch.isfinite(x)]
    assert (s.min, s.max) == (float(finite.min()), 50.0)
    assert (s.nan_count, s.inf_count) == (1, 0)
    assert "≈" not in s.brief()


def test_exact_false_estimates_nan_and_inf_counts_from_the_sample_and_flags_them():
    torch.manual_seed(2)
    x = torch.randn(64, 1000)
    n = x.numel()
    seen = sample_positions(n)[:2].tolist()
    missed = outside_sample(n, 3)
    x.view(-1)[seen[0]] = float(
        "nan"
    )  # one NaN the sample reads: it stands for n / SAMPLE_SIZE of them
    x.view(-1)[missed[0]] = float("nan")
    x.view(-1)[missed[1:]] = float("inf")  # two Inf the sample misses
    _, estimated = forward_stats(x, exact=False)
    assert estimated.exact is False
    assert (estimated.nan_count, estimated.inf_count) == (round(n / SAMPLE_SIZE), 0)
    _, exact = forward_stats(x, exact=True)
    assert exact.exact is True and (exact.nan_count, exact.inf_count) == (2, 2)
    assert f"NaN≈{round(n / SAMPLE_SIZE)}" in estimated.brief() and "Inf" not in estimated.brief()
    assert "NaN=2" in exact.brief() and "Inf=2" in exact.brief()


@pytest.mark.parametrize("stats", [None, ("max",), ("nan", "inf"), ("mean", "norm")])
def test_exact_false_flags_large_tensors_whatever_the_statistics(stats):
    x, _ = with_outlier()
    _, s = forward_stats(x, exact=False, stats=stats)
    assert s.exact is False
    if s.max is not None:
        assert s.max < 1e4


def test_brief_table_and_repr_show_the_estimates():
    x, _ = with_outlier()
    rec, s = forward_stats(x, exact=False)
    assert f"max≈{s.max:.4g}" in s.brief() and "max=" not in s.brief()
    table = rec.table()
    assert table.splitlines()[0].startswith(
        "min/max/norm/NaN/Inf estimated from a sample (exact=False)"
    )
    assert "max≈" in table
    assert "exact=False" in repr(rec) and rec.exact is False
    assert "max≈" in repr(rec.events[0])

    rec, s = forward_stats(x, exact=True)
    assert "max=1e+04" in s.brief()
    table = rec.table()
    assert "exact=False" not in repr(rec) and "max≈" not in table and "NaN≈" not in table
    assert "norm≈" in table  # an output's norm is the sample's, whatever exact says


def test_each_tensor_of_a_model_is_flagged_by_its_own_size():
    """Forward and backward, small and large tensors in one recording: only the sampled ones are estimates."""
    torch.manual_seed(3)
    model = nn.Sequential(nn.Linear(8, 400), nn.ReLU(), nn.Linear(400, 2))
    x = torch.randn(4, 8)
    with hv.record(model, exact=False) as rec:
        model(x).sum().backward()
    tensors = [t for e in rec.events for t in e.tensors if t.value_type == "tensor"]
    assert {t.phase for t in rec.events} == {"forward_pre", "forward", "backward_pre", "backward"}
    assert any(t.sampled for t in tensors) and any(not t.sampled for t in tensors)
    assert all(t.exact is (not t.sampled) for t in tensors)
    sampled_grads = [t for e in rec.select(phase="backward_pre") for t in e.tensors if t.sampled]
    assert sampled_grads and all(not t.exact for t in sampled_grads)


def test_exact_false_still_gives_histogram_histories():
    torch.manual_seed(4)
    model = nn.Sequential(nn.Linear(8, 400), nn.ReLU())
    with hv.record(model, exact=False) as rec:
        for _ in range(3):
            model(torch.randn(4, 8)).sum().backward()
    histories = rec.histogram_history("output")
    assert histories and all(h.counts.sum() > 0 for h in histories)
    from hookviz.plots import activation_heatmap

    assert "exact=False" in activation_heatmap(rec)._suptitle.get_text()


@pytest.mark.parametrize("exact", ["no", 0, None])
def test_exact_must_be_true_or_false(exact):
    with pytest.raises(TypeError, match="exact must be True or False"):
        hv.record(nn.Identity(), exact=exact)


@pytest.mark.parametrize("stats", [("max",), ("min", "max"), ("min", "histogram")])
def test_exact_extremes_reduced_in_place_stay_with_their_own_tensor_across_flushes(stats):
    """Without NaN/Inf counts a hook writes a large tensor's exact min and max into cells of the
    sample buffer, merged at the flush: an outlier the sample misses is still the max, and the
    cells are emptied after it, so the next tensor in that buffer row shows its own extremes."""
    x, _ = with_outlier()
    x.view(-1)[outside_sample(x.numel(), 2)[1]] = -1e4  # a low outlier too
    small = torch.tensor([3.0, -2.0, 0.5])
    model = nn.Identity()
    with hv.record(model, phases=["forward"], gradients=False, stats=stats) as rec:
        model(x)
        rec.flush()  # x's row is free again: the small tensor takes it
        model(small)
        model(x / 2)  # cells written again in this flush, in the next row
    large, kept, half = (e.main for e in rec.events)
    assert half.max == (5e3 if "max" in stats else None)
    assert large.sampled and large.exact and not kept.sampled
    if "max" in stats:
        assert large.max == 1e4 and kept.max == 3.0
    if "min" in stats:
        assert large.min == -1e4 and kept.min == -2.0
    else:
        assert large.min is None


def _layouts() -> dict[str, torch.Tensor]:
    torch.manual_seed(3)
    base = torch.randn(2, 64, 1000)
    return {
        "contiguous": base[0].clone(),
        "offset into its storage": base[1],
        "transposed": base[0].t(),
        "every other column": base[0, :, ::2],
        "negated view": torch._neg_view(base[0]),
        "float64": base[0].double(),
        "requires grad": base[0].clone().requires_grad_(),
    }


@pytest.mark.parametrize("layout", list(_layouts()))
def test_the_sample_holds_the_tensors_values_at_the_sample_positions_whatever_its_layout(layout):
    # The sample reads the values as the tensor reads them, in its logical order: not its bytes
    # (a negated view's hold the opposite values, a transposed tensor's another order).
    x = _layouts()[layout]
    _, s = forward_stats(x, exact=False, stats=("min", "max", "mean"))
    sample = torch.take(x.detach(), sample_positions(x.numel())).double()
    assert s.sampled and (s.min, s.max) == (float(sample.min()), float(sample.max()))
    assert s.mean == pytest.approx(float(sample.mean()), rel=1e-5)


def lm_head_step(exact: bool):
    """A language model's head: 4,000 logits a token, whose gradient (softmax minus one-hot) a
    256-value sample gets badly wrong."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(16, 16), nn.Tanh(), nn.Linear(16, 4000))
    x, target = torch.randn(8, 16), torch.randint(0, 4000, (8,))
    monitor = hv.HookMonitor(model, exact=exact, vanishing_below=0.05)
    with monitor:
        nn.functional.cross_entropy(model(x), target).backward()
    logits = model[2](model[1](model[0](x))).detach().requires_grad_()
    nn.functional.cross_entropy(logits, target).backward()
    return monitor, float(logits.grad.norm())


def test_the_gradient_norm_behind_a_flag_is_exact_by_default():
    monitor, true_norm = lm_head_step(exact=True)
    grad = monitor.summary("2").grad.latest
    assert grad.sampled and grad.exact
    assert grad.norm == pytest.approx(true_norm, rel=1e-5)
    assert true_norm > 0.05 and "2" not in monitor.gradient_flags()  # no false alarm


def test_with_exact_false_the_norm_and_its_flag_say_they_are_estimates():
    monitor, true_norm = lm_head_step(exact=False)
    grad = monitor.summary("2").grad.latest
    assert grad.sampled and not grad.exact
    assert grad.norm < 0.1 * true_norm  # what a sample gets wrong here (the head's 4,000 logits)
    assert "norm≈" in grad.brief()
    assert monitor.gradient_flags()["2"] == "vanishing"  # a false alarm, and it says so:
    page = monitor.to_html()
    assert f"≈{hv.widgets.base.number(grad.norm)}" in page
    assert "vanishing gradient (norm estimated from a sample)" in page


def test_a_gradients_norm_is_exact_and_an_outputs_a_flagged_estimate():
    """The exact pass takes the norm of gradients only (a flag rests on them); an output's norm
    comes from its sample and says so."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(16, 4000))
    x = torch.randn(8, 16)
    with hv.record(model, modules=["0"]) as rec:
        out = model(x)
        out.retain_grad()
        (out.sin() * 3).sum().backward()
    (fwd,) = rec.select(phase="forward")
    (pre,) = rec.select(phase="backward_pre")
    assert fwd.main.sampled and not fwd.main.norm_exact and "norm≈" in fwd.main.brief()
    assert pre.main.sampled and pre.main.norm_exact and "norm=" in pre.main.brief()
    assert pre.main.norm == pytest.approx(float(out.grad.norm()), rel=1e-5)
    with hv.record(model, modules=["0"], exact=False) as rec:
        model(x).sin().sum().backward()
    (pre,) = rec.select(phase="backward_pre")
    assert not pre.main.norm_exact and "norm≈" in pre.main.brief()
