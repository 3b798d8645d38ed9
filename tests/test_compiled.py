"""compare_compiled(): per hook, what torch itself does under torch.compile, model by model.

Each case is a small model of its own class of behaviour, built fresh for every run. Every hook
in it counts its calls in a tensor of its own (`tick.add_(1)`, which dynamo traces into a graph
as a mutation, so it counts calls inside graphs and outside alike): that count is the oracle for
"fired at step s". The same case is also compiled bare, without hookviz, and torch's counters
(graph breaks, graphs) and its `recompiles` log are the oracle for the report's totals: hookviz's
observer must change none of them.
"""

from __future__ import annotations

import copy
import logging
import subprocess
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field

import pytest
import torch
import torch._dynamo
import torch.nn.modules.module as torch_module
from torch import nn
from torch._dynamo.utils import counters
from torch.utils.checkpoint import checkpoint

import hookviz as hv
from hookviz import dynamo_reading
from hookviz.compiled import CAUSES, GRAPH, STATUSES
from hookviz.hook_kinds import GLOBAL, of
from tests.helpers import assert_no_hooks


class TwoLayers(nn.Module):
    """A model class of one's own: its forward is one frame, its submodules inlined."""

    def __init__(self):
        super().__init__()
        self.a = nn.Linear(4, 4)
        self.b = nn.Linear(4, 3)

    def forward(self, x):
        return self.b(torch.relu(self.a(x)))


class Shared(nn.Module):
    """One module called twice per forward."""

    def __init__(self):
        super().__init__()
        self.block = nn.Linear(4, 4)
        self.head = nn.Linear(4, 2)

    def forward(self, x):
        return self.head(self.block(self.block(x)))


def conv_net() -> nn.Sequential:
    """Walkthrough 08's kind of classifier: convolutions, in-place ReLUs, a pooled head."""
    return nn.Sequential(
        nn.Conv2d(1, 4, 3, padding=1),
        nn.ReLU(inplace=True),
        nn.Conv2d(4, 4, 3, padding=1),
        nn.ReLU(inplace=True),
        nn.AdaptiveAvgPool2d(1),
        nn.Flatten(),
        nn.Linear(4, 3),
    )


@dataclass
class Case:
    """A model, its inputs, and a tick per hook: the tensor that hook adds 1 to when it runs."""

    model: nn.Module
    inputs: tuple
    steps: int = 3
    ticks: dict[str, torch.Tensor] = field(default_factory=dict)
    late: Callable[[nn.Module, int], None] | None = None  # registers hooks before a step
    readings: list[dict[str, float]] = field(default_factory=list)

    def tick(self, name: str) -> torch.Tensor:
        return self.ticks.setdefault(name, torch.zeros(()))

    def before_step(self, model: nn.Module, step: int) -> None:
        """Read every tick (the oracle's clock), then register what the case adds late."""
        self.readings.append({n: float(t) for n, t in self.ticks.items()})
        if self.late is not None:
            self.late(model, step)

    def fired(self, first_reading: int, final: dict[str, float]) -> dict[str, tuple[int, ...]]:
        """Per tick: the steps in which it moved, for the run whose readings start there."""
        readings = [*self.readings[first_reading : first_reading + self.steps], final]
        return {
            name: tuple(
                s
                for s in range(self.steps)
                if readings[s + 1].get(name, 0.0) > readings[s].get(name, 0.0)
            )
            for name in self.ticks
        }


def counting(case: Case, name: str, then: Callable | None = None) -> Callable:
    """A hook that ticks, then does what ``then`` does (and returns what it returns)."""
    tick = case.tick(name)

    def hook(*args):
        tick.add_(1)
        return then(*args) if then is not None else None

    hook.__name__ = hook.__qualname__ = name
    return hook


