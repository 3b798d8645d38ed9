"""ApplyTraversal: what it records, what it sends to the browser, how it can be driven from Python."""

from __future__ import annotations

import json

import pytest
import torch
import traitlets
from torch import nn

import hookviz as hv
from hookviz.widgets.apply_traversal import MAX_PRINTED

BLOG_POSTORDER = ["ab.a", "ab.b", "ab", "cd.c", "cd.d", "cd", ""]
BLOG_PREORDER = ["", "ab", "ab.a", "ab.b", "cd", "cd.c", "cd.d"]


def set_to_one(module):
    for name, parameter in module.named_parameters(recurse=False):
        with torch.no_grad():
            parameter.fill_(1.0)
        print(f"{type(module).__name__}.{name} = 1")


def paths_of(widget, node_indices):
    return [widget._node_paths[i] for i in node_indices]


def test_plays_apply_in_post_order_and_modules_in_pre_order():
    widget = hv.ApplyTraversal(hv.examples.model())
    assert widget.sequence == BLOG_POSTORDER
    assert widget.total == 7
    widget.order = "modules"
    assert widget.sequence == BLOG_PREORDER


def test_step_moves_the_highlight_and_is_checked():
    widget = hv.ApplyTraversal(hv.examples.model())
    assert widget.current is None
    highlighted = []
    for step in range(1, widget.total + 1):
        widget.step = step
        highlighted.append(widget.current)
    assert highlighted == BLOG_POSTORDER
    with pytest.raises(traitlets.TraitError, match=r"between 0 .* and 7"):
        widget.step = 8
    with pytest.raises(traitlets.TraitError, match="between 0"):
        widget.step = -1
    assert widget.step == 7


def test_switching_order_keeps_step_in_range():
    widget = hv.ApplyTraversal(hv.examples.shared_block())
    widget.step = widget.total  # 7 visits: the shared Linear is visited once per parent
    assert widget.total == 7
    widget.order = "modules"  # modules() lists the shared Linear once: 6 steps
    assert widget.total == 6
    assert widget.step == 6
    assert widget.current == "right.1"


def test_shared_module_is_visited_under_each_parent_but_listed_once():
    widget = hv.ApplyTraversal(hv.examples.shared_block())
    assert widget.sequence == ["left.0", "left.1", "left", "right.0", "right.1", "right", ""]
    widget.order = "modules"
    assert "right.0" not in widget.sequence
    shared_rows = [row for row in widget.nodes if row[4]]
    assert [row[0] for row in shared_rows] == ["0", "0"]  # both places the Linear appears


def test_visits_carry_what_fn_printed_and_changed(capsys):
    model = hv.examples.model()
    widget = hv.ApplyTraversal(model, set_to_one)
    assert capsys.readouterr().out == ""  # echo=False: the widget shows the prints instead
    first = widget.visits[0]
    assert widget._node_paths[first[0]] == "ab.a"
    assert first[2] == "Function_A.W = 1\n"
    assert first[3] == ["ab.a.W: [0.4963] -> [1]"]
    root_visit = widget.visits[-1]
    assert root_visit[2] == "" and root_visit[3] == []
    assert all(float(p.detach()) == 1.0 for p in model.parameters())  # the real apply ran


def test_echo_prints_too(capsys):
    hv.ApplyTraversal(hv.examples.model(), set_to_one, echo=True)
    assert capsys.readouterr().out.count("= 1\n") == 4


def test_each_visit_has_the_real_call_stack():
    widget = hv.ApplyTraversal(hv.examples.model())
    stacks = {widget._node_paths[v[0]]: paths_of(widget, v[1]) for v in widget.visits}
    assert stacks["ab.a"] == ["", "ab", "ab.a"]
    assert stacks["cd"] == ["", "cd"]
    assert stacks[""] == [""]


def test_long_output_is_cut_with_a_note():
    def chatty(module):
        print("x" * (MAX_PRINTED + 500))

    widget = hv.ApplyTraversal(nn.Linear(1, 1), chatty)
    printed = widget.visits[0][2]
    assert printed.startswith("x" * MAX_PRINTED)
    assert printed.endswith("(501 more characters)")


