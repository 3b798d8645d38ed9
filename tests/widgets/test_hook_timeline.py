"""HookTimeline: the true order of hook firings, replaced values marked, the model left as it was."""

from __future__ import annotations

import pytest
import torch
import traitlets
from torch import nn

import hookviz as hv
from tests.helpers import assert_no_hooks


def double_output(module, inputs, output):
    return output * 2


def note_gradient(module, grad_input, grad_output):
    return None


def scale_gradient(grad):
    return grad * 3


def blog_with_hooks():
    model = hv.examples.model()
    handles = [
        model.ab.a.register_forward_hook(double_output),
        model.cd.register_full_backward_hook(note_gradient),
        model.ab.b.W.register_hook(scale_gradient),
    ]
    return model, handles


def labelled(widget):
    """(lane label, kind) per firing, as the browser receives them."""
    return [(widget.lanes[lane][0], kind) for lane, kind, *_ in widget.firings]


def test_a_forward_hook_runs_after_forward_returns():
    model, _ = blog_with_hooks()
    events = labelled(hv.HookTimeline(model, torch.ones(1)))
    hook = events.index(("ab.a", "forward"))
    assert events[hook - 1] == ("ab.a", "forward_return")
    assert events[hook + 1] == ("ab.b", "forward_call")


def test_a_backward_hook_fires_during_backward_not_after_it():
    model, _ = blog_with_hooks()
    events = labelled(hv.HookTimeline(model, torch.ones(1)))
    hook = events.index(("cd", "backward"))
    assert events.index(("Model", "grad_output_ready")) < hook
    assert hook < events.index(("ab.a", "grad_input_ready"))  # earlier layers come after it


def test_replaced_values_and_hook_names_are_sent():
    model, _ = blog_with_hooks()
    widget = hv.HookTimeline(model, torch.ones(1))
    users = [row for row in widget.firings if row[2] == "user"]
    assert [(widget.lanes[r[0]][0], r[1], r[3], r[4]) for r in users] == [
        ("ab.a", "forward", "double_output", "output"),
        ("cd", "backward", "note_gradient", ""),
        ("ab.b.W", "tensor", "scale_gradient", "gradient"),
    ]
    assert repr(widget) == (
        "HookTimeline(Model, 31 firings, 3 from the model's own hooks, 2 replaced a value, step 0/31)"
    )


def test_parameter_hooks_get_a_lane_under_their_module():
    model, _ = blog_with_hooks()
    widget = hv.HookTimeline(model, torch.ones(1))
    assert widget.lanes == [
        ["Model", 0],
        ["ab", 1],
        ["ab.a", 2],
        ["ab.b", 2],
        ["ab.b.W", 3],
        ["cd", 1],
        ["cd.c", 2],
        ["cd.d", 2],
    ]


def test_the_model_is_left_as_it_was():
    model, handles = blog_with_hooks()
    hv.HookTimeline(model, torch.ones(1))
    assert model.ab.a._forward_hooks[handles[0].id] is double_output
    assert model.cd._backward_hooks[handles[1].id] is note_gradient
    assert model.ab.b.W._backward_hooks[handles[2].id] is scale_gradient
    assert all(p.grad is None for p in model.parameters())
    for handle in handles:
        handle.remove()
    assert_no_hooks(model)


def test_steps_walk_the_firings_and_the_filter_keeps_the_models_own():
    model, _ = blog_with_hooks()
    widget = hv.HookTimeline(model, torch.ones(1))
    widget.step = widget.total
    assert widget.current.kind == "grad_input_ready"
    widget.show_torch = False
    assert widget.total == 3 and widget.step == 3
    assert [f.name for f in widget.sequence] == ["double_output", "note_gradient", "scale_gradient"]
    widget.step = 1
    assert widget.current.label == "ab.a"
    with pytest.raises(traitlets.TraitError, match="between 0 .* and 3"):
        widget.step = 4


def test_without_backward_only_forward_is_shown():
    model, _ = blog_with_hooks()
    widget = hv.HookTimeline(model, torch.ones(1), backward=False)
    kinds = {kind for _, kind, *_ in widget.firings}
    assert kinds == {"forward_call", "forward_return", "forward"}