@dataclass
class Bare:
    """What torch reports for the case compiled without hookviz."""

    fired: dict[str, tuple[int, ...]]
    graph_breaks: int  # the records of its graph_breaks log
    counted_graph_breaks: int  # counters["graph_break"]
    graphs: int
    recompiles: int


_GLOBAL_KINDS = of(GLOBAL)
# The modules of torch._dynamo that log to its graph_breaks artifact.
BREAKERS = ("symbolic_convert", "convert_frame", "exc")


class _Lines(logging.Handler):
    def __init__(self):
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []

    def emit(self, record):
        self.lines.append(record.getMessage())


def run_bare(make: Callable[[], Case]) -> Bare:
    """The case compiled by torch alone: ticks per step, counters, and the recompiles log."""
    case = make()
    torch._dynamo.reset()
    breaks_before = sum(counters["graph_break"].values())
    graphs_before = counters["stats"]["unique_graphs"]
    lines, breaks = _Lines(), _Lines()
    globals_before = {k.attribute: set(getattr(torch_module, k.attribute)) for k in _GLOBAL_KINDS}
    logger = logging.getLogger("torch._dynamo.guards.__recompiles")
    break_loggers = [logging.getLogger(f"torch._dynamo.{m}.__graph_breaks") for m in BREAKERS]
    torch._logging.set_logs(recompiles=True, graph_breaks=True)
    logger.addHandler(lines)
    logger.propagate = False
    for break_logger in break_loggers:
        break_logger.addHandler(breaks)
        break_logger.propagate = False
    try:
        compiled = torch.compile(case.model, backend="eager")
        torch.manual_seed(0)
        for step in range(case.steps):
            case.before_step(case.model, step)
            for p in case.model.parameters():
                p.grad = None
            out = compiled(*[t.clone() for t in case.inputs])
            out.sum().backward()
    finally:
        logger.removeHandler(lines)
        for break_logger in break_loggers:
            break_logger.removeHandler(breaks)
        torch._logging.set_logs()
        torch._dynamo.reset()
        for attribute, ids in globals_before.items():  # the global hooks the case added
            for handle_id in set(getattr(torch_module, attribute)) - ids:
                del getattr(torch_module, attribute)[handle_id]
    final = {n: float(t) for n, t in case.ticks.items()}
    return Bare(
        case.fired(0, final),
        len(breaks.lines),
        sum(counters["graph_break"].values()) - breaks_before,
        counters["stats"]["unique_graphs"] - graphs_before,
        sum(line.startswith("Recompiling function") for line in lines.lines),
    )


def compare(make: Callable[[], Case], **kwargs) -> tuple[hv.compiled.CompiledReport, Case]:
    case = make()
    report = hv.compare_compiled(
        case.model, *case.inputs, steps=case.steps, before_step=case.before_step, **kwargs
    )
    return report, case


def check_against_torch(make: Callable[[], Case]) -> hv.compiled.CompiledReport:
    """The report agrees with the ticks of its own two runs and with torch's bare compile."""
    report, case = compare(make)
    final = {n: float(t) for n, t in case.ticks.items()}
    eager_fired = case.fired(0, case.readings[case.steps])
    compiled_fired = case.fired(case.steps, final)
    for name in case.ticks:
        rows = [h for h in report.hooks if h.name == name]
        assert rows, f"{name} is not in the report: {report.table()}"
        assert {s for h in rows for s in h.eager} == set(eager_fired[name]), name
        assert {s for h in rows for s in h.compiled} == set(compiled_fired[name]), name
    bare = run_bare(make)
    assert {n: compiled_fired[n] for n in bare.fired} == bare.fired  # hookviz changed no firing
    assert report.graph_break_count == len(report.graph_breaks) == bare.graph_breaks
    assert report.counted_graph_breaks == bare.counted_graph_breaks
    assert report.graph_count == bare.graphs
    assert report.recompile_count == bare.recompiles
    return report


def causes(report, path, kind) -> list[str]:
    return [c.kind for c in report.hook(path, kind).causes]


