"""list_hooks / find_duplicate_hooks / remove_hooks: every kind, found, flagged and removed."""

from __future__ import annotations

import functools
import warnings

import pytest
import torch
import torch.nn.modules.module as torch_module
from torch import nn

import hookviz as hv
from hookviz.inventory import KINDS, callable_source


def forward_hook(module, args, output):
    return None


def test_every_module_and_parameter_kind_is_listed_with_its_flags():
    model = hv.examples.model()
    a = model.ab.a
    a.register_forward_pre_hook(lambda m, args, kwargs: None, with_kwargs=True)
    a.register_forward_hook(forward_hook, always_call=True)
    model.cd.register_full_backward_hook(lambda m, gi, go: None)
    model.cd.register_full_backward_pre_hook(lambda m, go: None)
    model.register_state_dict_pre_hook(lambda m, prefix, keep_vars: None)
    model.cd.c.W.register_hook(lambda g: None)
    model.cd.d.W.register_post_accumulate_grad_hook(lambda p: None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        model.ab.b.register_backward_hook(lambda m, gi, go: None)
    found = {(h.where, h.kind): h for h in hv.list_hooks(model, include_globals=False)}
    assert set(found) == {
        ("ab.a", "forward_pre"),
        ("ab.a", "forward"),
        ("cd", "backward"),
        ("cd", "backward_pre"),
        ("Model", "state_dict_pre"),
        ("cd.c.W", "tensor"),
        ("cd.d.W", "post_accumulate_grad"),
        ("ab.b", "backward"),
    }
    assert found[("ab.a", "forward_pre")].flags == ("with_kwargs",)
    assert found[("ab.a", "forward")].flags == ("always_call",)
    assert found[("ab.a", "forward")].name == "forward_hook"
    assert found[("ab.a", "forward")].source.endswith(f":{forward_hook.__code__.co_firstlineno}")
    assert found[("cd", "backward")].flags == ("full",)
    assert found[("ab.b", "backward")].flags == ("legacy",)
    assert (
        found[("cd.c.W", "tensor")].parameter == "W" and found[("cd.c.W", "tensor")].path == "cd.c"
    )


def test_global_hooks_are_listed_and_removed_only_when_asked():
    handle = torch_module.register_module_forward_hook(forward_hook)
    try:
        model = hv.examples.model()
        kinds = [h.kind for h in hv.list_hooks(model)]
        assert "global_forward" in kinds
        assert hv.remove_hooks(model) == 0  # globals are not the model's: kept by default
        assert "global_forward" in [h.kind for h in hv.list_hooks(model)]
        removed = hv.remove_hooks(model, kinds=["global_forward"])
        assert removed == 1 and removed.by_kind == {"global_forward": 1}
        assert hv.list_hooks(model) == []
    finally:
        handle.remove()


def test_duplicates_same_object_and_re_definitions():
    model = hv.examples.model()
    model.ab.a.register_forward_hook(forward_hook)
    model.ab.a.register_forward_hook(forward_hook)
    cell = (
        "def leak(module, args, output):\n    return None\nmodel.cd.register_forward_hook(leak)\n"
    )
    for _ in range(3):  # the same cell, run three times: three function objects
        exec(compile(cell, "/tmp/ipykernel_123/456.py", "exec"), {"model": model})
    model.cd.c.register_forward_hook(lambda m, a, o: None)
    model.cd.c.register_forward_hook(lambda m, a, o: print("a different lambda"))
    model.cd.d.register_forward_hook(functools.partial(print, "x"))
    model.cd.d.register_forward_hook(functools.partial(print, "y"))
    found = {d.path: d for d in hv.find_duplicate_hooks(model)}
    assert set(found) == {"ab.a", "cd"}
    assert found["ab.a"].count == 2 and found["ab.a"].same_object
    assert found["cd"].count == 3 and not found["cd"].same_object and found["cd"].name == "leak"
    assert "registered 3 times (re-definitions of one function)" in str(found["cd"])


def test_remove_hooks_counts_by_kind_and_cleans_flag_dicts():
    model = hv.examples.model()
    model.ab.a.register_forward_hook(forward_hook, always_call=True, with_kwargs=False)
    model.ab.a.register_forward_pre_hook(lambda m, a: None)
    model.cd.register_full_backward_hook(lambda m, gi, go: None)
    model.cd.c.W.register_hook(lambda g: None)
    only_forward = hv.remove_hooks(model, kinds="forward")
    assert only_forward == 1 and not model.ab.a._forward_hooks_always_called
    removed = hv.remove_hooks(model)
    assert int(removed) == 3
    assert removed.by_kind == {"forward_pre": 1, "backward": 1, "tensor": 1}
    assert str(removed) == "removed 3 hooks (1 forward_pre, 1 backward, 1 tensor)"
    assert hv.list_hooks(model) == [] and model.cd._is_full_backward_hook is None
    x = torch.rand(1, requires_grad=True)
    model(x).sum().backward()  # still a working model


def test_unknown_kind_and_bad_model():
    with pytest.raises(ValueError, match="valid kinds are"):
        hv.remove_hooks(hv.examples.model(), kinds=["forwards"])
    with pytest.raises(TypeError, match="nn.Module"):
        hv.list_hooks([nn.Linear(1, 1)])
    assert "forward" in KINDS and "global_backward" in KINDS


def test_hook_table_is_deterministic_for_notebook_cells():
    model = hv.examples.model()
    source = "def show(module, args, output):\n    pass\n"
    namespace: dict = {}
    exec(compile(source, "/tmp/ipykernel_99/12.py", "exec"), namespace)
    model.ab.register_forward_hook(namespace["show"])
    info = hv.list_hooks(model)[0]
    assert info.source == "<cell>:1" and callable_source(namespace["show"]) == "<cell>:1"
    table = hv.hook_table(model).splitlines()
    assert table[1].split()[:3] == ["ab", "forward", "show"]


def test_a_hook_on_the_root_modules_own_parameter_is_named_by_the_root_class_everywhere():
    """One rule: list_hooks, hook_table, find_duplicate_hooks and the timeline call it Linear.weight."""
    layer = nn.Linear(2, 2)
    for _ in range(2):
        layer.weight.register_hook(lambda grad: grad)
        layer.register_forward_hook(lambda module, inputs, output: None)
    assert {info.where for info in hv.list_hooks(layer, include_globals=False)} == {
        "Linear",
        "Linear.weight",
    }
    table = hv.hook_table(layer)
    assert "\nLinear.weight " in table and "\n.weight" not in table
    assert sorted(str(d).split(":")[0] for d in hv.find_duplicate_hooks(layer)) == [
        "Linear",
        "Linear.weight",
    ]
    trace = hv.trace_hooks(layer, torch.ones(1, 2, requires_grad=True))
    assert "Linear.weight" in {f.label for f in trace.firings}


def test_hooks_from_one_factory_with_different_values_are_not_duplicates():
    def scale(k):
        def hook(module, inputs, output):
            return output * k

        return hook

    layer = nn.Linear(2, 2)
    layer.register_forward_hook(scale(2))
    layer.register_forward_hook(scale(3))
    assert hv.find_duplicate_hooks(layer) == []
    layer.register_forward_hook(scale(3))  # the same value again: a copy
    (copy,) = hv.find_duplicate_hooks(layer)
    assert copy.count == 2 and copy.handle_ids == tuple(list(layer._forward_hooks)[1:])


def test_two_lambdas_with_one_body_on_two_lines_are_not_duplicates():
    layer = nn.Linear(2, 2)
    layer.register_forward_hook(lambda module, inputs, output: None)
    layer.register_forward_hook(lambda module, inputs, output: None)
    assert hv.find_duplicate_hooks(layer) == []
    inventory = hv.HookInventory(layer, include_globals=False)
    assert (
        inventory.remove_duplicates() == 0 and len(hv.list_hooks(layer, include_globals=False)) == 2
    )


def test_a_cell_run_again_is_a_duplicate_even_with_a_new_list_to_fill():
    layer = nn.Linear(2, 2)
    for _ in range(3):  # three runs of one cell: a new list each time, the same code and place
        kept = []

        def keep(module, inputs, output, kept=kept):
            kept.append(output)

        layer.register_forward_hook(keep)
    (copy,) = hv.find_duplicate_hooks(layer)
    assert copy.count == 3 and not copy.same_object


def test_a_tied_parameters_hook_is_listed_once_and_says_where_else_it_lives():
    class Tied(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Embedding(10, 4)
            self.head = nn.Linear(4, 10, bias=False)
            self.head.weight = self.embed.weight

    model = Tied()
    model.head.weight.register_hook(lambda g: None)
    (info,) = hv.list_hooks(model)
    assert (info.path, info.parameter, info.flags) == ("embed", "weight", ("tied to head.weight",))
    assert hv.remove_hooks(model) == 1 and hv.list_hooks(model) == []


def test_remove_hooks_leaves_what_libraries_own_and_says_so():
    from torch.nn.utils import prune

    model = nn.Sequential(nn.Linear(4, 4), nn.Linear(4, 2))
    prune.l1_unstructured(model[0], "weight", amount=0.5)
    prune.random_unstructured(model[1], "bias", amount=0.5)
    model[1].register_forward_hook(forward_hook)
    infos = hv.list_hooks(model)
    assert [(i.path, i.kind, i.library) for i in infos] == [
        ("0", "forward_pre", "torch"),
        ("1", "forward_pre", "torch"),
        ("1", "forward", None),
    ]
    x = torch.randn(3, 4)
    pruned_out = model(x)
    removed = hv.remove_hooks(model)
    assert removed == 1 and [(i.path, i.name) for i in removed.left] == [
        ("0", "L1Unstructured"),
        ("1", "RandomUnstructured"),
    ]
    assert str(removed) == (
        "removed 1 hook (1 forward); left 2 that libraries own (2 from torch): the model needs "
        "them (include_libraries=True removes them too)"
    )
    model[0].weight_orig.data.add_(1.0)  # the mask must still be applied on the next call
    assert not torch.equal(model(x), pruned_out)
    assert torch.equal(model[0].weight, model[0].weight_orig * model[0].weight_mask)
    everything = hv.remove_hooks(model, include_libraries=True)
    assert everything == 2 and not everything.left and hv.list_hooks(model) == []


def test_a_running_recording_is_hookvizs_and_stays():
    model = nn.Sequential(nn.Linear(2, 2))
    with hv.record(model) as rec:
        assert {i.library for i in hv.list_hooks(model)} == {"hookviz"}
        removed = hv.remove_hooks(model)
        assert removed == 0 and len(removed.left) == len(hv.list_hooks(model)) > 0
        model(torch.randn(1, 2))
    assert len(rec.select(phase="forward")) == 2
    assert hv.list_hooks(model) == []
