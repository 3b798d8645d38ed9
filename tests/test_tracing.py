"""trace_apply: the real Module.apply, recorded visit by visit."""

from __future__ import annotations

import pytest
import torch
from torch import nn
from torch.nn.parameter import Parameter

import hookviz as hv
from hookviz.examples import Model, shared_block
from tests.helpers import assert_no_hooks

BLOG_ORDER = ["ab.a", "ab.b", "ab", "cd.c", "cd.d", "cd", ""]


def torch_apply_order(model: nn.Module) -> list[nn.Module]:
    seen: list[nn.Module] = []
    model.apply(seen.append)
    return seen


def test_blog_model_is_visited_in_post_order():
    model = hv.examples.model()
    trace = hv.trace_apply(model)
    assert trace.order == BLOG_ORDER
    assert [v.module for v in trace.visits] == torch_apply_order(model)
    assert trace.names[-1] == "Model"
    assert hv.preorder(model) == ["", "ab", "ab.a", "ab.b", "cd", "cd.c", "cd.d"]
    assert hv.postorder(model) == BLOG_ORDER


def test_print_module_output_is_kept_per_visit_and_still_printed(capsys):
    def print_module(module):
        print(type(module).__name__)
        print("-" * 30)

    trace = hv.trace_apply(hv.examples.model(), print_module)
    assert [v.stdout.splitlines()[0] for v in trace.visits] == [
        "Function_A",
        "Function_B",
        "Layer_AB",
        "Function_C",
        "Function_D",
        "Layer_CD",
        "Model",
    ]
    printed = capsys.readouterr().out
    assert printed == "".join(v.stdout for v in trace.visits)


def test_quiet_trace_prints_nothing(capsys):
    hv.trace_apply(hv.examples.model(), lambda m: print("hi"), echo=False)
    assert capsys.readouterr().out == ""


def test_shared_module_is_visited_once_per_parent():
    model = shared_block()
    trace = hv.trace_apply(model)
    assert trace.order == ["left.0", "left.1", "left", "right.0", "right.1", "right", ""]
    assert trace.visits[0].module is trace.visits[3].module
    assert [v.module for v in trace.visits] == torch_apply_order(model)
    assert hv.preorder(model).count("left.0") == 1 and "right.0" not in hv.preorder(model)
    assert hv.shared_modules(model) == {"left.0": ["left.0", "right.0"]}


def test_data_assignment_is_flagged_and_parents_rewrite_children():
    def weight_initialization(module):  # the blog's version: .data and recursive parameters()
        for param in module.parameters():
            param.data = torch.ones_like(param)

    trace = hv.trace_apply(hv.examples.model(), weight_initialization, echo=False)
    first = trace.visits[0].changes
    assert [(c.name, c.kind, c.through_data) for c in first] == [("ab.a.W", "changed", True)]
    assert first[0].after == [1.0]
    layer_ab = trace.visits[2].changes
    assert [(c.name, c.kind) for c in layer_ab] == [
        ("ab.a.W", "rewritten"),
        ("ab.b.W", "rewritten"),
    ]
    assert len(trace.visits[-1].changes) == 4  # the root writes every parameter once more
    assert sum(len(v.changes) for v in trace.visits) == 4 + 4 + 4  # 12 writes for 4 parameters


def test_no_grad_in_place_init_touches_each_parameter_once():
    @torch.no_grad()
    def weight_initialization(module):
        for param in module.parameters(recurse=False):
            param.fill_(1.0)

    trace = hv.trace_apply(hv.examples.model(), weight_initialization)
    changes = trace.changes
    assert [c.name for c in changes] == ["ab.a.W", "ab.b.W", "cd.c.W", "cd.d.W"]
    assert all(c.kind == "changed" and not c.through_data for c in changes)


def test_added_and_replaced_parameters_are_reported():
    def add_bias(module):
        if type(module).__name__.startswith("Function"):
            module.b = Parameter(torch.zeros(2))

    trace = hv.trace_apply(hv.examples.model(shape=(2, 2)), add_bias)
    assert [(c.name, c.kind, c.shape_after) for c in trace.visits[0].changes] == [
        ("ab.a.b", "added", (2,))
    ]

    def replace(module):
        if hasattr(module, "W") and module.W.dim() == 2:
            module.W = Parameter(torch.ones(3, 3))

    trace = hv.trace_apply(hv.examples.model(shape=(2, 2)), replace)
    change = trace.visits[0].changes[0]
    assert (change.kind, change.shape_before, change.shape_after) == ("replaced", (2, 2), (3, 3))


