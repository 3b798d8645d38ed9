"""record(): events in torch's order, outputs untouched, statistics right, nothing left behind."""

from __future__ import annotations

import itertools
import math
import warnings

import pytest
import torch
from torch import nn

import hookviz as hv
from hookviz.summaries import SAMPLE_SIZE
from tests.helpers import assert_no_hooks, torch_hook_order


def run(model, x):
    out = model(x)
    out.sum().backward()
    return out


@pytest.mark.parametrize("requires_grad", [False, True])
def test_event_order_equals_torchs_hook_order_on_the_blog_model(requires_grad):
    model = hv.examples.model()
    x = torch.rand(1, requires_grad=requires_grad)
    expected = torch_hook_order(model, x)
    with hv.record(model) as rec:
        run(model, x)
    assert rec.order() == expected
    assert [e.seq for e in rec.events] == list(range(len(expected)))


def test_event_order_on_an_mlp_with_a_leaf_selection():
    model = hv.examples.mlp((4, 8, 8, 2))
    x = torch.randn(3, 4)
    expected = [(ph, p) for ph, p in torch_hook_order(model, x) if p in {"0", "2"}]
    with hv.record(model, modules=["0", "2"]) as rec:
        run(model, x)
    assert rec.order() == expected


def test_outputs_and_gradients_are_bitwise_unchanged_with_in_place_relu():
    torch.manual_seed(0)
    x = torch.randn(4, 3, 32, 32)
    plain, watched = hv.examples.small_convnet(), hv.examples.small_convnet()
    out_plain = run(plain, x)
    with hv.record(watched) as rec:
        out_watched = run(watched, x)
    assert torch.equal(out_plain, out_watched)
    for (name, p), q in zip(plain.named_parameters(), watched.parameters(), strict=True):
        assert torch.equal(p.grad, q.grad), name
    phases = {e.phase for e in rec.events}
    assert phases == {"forward_pre", "forward", "backward_pre", "backward"}
    assert_no_hooks(watched, out_watched)


def test_gradients_recorded_through_in_place_ops_match_full_backward_hooks():
    """The ReLU(inplace=True) model against the same model without in-place ops."""
    torch.manual_seed(0)
    x = torch.randn(4, 3, 32, 32)
    inplace = hv.examples.small_convnet()
    reference = hv.examples.small_convnet()
    for m in reference.modules():
        if isinstance(m, nn.ReLU):
            m.inplace = False
    norms: dict[tuple[str, str], float] = {}

    def keep(phase):
        def hook(module, *grads):
            g = grads[0] if phase == "backward_pre" else grads[1]
            if phase == "backward":
                g = grads[0]
            if g[0] is not None:
                norms[(phase, paths[id(module)])] = float(g[0].norm())

        return hook

    paths = {id(m): p for p, m in reference.named_modules()}
    handles = []
    for _, m in reference.named_modules():
        handles.append(m.register_full_backward_pre_hook(keep("backward_pre")))
        handles.append(m.register_full_backward_hook(keep("backward")))
    with warnings.catch_warnings():
        warnings.simplefilter(
            "ignore"
        )  # "no inputs require gradients": expected for the first layer
        run(reference, x)
    for h in handles:
        h.remove()
    with hv.record(inplace, stats=["norm"]) as rec:
        run(inplace, x)
    recorded = {
        (e.phase, e.path): e.main.norm
        for e in rec.events
        if e.phase.startswith("backward") and e.main
    }
    assert recorded.keys() == norms.keys()
    for key, value in norms.items():  # sampled norms are estimates: within a few percent
        assert recorded[key] == pytest.approx(value, rel=0.1), key


def test_users_hooks_keep_firing_in_their_order_and_their_replacements_hold():
    model = hv.examples.model(shape=(2, 2))
    fired = []
    model.ab.a.register_forward_pre_hook(lambda m, a: fired.append("pre") or (a[0] * 2,))
    model.ab.a.register_forward_hook(lambda m, a, o: fired.append("fwd") or o + 100)
    model.cd.register_full_backward_hook(lambda m, gi, go: fired.append("bwd") or None)
    x = torch.rand(2, 2)
    expected = run(model, x)
    fired.clear()
    with hv.record(model) as rec:
        out = run(model, x)
    assert fired == ["pre", "fwd", "bwd"]
    assert torch.equal(out, expected)
    pre = rec.select(phase="forward_pre", path="ab.a")[0].main
    assert pre.values == (x * 2).tolist()  # record() sees the input the pre-hook gave forward
    fwd = rec.select(phase="forward", path="ab.a")[0].main
    assert fwd.min >= 100  # ... and the output the forward hook returned
    assert len(hv.list_hooks(model)) == 3  # the user's hooks stay, ours are gone


