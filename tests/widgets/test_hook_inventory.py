"""HookInventory: what it lists, duplicates, and remove clicks that take the right hook off."""

from __future__ import annotations

import pytest
import torch
import torch.nn.modules.module as torch_module
import traitlets

import hookviz as hv
from tests.helpers import assert_no_hooks


def print_output(module, inputs, output):
    print(output)


def note_gradient(module, grad_input, grad_output):
    return None


def scale_gradient(grad):
    return grad * 2


def hooked_model():
    model = hv.examples.model()
    ids = {
        "first": model.ab.a.register_forward_hook(print_output).id,
        "copy": model.ab.a.register_forward_hook(print_output).id,
        "backward": model.cd.register_full_backward_hook(note_gradient).id,
        "tensor": model.ab.b.W.register_hook(scale_gradient).id,
        "root": model.register_forward_pre_hook(lambda module, args: None).id,
    }
    return model, ids


def click(widget, **content):
    """What the browser sends when a button is pressed."""
    widget._on_message(widget, content, [])


def test_rows_list_every_hook_with_its_place_and_duplicates():
    model, ids = hooked_model()
    widget = hv.HookInventory(model, include_globals=False)
    rows = {row["id"]: row for row in widget.hooks}
    assert set(rows) == set(ids.values())
    assert rows[ids["first"]] | {"id": 0} == {
        "id": 0,
        "where": "ab.a",
        "kind": "forward",
        "target": "module",
        "name": "print_output",
        "source": f"test_hook_inventory.py:{print_output.__code__.co_firstlineno}",
        "flags": [],
        "copies": 2,
        "first": True,
    }
    assert (rows[ids["copy"]]["copies"], rows[ids["copy"]]["first"]) == (2, False)
    assert rows[ids["backward"]]["flags"] == ["full"]
    assert rows[ids["tensor"]]["where"] == "ab.b.W" and rows[ids["tensor"]]["target"] == "parameter"
    assert rows[ids["root"]]["where"] == "Model"
    assert repr(widget) == "HookInventory(Model, 5 hooks, 1 duplicate)"


def test_remove_click_takes_that_hook_off_the_model():
    model, ids = hooked_model()
    widget = hv.HookInventory(model, include_globals=False)
    click(widget, action="remove", id=ids["copy"])
    assert list(model.ab.a._forward_hooks) == [ids["first"]]
    assert widget.status == f"removed ab.a: forward hook print_output (id {ids['copy']})"
    click(widget, action="remove", id=ids["tensor"])
    assert not model.ab.b.W._backward_hooks
    click(widget, action="remove", id=ids["backward"])
    assert not model.cd._backward_hooks and model.cd._is_full_backward_hook is None
    assert [row["id"] for row in widget.hooks] == [ids["root"], ids["first"]]
    assert repr(widget) == "HookInventory(Model, 2 hooks)"


def test_remove_duplicates_keeps_the_first_registration():
    model, ids = hooked_model()
    widget = hv.HookInventory(model, include_globals=False)
    click(widget, action="remove_duplicates")
    assert list(model.ab.a._forward_hooks) == [ids["first"]]
    assert widget.status == "removed 1 duplicate hook"
    assert len(widget.hooks) == 4


def test_remove_all_leaves_nothing_behind():
    model, _ = hooked_model()
    widget = hv.HookInventory(model, include_globals=False)
    click(widget, action="remove_all")
    assert_no_hooks(model)
    assert widget.hooks == []
    assert widget.status.startswith("removed 5 hooks")


def test_a_stale_click_reports_instead_of_raising():
    model, ids = hooked_model()
    widget = hv.HookInventory(model, include_globals=False)
    model.ab.a._forward_hooks.pop(ids["copy"])  # removed elsewhere after the list was read
    click(widget, action="remove", id=ids["copy"])
    assert widget.status.startswith(f"could not remove: no hook with handle id {ids['copy']}")
    assert ids["copy"] not in [row["id"] for row in widget.hooks]  # and the list was read again
    click(widget, action="explode")
    assert widget.status.startswith("unknown action 'explode'")


def test_refresh_sees_hooks_added_later():
    model = hv.examples.model()
    widget = hv.HookInventory(model, include_globals=False)
    assert widget.hooks == []
    model.cd.c.register_forward_pre_hook(lambda module, args: None)
    click(widget, action="refresh")
    assert [row["where"] for row in widget.hooks] == ["cd.c"]
    assert widget.status == "refreshed: 1 hook"


def test_global_hooks_are_listed_and_can_be_removed():
    model = hv.examples.model()
    handle = torch_module.register_module_forward_hook(print_output)
    try:
        widget = hv.HookInventory(model)
        assert [(row["where"], row["kind"]) for row in widget.hooks] == [
            ("(global)", "global_forward")
        ]
        widget.remove(handle.id)
        assert handle.id not in torch_module._global_forward_hooks
    finally:
        handle.remove()


def test_python_methods_check_their_arguments():
    model, ids = hooked_model()
    widget = hv.HookInventory(model, include_globals=False)
    with pytest.raises(TypeError, match="handle id"):
        widget.remove("ab.a")
    with pytest.raises(ValueError, match="no hook with handle id"):
        widget.remove(10**9)
    with pytest.raises(TypeError, match="must be an nn.Module"):
        hv.HookInventory(torch.ones(1))
    with pytest.raises(traitlets.TraitError, match="theme"):
        hv.HookInventory(model, theme="sepia")


def test_to_html_shows_no_ids_or_paths():
    model, ids = hooked_model()
    page = hv.HookInventory(model, include_globals=False).to_html()
    assert "<script" not in page and "/" not in page.replace("</", "")
    assert "duplicate ×2" in page and "print_output" in page
    assert f">{ids['copy']}<" not in page
