"""HookMonitor: numbers that match the tensors, warnings, throttled live updates, no hook left behind."""

from __future__ import annotations

import json
import math
import time

import pytest
import torch
import traitlets
from torch import nn

import hookviz as hv
from hookviz.histogram_history import LIVE_BINS, LIVE_COLUMNS
from hookviz.summaries import Interner, Lane
from hookviz.widgets.base import STATIC
from hookviz.widgets.hook_monitor import (
    LEVEL_ALPHABET,
    LEVEL_SCALE,
    MAX_EVENTS,
    TABLE_COLUMNS,
    TREND,
)
from hookviz.widgets.monitor_table import table_columns
from tests.helpers import assert_no_hooks


def inputs(batch: int = 4, features: int = 4) -> torch.Tensor:
    return torch.randn(batch, features, generator=torch.Generator().manual_seed(1))


def train(model: nn.Module, steps: int, x: torch.Tensor | None = None, scale: float = 1.0) -> None:
    x = inputs() if x is None else x
    for _ in range(steps):
        model.zero_grad()
        (model(x).sum() * scale).backward()


def row(monitor: hv.HookMonitor, path: str) -> dict:
    """The snapshot row the browser draws for ``path`` (labels show the root by its class name)."""
    labels = [m["label"] for m in monitor.modules]
    return monitor.snapshot["rows"][labels.index(path or type(monitor._model).__name__)]


def test_with_block_records_every_call_and_removes_every_hook():
    model = hv.examples.mlp((4, 8, 2))
    with hv.HookMonitor(model) as monitor:
        assert monitor.running and hv.list_hooks(model)
        train(model, 5)
    assert not monitor.running
    assert_no_hooks(model)
    assert monitor.steps == 5
    assert [r["calls"] for r in monitor.snapshot["rows"]] == [5, 5, 5, 5]
    assert monitor.snapshot["steps"] == 5 and monitor.snapshot["running"] is False


def test_hooks_are_removed_when_the_loop_raises():
    model = hv.examples.mlp((4, 8, 2))
    monitor = hv.HookMonitor(model)
    with pytest.raises(RuntimeError, match="the loop broke"), monitor:
        train(model, 2)
        raise RuntimeError("the loop broke")
    assert_no_hooks(model)
    assert monitor.steps == 2


def test_hooks_are_removed_when_forward_raises():
    class Breaks(nn.Module):
        def __init__(self):
            super().__init__()
            self.linear = nn.Linear(4, 4)
            self.calls = 0

        def forward(self, x):
            self.calls += 1
            if self.calls == 3:
                raise ValueError("bad batch")
            return self.linear(x)

    model = Breaks()
    with pytest.raises(ValueError, match="bad batch"), hv.HookMonitor(model):
        train(model, 5)
    assert_no_hooks(model)


def test_output_statistics_match_the_tensor():
    model = hv.examples.mlp((4, 8, 2))
    x = inputs()
    with hv.HookMonitor(model) as monitor:
        train(model, 3, x)
    out = model[0](x).detach()
    summary = row(monitor, "0")["out"]
    assert summary["shape"] == "4×8"
    assert summary["mean"] == pytest.approx(out.mean().item(), rel=1e-3)
    assert summary["std"] == pytest.approx(out.std().item(), rel=1e-3)
    assert summary["min"] == pytest.approx(out.min().item(), rel=1e-3)
    assert summary["max"] == pytest.approx(out.max().item(), rel=1e-3)
    assert sum(summary["hist"]) == out.numel()
    assert len(summary["trend"]) == 3


def test_gradient_norm_is_the_norm_of_the_gradient_wrt_the_output():
    model = hv.examples.mlp((4, 8, 2))
    x = inputs()
    with hv.HookMonitor(model) as monitor:
        train(model, 1, x)
    hidden = model[0](x)
    (grad,) = torch.autograd.grad(model[2](model[1](hidden)).sum(), hidden)
    assert row(monitor, "0")["grad"]["norm"] == pytest.approx(grad.norm().item(), rel=1e-3)
    assert row(monitor, "")["grad"]["norm"] == pytest.approx(
        math.sqrt(4 * 2), rel=1e-3
    )  # d(sum)/d(out) = 1