def test_no_hook_is_left_when_forward_or_backward_raises():
    class Broken(nn.Module):
        def forward(self, x):
            raise RuntimeError("forward broke")

    model = nn.Sequential(nn.Linear(2, 2), Broken())
    with pytest.raises(RuntimeError, match="forward broke"), hv.record(model):
        model(torch.randn(1, 2))
    assert_no_hooks(model)

    model = hv.examples.mlp((2, 3, 1))
    kept = {}
    with pytest.raises(RuntimeError, match="backward broke"), hv.record(model):
        out = model(torch.randn(2, 2))
        kept["out"] = out

        def explode(grad):
            raise RuntimeError("backward broke")

        handle = out.register_hook(explode)
        out.sum().backward()
    handle.remove()
    assert_no_hooks(model, kept["out"])


def test_no_grad_records_forward_only_without_error():
    model = hv.examples.mlp((4, 8, 2))
    with torch.no_grad(), hv.record(model) as rec:
        model(torch.randn(3, 4))
    assert {e.phase for e in rec.events} == {"forward_pre", "forward"}
    assert_no_hooks(model)


def test_a_module_called_twice_in_one_forward_counts_its_calls():
    class Twice(nn.Module):
        def __init__(self):
            super().__init__()
            self.layer = nn.Linear(2, 2)

        def forward(self, x):
            return self.layer(self.layer(x))

    model = Twice()
    with hv.record(model, modules=["layer"]) as rec:
        run(model, torch.randn(1, 2))
    forward = [(e.phase, e.call) for e in rec.events if e.phase.startswith("forward")]
    assert forward == [("forward_pre", 0), ("forward", 0), ("forward_pre", 1), ("forward", 1)]
    backward = [(e.phase, e.call) for e in rec.events if e.phase.startswith("backward")]
    assert backward == [("backward_pre", 1), ("backward", 1), ("backward_pre", 0), ("backward", 0)]


def test_structured_and_non_tensor_outputs():
    class Odd(nn.Module):
        def forward(self, x):
            return {"y": x * 2, "extra": (None, 3, "text"), "mask": x > 0}

    model = Odd()
    x = torch.tensor([[1.0, -2.0]], requires_grad=True)
    with hv.record(model) as rec:
        out = model(x)
        out["y"].sum().backward()
    forward = rec.select(phase="forward")[0]
    names = [(t.name, t.value_type) for t in forward.tensors]
    assert names == [
        ("output['y']", "tensor"),
        ("output['extra'][0]", "None"),
        ("output['extra'][1]", "int"),
        ("output['extra'][2]", "str"),
        ("output['mask']", "tensor"),
    ]
    assert forward.tensors[0].values == [[2.0, -4.0]]
    assert forward.tensors[4].values == [[True, False]] and forward.tensors[4].dtype == "bool"
    assert forward.tensors[2].text == "3"
    # torch's full backward hooks fire nothing for a dict output: neither does record()
    assert rec.select(phase="backward_pre") == [] and rec.select(phase="backward") == []
    assert x.grad is not None
    # the old word still reads, and says what it is now
    with pytest.warns(DeprecationWarning, match="TensorStats.kind is now TensorStats.value_type"):
        assert forward.tensors[2].kind == "int"


def test_small_tensor_statistics_are_exact():
    torch.manual_seed(1)
    x = torch.randn(5, 7)
    x[0, 0] = 0.0
    model = nn.Identity()
    with hv.record(model, gradients=False, phases=["forward"]) as rec:
        model(x)
    s = rec.events[0].main
    assert (s.shape, s.dtype, s.numel, s.sampled) == ((5, 7), "float32", 35, False)
    assert s.mean == pytest.approx(float(x.mean()), abs=1e-6)
    assert s.std == pytest.approx(float(x.std()), abs=1e-6)
    assert (s.min, s.max) == (pytest.approx(float(x.min())), pytest.approx(float(x.max())))
    assert s.norm == pytest.approx(float(x.norm()), rel=1e-6)
    assert s.zero_fraction == pytest.approx(1 / 35)
    assert (s.nan_count, s.inf_count) == (0, 0)
    assert sum(s.histogram) == 35 and len(s.histogram) == 16
    assert s.values is None  # 35 elements: too many to keep


