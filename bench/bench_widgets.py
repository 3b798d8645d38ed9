"""The widgets' figures in one run: ApplyTraversal on 1,000 modules (build time, state size, and,
in a real JupyterLab, kernel messages while it plays) and HookMonitor on a 1,000-step conv-net
training loop (interleaved ratio to the bare loop, the heat map's own cost as the ratio of the
monitor with it to the monitor without it, and memory over steps 2,000 to 12,000 of a long loop).

Run: .venv/bin/python bench/bench_widgets.py [--threads N] [--no-browser] [--smoke]
(about 6 minutes on a quiet 2-core machine; --smoke, every part at tiny sizes, in under a minute)

On a machine shared with other work, torch's 2 OpenMP threads wait for each other in every
parallel op, and every op the monitor adds pays that wait too: the load average is printed
first, and --threads 1 shows the work itself.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

import torch
from torch import nn

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT.parent))  # tests.processes, which jupyter_ui imports
sys.path.insert(0, str(ROOT.parent / "tests" / "browser"))
from harness import Config, interleaved, report  # noqa: E402

import hookviz as hv  # noqa: E402


def training_step(model: nn.Module, x: torch.Tensor, y: torch.Tensor):
    """zero_grad, forward, loss, backward, SGD step."""
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)

    def step():
        optimizer.zero_grad(set_to_none=True)
        nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()

    return step


def apply_traversal_figures(modules: int = 1000, rounds: int = 7) -> list[str]:
    model = hv.examples.wide_tree(modules)
    built = []

    def build():
        started = time.perf_counter()
        widget = hv.ApplyTraversal(model)
        built.append(time.perf_counter() - started)
        widget.close()
        return widget

    configs = [
        Config("trace_apply alone", lambda: hv.trace_apply(model, echo=False)),
        Config("ApplyTraversal (trace + tree + widget)", build),
    ]
    timings = interleaved(configs, rounds=rounds, block=3, warmup=1)
    lines = report(f"ApplyTraversal on wide_tree({modules}): build", timings, "trace_apply alone")
    widget = hv.ApplyTraversal(model)
    state = len(json.dumps(widget.get_state(), allow_nan=False).encode())
    esm = len(widget._esm.encode()) + len(widget._css.encode())
    seconds = statistics.median(built)
    lines += [
        f"build: median {seconds:.3f} s (limit 0.5 s: {'ok' if seconds <= 0.5 else 'OVER'})",
        f"initial widget state: {state / 1000:.1f} KB, of which front-end code {esm / 1000:.1f} KB "
        f"(limit 300 KB: {'ok' if state <= 300_000 else 'OVER'})",
    ]
    print("\n".join(lines[-2:]), flush=True)
    widget.close()
    return lines


def monitor_overhead(steps: int = 1000, batch: int = 32, block: int = 50) -> list[str]:
    model = hv.examples.small_convnet()
    x, y = torch.randn(batch, 3, 32, 32), torch.randint(0, 10, (batch,))
    step = training_step(model, x, y)
    monitor = hv.HookMonitor(model)
    without_heat = hv.HookMonitor(model, heatmap=False)
    configs = [
        Config("bare loop", step),
        Config("HookMonitor (13 modules, outputs + gradients)", step, monitor.start, monitor.stop),
        Config("HookMonitor(heatmap=False)", step, without_heat.start, without_heat.stop),
        Config("bare loop, again (the noise floor)", step),
    ]
    # The monitor starts and stops with each block (about 5 ms together: a new recording, a first
    # and a last snapshot), which a real loop pays once. Blocks of 50 charge it 20 times over
    # the 1,000 steps, still pessimistic, and leave 20 rounds to spread bursts of other work.
    timings = interleaved(configs, rounds=steps // block, block=block, warmup=1)
    lines = report(
        f"HookMonitor on small_convnet, batch {batch}: {steps} steps per config, in blocks of {block}",
        timings,
        "bare loop",
        {configs[1].name: 1.15},
    )
    heat_ratio = timings.ratio(configs[1].name, configs[2].name)
    floor = timings.ratio(configs[3].name, configs[0].name)
    heat_line = (
        f"the heat map's own cost: HookMonitor / HookMonitor(heatmap=False) = {heat_ratio:.3f}x "
        f"(the noise floor, bare / bare: {floor:.3f}x)"
    )
    started = time.perf_counter()
    for _ in range(20):
        message = json.dumps(monitor._heatmap.as_json(monitor.steps))
    build = (time.perf_counter() - started) / 20
    heat_line += "\n" + heat_map_time(model, step, steps=min(300, steps))
    line = (
        f"monitor saw {monitor.steps} steps; snapshot {len(json.dumps(monitor.snapshot).encode()) / 1000:.1f} KB "
        f"per update; heat map {len(message) / 1000:.1f} KB per update, built and encoded in {build * 1e3:.2f} ms "
        f"({build * 4 * 100:.2f}% of a second at 4 updates a second)"
    )
    print(heat_line, line, sep="\n", flush=True)
    monitor.close()
    without_heat.close()
    return [*lines, heat_line, line]


def heat_map_time(model: nn.Module, step, steps: int) -> str:
    """The heat map's own code timed from inside (folding histograms in, building its messages)
    over a monitored loop: a direct account, steadier than a ratio of two noisy loops."""
    monitor = hv.HookMonitor(model)
    spent = [0.0, 0.0]

    def timed(function, slot):
        def run(*args):
            started = time.perf_counter()
            try:
                return function(*args)
            finally:
                spent[slot] += time.perf_counter() - started

        return run

    heat = monitor._heatmap
    heat.take = timed(heat.take, 0)  # before start(), which registers it
    heat.as_json = timed(heat.as_json, 1)
    started = time.perf_counter()
    with monitor:
        for _ in range(steps):
            step()
    loop = time.perf_counter() - started
    monitor.close()
    return (
        f"inside the heat map's code over a {steps}-step monitored loop ({loop:.2f} s): "
        f"{spent[0] * 1e3:.1f} ms folding histograms in, {spent[1] * 1e3:.1f} ms building its messages: "
        f"{sum(spent) / loop * 100:.2f}% of the loop"
    )


def resident_bytes() -> int:
    """This process's resident memory now (Linux), torch's tensors included."""
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * resource.getpagesize()


def monitor_memory(
    heatmap: bool = True,
    steps: int = 12_000,
    batch: int = 2,
    width: int = 8,
    every: int = 1000,
    settled: int = 2000,
) -> list[str]:
    """Python memory held (tracemalloc) and resident memory (RSS, which also sees torch's
    tensors, where the heat map keeps its counts) every `every` monitored steps of a long loop,
    from step `settled` on: the first 1,000 steps fill record()'s 512-event buffer."""
    model = hv.examples.small_convnet(width=width)
    x, y = torch.randn(batch, 3, 32, 32), torch.randint(0, 10, (batch,))
    step = training_step(model, x, y)
    held, resident = [], []
    tracemalloc.start()
    with hv.HookMonitor(model, heatmap=heatmap) as monitor:
        for done in range(1, steps + 1):
            step()
            if done % every == 0 and done >= settled:
                monitor._recording.flush()
                monitor._push(
                    final=True
                )  # the heat map's message is built too, as a live view would
                held.append(tracemalloc.get_traced_memory()[0])
                resident.append(resident_bytes())
    tracemalloc.stop()
    name = "HookMonitor" if heatmap else "HookMonitor(heatmap=False)"
    line = (
        f"## {name} memory from step {settled:,} to {steps:,} (width-{width} conv net, batch {batch})\n"
        f"Python objects held every {every:,} steps: "
        + ", ".join(f"{b / 1e6:.2f}" for b in held)
        + f" MB (range {(max(held) - min(held)) / 1e6:.2f} MB); resident memory "
        + f"{min(resident) / 1e6:.1f}-{max(resident) / 1e6:.1f} MB, grew {(resident[-1] - resident[0]) / 1e6:.2f} MB"
    )
    print(line, flush=True)
    return [line]


