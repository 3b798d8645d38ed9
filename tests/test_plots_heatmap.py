"""hv.plots.activation_heatmap and the histograms over time behind it: one panel per module,
bins fixed per module (a drift stays a drift), log colour, gradients, and errors that say what
to do."""

from __future__ import annotations

import math

import matplotlib
import numpy as np
import pytest
import torch
from torch import nn

import hookviz as hv
from hookviz.histogram_history import STATIC_BINS, RollingHistograms, rebin


class Drifting(nn.Module):
    """Its output is its input moved up by ``offset`` (set from outside, one value per step)."""

    def __init__(self):
        super().__init__()
        self.offset = 0.0

    def forward(self, x):
        return x + self.offset


def values(n: int = 2000, seed: int = 0) -> torch.Tensor:
    return torch.randn(n, generator=torch.Generator().manual_seed(seed))


def drift(source_of, steps: int = 10):
    """Run Drifting for ``steps`` steps under ``source_of(model)`` (a record or a HookMonitor)."""
    model = Drifting()
    x = values()
    with source_of(model) as source:
        for step in range(steps):
            model.offset = float(step)
            model(x)
    return source, x


def panels(figure) -> list:
    """The heat-map axes of a figure (not its colour bar, not the unused grid cells)."""
    return [ax for ax in figure.axes if ax.get_visible() and ax.collections and ax.get_title()]


def test_one_panel_per_module_named_by_its_path_and_the_root_by_its_class():
    model = hv.examples.mlp((4, 8, 2))
    with hv.record(model) as rec:
        for _ in range(3):
            model(torch.randn(5, 4)).sum().backward()
    figure = hv.plots.activation_heatmap(rec)
    assert isinstance(figure, matplotlib.figure.Figure)
    assert [ax.get_title() for ax in panels(figure)] == ["Sequential", "0", "1", "2"]
    assert all(ax.get_xlabel() == "step" for ax in panels(figure))
    assert panels(figure)[0].get_ylabel() == "output value"
    assert "log" in figure.axes[-1].get_ylabel()  # the colour bar says the colour is a log


def test_every_value_lands_in_the_modules_bins_near_where_it_was():
    model = Drifting()
    x = torch.tensor(
        [0.0, 0.1, 0.2, 0.25, 3.0, 3.9, 4.0]
    )  # small: the histogram is exact, not sampled
    with hv.record(model) as rec:
        model(x)
    (history,) = rec.histogram_history("output")
    assert history.value_edges[0] == 0.0 and history.value_edges[-1] == 4.0
    assert history.counts.sum().item() == pytest.approx(len(x))
    centres = (torch.tensor(history.value_edges[1:]) + torch.tensor(history.value_edges[:-1])) / 2
    mean = (history.counts[0] * centres).sum() / history.counts[0].sum()
    # An event's bins are a 16th of its range wide: within one of them, where a value lay is lost.
    assert mean.item() == pytest.approx(x.mean().item(), abs=(4.0 - 0.0) / 16)
    assert history.counts[0, :10].sum().item() == pytest.approx(4)  # the four values below 1
    assert history.counts[0, 10:30].sum().item() == pytest.approx(0)  # nothing between 1 and 3


def test_bins_are_fixed_per_module_over_the_whole_run():
    rec, x = drift(hv.record)
    (history,) = rec.histogram_history("output")
    assert history.bins == STATIC_BINS and history.columns == 10
    assert history.value_edges[0] == x.min().item()  # step 0's min ...
    assert history.value_edges[-1] == pytest.approx(x.max().item() + 9)  # ... to step 9's max
    assert history.step_edges == tuple(range(11))
    # Step 0's values stay at the bottom of the bins that step 9 widened.
    top_of_step_0 = np.searchsorted(history.value_edges, x.max().item()) + 1
    assert history.counts[0, top_of_step_0:].sum().item() == 0


@pytest.mark.parametrize("source", ["recording", "monitor"])
def test_a_drifting_distribution_shows_as_a_drift(source):
    make = hv.record if source == "recording" else hv.HookMonitor
    rec, _ = drift(make)
    (history,) = rec.histogram_history("output")
    busiest = history.counts.argmax(1).tolist()
    assert all(a < b for a, b in zip(busiest, busiest[1:], strict=False)), (
        busiest
    )  # it climbs every step
    if source == "recording":
        # Each event's own histogram, rescaled to its own range, hides the drift.
        own = [
            e.main.histogram.index(max(e.main.histogram))
            for e in rec.events
            if e.phase == "forward"
        ]
        assert max(own) - min(own) <= 2