def test_large_tensors_are_sampled_but_nan_inf_min_max_stay_exact():
    torch.manual_seed(2)
    x = torch.randn(64, 1000) * 3 + 1
    x[17, 123] = float("nan")
    x[40, 5] = float("nan")
    x[63, 999] = float("inf")
    x[5, 500] = 1e4  # an extreme a sample would miss
    model = nn.Identity()
    with hv.record(model, gradients=False, phases=["forward"]) as rec:
        model(x)
    s = rec.events[0].main
    assert s.sampled and s.sample_size == SAMPLE_SIZE
    assert (s.nan_count, s.inf_count) == (2, 1)
    assert s.max == 1e4  # over finite values
    finite = x[torch.isfinite(x)]
    assert s.min == pytest.approx(float(finite.min()))
    bulk = finite[finite < 1e4]  # what a sample estimates: the bulk, not the one extreme
    assert s.mean == pytest.approx(float(bulk.mean()), abs=0.5)
    assert s.std == pytest.approx(float(bulk.std()), rel=0.15)
    assert s.norm == pytest.approx(float(bulk.norm()), rel=0.15) and not s.norm_exact  # a sample's


@pytest.mark.parametrize(
    "dtype",
    [
        torch.float64,
        torch.float16,
        torch.bfloat16,
        torch.int64,
        torch.int32,
        torch.uint8,
        torch.bool,
    ],
)
def test_large_tensors_of_every_summarisable_dtype(dtype):
    # The sample buffer is float32: other dtypes are converted on the way in, not refused
    # (a forward fed 1,000 token ids must not fail because it is being recorded).
    torch.manual_seed(3)
    x = (torch.randn(40, 25) * 50).to(dtype) if dtype is not torch.bool else torch.randn(40, 25) > 0
    model = nn.Identity()
    with hv.record(model, gradients=False, phases=["forward"]) as rec:
        out = model(x)
    assert out is x
    s = rec.events[0].main
    assert (s.dtype, s.numel, s.sampled) == (str(dtype).removeprefix("torch."), 1000, True)
    exact = x.double()
    assert (s.min, s.max) == (float(exact.min()), float(exact.max()))
    assert (s.nan_count, s.inf_count) == (0, 0)
    assert s.mean == pytest.approx(float(exact.mean()), abs=0.3 * float(exact.std()))


def test_meta_tensors_get_shapes_without_statistics():
    model = nn.Linear(4, 300, device="meta")  # shape inference: the meta device holds no values
    with hv.record(model) as rec:
        model(torch.randn(2, 4, device="meta"))
    out = rec.select(phase="forward")[0].main
    assert (out.shape, out.device, out.mean, out.min) == ((2, 300), "meta", None, None)
    assert_no_hooks(model)


def test_nan_only_and_constant_tensors():
    model = nn.Identity()
    with hv.record(model, gradients=False, phases=["forward"]) as rec:
        model(torch.full((3,), float("nan")))
        model(torch.full((3,), 2.0))
    nan_only, constant = (e.main for e in rec.events)
    assert nan_only.nan_count == 3 and math.isnan(nan_only.mean) and math.isnan(nan_only.max)
    assert (constant.min, constant.max, constant.std) == (2.0, 2.0, 0.0)
    assert constant.histogram[8] == 3  # a constant lands in the middle bin


def test_stats_selection_and_clear_errors():
    model = hv.examples.mlp((2, 2))
    with hv.record(model, stats=["mean", "max"]) as rec:
        run(model, torch.randn(1, 2))
    s = rec.events[0].main
    assert s.mean is not None and s.max is not None
    assert s.std is None and s.histogram is None and s.nan_count is None
    with pytest.raises(ValueError, match="valid statistics are mean, std"):
        hv.record(model, stats=["average"])
    with pytest.raises(ValueError, match="valid phases are"):
        hv.record(model, phases=["backwards"])
    with pytest.raises(ValueError, match="contradicts"):
        hv.record(model, gradients=False, phases=["backward"])