# -- the cases ------------------------------------------------------------------------------------


def pure_hooks() -> Case:
    case = Case(TwoLayers(), (torch.randn(5, 4),))
    case.model.a.register_forward_pre_hook(counting(case, "pre_a"))
    case.model.b.register_forward_hook(counting(case, "double_b", lambda m, i, o: o * 2))
    case.model.a.weight.register_hook(counting(case, "grad_a", lambda g: g * 1))
    return case


def test_with_compiled_autograd_on_backward_hooks_still_run_outside_the_graphs():
    case = full_backward_hook_in_own_class()
    with torch._dynamo.config.patch(compiled_autograd=True):
        report = hv.compare_compiled(case.model, *case.inputs)
    cause = next(c for c in report.hook("a", "backward").causes if c.kind == "autograd")
    assert "compiled autograd is on" in cause.text and report.config["compiled_autograd"]


def test_pure_hooks_are_traced_into_the_graph_and_agree():
    report = check_against_torch(pure_hooks)
    assert report.hook("a", "forward_pre").status == "in_graph"
    double = report.hook("b", "forward")
    assert double.status == "in_graph" and double.in_graph == (0, 1, 2)
    assert double.values_equal is True and len(double.values) == 3
    grad = report.hook("a", "tensor")
    assert grad.label == "a.weight" and grad.status == "outside_graph"
    assert [c.kind for c in grad.causes] == ["autograd"]
    assert (report.graph_break_count, report.recompile_count, report.graph_count) == (0, 0, 1)
    assert report.outputs_equal == [True, True, True] and report.ok


def late_forward_hook() -> Case:
    case = Case(TwoLayers(), (torch.randn(5, 4),))
    case.late = lambda model, step: (
        step == 1 and model.a.register_forward_hook(counting(case, "late_a"))
    )
    return case


def test_a_hook_added_after_the_first_compiled_call_is_missed():
    report = check_against_torch(late_forward_hook)
    late = report.hook("a", "forward")
    assert (late.registered_at, late.eager, late.compiled) == (1, (1, 2), ())
    assert late.status == "missed" and late.missed == (1, 2)
    assert [c.kind for c in late.causes] == ["empty_hook_dict"]
    assert "skip_nnmodule_hook_guards" in late.causes[0].source
    assert report.missed == [late]


def late_pre_hook_beside_a_forward_hook() -> Case:
    case = Case(TwoLayers(), (torch.randn(5, 4),))
    case.model.a.register_forward_hook(counting(case, "early_forward"))
    case.late = lambda model, step: (
        step == 1 and model.a.register_forward_pre_hook(counting(case, "late_pre"))
    )
    return case


def test_a_late_pre_hook_is_missed_though_its_module_has_a_forward_hook():
    report = check_against_torch(late_pre_hook_beside_a_forward_hook)
    assert report.hook("a", "forward").status == "in_graph"
    assert report.hook("a", "forward_pre").status == "missed"
    assert causes(report, "a", "forward_pre") == ["empty_hook_dict"]


def second_forward_hook() -> Case:
    case = Case(TwoLayers(), (torch.randn(5, 4),))
    case.model.a.register_forward_hook(counting(case, "first"))
    case.late = lambda model, step: (
        step == 1 and model.a.register_forward_hook(counting(case, "second"))
    )
    return case


def test_a_second_hook_on_a_guarded_dict_recompiles_and_fires():
    report = check_against_torch(second_forward_hook)
    second = report.hook("a", "forward", "second")
    assert second.compiled == second.in_graph == (1, 2) and second.status == "in_graph"
    assert report.recompile_count == 1 and report.recompiles[0].step == 1
    assert "_forward_hooks" in report.recompiles[0].reason
    assert report.hook("a", "forward", "first").in_graph == (0, 1, 2)
    assert [c.kind for c in second.causes] == ["recompile"]