def test_repr_is_deterministic_and_says_where_it_is():
    assert (
        repr(hv.ApplyTraversal(hv.examples.model())) == "ApplyTraversal(Model, 7 visits, step 0/7)"
    )
    widget = hv.ApplyTraversal(hv.examples.model(), set_to_one)
    widget.step = 3
    assert repr(widget) == "ApplyTraversal(Model, fn=set_to_one, 7 visits, step 3/7)"
    widget.order = "modules"
    assert (
        repr(widget) == "ApplyTraversal(Model, fn=set_to_one, 7 visits, modules() order, step 3/7)"
    )
    bundle = widget._repr_mimebundle_()[0]
    assert bundle["text/plain"] == repr(widget)


def test_a_failing_fn_raises_and_its_trace_can_still_be_shown():
    def breaks_at_cd(module):
        if isinstance(module, hv.examples.Layer_CD):
            raise ValueError("no")

    model = hv.examples.model()
    with pytest.raises(hv.ApplyFnError) as caught:
        hv.ApplyTraversal(model, breaks_at_cd)
    assert "apply" not in vars(model)  # the trace put every module's apply back
    widget = hv.ApplyTraversal(caught.value.trace)
    assert widget.sequence == ["ab.a", "ab.b", "ab", "cd.c", "cd.d", "cd"]
    assert widget.complete is False
    assert (
        repr(widget)
        == "ApplyTraversal(Model, fn=breaks_at_cd, 6 visits (stopped early: fn raised), step 0/6)"
    )


def test_a_module_apply_reaches_outside_the_named_tree_gets_its_own_node():
    class Hidden(nn.Module):
        def __init__(self):
            super().__init__()
            self.inner = nn.Linear(1, 1)
            self.extra = [nn.ReLU()]  # not registered, but children() below yields it

        def children(self):
            yield from super().children()
            yield from self.extra

    widget = hv.ApplyTraversal(Hidden())
    assert widget.sequence == ["inner", "?", ""]
    assert widget.nodes[-1][:3] == ["?", "ReLU", 0]


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"model": torch.ones(2)}, TypeError, "tensor of shape"),
        ({"model": hv.examples.Model}, TypeError, "Create one first"),
        ({"model": hv.examples.model(), "fn": 3}, TypeError, "fn must be a function"),
        ({"model": hv.examples.model(), "order": "post"}, ValueError, "order must be 'apply'"),
        ({"model": hv.examples.model(), "speed": 0}, ValueError, "more than 0"),
        ({"model": hv.examples.model(), "speed": True}, TypeError, "number of steps per second"),
        (
            {"model": hv.examples.model(), "theme": "blue"},
            traitlets.TraitError,
            "theme must be one of",
        ),
    ],
)
def test_bad_arguments_say_what_to_pass(kwargs, error, message):
    with pytest.raises(error, match=message):
        hv.ApplyTraversal(**kwargs)


def test_a_trace_and_a_fn_together_are_refused():
    trace = hv.trace_apply(hv.examples.model(), echo=False)
    with pytest.raises(TypeError, match="either a model and fn, or an ApplyTrace"):
        hv.ApplyTraversal(trace, set_to_one)


def test_a_thousand_modules_fit_in_a_small_state():
    widget = hv.ApplyTraversal(hv.examples.wide_tree(1000))
    assert widget.total == 1000
    state = json.dumps(widget.get_state(), allow_nan=False)
    assert len(state.encode()) < 300_000


def test_to_html_is_a_self_contained_picture():
    widget = hv.ApplyTraversal(hv.examples.model(), lambda m: None)
    page = widget.to_html()
    assert "<script" not in page and "http" not in page
    assert "Model.apply(&lt;lambda&gt;)" in page
    for label in ("Function_A", "Layer_CD", "ab.a → ab.b → ab → cd.c → cd.d → cd → Model"):
        assert label in page
    assert (
        page.count('class="hvs-node hvs-visited"') == 6 and page.count("hvs-current") == 2
    )  # css + node
    early = widget.to_html(step=2)
    assert early.count('class="hvs-node hvs-visited"') == 1
    assert widget.to_html() == hv.ApplyTraversal(hv.examples.model(), lambda m: None).to_html()
    with pytest.raises(ValueError, match="from 0 to 7"):
        widget.to_html(step=9)


def test_plot_draws_the_tree_with_visit_numbers():
    figure = hv.ApplyTraversal(hv.examples.model()).plot()
    texts = [t.get_text() for t in figure.axes[0].texts]
    for number in range(1, 8):
        assert str(number) in texts
    assert "ab\nLayer_AB" in texts