@pytest.mark.parametrize("every", [0, -1, 1.5, True, "2"])
def test_every_must_be_a_positive_whole_number(every):
    with pytest.raises(ValueError, match="every must be a whole number"):
        hv.record(hv.examples.model(), every=every)


def test_bad_model_and_unknown_paths():
    with pytest.raises(TypeError, match="tensor of shape"):
        hv.record(torch.ones(3))
    with pytest.raises(ValueError) as info:
        hv.record(hv.examples.model(), modules=["ab.a", "ab.z"])
    assert "'ab.z'" in str(info.value) and "'cd.d'" in str(info.value)
    with pytest.raises(ValueError, match="max_events"):
        hv.record(hv.examples.model(), max_events=0)


def test_module_selectors():
    model = hv.examples.small_convnet()
    by_type = [p for p, _ in hv.record(model, modules=nn.Conv2d).targets]
    assert by_type == ["features.0", "features.3"]
    leaves = [p for p, _ in hv.record(model, modules=hv.leaves).targets]
    assert leaves[:3] == ["features.0", "features.1", "features.2"] and "features" not in leaves
    custom = [p for p, _ in hv.record(model, modules=lambda p, m: p.startswith("head")).targets]
    assert custom[0] == "head"


def test_every_nth_step_is_recorded():
    model = hv.examples.mlp((2, 2))
    with hv.record(model, every=3) as rec:
        for _ in range(7):
            run(model, torch.randn(1, 2))
    assert sorted({e.step for e in rec.events}) == [0, 3, 6]
    assert rec.steps_recorded == 3
    assert_no_hooks(model)


def test_memory_is_bounded_by_max_events():
    model = hv.examples.mlp((2, 2))
    with hv.record(model, max_events=50) as rec:
        for _ in range(100):
            run(model, torch.randn(1, 2))
    events = rec.events
    assert len(events) == 50 and len(rec) == 50
    assert rec.dropped == 100 * 8 - 50  # 2 modules x 4 phases per step
    assert events[-1].step == 99 and [e.seq for e in events] == sorted(e.seq for e in events)


def test_listeners_receive_new_events():
    model = hv.examples.mlp((2, 2))
    seen = []
    rec = hv.record(model)
    rec.on_step(lambda r, events: seen.extend(events))
    with rec:
        for _ in range(3):
            run(model, torch.randn(1, 2))
    assert [e.seq for e in seen] == [e.seq for e in rec.events]


def test_column_listeners_see_what_event_listeners_see():
    # Integer, complex (statistics of |z|), sparse (no statistics) and no tensors at all; NaN
    # and Inf; small and sampled tensors; all four phases.
    class Odd(nn.Module):
        def forward(self, x):
            return x.argmax(dim=1), None

    class Const(nn.Module):
        def forward(self, x):
            return 3

    model = nn.Sequential(nn.Linear(300, 300), nn.ReLU(), nn.Linear(300, 4))
    odd, const = Odd(), Const()
    events, columns = [], []
    rec = hv.record(nn.ModuleDict({"net": model, "odd": odd, "const": const}))
    rec.on_step(lambda r, fresh: events.extend(fresh))
    rec.on_columns(
        lambda mains, stats_at: columns.extend(
            (*m, stats_at(m[3]) if m[3] >= 0 else None) for m in mains
        )
    )
    with rec:
        for step in range(3):
            rec.next_step()
            x = torch.randn(8, 300)
            if step == 1:
                x[0, 0], x[1, 1] = math.nan, math.inf
            out = model(x)
            odd(out.detach())
            const(torch.zeros(2, dtype=torch.complex64))
            const(torch.zeros(2).to_sparse())
            out.sum().backward()
    assert len(columns) == len(events) > 0
    branches = set()
    for event, (step, phase, path_id, leaf, mean, norm, nans, infs, stats) in zip(
        events, columns, strict=True
    ):
        assert (step, hv.recording.PHASES[phase], rec.targets[path_id][0]) == (
            event.step,
            event.phase,
            event.path,
        )
        main = event.main
        assert stats == main
        if main is None:
            branches.add("no tensor")
            assert leaf == -1 and mean is None
        elif main.mean is None:
            branches.add("no statistics")
            assert (mean, norm, nans, infs) == (None, None, None, None)
        else:
            branches.add("statistics")
            same = lambda a, b: (math.isnan(a) and math.isnan(b)) or a == b  # noqa: E731
            assert same(mean, main.mean) and same(norm, main.norm)
            assert (nans, infs) == (main.nan_count, main.inf_count)
    assert branches == {"no tensor", "no statistics", "statistics"}
    assert any(s is not None and s.nan_count for *_, s in columns)