def test_small_tensors_keep_their_values_for_the_heatmap():
    model = hv.examples.mlp((4, 8, 2))
    x = inputs(batch=2)
    with hv.HookMonitor(model) as monitor:
        train(model, 1, x)
    values = row(monitor, "0")["out"]["values"]
    expected = model[0](x).detach()
    assert torch.allclose(torch.tensor(values), expected, rtol=1e-3, atol=1e-4)


def test_vanishing_and_exploding_gradients_are_flagged():
    model = hv.examples.mlp((4, 8, 2))
    with hv.HookMonitor(model) as monitor:
        train(model, 1, scale=1e-12)
    assert monitor.gradient_flags() == {p: "vanishing" for p in ("", "0", "1", "2")}
    assert (
        repr(monitor) == "HookMonitor(Sequential, 4 modules, stopped, 1 steps, 4 gradient warnings)"
    )
    with hv.HookMonitor(model, exploding_above=1e6) as monitor:
        train(model, 1, scale=1e9)
    assert set(monitor.gradient_flags().values()) == {"exploding"}
    assert row(monitor, "2")["flag"] == "exploding"


def test_nan_is_warned_and_the_snapshot_stays_strict_json():
    model = hv.examples.mlp((4, 8, 2))
    x = inputs()
    x[0, 0] = float("nan")
    with hv.HookMonitor(model) as monitor:
        train(model, 2, x)
    out = row(monitor, "0")["out"]
    assert out["nan"] == 2 and out["bad_step"] == 0
    assert row(monitor, "2")["out"]["nan"] == 2  # NaN flows on to the last layer
    json.dumps(monitor.get_state(), allow_nan=False)  # Jupyter sends strict JSON
    assert "NaN in output since step 0" in monitor.to_html()


def test_live_updates_are_throttled():
    model = hv.examples.mlp((4, 8, 2))
    monitor = hv.HookMonitor(model, updates_per_second=2)
    pushes = []
    monitor.observe(lambda change: pushes.append(change["new"]["steps"]), names="snapshot")
    started = time.monotonic()
    with monitor:
        train(model, 400)
    elapsed = time.monotonic() - started
    assert pushes[-1] == 400
    assert 2 <= len(pushes) <= 2 * elapsed + 3  # start, stop, and at most 2 a second between


def test_memory_stays_bounded_over_many_steps():
    model = hv.examples.mlp((4, 8, 2))
    with hv.HookMonitor(model) as monitor:
        train(model, 600)
        assert len(monitor._recording) <= MAX_EVENTS
    for path in ("", "0", "1", "2"):
        summary = monitor.summary(path)
        assert summary.calls == 600
        assert len(summary.output.trend) == TREND and len(summary.grad.trend) == TREND
    with pytest.raises(
        ValueError, match="'3' is not a watched module; watched paths are '', '0', '1', '2'"
    ):
        monitor.summary("3")


def test_a_monitor_entered_again_counts_on():
    model = hv.examples.mlp((4, 8, 2))
    monitor = hv.HookMonitor(model)
    with monitor:
        train(model, 3)
    with monitor:
        train(model, 4)
    assert monitor.steps == 7
    assert row(monitor, "1")["calls"] == 7


def test_starting_twice_is_refused_and_stop_is_safe_twice():
    model = hv.examples.mlp((4, 8, 2))
    monitor = hv.HookMonitor(model).start()
    with pytest.raises(RuntimeError, match="already recording"):
        monitor.start()
    monitor.stop()
    monitor.stop()
    assert_no_hooks(model)


def test_without_gradients_only_forward_is_watched():
    model = hv.examples.mlp((4, 8, 2))
    with hv.HookMonitor(model, gradients=False) as monitor:
        train(model, 2)
    assert all(r["grad"] is None for r in monitor.snapshot["rows"])
    assert monitor.gradients is False and monitor.get_state()["gradients"] is False


def test_every_records_only_some_steps():
    model = hv.examples.mlp((4, 8, 2))
    with hv.HookMonitor(model, every=3) as monitor:
        train(model, 6)
    assert monitor.steps == 6
    assert row(monitor, "0")["calls"] == 2