def full_backward_hook_in_sequential() -> Case:
    model = nn.Sequential(nn.Linear(4, 4), nn.ReLU(), nn.Linear(4, 3))
    case = Case(model, (torch.randn(5, 4),))
    model[0].register_full_backward_hook(counting(case, "backward_0"))
    model[2].register_forward_hook(counting(case, "forward_2"))
    return case


def test_a_full_backward_hook_in_sequential_sends_the_whole_frame_eager():
    report = check_against_torch(full_backward_hook_in_sequential)
    backward = report.hook("0", "backward")
    assert backward.status == "outside_graph"
    assert [c.kind for c in backward.causes] == ["graph_break", "autograd"]
    assert backward.causes[0].own and "compiled autograd" in backward.causes[0].text
    forward = report.hook("2", "forward")
    assert forward.status == "outside_graph" and forward.in_graph == ()
    assert [(c.kind, c.own) for c in forward.causes] == [("graph_break", False)]
    assert report.graph_break_count == 1 and report.graph_breaks[0].gb_id == "gb0083"


def full_backward_hook_in_own_class() -> Case:
    case = Case(TwoLayers(), (torch.randn(5, 4),))
    case.model.a.register_full_backward_hook(counting(case, "backward_a"))
    case.model.b.register_forward_hook(counting(case, "forward_b"))
    return case


def test_a_full_backward_hook_in_an_own_class_leaves_the_rest_compiled():
    report = check_against_torch(full_backward_hook_in_own_class)
    assert report.hook("a", "backward").status == "outside_graph"
    assert report.graph_breaks[0].gb_id == "gb0083"
    assert report.hook("b", "forward").status == "in_graph"
    assert report.graph_count >= 1


def list_capture() -> Case:
    kept: list[torch.Tensor] = []
    case = Case(TwoLayers(), (torch.randn(5, 4),), steps=10)
    case.model.a.register_forward_hook(
        counting(case, "capture", lambda m, i, o: kept.append(o.detach()))
    )
    return case


def test_a_list_appending_hook_recompiles_until_the_limit_then_runs_eagerly():
    report = check_against_torch(list_capture)
    capture = report.hook("a", "forward")
    limit = torch._dynamo.config.recompile_limit
    assert capture.in_graph == tuple(range(limit))
    assert capture.compiled == tuple(range(10)) and capture.status == "outside_graph"
    assert report.recompile_count == limit and report.recompiles[-1].limit_hit
    kinds = [c.kind for c in capture.causes]
    assert kinds.count("recompile") == limit - 1 and kinds.count("recompile_limit") == 1
    assert "len(" in report.recompiles[0].reason  # the guard on the list's length
    assert any("recompile_limit" in w for w in report.warnings)


def test_torchs_words_name_no_path_that_changes_from_run_to_run():
    # A hook written in a notebook cell: its file is named by the kernel's process id.
    cell: dict = {}
    source = "def keep(module, inputs, output):\n    kept.append(output.detach())\n"
    exec(compile(source, "/tmp/ipykernel_4242/2718281828.py", "exec"), {"kept": []}, cell)
    model = TwoLayers()
    model.a.register_forward_hook(cell["keep"])
    report = hv.compare_compiled(model, torch.randn(5, 4), steps=3)
    texts = [r.reason for r in report.recompiles] + [c.text for h in report.hooks for c in h.causes]
    assert texts and any("<cell>" in t for t in texts), texts
    for text in texts:
        assert "ipykernel_" not in text and "site-packages" not in text, text
        assert hv.compiled.__file__.rsplit("hookviz", 1)[0] not in text, text
    # the guard still points at the hook, from torch's unshortened words
    assert [c.kind for c in report.hook("a", "forward").causes] == ["recompile", "recompile"]