def test_submodule_called_alone_is_recorded_as_step_zero():
    model = hv.examples.model()
    with hv.record(model) as rec:
        model.ab(torch.rand(1))
    assert {e.step for e in rec.events} == {0}
    assert rec.order()[0] == ("forward_pre", "ab")


def test_integer_and_empty_outputs():
    class Argmax(nn.Module):
        def forward(self, x):
            return x.argmax(dim=1), x[:0]

    with hv.record(Argmax(), gradients=False) as rec:
        Argmax.__call__  # noqa: B018
        rec.model(torch.tensor([[1.0, 3.0], [5.0, 2.0]]))
    out = rec.select(phase="forward")[0]
    assert out.tensors[0].values == [1, 0] and out.tensors[0].dtype == "int64"
    assert out.tensors[1].numel == 0 and out.tensors[1].mean is None


def test_repr_and_table_are_deterministic():
    model = hv.examples.model()
    with hv.record(model) as rec:
        run(model, torch.rand(1))
    assert repr(rec) == (
        "Recording(Model, 7 modules, phases=forward_pre,forward,backward_pre,backward, "
        "stopped, 28 events, 1 steps recorded)"
    )
    assert "forward_pre  Model" in rec.table()
    assert repr(rec.events[0]).startswith(
        "HookEvent(#0 step 0 forward_pre 'Model' call 0: input[0] float32[1]"
    )


def test_histogram_bins_span_min_to_max_and_skip_non_finite_values():
    model = nn.Identity()
    x = torch.cat([torch.arange(16.0), torch.tensor([float("inf"), float("nan"), -float("inf")])])
    with hv.record(model, gradients=False, phases=["forward"]) as rec:
        model(x)
    s = rec.events[0].main
    assert s.histogram == (1,) * 16  # 0..15 over 16 bins: one each; the maximum in the last bin
    assert s.hist_range == (0.0, 15.0)
    assert (s.nan_count, s.inf_count, s.min, s.max) == (1, 2, 0.0, 15.0)


def test_a_shared_clock_puts_recorded_events_and_other_hooks_in_one_order():
    """Recording(clock=...) numbers its events from a counter other hooks draw from too."""
    model = hv.examples.model()
    clock = itertools.count()
    mine = []
    handle = model.ab.register_forward_hook(lambda m, a, o: mine.append(next(clock)))
    try:
        with hv.recording.Recording(model, phases=["forward"], clock=clock) as rec:
            model(torch.rand(1))
    finally:
        handle.remove()
    seqs = [e.seq for e in rec.events]
    assert sorted(seqs + mine) == list(range(len(seqs) + 1))  # one sequence, no number twice
    # The user's hook on ab was registered first, so it fires just before the recording's.
    ab = next(e.seq for e in rec.events if e.path == "ab")
    assert mine == [ab - 1]


NUMBERS = ("mean", "std", "min", "max", "norm", "zero_fraction", "nan_count", "inf_count")


def assert_same_summary(a, b):
    """The same tensor summarised in slabs of other sizes: float32 sums may differ in the last bit."""
    for n in NUMBERS:  # None: not asked for, in both
        expected = getattr(b, n)
        assert getattr(a, n) == (
            expected if expected is None else pytest.approx(expected, rel=1e-6)
        )
    assert (a.name, a.shape, a.histogram, a.sampled, a.exact) == (
        b.name,
        b.shape,
        b.histogram,
        b.sampled,
        b.exact,
    )
    if a.values is not None or b.values is not None:
        assert a.values == b.values


