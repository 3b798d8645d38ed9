"""hook_kinds: the one table of hook kinds matches where this torch keeps its hooks."""

from __future__ import annotations

import torch.nn.modules.module as torch_module
from torch import nn

from hookviz import hook_kinds
from hookviz.hook_kinds import GLOBAL, KINDS, MODULE, TENSOR, TORCH


def test_every_attribute_and_flag_is_where_torch_keeps_it():
    module = nn.Linear(2, 2)
    weight = module.weight
    # tensors make their hook dicts on the first registration
    weight.register_hook(lambda g: None)
    weight.register_post_accumulate_grad_hook(lambda p: None)
    owners = {MODULE: module, TENSOR: weight, GLOBAL: torch_module}
    for kind in KINDS.values():
        if kind.target == TORCH:
            assert kind.attribute is None
            continue
        owner = owners[kind.target]
        assert isinstance(getattr(owner, kind.attribute), dict), kind.name
        for flag_attribute in kind.flags.values():
            assert hasattr(owner, flag_attribute), (kind.name, flag_attribute)


def test_a_registered_hook_lands_in_its_kinds_dict():
    module = nn.Linear(2, 2)
    registered = {
        "forward_pre": module.register_forward_pre_hook(lambda m, a: None),
        "forward": module.register_forward_hook(lambda m, a, o: None, with_kwargs=False),
        "backward_pre": module.register_full_backward_pre_hook(lambda m, g: None),
        "backward": module.register_full_backward_hook(lambda m, gi, go: None),
    }
    for name, handle in registered.items():
        assert handle.id in getattr(module, KINDS[name].attribute), name
        handle.remove()


def test_the_views_derive_from_the_table():
    assert hook_kinds.PHASES == ("forward_pre", "forward", "backward_pre", "backward")
    assert all(KINDS[name].target == MODULE for name in hook_kinds.PHASES)
    assert set(hook_kinds.HOOKS) == {k for k, v in KINDS.items() if v.target != TORCH}
    assert hook_kinds.BACKWARD >= {"backward", "tensor", "grad_input_ready"}
    assert not hook_kinds.BACKWARD & {"forward", "forward_pre", "forward_call"}
    assert hook_kinds.acting_as("global_forward") == "forward"
    assert hook_kinds.acting_as("tensor") == "tensor"
    # every kind a timeline can show is drawn, and the markers are told apart by shape
    for name in hook_kinds.TIMELINE:
        kind = KINDS[name]
        assert kind.meaning and kind.colour
        assert (kind.shape == hook_kinds.DIAMOND) == (kind.target == TORCH)