def grad_cam() -> Case:
    kept: dict[str, torch.Tensor] = {}
    case = Case(conv_net(), (torch.randn(2, 1, 6, 6),))

    def keep(module, inputs, output):
        output.register_hook(lambda grad: kept.__setitem__("gradient", grad))

    case.model[2].register_forward_hook(counting(case, "keep_gradient", keep))
    case.model[6].register_forward_hook(counting(case, "head"))
    return case


def test_a_side_effecting_tensor_hook_breaks_the_graph_inside_the_hook():
    report = check_against_torch(grad_cam)
    keep = report.hook("2", "forward")
    assert keep.status == "outside_graph"
    own = [c for c in keep.causes if c.own]
    assert own and own[0].kind == "graph_break" and "side effect" in own[0].title
    assert report.graph_breaks[0].user_frame.startswith(f"{__file__}:")  # in keep's tensor hook


def pure_tensor_hook_in_forward_hook() -> Case:
    case = Case(TwoLayers(), (torch.randn(5, 4),))

    def scale(module, inputs, output):
        output.register_hook(lambda grad: grad * 0.5)

    case.model.a.register_forward_hook(counting(case, "scale_gradient", scale))
    return case


def test_a_pure_tensor_hook_compiles_with_its_forward_hook():
    report = check_against_torch(pure_tensor_hook_in_forward_hook)
    assert report.hook("a", "forward").status == "in_graph"
    assert report.graph_break_count == 0


def late_root_hook() -> Case:
    case = Case(TwoLayers(), (torch.randn(5, 4),))
    case.late = lambda model, step: (
        step == 1 and model.register_forward_hook(counting(case, "late_root"))
    )
    return case


def test_a_late_hook_on_the_root_of_an_own_class_fires_outside_dynamo():
    report = check_against_torch(late_root_hook)
    root = report.hook("", "forward")
    assert root.label == "TwoLayers" and root.compiled == (1, 2) and root.in_graph == ()
    assert root.status == "outside_graph"
    assert [c.kind for c in root.causes] == ["outside_dynamo"]


def late_global_hook() -> Case:
    case = Case(TwoLayers(), (torch.randn(5, 4),))
    case.late = lambda model, step: (
        step == 1 and torch_module.register_module_forward_hook(counting(case, "late_global"))
    )
    return case


def test_a_late_global_hook_misses_the_compiled_modules_and_is_removed():
    report = check_against_torch(late_global_hook)
    rows = {h.label: h for h in report.hooks if h.kind == "global_forward"}
    assert set(rows) == {"TwoLayers", "a", "b", "OptimizedModule"}
    assert rows["a"].status == rows["b"].status == "missed"
    assert [c.kind for c in rows["a"].causes] == ["empty_hook_dict"]
    assert rows["TwoLayers"].status == "outside_graph"
    assert rows["OptimizedModule"].status == "extra"
    assert not torch_module._global_forward_hooks  # before_step's global hook is gone


def shared_module() -> Case:
    case = Case(Shared(), (torch.randn(5, 4),))
    case.model.block.register_forward_hook(counting(case, "twice", lambda m, i, o: o + 1))
    return case


def test_a_hook_on_a_module_called_twice_is_in_the_graph_each_step():
    report = check_against_torch(shared_module)
    twice = report.hook("block", "forward")
    assert twice.status == "in_graph" and twice.values_equal
    per_step = [m for m in report.moments if m.hook == report.hooks.index(twice) and m.step == 0]
    assert len(per_step) == 2 and all(m.compiled == GRAPH for m in per_step)


class Branchy(nn.Module):
    """A data-dependent branch after each layer: a graph break of the model's own, no hook's."""

    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(4, 4) for _ in range(3)])

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
            if x.sum() > 0:
                x = -x
        return x


def data_dependent_branch() -> Case:
    case = Case(Branchy(), (torch.randn(5, 4),))
    case.model.layers[1].register_forward_hook(counting(case, "middle"))
    case.model.layers[2].register_forward_pre_hook(counting(case, "last_pre"))
    return case


