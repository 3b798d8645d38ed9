"""CompiledTimeline: the report's two runs as the browser plays them, its words, its picture."""

from __future__ import annotations

import json
import re

import pytest
import torch
import traitlets
from torch import nn

import hookviz as hv
from hookviz.compiled import STATUSES
from hookviz.widgets.compiled_timeline import EVENTS


class TwoLayers(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(4, 4)
        self.b = nn.Linear(4, 2)

    def forward(self, x):
        return self.b(torch.relu(self.a(x)))


def backward_hook_and_late_hook() -> tuple[nn.Module, dict]:
    """A full backward hook (a graph break) and a forward hook added after the first step."""
    model = TwoLayers()
    model.a.register_full_backward_hook(lambda module, grad_input, grad_output: None)

    def late(copy, step):
        if step == 1:
            copy.b.register_forward_hook(lambda module, inputs, output: output * 2)

    return model, {"before_step": late}


@pytest.fixture(scope="module")
def report():
    model, kwargs = backward_hook_and_late_hook()
    return hv.compare_compiled(model, torch.randn(3, 4), **kwargs)


def test_the_state_is_the_reports_moments_hooks_and_events(report):
    widget = hv.CompiledTimeline(report)
    state = widget.get_state()
    json.dumps(state, allow_nan=False)
    assert widget.total == len(report.moments) == len(state["moments"])
    assert [lane[0] for lane in widget.lanes] == [h.label for h in report.hooks]
    assert [lane[3] for lane in widget.lanes] == [h.status for h in report.hooks]
    assert widget.statuses == list(STATUSES)
    kinds = [e[0] for e in widget.events]
    assert kinds.count("graph_break") == len(report.graph_breaks) == 1
    assert set(kinds) <= set(EVENTS)
    for row, m in zip(widget.moments, report.moments, strict=True):
        step, lane, eager, compiled, event = row
        assert (step, eager, compiled or None) == (m.step, int(m.eager), m.compiled)
        assert lane == (-1 if m.hook is None else m.hook)
        assert (event >= 0) == (m.event is not None)
        if event >= 0:
            assert widget.events[event][0] == m.event and widget.events[event][1] == m.step


def test_each_hooks_causes_are_grouped_by_kind_its_own_first(report):
    widget = hv.CompiledTimeline(report)
    late = [h.label for h in report.hooks].index("b")
    assert [c[0] for c in widget.causes[late]] == ["empty_hook_dict"]
    backward = [h.label for h in report.hooks].index("a")
    kinds = [(c[0], c[3]) for c in widget.causes[backward]]
    assert kinds[0] == ("graph_break", 1) and ("autograd", 1) in kinds
    assert all(c[4] >= 1 for causes in widget.causes for c in causes)


def test_it_compares_a_model_itself_with_compare_compileds_arguments():
    model, kwargs = backward_hook_and_late_hook()
    widget = hv.CompiledTimeline(model, torch.randn(3, 4), steps=2, **kwargs)
    assert widget.report.steps == widget.steps == 2
    assert hv.list_hooks(model, include_globals=False)[0].path == "a"  # its own hook, still there
    assert len(hv.list_hooks(model, include_globals=False)) == 1


def test_the_repr_is_stable_and_says_what_the_report_says(report):
    widget = hv.CompiledTimeline(report)
    assert repr(widget) == (
        f"CompiledTimeline(TwoLayers, eager, 2 hooks, 1 missed, 1 break, 0 recompiles, "
        f"moment 0/{widget.total})"
    )
    assert len(repr(widget)) <= 110  # ipywidgets 7 (Colab) cuts a longer text/plain
    widget.step = 2
    assert repr(widget).endswith(f"moment 2/{widget.total})")
    again = hv.CompiledTimeline(hv.compare_compiled(*_args()))
    assert repr(again) == repr(hv.CompiledTimeline(hv.compare_compiled(*_args())))


def _args():
    model = TwoLayers()
    model.a.register_forward_hook(lambda module, inputs, output: None)
    return model, torch.ones(2, 4)


def test_the_step_is_checked(report):
    widget = hv.CompiledTimeline(report)
    with pytest.raises(traitlets.TraitError, match=f"between 0 .* and {widget.total}"):
        widget.step = widget.total + 1


@pytest.mark.parametrize(
    ("args", "kwargs", "message"),
    [
        (("a report",), {}, "CompiledReport .* or compares a model"),
        ((None,), {}, "got NoneType"),
    ],
)
def test_what_it_shows_is_checked(args, kwargs, message):
    with pytest.raises(TypeError, match=message):
        hv.CompiledTimeline(*args, **kwargs)


def test_a_report_is_shown_alone(report):
    with pytest.raises(TypeError, match="pass it alone"):
        hv.CompiledTimeline(report, torch.ones(1))


def test_the_static_picture_lists_every_hook_and_what_torch_reported(report):
    page = hv.CompiledTimeline(report).to_html()
    assert page.startswith('<div class="hvs hvs-compiled">') and "<script" not in page
    assert "missed" in page and "outside the graphs" in page
    assert "Module-level backwards hooks require compiled autograd." in page
    assert page.count("<tr>") == len(report.hooks) + 1
    assert "0,1,2" in page and "1,2" in page  # the steps each run fired in


def test_a_korean_timeline_speaks_korean_and_keeps_torchs_words(report):
    widget = hv.CompiledTimeline(report, lang="ko")
    assert widget.title.startswith("TwoLayers: 즉시 실행과 torch.compile")
    page = widget.to_html()
    assert "놓침" in page and "그래프 중단" in page
    assert "Module-level backwards hooks" in page  # torch's own reason is not translated
    assert not re.search("[가-힣]", hv.CompiledTimeline(report, lang="en").to_html())