def test_colour_is_the_log_of_one_plus_the_count_and_empty_bins_stay_blank():
    rec, _ = drift(hv.record, steps=4)
    (history,) = rec.histogram_history("output")
    (ax,) = panels(hv.plots.activation_heatmap(rec))
    shown = ax.collections[0].get_array()
    expected = np.log1p(history.counts.numpy()).T
    assert np.allclose(np.ma.filled(shown, 0).reshape(expected.shape), expected)
    assert np.array_equal(np.ma.getmaskarray(shown).reshape(expected.shape), expected == 0)
    low, high = ax.collections[0].get_clim()
    assert low == 0 and high == pytest.approx(math.log1p(history.counts.max().item()))


def test_the_gradient_signal_draws_the_gradient_wrt_each_output():
    model = hv.examples.mlp((4, 8, 2))
    x = torch.randn(6, 4, generator=torch.Generator().manual_seed(0))
    with hv.record(model) as rec:
        (model(x).sum() * 3).backward()
    histories = {h.name: h for h in rec.histogram_history("gradient")}
    root = histories["Sequential"]
    assert root.signal == "gradient" and root.counts.sum().item() == pytest.approx(12)
    (full_bin,) = root.counts[0].nonzero().flatten().tolist()
    assert (
        root.value_edges[full_bin] <= 3.0 < root.value_edges[full_bin + 1]
    )  # d(3 * sum)/d(output) = 3
    hidden = model[0](x)
    (grad,) = torch.autograd.grad(model[2](model[1](hidden)).sum() * 3, hidden)
    first = histories["0"]
    assert (first.value_edges[0], first.value_edges[-1]) == pytest.approx(
        (grad.min().item(), grad.max().item())
    )
    figure = hv.plots.activation_heatmap(rec, signal="gradient")
    assert panels(figure)[0].get_ylabel() == "gradient value"
    assert "gradients w.r.t. the outputs" in figure.get_suptitle()


def test_a_monitor_draws_the_same_panels_from_its_live_bins():
    model = hv.examples.mlp((4, 8, 2))
    with hv.HookMonitor(model) as monitor:
        for _ in range(5):
            model.zero_grad()
            model(torch.randn(5, 4)).sum().backward()
    for signal in ("output", "gradient"):
        figure = hv.plots.activation_heatmap(monitor, signal)
        assert [ax.get_title() for ax in panels(figure)] == ["Sequential", "0", "1", "2"]
    assert [ax.get_title() for ax in panels(monitor.plot(view="heatmap", signal="gradient"))][
        -1
    ] == "2"


@pytest.mark.parametrize(
    ("make_source", "signal", "error", "message"),
    [
        (lambda m: hv.record(m), "output", ValueError, "has no events yet"),
        (
            lambda m: hv.record(m, gradients=False),
            "gradient",
            ValueError,
            "Record with gradients=True",
        ),
        (lambda m: hv.record(m, stats=["mean"]), "output", ValueError, "include 'histogram'"),
        (lambda m: hv.record(m), "grad", ValueError, "signal must be 'output' .* or 'gradient'"),
        (lambda m: hv.HookMonitor(m), "output", ValueError, "seen no steps yet"),
        (
            lambda m: hv.HookMonitor(m, gradients=False),
            "gradient",
            ValueError,
            "watches no gradients",
        ),
        (lambda m: hv.HookMonitor(m, heatmap=False), "output", ValueError, "heatmap=False"),
    ],
)
def test_a_source_without_what_the_heat_map_needs_says_what_to_do(
    make_source, signal, error, message
):
    model = hv.examples.mlp((4, 8, 2))
    source = make_source(model)
    if "has no events" not in message and "no steps" not in message:
        with source:
            model(torch.randn(3, 4))  # forward only
    with pytest.raises(error, match=message):
        hv.plots.activation_heatmap(source, signal)


@pytest.mark.parametrize("make_source", [hv.record, hv.HookMonitor])
def test_no_backward_means_no_gradient_heat_map(make_source):
    model = hv.examples.mlp((4, 8, 2))
    with make_source(model) as source:
        model(torch.randn(3, 4))
    with pytest.raises(ValueError, match=r"call loss.backward\(\) inside the with block"):
        hv.plots.activation_heatmap(source, "gradient")


def test_anything_else_is_refused_by_name():
    with pytest.raises(TypeError, match="needs a Recording .* or a HookMonitor, got Sequential"):
        hv.plots.activation_heatmap(hv.examples.mlp((4, 8, 2)))
    rec, _ = drift(hv.record, steps=2)
    with pytest.raises(ValueError, match="bins must be a whole number"):
        rec.histogram_history("output", bins=1)