def test_modules_selector_picks_what_is_watched():
    model = hv.examples.small_convnet()
    monitor = hv.HookMonitor(model, modules=nn.Conv2d)
    assert [m["label"] for m in monitor.modules] == ["features.0", "features.3"]
    assert repr(monitor) == "HookMonitor(SmallConvNet, 2 modules, stopped, 0 steps)"


def test_selected_must_be_a_watched_module():
    monitor = hv.HookMonitor(hv.examples.mlp((4, 8, 2)))
    monitor.selected = 3
    with pytest.raises(traitlets.TraitError, match=r"0 to 3\) or -1"):
        monitor.selected = 4


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"model": "net"}, TypeError, "must be an nn.Module"),
        ({"modules": nn.Conv3d}, ValueError, "selected no module"),
        ({"modules": ["nope"]}, ValueError, "unknown module path"),
        ({"updates_per_second": 0}, ValueError, "above 0 and at most 30"),
        ({"vanishing_below": 1.0, "exploding_above": 0.5}, ValueError, "must be smaller"),
        ({"vanishing_below": -1}, ValueError, "positive number"),
        ({"every": 0}, ValueError, "every must be"),
        ({"exact": "yes"}, TypeError, "exact must be True or False"),
        ({"theme": "neon"}, traitlets.TraitError, "theme must be one of"),
    ],
)
def test_bad_arguments_say_what_to_pass(kwargs, error, message):
    kwargs.setdefault("model", hv.examples.mlp((4, 8, 2)))
    with pytest.raises(error, match=message):
        hv.HookMonitor(**kwargs)


def test_static_pictures():
    model = hv.examples.mlp((4, 8, 2))
    with hv.HookMonitor(model) as monitor:
        train(model, 2)
    page = monitor.to_html()
    assert "<script" not in page
    assert page.count("<tr>") == 5  # header and four modules
    headings = "".join(
        f'<th class="hvs-num">{c["label"]}</th>' if c["numeric"] else f"<th>{c['label']}</th>"
        for c in table_columns("en")
    )
    assert headings in page
    assert page.count("<td") == 4 * len(TABLE_COLUMNS)
    figure = monitor.plot()
    assert len(figure.axes) == 2
    assert figure.axes[1].get_xscale() == "log"


def outlier_outside_the_sample() -> torch.Tensor:
    """A 64,000-element input with one value of 1e4 at a position record()'s sample does not read."""
    x = torch.randn(64, 1000, generator=torch.Generator().manual_seed(5))
    taken = set(Lane(torch.device("cpu"), Interner()).sample_positions(x.numel()).tolist())
    x.view(-1)[next(p for p in range(x.numel()) if p not in taken)] = 1e4
    return x


def test_exact_false_estimates_are_flagged_in_the_payload_and_the_static_pictures():
    model = nn.Sequential(
        nn.Identity(), nn.Linear(1000, 2)
    )  # a large output (sampled), then a small one
    x = outlier_outside_the_sample()
    with hv.HookMonitor(model, exact=False) as monitor:
        model(x).sum().backward()
    assert monitor.exact is False
    snapshot = monitor.snapshot
    assert (
        snapshot["exact"] is False
        and snapshot["note"] == "min/max/norm/NaN/Inf estimated from a sample (exact=False)"
    )
    large, small = row(monitor, "0")["out"], row(monitor, "1")["out"]
    assert large["sampled"] is True and large["exact"] is False
    assert large["max"] < 1e4  # the sample's max: the outlier is missed, and the payload says so
    assert small["sampled"] is False and small["exact"] is True  # kept whole: exact
    assert row(monitor, "1")["grad"]["exact"] is True
    json.dumps(monitor.get_state(), allow_nan=False)
    page = monitor.to_html()
    assert snapshot["note"] in page and f"≈{large['max']}" in page
    assert snapshot["note"] in monitor.plot()._suptitle.get_text()
    from hookviz.plots import activation_heatmap

    assert "exact=False" in activation_heatmap(monitor)._suptitle.get_text()