def test_one_phase_on_leaves_skips_the_alias_lookup_and_summarises_the_same():
    """With one phase on leaf modules no tensor is seen twice (no alias lookups): the forward
    statistics must equal those of a recording that looks every tensor up."""
    torch.manual_seed(3)
    model = hv.examples.small_convnet(width=16)
    x = torch.randn(4, 3, 32, 32)
    with hv.record(model, modules=hv.leaves, phases=["forward"]) as alone:
        model(x)
    with hv.record(model, modules=hv.leaves) as everything:
        model(x).sum().backward()
    assert alone._pending.dedup_on is False and everything._pending.dedup_on is True
    forward = everything.select(phase="forward")
    assert [e.path for e in alone.events] == [e.path for e in forward]
    for mine, theirs in zip(alone.events, forward, strict=True):
        assert_same_summary(mine.main, theirs.main)


def test_events_with_many_tensors_that_fill_the_buffer_mid_step_are_all_recorded():
    """An event of many tensors arriving when the sample buffer is nearly full: the buffer is
    emptied first (it used to overflow with an IndexError or a shape error)."""
    from hookviz.summaries import BUFFER_ROWS

    class Split(nn.Module):
        def forward(self, x):
            return tuple(x + i for i in range(20))

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.split = Split()

        def forward(self, x):
            for _ in range(60):  # 1,200 tensors in one step: more than the buffer holds
                x = sum(self.split(x)) / 20
            return x

    model, outputs = Net(), []
    model.split.register_forward_hook(lambda m, a, out: outputs.append(out))
    assert 60 * 20 > BUFFER_ROWS
    with hv.record(model, phases=["forward"], modules=["split"]) as rec:
        model(torch.randn(3, 3))
    assert len(rec.events) == 60
    for event, out in zip(rec.events, outputs, strict=True):  # in slabs of ~256 rows
        assert [t.values for t in event.tensors] == [o.tolist() for o in out]
        assert [t.max for t in event.tensors] == [o.max().item() for o in out]
        assert [t.mean for t in event.tensors] == pytest.approx([o.mean().item() for o in out])


def test_reading_a_tensor_that_requires_grad_leaves_grad_mode_and_the_graph_alone(monkeypatch):
    """Hooks read outputs that require grad with grad mode switched off (cheaper than detach):
    the mode comes back even when the read fails, and no sample row joins the autograd graph
    (small outputs are copied whole, large ones gathered)."""
    from hookviz import summaries

    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 4), nn.Linear(4, SAMPLE_SIZE * 2))  # small, then sampled
    x = torch.randn(3, 8)
    with hv.record(model, phases=["forward"]) as rec:
        out = model(x)
        assert torch.is_grad_enabled() and out.requires_grad
    with torch.no_grad():
        small = model[0](x)
    found = {e.path: e.main for e in rec.events}
    assert found["0"].values == small.tolist()  # kept whole: 12 values
    assert found["1"].sampled and found["1"].max == out.max().item()  # exact pass
    assert found["1"].min == out.min().item()
    lane = next(iter(rec._pending.lanes.values()))
    assert not lane.buffer.requires_grad and lane.buffer.grad_fn is None

    def broken(self, t, gradient=False):
        raise RuntimeError("a read that fails")

    monkeypatch.setattr(summaries.Pending, "_write", broken)
    with (
        pytest.raises(RuntimeError, match="a read that fails"),
        hv.record(model, phases=["forward"]),
    ):
        model(x)
    assert torch.is_grad_enabled()
    assert_no_hooks(model)


@pytest.mark.parametrize("stats", [None, ("min", "max", "mean")])  # NaN/Inf counts: host or cells
def test_a_read_that_fails_leaves_the_other_events_statistics_right(monkeypatch, stats):
    """A hook whose read raises (here torch.take, after the exact pass) loses its own event only:
    the events after it, in the same flush, get their own statistics, as without the failure."""
    torch.manual_seed(0)
    # small outputs are copied whole and take no exact pass; large ones are gathered after one
    model = nn.Sequential(
        nn.Linear(8, 4), nn.Linear(4, SAMPLE_SIZE * 2), nn.Linear(SAMPLE_SIZE * 2, 4)
    )
    x = torch.randn(3, 8)
    take, calls = torch.take, itertools.count()

    def fails_once(*args, **kwargs):
        if next(calls) == 0:
            raise RuntimeError("a read that fails")
        return take(*args, **kwargs)

    with hv.record(model, phases=["forward"], stats=stats) as failed:
        monkeypatch.setattr(torch, "take", fails_once)
        with pytest.raises(RuntimeError, match="a read that fails"):
            model(x)  # step 0: "0" recorded, "1" fails after its exact pass
        for _ in range(2):
            model(x)
    monkeypatch.undo()
    with hv.record(model, phases=["forward"], stats=stats) as clean:
        for _ in range(3):
            model(x)

    def summaries(rec, step):
        return [(e.path, e.main) for e in rec.events if e.step == step]

    assert [p for p, _ in summaries(failed, 0)] == ["0"]
    for step in (1, 2):
        got, expected = summaries(failed, step), summaries(clean, step)
        assert [p for p, _ in got] == [p for p, _ in expected]
        for (_, a), (_, b) in zip(got, expected, strict=True):
            assert_same_summary(a, b)


