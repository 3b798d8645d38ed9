"""HookMonitor's own ES module in Chromium, over a monitor's state: what a reader sees of an
estimate. With exact=False a large gradient's norm comes from a sample, and the page must say so
wherever a figure or a flag rests on it."""

from __future__ import annotations

import json
import re

import torch
from torch import nn

import hookviz as hv
from hookviz.widgets.base import front_end

# A stand-in for anywidget's model over a fixed state: enough for render() to draw.
PAGE = """<!doctype html><html><body><div id="root"></div><script type="module">
const state = JSON.parse(document.getElementById("state").textContent);
const model = {
  get: (key) => state[key],
  set: (key, value) => { state[key] = value; },
  on: () => {}, off: () => {}, save_changes: () => {}, send: () => {},
};
const url = URL.createObjectURL(new Blob([document.getElementById("esm").textContent], {type: "text/javascript"}));
const widget = await import(url);
const render = widget.render || (widget.default && widget.default.render);
await render({ model, el: document.getElementById("root") });
window.drawn = true;
</script>
<script id="state" type="application/json">{state}</script>
<script id="esm" type="text/plain">{esm}</script>
<style>{css}</style></body></html>"""


def lm_head_monitor(exact: bool) -> hv.HookMonitor:
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(16, 16), nn.Tanh(), nn.Linear(16, 4000))
    x, target = torch.randn(8, 16), torch.randint(0, 4000, (8,))
    monitor = hv.HookMonitor(model, exact=exact, vanishing_below=0.05)
    with monitor:
        nn.functional.cross_entropy(model(x), target).backward()
    return monitor


def drawn_row(chromium, tmp_path, monitor: hv.HookMonitor) -> str:
    """The text of the monitor's table row for the head ('2'), drawn by its ES module."""
    esm, css = front_end("hook_monitor")
    state = json.dumps(monitor.offline_state(), allow_nan=False).replace("</", "<\\/")
    parts = {"state": state, "esm": esm.replace("</", "<\\/"), "css": css}
    html = re.sub(r"\{(state|esm|css)\}", lambda m: parts[m.group(1)], PAGE)
    page_file = tmp_path / "monitor.html"
    page_file.write_text(html, encoding="utf-8")
    page = chromium.new_page()
    try:
        errors = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.goto(page_file.as_uri())
        page.wait_for_function("window.drawn === true", timeout=10_000)
        assert errors == []
        return page.locator("tr[data-path='2']").inner_text()
    finally:
        page.close()


def test_an_estimated_gradient_norm_and_its_flag_say_so_on_the_page(chromium, tmp_path):
    monitor = lm_head_monitor(exact=False)
    assert monitor.gradient_flags()["2"] == "vanishing"  # from the sample's norm: a false alarm
    row = drawn_row(chromium, tmp_path, monitor)
    norm = hv.widgets.base.number(monitor.summary("2").grad.latest.norm)
    assert f"≈{norm}" in row
    assert "vanishing (norm estimated)" in row


def test_an_exact_gradient_norm_has_no_mark_and_no_false_alarm(chromium, tmp_path):
    monitor = lm_head_monitor(exact=True)
    row = drawn_row(chromium, tmp_path, monitor)
    assert "≈" not in row and "vanishing" not in row
    assert str(hv.widgets.base.number(monitor.summary("2").grad.latest.norm)) in row