def test_exact_true_is_the_default_and_its_payload_is_exact_and_unflagged():
    model = nn.Sequential(nn.Identity(), nn.Linear(1000, 2))
    with hv.HookMonitor(model) as monitor:
        model(outlier_outside_the_sample()).sum().backward()
    assert monitor.exact is True
    assert (monitor.snapshot["exact"], monitor.snapshot["note"]) == (True, "")
    large = row(monitor, "0")["out"]
    assert large["sampled"] is True and large["exact"] is True and large["max"] == 1e4
    assert "≈" not in monitor.to_html() and "exact=False" not in monitor.plot()._suptitle.get_text()
    from hookviz.plots import activation_heatmap

    assert "exact=False" not in activation_heatmap(monitor)._suptitle.get_text()


# -- the heat-map view: each module's histogram over time -----------------------------------------


def decode(panel: dict, alphabet: str) -> torch.Tensor:
    """A heat-map panel's cells as the browser reads them (with the state's level_alphabet):
    (columns, bins) levels."""
    levels = torch.tensor([alphabet.index(c) for c in panel["cells"]])
    return levels.view(-1, panel["bins"])


def test_the_browser_gets_the_level_alphabet_from_the_state_and_keeps_no_copy():
    state = hv.HookMonitor(hv.examples.mlp((4, 8, 2))).get_state()
    assert state["level_alphabet"] == LEVEL_ALPHABET
    assert len(set(LEVEL_ALPHABET)) == len(LEVEL_ALPHABET)  # one level per character
    assert LEVEL_ALPHABET not in (STATIC / "hook_monitor.js").read_text(encoding="utf-8")
    with pytest.raises(traitlets.TraitError, match="read-only"):
        hv.HookMonitor(hv.examples.mlp((4, 8, 2))).level_alphabet = "01"


def test_the_browser_gets_the_table_columns_from_the_state_and_keeps_no_copy():
    monitor = hv.HookMonitor(hv.examples.mlp((4, 8, 2)))
    assert monitor.get_state()["table_columns"] == table_columns("en")
    assert [c["key"] for c in table_columns("en")] == [key for key, _ in TABLE_COLUMNS]
    script = (STATIC / "hook_monitor.js").read_text(encoding="utf-8")
    assert "‖grad‖" not in script and '"warnings",' not in script  # no headings, no list of them
    with pytest.raises(traitlets.TraitError, match="read-only"):
        monitor.table_columns = []


def test_heatmap_kind_still_works_and_warns_that_it_is_now_heatmap_signal():
    monitor = hv.HookMonitor(hv.examples.mlp((4, 8, 2)))
    with pytest.warns(DeprecationWarning, match="heatmap_kind is now HookMonitor.heatmap_signal"):
        monitor.heatmap_kind = "gradient"
    assert monitor.heatmap_signal == "gradient" and "heatmap_kind" not in monitor.get_state()
    with pytest.warns(DeprecationWarning, match="heatmap_kind is now"):
        assert monitor.heatmap_kind == "gradient"


def test_the_heat_map_reaches_the_browser_as_strict_json_levels_of_the_live_histograms():
    model = hv.examples.mlp((4, 8, 2))
    with hv.HookMonitor(model) as monitor:
        train(model, 12, inputs(batch=16))
    heat = monitor.heatmap
    json.dumps(heat, allow_nan=False)
    assert heat["columns"] == 12 and heat["span"] == 1 and heat["steps"] == 12
    for kind in ("output", "gradient"):
        for panel, history in zip(heat[kind], monitor.histogram_history(kind), strict=True):
            expected = torch.where(
                history.counts > 0,
                (torch.log1p(history.counts) * LEVEL_SCALE).round().clamp(min=1),
                0,
            )
            assert torch.equal(decode(panel, monitor.level_alphabet), expected.long())
            assert (panel["lo"], panel["hi"]) == pytest.approx(
                (history.value_edges[0], history.value_edges[-1]), rel=1e-3
            )


