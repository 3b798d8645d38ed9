"""Interleaved timing: every configuration runs in turn, block after block, in one process.

Noise on a shared 2-core machine comes in bursts; interleaving spreads each burst over all
configurations, and the median over blocks ignores the worst of it. Ratios are what we report.
"""

from __future__ import annotations

import gc
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass


@dataclass
class Config:
    """One way of running the workload: ``enter()`` before a block, ``step()`` per step, ``exit()`` after."""

    name: str
    step: Callable[[], object]
    enter: Callable[[], object] = lambda: None
    exit: Callable[[], object] = lambda: None


def interleaved(configs: list[Config], *, rounds: int = 30, block: int = 10, warmup: int = 3) -> dict[str, float]:
    """Median seconds per step of each config; enter/exit are timed with the block they serve."""
    for config in configs:
        for _ in range(warmup):
            config.enter()
            config.step()
            config.exit()
    per_block: dict[str, list[float]] = {c.name: [] for c in configs}
    was_enabled = gc.isenabled()
    try:
        for r in range(rounds):
            # As timeit does: no garbage collection inside a timed block, where one
            # configuration's garbage would make another one pay for the collection.
            gc.collect()
            gc.disable()
            order = configs if r % 2 == 0 else list(reversed(configs))
            for config in order:
                start = time.perf_counter()
                config.enter()
                for _ in range(block):
                    config.step()
                config.exit()
                per_block[config.name].append((time.perf_counter() - start) / block)
            gc.enable()
    finally:
        if was_enabled:
            gc.enable()
    return {name: statistics.median(times) for name, times in per_block.items()}


def report(title: str, medians: dict[str, float], baseline: str, limits: dict[str, float] | None = None) -> list[str]:
    """Print one line per config: median time and ratio to the baseline (and its limit)."""
    base = medians[baseline]
    lines = [f"## {title}"]
    for name, seconds in medians.items():
        ratio = seconds / base
        line = f"{name:<44} {seconds * 1e3:9.3f} ms/step  {ratio:6.3f}x"
        if limits and name in limits:
            line += f"  (limit {limits[name]:.2f}x: {'ok' if ratio <= limits[name] else 'OVER'})"
        lines.append(line)
    print("\n".join(lines), flush=True)
    return lines