def test_a_break_of_the_models_own_is_reported_and_given_to_no_hook():
    report = check_against_torch(data_dependent_branch)
    # torch's counters leave out a break at a data-dependent branch; its log has every one
    assert report.counted_graph_breaks < report.graph_break_count
    assert any("Data-dependent" in b.title for b in report.graph_breaks)
    for h in report.hooks:
        assert h.status == "outside_graph"
        assert all(not c.own for c in h.causes), h.causes  # in the model's wake


def removed_hook() -> Case:
    case = Case(TwoLayers(), (torch.randn(5, 4),))
    case.model.a.register_forward_hook(counting(case, "goes"))
    case.model.a.register_forward_hook(counting(case, "stays"))

    def remove(model, step):
        if step == 1:
            (goes,) = [h for h in hv.list_hooks(model) if h.name == "goes"]
            hv.remove_hook(model, goes.handle_id)

    case.late = remove
    return case


def test_removing_a_hook_recompiles_and_the_rest_still_fires():
    report = check_against_torch(removed_hook)
    goes, stays = report.hook("a", "forward", "goes"), report.hook("a", "forward", "stays")
    assert goes.eager == goes.compiled == (0,) and stays.in_graph == (0, 1, 2)
    assert report.recompile_count == 1 and "_forward_hooks" in report.recompiles[0].reason
    assert [c.kind for c in stays.causes] == ["recompile"]  # a guard on their dict


class Checkpointed(nn.Module):
    """A block under activation checkpointing: dynamo traces it as a higher-order op."""

    def __init__(self):
        super().__init__()
        self.block = nn.Sequential(nn.Linear(4, 4), nn.ReLU())
        self.head = nn.Linear(4, 2)

    def forward(self, x):
        return self.head(checkpoint(self.block, x, use_reentrant=False))


def checkpointed() -> Case:
    case = Case(Checkpointed(), (torch.randn(5, 4),))
    # inside the higher-order op: its effect on the output is its oracle (a tick would be a
    # side effect there, which dynamo refuses)
    case.model.block[0].register_forward_hook(lambda module, inputs, output: output * 2)
    case.model.head.register_forward_hook(counting(case, "after_checkpoint"))
    return case


def test_a_hook_inside_a_higher_order_op_is_seen_without_breaking_it():
    report = check_against_torch(checkpointed)  # no graph break of hookviz's making
    inside = report.hook("block.0", "forward")
    assert inside.in_graph == inside.inferred == (0, 1, 2) and inside.status == "in_graph"
    assert [c.kind for c in inside.causes] == ["higher_order_op"]
    assert report.hook("head", "forward").in_graph == (0, 1, 2)
    assert report.outputs_equal == [True, True, True]
    # torch's own answer: the compiled model's output is the doubled one, at every step
    case = checkpointed()
    bare = copy.deepcopy(case.model)
    bare.block[0]._forward_hooks.clear()
    compiled = torch.compile(case.model, backend="eager")
    try:
        for _ in range(3):
            x = torch.randn(2, 4)
            assert torch.allclose(compiled(x), case.model(x))
            assert not torch.allclose(compiled(x), bare(x))
    finally:
        torch._dynamo.reset()


@pytest.mark.parametrize(
    "make",
    [
        pure_hooks,
        late_forward_hook,
        full_backward_hook_in_sequential,
        list_capture,
        grad_cam,
        checkpointed,
    ],
)
def test_the_timeline_has_every_firing_of_both_runs_and_every_event(make):
    report, case = compare(make)
    for i, h in enumerate(report.hooks):
        eager = {m.step for m in report.moments if m.hook == i and m.eager}
        compiled = {m.step for m in report.moments if m.hook == i and m.compiled}
        assert eager == set(h.eager) and compiled == set(h.compiled), h
    events = [m.event for m in report.moments if m.event]
    assert events.count("graph_break") == len(report.graph_breaks)
    assert sum(e in ("recompile", "recompile_limit") for e in events) == report.recompile_count
    assert [m.step for m in report.moments] == sorted(m.step for m in report.moments)