def test_the_heat_maps_memory_and_message_stay_bounded_over_many_steps():
    model = hv.examples.mlp((4, 8, 2))
    monitor = hv.HookMonitor(model)
    with monitor:
        train(model, 2 * LIVE_COLUMNS)
        counts = monitor._heatmap.heat.counts
        early = len(json.dumps(monitor._heatmap.as_json(monitor.steps)))
        train(model, 8 * LIVE_COLUMNS)
    assert monitor._heatmap.heat.counts is counts and counts.shape == (
        2 * 4,
        LIVE_COLUMNS,
        LIVE_BINS,
    )  # made once
    heat = monitor.heatmap
    assert (
        heat["steps"] == 10 * LIVE_COLUMNS
        and heat["columns"] <= LIVE_COLUMNS
        and heat["span"] == 16
    )
    late = len(json.dumps(heat))
    assert late <= early * 1.25  # the message grows with the columns shown, never with the steps
    assert all(
        len(p["cells"]) == heat["columns"] * p["bins"] <= LIVE_COLUMNS * LIVE_BINS
        for kind in ("output", "gradient")
        for p in heat[kind]
    )


def test_heat_map_updates_are_throttled_like_the_snapshot():
    model = hv.examples.mlp((4, 8, 2))
    monitor = hv.HookMonitor(model, updates_per_second=2)
    snapshots, heat_maps = [], []
    monitor.observe(lambda change: snapshots.append(change["new"]["steps"]), names="snapshot")
    monitor.observe(lambda change: heat_maps.append(change["new"]["steps"]), names="heatmap")
    with monitor:
        train(model, 400)
    assert heat_maps[-1] == 400  # the last one has everything
    assert 1 <= len(heat_maps) <= len(snapshots)


def test_every_n_steps_gives_columns_n_steps_wide_and_a_second_block_counts_on():
    model = hv.examples.mlp((4, 8, 2))
    monitor = hv.HookMonitor(model, every=3)
    with monitor:
        train(model, 9)
    with monitor:
        train(model, 3)
    heat = monitor.heatmap
    assert heat["span"] == 3 and heat["columns"] == 4 and heat["steps"] == 12
    (history, *_) = monitor.histogram_history("output")
    assert history.step_edges == (0, 3, 6, 9, 10)  # the last column holds step 9 alone
    assert all(
        decode(p, monitor.level_alphabet).count_nonzero(1).min() > 0 for p in heat["output"]
    )  # no empty column


def test_without_a_heat_map_nothing_is_kept_or_sent():
    model = hv.examples.mlp((4, 8, 2))
    with hv.HookMonitor(model, heatmap=False) as monitor:
        train(model, 3)
    assert monitor.heatmap == {} and monitor._heatmap is None


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"view": "chart"}, traitlets.TraitError, "view must be 'table' or 'heatmap'"),
        ({"view": "heatmap", "heatmap": False}, ValueError, "view='heatmap' needs heatmap=True"),
        ({"heatmap": "yes"}, TypeError, "heatmap must be True or False"),
    ],
)
def test_bad_heat_map_arguments_say_what_to_pass(kwargs, error, message):
    with pytest.raises(error, match=message):
        hv.HookMonitor(hv.examples.mlp((4, 8, 2)), **kwargs)


def test_heat_map_signal_and_static_view_are_checked():
    monitor = hv.HookMonitor(hv.examples.mlp((4, 8, 2)), gradients=False, view="heatmap")
    assert monitor.get_state()["view"] == "heatmap"
    with pytest.raises(traitlets.TraitError, match="watches no gradients"):
        monitor.heatmap_signal = "gradient"
    with pytest.raises(traitlets.TraitError, match="heatmap_signal must be 'output'"):
        monitor.heatmap_signal = "outputs"
    with pytest.raises(ValueError, match="view must be 'table' or 'heatmap', got 'heat'"):
        monitor.plot(view="heat")


def test_a_complex_output_shows_the_statistics_of_its_magnitude_and_says_so():
    class Spectrum(nn.Module):
        def forward(self, x):
            return torch.fft.fft(x)

    model = nn.Sequential(nn.Linear(8, 8), Spectrum())
    with hv.HookMonitor(model) as monitor:
        model(torch.randn(4, 8)).abs().sum().backward()
    out = row(monitor, "1")["out"]
    assert out["dtype"] == "complex64" and out["magnitude"] is True
    assert out["mean"] > 0 and out["min"] >= 0
    assert row(monitor, "0")["out"]["magnitude"] is False
    assert "<td>4×8 |z|</td>" in monitor.to_html()  # the root and "1": a complex output
    json.dumps(monitor.get_state(), allow_nan=False)
    assert "monitor.magnitude" in (STATIC / "hook_monitor.js").read_text("utf-8")