def test_large_parameters_are_summarised():
    model = nn.Linear(300, 300)
    trace = hv.trace_apply(
        model, lambda m: nn.init.zeros_(m.weight) if isinstance(m, nn.Linear) else None
    )
    change = trace.visits[0].changes[0]
    assert change.name == "weight" and isinstance(change.after, dict)
    assert change.after["mean"] == 0.0 and change.after["shape"] == (300, 300)


def test_recursion_calls_are_balanced_and_explain_post_order():
    trace = hv.trace_apply(hv.examples.model())
    depth = 0
    for call in trace.calls:
        if call.kind == "enter":
            depth += 1
            assert len(call.stack) == depth
        elif call.kind == "leave":
            assert len(call.stack) == depth
            depth -= 1
        else:
            assert call.stack[-1] == call.path
    assert depth == 0
    kinds = [(c.kind, c.path) for c in trace.calls]
    # a parent's visit comes after it entered and its children left, just before it leaves
    assert kinds.index(("visit", "ab")) > kinds.index(("leave", "ab.b"))
    assert kinds.index(("leave", "ab")) == kinds.index(("visit", "ab")) + 1
    visit_stack = next(c.stack for c in trace.calls if c.kind == "visit" and c.path == "cd.d")
    assert visit_stack == ("", "cd", "cd.d")


def test_a_raising_fn_keeps_the_trace_and_names_the_module():
    def boom(module):
        if isinstance(module, hv.examples.Layer_CD):
            raise ValueError("no Layer_CD here")

    model = hv.examples.model()
    with pytest.raises(hv.ApplyFnError) as info:
        hv.trace_apply(model, boom)
    error = info.value
    assert error.path == "cd" and error.index == 5
    assert "'cd'" in str(error) and "Layer_CD" in str(error) and "no Layer_CD here" in str(error)
    assert isinstance(error.__cause__, ValueError)
    assert error.trace.order == ["ab.a", "ab.b", "ab", "cd.c", "cd.d", "cd"]
    assert not error.trace.complete
    assert_no_hooks(model)


def test_keyboard_interrupt_passes_through_and_cleans_up():
    model = hv.examples.model()

    def stop(module):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        hv.trace_apply(model, stop)
    assert_no_hooks(model)


def test_an_instance_apply_of_the_users_own_survives():
    model = hv.examples.model()
    calls = []

    def my_apply(fn):
        calls.append("mine")
        return Model.apply(model.ab, fn)

    model.ab.apply = my_apply
    trace = hv.trace_apply(model)
    assert calls == ["mine"] and trace.order == BLOG_ORDER
    assert model.ab.__dict__["apply"] is my_apply


@pytest.mark.parametrize(
    ("bad", "words"),
    [
        (torch.ones(2), ["tensor of shape (2,)", "model"]),
        (Model, ["class Model", "Model()"]),
        ("model", ["got str"]),
    ],
)
def test_bad_models_get_clear_errors(bad, words):
    with pytest.raises(TypeError) as info:
        hv.trace_apply(bad)
    for word in words:
        assert word in str(info.value)


def test_fn_must_be_callable():
    with pytest.raises(TypeError, match="fn must be a function"):
        hv.trace_apply(hv.examples.model(), fn="print_module")


def test_table_and_repr_are_deterministic():
    trace = hv.trace_apply(hv.examples.model(), lambda m: None)
    assert repr(trace) == (
        "ApplyTrace(Model, fn=<lambda>, 7 visits: ab.a, ab.b, ab, cd.c, cd.d, cd, Model)"
    )
    assert trace.table().splitlines()[1].split() == ["1", "ab.a", "Function_A"]


def test_a_meta_device_model_is_traced_as_apply_walks_it():
    with torch.device("meta"):
        model = nn.Sequential(nn.Linear(3, 3), nn.Sequential(nn.ReLU(), nn.Linear(3, 1)))
    walked = []
    model.apply(walked.append)

    def init(module):
        if isinstance(module, nn.Linear):
            nn.init.zeros_(module.weight)

    trace = hv.trace_apply(model, init)
    assert [v.module for v in trace.visits] == walked
    changed = [(c.name, c.kind, c.after) for v in trace.visits for c in v.changes]
    assert changed == [
        ("0.weight", "rewritten", {"shape": (3, 3)}),
        ("1.1.weight", "rewritten", {"shape": (1, 3)}),
    ]
    widget = hv.ApplyTraversal(model, init)
    assert "Sequential" in repr(widget)