def test_the_vocabularies_cover_what_the_reports_hold():
    for make in (pure_hooks, late_global_hook, full_backward_hook_in_sequential):
        report, _ = compare(make)
        assert {h.status for h in report.hooks} <= set(STATUSES)
        assert {c.kind for h in report.hooks for c in h.causes} <= set(CAUSES)


# -- what is left behind: nothing -----------------------------------------------------------------


def snapshot(model: nn.Module):
    hooks = [(h.path, h.kind, h.handle_id, h.hook, h.parameter) for h in hv.list_hooks(model)]
    state = {k: v.clone() for k, v in model.state_dict().items()}
    return hooks, state, [p.grad for p in model.parameters()]


def assert_untouched(model: nn.Module, before) -> None:
    hooks, state, grads = snapshot(model)
    assert hooks == before[0]
    assert state.keys() == before[1].keys()
    assert all(torch.equal(state[k], before[1][k]) for k in state)
    assert grads == before[2]


@pytest.mark.parametrize("make", [pure_hooks, late_global_hook, list_capture, grad_cam])
def test_the_model_its_hooks_and_the_inputs_are_left_as_they_were(make):
    case = make()
    x = case.inputs[0].requires_grad_(True)
    before = snapshot(case.model)
    globals_before = hv.list_hooks(nn.Linear(1, 1))
    hv.compare_compiled(case.model, x, steps=case.steps, before_step=case.before_step)
    assert_untouched(case.model, before)
    assert x.grad is None
    assert hv.list_hooks(nn.Linear(1, 1)) == globals_before
    bare = copy.deepcopy(case.model)
    for module in bare.modules():
        module._forward_hooks.clear()
        module._forward_pre_hooks.clear()
        module._backward_hooks.clear()
    for p in bare.parameters():
        p._backward_hooks = None
    assert_no_hooks(bare)


def test_two_comparisons_in_a_row_see_the_same_thing():
    first, _ = compare(full_backward_hook_in_own_class)
    second, _ = compare(full_backward_hook_in_own_class)
    assert repr(first) == repr(second)
    assert first.table() == second.table()


def test_the_loggers_it_listened_to_are_put_back():
    names = (*dynamo_reading.GRAPH_BREAK_LOGGERS, dynamo_reading.CONVERT_FRAME_LOGGER)

    def state():
        loggers = [logging.getLogger(n) for n in names]
        return [(log.level, log.propagate, list(log.handlers)) for log in loggers]

    before = state()
    compare(list_capture)
    assert state() == before


def test_compiled_code_does_not_outlive_the_comparison():
    compare(pure_hooks)
    from torch._dynamo.utils import get_compilation_metrics

    fn = torch.compile(lambda x: x + 1, backend="eager")
    fn(torch.ones(1))
    assert get_compilation_metrics()[-1].compile_id == "0/0"  # frame numbering starts over


# -- bad input ------------------------------------------------------------------------------------


def print_hook() -> Case:
    case = Case(TwoLayers(), (torch.randn(5, 4),))
    case.model.a.register_forward_hook(lambda m, i, o: print(end=""))
    return case


def test_a_model_that_does_not_compile_is_reported_not_raised():
    case = print_hook()
    before = snapshot(case.model)
    report = hv.compare_compiled(case.model, *case.inputs, fullgraph=True)
    assert not report.ok and report.error.run == "compiled" and report.error.step == 0
    assert report.error.type == "Unsupported" and "print" in report.error.message
    assert "the compiled run failed at step 0" in repr(report)
    hook = report.hook("a", "forward")
    assert hook.eager == (0, 1, 2) and hook.status == "missed"
    assert "error" in [c.kind for c in hook.causes]
    assert_untouched(case.model, before)


