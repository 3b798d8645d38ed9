"""CompiledTimeline on a page of the site, with no kernel: its saved state, the modules the site
ships (`hookviz.site.build`'s own list), the site's host, and every request outside the page's
folder aborted and counted. It plays by keyboard to the end, says each moment, shows torch's
reasons, and axe-core finds nothing serious in it, light or dark."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import torch
from torch import nn

import hookviz as hv
import hookviz.site
from hookviz.site.build import _widget_modules
from hookviz.site.widget_state import WidgetState
from tests.site.browsing import SiteTab, axe_violations, new_guarded_context

pytestmark = pytest.mark.browser


class TwoLayers(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(4, 4)
        self.b = nn.Linear(4, 2)

    def forward(self, x):
        return self.b(torch.relu(self.a(x)))


def a_report() -> hv.CompiledReport:
    """A break (a full backward hook), a hook missed (added late), one in the graph."""
    model = TwoLayers()
    model.a.register_full_backward_hook(lambda module, grad_input, grad_output: None)
    model.b.register_forward_pre_hook(lambda module, inputs: None)

    def late(copy, step):
        if step == 1:
            copy.b.register_forward_hook(lambda module, inputs, output: None)

    return hv.compare_compiled(model, torch.randn(3, 4), before_step=late)


@pytest.fixture(scope="module")
def widgets():
    report = a_report()
    return {
        "english": hv.CompiledTimeline(report),
        "korean": hv.CompiledTimeline(report, lang="ko"),
        "empty": hv.CompiledTimeline(TwoLayers(), torch.ones(1, 4)),  # no hook: nothing to play
    }


@pytest.fixture(scope="module")
def page_folder(tmp_path_factory, widgets):
    folder = tmp_path_factory.mktemp("compiled-timeline")
    (folder / "hookviz-widgets.js").write_text(_widget_modules(), "utf-8")
    shutil.copy(Path(hookviz.site.__file__).parent / "static" / "host.js", folder / "host.js")
    body = "".join(
        f'<div class="hv-site-widget" id="{key}" data-widget="{w._front_end}">'
        f'<script type="application/json">'
        f"{WidgetState(w._front_end, w.offline_state(), w.offline_extras(), '').as_json()}"
        "</script></div>"
        for key, w in widgets.items()
    )
    (folder / "index.html").write_text(
        '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>compiled</title>'
        '<script src="hookviz-widgets.js"></script><script defer src="host.js"></script>'
        f"</head><body><main>{body}</main></body></html>",
        "utf-8",
    )
    return folder


@pytest.fixture(params=["light", "dark"])
def tab(request, chromium, page_folder):
    context, guard = new_guarded_context(
        chromium, page_folder.as_uri() + "/", color_scheme=request.param
    )
    try:
        tab = SiteTab(context.new_page(), guard)
        assert tab.open("index.html") == {"mounted": 3, "failed": 0}
        yield tab
    finally:
        context.close()
    guard.assert_clean("the compiled timeline's page")


def root(tab, key: str = "english"):
    return tab.page.locator(f"#{key} .hv-root")


def test_it_mounts_from_its_state_with_nothing_fetched(tab, widgets):
    widget = root(tab)
    assert widget.locator(".hv-side").count() == 2
    total = widgets["english"].total
    assert widget.locator(".hv-status").text_content() == f"moment 0 / {total}"
    hooks = widgets["english"].report.hooks
    assert widget.locator("tbody tr").count() == len(hooks)
    compiled_side = widget.locator(".hv-side-compiled")
    assert compiled_side.locator(".hv-ev-graph_break").count() == 1
    assert compiled_side.locator(".hv-missing").count() == sum(len(h.missed) for h in hooks)
    assert compiled_side.locator(".hv-mark.hv-hollow").count() == sum(
        len(set(h.compiled) - set(h.in_graph)) for h in hooks
    )


def test_the_keys_step_through_every_moment_to_the_end(tab, widgets):
    widget, timeline = root(tab), widgets["english"]
    widget.focus()
    seen = []
    for _ in range(timeline.total):
        tab.press("ArrowRight")
        seen.append(widget.get_attribute("data-current"))
    assert widget.get_attribute("data-step") == str(timeline.total)
    expected = []
    for _, lane, eager, compiled, event in timeline.moments:
        if event >= 0:
            expected.append(timeline.events[event][0])
        else:
            label, kind = timeline.lanes[lane][:2]
            expected.append(f"{label} {kind} {'eager' if eager else '-'} {compiled or '-'}")
    assert seen == expected
    tab.press("Home")
    assert widget.get_attribute("data-step") == "0"
    tab.press("End")
    assert widget.get_attribute("data-step") == str(timeline.total)
    tab.press("Home", "+", "+", "+", "+", " ")  # play at 64 moments a second
    tab.page.wait_for_function(
        "(n) => document.querySelector('#english .hv-root').dataset.step === String(n)",
        arg=timeline.total,
        timeout=10_000,
    )


def test_a_missed_hook_shows_torchs_reason_and_a_break_its_words(tab, widgets):
    widget, timeline = root(tab), widgets["english"]
    missed = next(
        k
        for k, (_, lane, eager, compiled, event) in enumerate(timeline.moments)
        if eager and not compiled
    )
    widget.focus()
    tab.press("Home", *["ArrowRight"] * (missed + 1))
    explanation = widget.locator(".hv-explain").text_content()
    assert "compiled: did not fire" in explanation
    assert "added after compiling to an empty hook dict" in explanation
    assert widget.locator("tr.hv-now td").first.text_content() == "b"
    tab.press("Home", "ArrowRight")  # the first moment: torch's graph break
    assert widget.get_attribute("data-current") == "graph_break"
    assert (
        "Module-level backwards hooks require compiled autograd."
        in widget.locator(".hv-explain pre").text_content()
    )
    said = widget.locator("[aria-live='polite']")
    tab.page.wait_for_function(
        "(el) => el.textContent.startsWith('moment 1 of')", arg=said.element_handle()
    )
    assert "graph break in step 0" in said.text_content()


def test_a_comparison_with_no_hooks_has_nothing_to_play_and_says_so(tab):
    widget = root(tab, "empty")
    assert widget.locator(".hv-status").text_content() == "moment 0 / 0"
    widget.focus()
    tab.press("ArrowRight", "End", " ")
    assert widget.get_attribute("data-step") == "0"
    assert widget.locator("tbody tr").count() == 0


def test_the_korean_one_speaks_korean(tab):
    widget = root(tab, "korean")
    assert widget.get_attribute("lang") == "ko"
    assert widget.locator(".hv-side-title").first.text_content() == "즉시 실행"
    assert "놓침" in widget.locator("tbody").text_content()


def test_axe_finds_nothing_serious_and_the_theme_follows_the_page(tab):
    dark = tab.page.evaluate("() => matchMedia('(prefers-color-scheme: dark)').matches")
    assert ("hv-dark" in root(tab).get_attribute("class")) == dark
    widget = root(tab)
    widget.focus()
    tab.press("ArrowRight", "ArrowRight")
    assert axe_violations(tab.page, ".hv-root") == []