BENCH_NOTEBOOK = {
    "cells": [
        {
            "cell_type": "code",
            "metadata": {},
            "outputs": [],
            "execution_count": None,
            "source": "import hookviz as hv\nbig = hv.ApplyTraversal(hv.examples.wide_tree(1000), speed=64)\nbig",
        },
    ],
    "metadata": {
        "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}
    },
    "nbformat": 4,
    "nbformat_minor": 5,
}


def playing_in_the_browser(seconds: float = 4.0) -> list[str]:
    """Play the 1,000-module traversal at 64 steps/s in JupyterLab; count the page's kernel messages."""
    from jupyter_ui import JupyterServer, NotebookPage, launch_chromium
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as home:
        server = JupyterServer(Path(home)).start()
        (server.root / "bench.ipynb").write_text(json.dumps(BENCH_NOTEBOOK))
        try:
            with sync_playwright() as playwright:
                browser = launch_chromium(playwright)
                page = browser.new_page(viewport={"width": 1280, "height": 1000})
                sent: list[bytes] = []
                page.on(
                    "websocket",
                    lambda ws: ws.on(
                        "framesent",
                        lambda p: sent.append(p if isinstance(p, bytes) else p.encode()),
                    ),
                )
                notebook = NotebookPage(page, server, "bench.ipynb")
                notebook.open()
                notebook.run_all()
                widget = page.locator(".hv-apply")
                widget.click(position={"x": 4, "y": 4})

                def comms() -> int:
                    return sum(1 for frame in sent if b'"msg_type":"comm_msg"' in frame)

                before = comms()
                page.keyboard.press("Space")
                started = time.perf_counter()
                time.sleep(seconds)
                step = int(widget.evaluate("(el) => el.dataset.step"))
                elapsed = time.perf_counter() - started
                during = comms() - before
                page.keyboard.press("Space")
                page.wait_for_timeout(500)
                after_pause = comms() - before - during
                synced = notebook.execute("print(big.step)").strip()
                browser.close()
        finally:
            server.stop()
    line = (
        f"## ApplyTraversal playing in JupyterLab (1,000 modules, 64 steps/s asked)\n"
        f"{step} steps in {elapsed:.1f} s ({step / elapsed:.0f} steps/s drawn); kernel messages while playing: "
        f"{during} ({'ok' if during == 0 else 'OVER'}); on pause: {after_pause}; Python's step after pause: "
        f"{synced} (page: {step}+)"
    )
    print(line, flush=True)
    return [line]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--no-browser", action="store_true", help="skip the JupyterLab + Chromium part"
    )
    parser.add_argument("--threads", type=int, default=2, help="torch threads (default 2)")
    parser.add_argument(
        "--smoke", action="store_true", help="every part, tiny sizes: checks the bench runs"
    )
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    load = ", ".join(f"{v:.1f}" for v in os.getloadavg())
    print(
        f"torch {torch.__version__}, {torch.get_num_threads()} threads, load average {load}\n",
        flush=True,
    )
    if args.smoke:
        memory = {"steps": 30, "every": 10, "settled": 10}
        parts = [
            lambda: apply_traversal_figures(modules=50, rounds=1),
            lambda: monitor_overhead(steps=20, batch=4, block=10),
            lambda: monitor_memory(**memory),
            lambda: monitor_memory(heatmap=False, **memory),
        ]
    else:
        parts = [
            apply_traversal_figures,
            monitor_overhead,
            monitor_memory,
            lambda: monitor_memory(heatmap=False),
        ]
    if not args.no_browser:
        parts.append(lambda: playing_in_the_browser(0.5 if args.smoke else 4.0))
    for part in parts:
        part()
        print(flush=True)


if __name__ == "__main__":
    main()