def test_a_missing_backend_is_reported_with_the_backends_there_are():
    case = pure_hooks()
    report = hv.compare_compiled(case.model, *case.inputs, backend="no_such_backend")
    assert report.error.run == "compile" and report.error.type == "InvalidBackend"
    assert "inductor" in report.error.message and "no_such_backend" in report.error.message
    assert repr(report).endswith(", torch.compile failed)")
    assert report.hook("b", "forward").eager == (0, 1, 2)  # the eager run still ran


def test_a_hook_that_raises_only_under_compile_is_a_break_torch_names():
    case = TwoLayers()

    def refuses(module, inputs, output):
        if torch.compiler.is_compiling():
            raise RuntimeError("refuses to be compiled")

    case.a.register_forward_hook(refuses)
    report = hv.compare_compiled(case, torch.randn(2, 4))
    hook = report.hook("a", "forward")
    assert hook.status == "outside_graph"
    cause = next(c for c in hook.causes if c.own)
    assert cause.title == "Observed exception" and "refuses to be compiled" in cause.text
    assert_no_hooks(copy.deepcopy(nn.Linear(1, 1)))


def test_a_hook_that_raises_stops_the_run_and_names_the_hook():
    model = TwoLayers()

    def broken(module, inputs, output):
        raise ValueError("this hook is broken")

    handle = model.b.register_forward_hook(broken)
    before = snapshot(model)
    report = hv.compare_compiled(model, torch.randn(2, 4))
    assert [e.run for e in report.errors] == ["eager", "compiled"]
    assert report.error.hook == "b forward broken" and report.error.type == "ValueError"
    assert "this hook is broken" in str(report.error)
    assert_untouched(model, before)
    handle.remove()
    assert_no_hooks(model)


def test_a_model_deepcopy_refuses_is_reported():
    model = TwoLayers()
    model.lock = threading.Lock()
    report = hv.compare_compiled(model, torch.randn(2, 4))
    assert report.error.type == "TypeError" and "deepcopy" in report.error.message


@pytest.mark.parametrize(
    ("args", "kwargs", "message"),
    [
        (("model", torch.ones(1)), {}, "must be an nn.Module"),
        ((TwoLayers(), TwoLayers()), {}, "not a module"),
        ((TwoLayers(), torch.ones(1, 4)), {"steps": 0}, "steps must be"),
        ((TwoLayers(), torch.ones(1, 4)), {"loss_fn": 3}, "loss_fn must be"),
        ((TwoLayers(), torch.ones(1, 4)), {"lr": 0.1}, "torch.compile's"),
        ((TwoLayers(), torch.ones(1, 4)), {"backend": 3}, "backend must be"),
    ],
)
def test_wrong_arguments_say_what_to_pass(args, kwargs, message):
    with pytest.raises(TypeError, match=message):
        hv.compare_compiled(*args, **kwargs)


def test_a_compiled_model_is_refused_with_what_to_pass_instead():
    compiled = torch.compile(TwoLayers(), backend="eager")
    with pytest.raises(TypeError, match="_orig_mod"):
        hv.compare_compiled(compiled, torch.ones(1, 4))


# -- the report as people and check cells read it -------------------------------------------------


def test_the_report_reads_the_same_every_run():
    report, _ = compare(full_backward_hook_in_sequential)
    assert repr(report) == (
        "CompiledReport(Sequential, backend='eager', 3 steps: 2 hooks (2 outside graph), "
        "1 graph break, 0 recompiles)"
    )
    assert " at 0x" not in report.table()
    with pytest.raises(KeyError, match="no hook on '1' of kind 'forward'"):
        report.hook("1", "forward")


def test_importing_it_imports_no_dynamo():
    code = (
        "import sys, hookviz, hookviz.compiled\n"
        "print('torch._dynamo' in sys.modules, 'hookviz.compiled' in sys.modules)\n"
        "hookviz.compare_compiled\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "True"]