def test_custom_loss_is_used():
    model = hv.examples.mlp((4, 3))
    widget = hv.HookTimeline(model, torch.ones(2, 4), loss_fn=lambda out: (out**2).mean())
    expected = (model(torch.ones(2, 4)) ** 2).mean().item()
    assert (
        widget.title
        == f"Sequential: one forward and backward pass, loss {float(f'{expected:.4g}')}"
    )


def test_the_title_says_the_backward_starts_from_the_sum_of_the_outputs():
    model = hv.examples.mlp((4, 3))
    expected = model(torch.ones(2, 4)).sum().item()
    widget = hv.HookTimeline(model, torch.ones(2, 4))
    assert widget.title == (
        "Sequential: one forward and backward pass, backward from the sum of the outputs "
        f"({float(f'{expected:.4g}')})"
    )
    assert "loss" not in widget.title
    forward_only = hv.HookTimeline(model, torch.ones(2, 4), backward=False)
    assert forward_only.title == "Sequential: one forward pass"


@pytest.mark.parametrize(
    ("args", "kwargs", "error", "message"),
    [
        ((torch.ones(1), torch.ones(1)), {}, TypeError, "must be an nn.Module"),
        ((hv.examples.model(), nn.Linear(1, 1)), {}, TypeError, "not a module"),
        (
            (hv.examples.model(), torch.ones(1)),
            {"loss_fn": "sum"},
            TypeError,
            "loss_fn must be a function",
        ),
        ((hv.examples.model(), torch.ones(1)), {"speed": -1}, ValueError, "more than 0"),
    ],
)
def test_bad_arguments_say_what_to_pass(args, kwargs, error, message):
    with pytest.raises(error, match=message):
        hv.HookTimeline(*args, **kwargs)


def test_static_pictures():
    model, _ = blog_with_hooks()
    widget = hv.HookTimeline(model, torch.ones(1))
    page = widget.to_html()
    assert "<script" not in page
    assert page.index("forward hook: runs AFTER forward() returned") < page.index("<b>backward</b>")
    assert "replaced output" in page and "replaced gradient" in page
    figure = widget.plot()
    axes = figure.axes[0]
    assert {t.get_text() for t in axes.get_yticklabels()} == {lane for lane, _ in widget.lanes}
    assert {t.get_text() for t in axes.texts} >= {
        "replaced output",
        "replaced gradient",
        "backward",
    }


def test_the_browser_gets_every_kind_and_its_legend_from_the_table():
    from hookviz.hook_kinds import KINDS, TORCH

    model, _ = blog_with_hooks()
    model.ab.b.W.register_post_accumulate_grad_hook(lambda p: None)
    widget = hv.HookTimeline(model, torch.ones(1))
    shown = {kind for _, kind, *_ in widget.firings}
    # every kind a firing names is described in the state, with the table's words and mark
    assert shown <= set(widget.kinds)
    for kind in shown:
        entry, row = widget.kinds[kind], KINDS[kind]
        assert entry == {
            "meaning": row.meaning,
            "backward": row.backward,
            "shape": row.shape,
            "colour": row.colour,
        }
    # the legend names each hook kind the model's own hooks fired as, and one torch marker
    legend_kinds = [kind for _, kind, *_ in widget.legend]
    assert {k for k in shown if KINDS[k].target != TORCH} <= set(legend_kinds)
    # in the course's words, torch's names in the tooltip
    for words, kind, tooltip in widget.legend:
        assert "_" not in words, words
        if KINDS[kind].target != TORCH:
            assert f"{kind}: " in tooltip and ".register_" in tooltip, tooltip
    assert [KINDS[k].target for k in legend_kinds].count(TORCH) == 1
    assert set(legend_kinds) <= set(widget.kinds)


def test_the_script_keeps_no_list_of_kinds():
    from pathlib import Path

    from hookviz.hook_kinds import KINDS

    script = (Path(hv.widgets.__file__).parent / "static" / "hook_timeline.js").read_text()
    for kind in KINDS:
        # the explanations may test one kind by name; none lists them for the legend or styles
        assert f'["{kind}", ' not in script and f'".hv-k-{kind}' not in script