# -- the pieces: moving counts between bins, and the live histograms' bounded growth ----------------


def test_rebin_keeps_every_count_and_is_exact_on_the_same_bins():
    counts = torch.tensor([[1.0, 2.0, 3.0, 4.0]])
    lo, hi = torch.tensor([0.0]), torch.tensor([4.0])
    same = rebin(counts, lo, hi, torch.linspace(0, 4, 5)[None])
    assert torch.equal(same, counts)
    halves = rebin(counts, lo, hi, torch.linspace(0, 4, 9)[None])
    assert torch.equal(
        halves, torch.tensor([[0.5, 0.5, 1.0, 1.0, 1.5, 1.5, 2.0, 2.0]])
    )  # spread evenly
    wider = rebin(counts, lo, hi, torch.linspace(-4, 8, 4)[None])
    assert torch.equal(wider, torch.tensor([[0.0, 10.0, 0.0]]))
    point = rebin(
        torch.tensor([[0.0, 5.0, 0.0, 0.0]]),
        torch.tensor([2.5]),
        torch.tensor([2.5]),
        torch.linspace(0, 4, 5)[None],
    )
    assert torch.equal(
        point, torch.tensor([[0.0, 0.0, 5.0, 0.0]])
    )  # a constant tensor: whole, in its bin


def test_live_histograms_keep_their_memory_and_their_counts_as_they_grow():
    live = RollingHistograms(1, bins=8, columns=10)
    size = live.counts.shape
    one = torch.tensor([[0.0] * 15 + [1.0]])  # one value at the top of [lo, hi]
    for step in range(95):
        live.add(
            torch.tensor([0]),
            torch.tensor([step]),
            one,
            torch.tensor([float(step)]),
            torch.tensor([step + 1.0]),
        )
    assert live.counts.shape == size  # memory fixed when made
    assert live.span == 16 and live.used == 6  # steps 0-95 in columns of 16 steps
    assert live.counts.sum().item() == pytest.approx(95)  # nothing lost to merging columns or bins
    (history,) = [live.history(0, "", "x", "output")]
    assert history.value_edges[0] <= 1.0 and history.value_edges[-1] >= 95.0
    assert history.step_edges[-1] == 95
    assert history.counts.sum(1).tolist() == pytest.approx(
        [1.0] * 5 + [1.0]
    )  # one value per recorded step


def test_live_bins_only_merge_in_pairs_when_the_range_grows():
    live = RollingHistograms(1, bins=8, columns=4)
    at = [0.0] * 16
    at[0] = 4.0  # four values at 0.0
    counts = torch.tensor([at])
    live.add(
        torch.tensor([0]), torch.tensor([0]), counts, torch.tensor([0.0]), torch.tensor([0.75])
    )
    before = live.edges(0, 0, 7)
    (first, last) = live.occupied()[0]
    old_bin = (before[first], before[first + 1])
    live.add(
        torch.tensor([0]), torch.tensor([1]), counts, torch.tensor([0.0]), torch.tensor([100.0])
    )
    after = live.edges(0, 0, 7)
    growth = (after[1] - after[0]) / (before[1] - before[0])
    assert growth > 1 and growth == 2 ** round(math.log2(growth))  # doubled, as often as needed
    # Step 0's values are still in the one new bin that holds their old bin.
    (column_0,) = live.counts[0, 0].nonzero().flatten().tolist()
    assert after[column_0] <= old_bin[0] and old_bin[1] <= after[column_0 + 1]


def test_kind_the_old_name_of_signal_still_works_and_names_the_new_one():
    model = hv.examples.mlp((4, 8, 2))
    with hv.record(model) as rec, hv.HookMonitor(model) as monitor:
        model(torch.randn(5, 4)).sum().backward()
    calls = {
        "activation_heatmap": lambda: hv.plots.activation_heatmap(rec, kind="gradient"),
        "Recording.histogram_history": lambda: rec.histogram_history(kind="gradient"),
        "HookMonitor.histogram_history": lambda: monitor.histogram_history(kind="gradient"),
        "HookMonitor.plot": lambda: monitor.plot(view="heatmap", kind="gradient"),
    }
    for name, call in calls.items():
        with pytest.warns(DeprecationWarning, match=rf"{name}\(kind=\.\.\.\) is now .*signal="):
            found = call()
        histories = found if isinstance(found, list) else None
        if histories is not None:  # the gradient's histograms, as signal="gradient" gives them
            assert {h.signal for h in histories} == {"gradient"}
    history = rec.histogram_history(signal="gradient")[0]
    with pytest.warns(DeprecationWarning, match="HistogramHistory.kind is now"):
        assert history.kind == "gradient"