@pytest.mark.parametrize("exact", [True, False])
@pytest.mark.parametrize("transform", ["vmap", "vmap of grad"])
def test_recording_inside_vmap_stops_with_an_error_that_names_it_and_leaves_no_hook(
    exact, transform
):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 300), nn.ReLU())  # one small tensor, one sampled
    x = torch.randn(3, 4)
    if transform == "vmap":
        run = torch.func.vmap(model)
    else:  # per-example gradients, the usual reason to vmap
        run = torch.func.vmap(torch.func.grad(lambda x: model(x).sum()))
    with pytest.raises(RuntimeError, match=r"inside torch\.func\.vmap.*rec\.stop\(\)") as raised:
        with hv.record(model, exact=exact):
            run(x)
    assert raised.value.__cause__ is not None  # torch's own error is kept as the cause
    assert not any(m._forward_hooks or m._forward_pre_hooks for m in model.modules())
    run(x)  # not recorded: vmap works as before
    with hv.record(model, exact=exact) as rec:
        out = model(x)
    (event,) = rec.select(phase="forward", path="1")  # outside vmap, recorded as ever
    assert event.main.shape == (3, 300) and event.main.exact is exact
    if exact:
        assert event.main.max == float(out.detach().max())


def test_a_compiled_model_is_refused_with_what_to_record_instead():
    model = hv.examples.mlp((4, 8, 2))
    compiled = torch.compile(model, backend="eager")
    compiled(torch.randn(2, 4))
    with pytest.raises(
        TypeError, match=r"Watch the original module instead, and run it: `model\._orig_mod`"
    ):
        hv.record(compiled)
    wrapped = nn.Sequential(compiled)
    with pytest.raises(TypeError, match=r"'0' is an OptimizedModule"):
        hv.record(wrapped)
    with hv.record(compiled._orig_mod) as rec:
        compiled._orig_mod(torch.randn(2, 4)).sum().backward()
    assert {e.phase for e in rec.events} == {"forward_pre", "forward", "backward_pre", "backward"}
    assert_no_hooks(model)


def test_inference_mode_records_forward_events_and_no_gradient_side():
    model = hv.examples.mlp((4, 8, 2))
    with torch.inference_mode(), hv.record(model) as rec:
        out = model(torch.randn(3, 4))
        model(out.new_ones(3, 4))
    assert {e.phase for e in rec.events} == {"forward_pre", "forward"}
    assert rec.steps_recorded == 2 and len(rec.select(phase="forward", path="")) == 2
    assert_no_hooks(model)
    with hv.record(model) as rec:  # the same recording machinery, outside inference mode after
        model(torch.randn(3, 4)).sum().backward()
    assert len(rec.select(phase="backward")) == len(rec.select(phase="forward"))


def test_a_hook_registered_while_recording_runs_before_records_and_torchs_nodes():
    """torch makes its backward nodes after every forward hook: a hook added after record()
    started still runs before record()'s, so the events hold what it returned."""
    model = hv.examples.mlp((3, 3, 1))
    with hv.record(model) as rec:
        model[0].register_forward_hook(lambda m, a, o: o * 0 + 5)
        model[0].register_forward_pre_hook(lambda m, a: (a[0] * 0,))
        model(torch.randn(2, 3, requires_grad=True)).sum().backward()
    (pre,) = rec.select(phase="forward_pre", path="0")
    (out,) = rec.select(phase="forward", path="0")
    assert pre.main.max == 0.0 and out.main.min == out.main.max == 5.0
    (grad_in,) = rec.select(phase="backward", path="0")
    assert (
        grad_in.main.max == 0.0
    )  # the pre-hook's zeros are what forward read: no gradient through
