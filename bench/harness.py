"""Interleaved timing: every configuration runs in turn, block after block, in one process.

Noise on a shared 2-core machine comes in bursts and drifts: the same step can run 5% slower
for a few seconds, then faster again. Interleaving puts every configuration's blocks side by
side in each round; a ratio is taken *within* a round (blocks run seconds apart, on the same
machine state) and the median over rounds ignores the rounds a burst hit. The medians of the
block times are printed too, but ratios of those medians mix rounds that ran at different
speeds, so they are not what we report.
"""

from __future__ import annotations

import gc
import math
import random
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


@dataclass
class Timings:
    """Seconds per step of each configuration's block, one entry per round."""

    blocks: dict[str, list[float]]

    def median(self, name: str) -> float:
        return statistics.median(self.blocks[name])

    def ratios(self, name: str, baseline: str) -> list[float]:
        """Per round: this block / the baseline's block in the same round."""
        return [a / b for a, b in zip(self.blocks[name], self.blocks[baseline], strict=True)]

    def ratio(self, name: str, baseline: str) -> float:
        """Median over rounds of (this block / the baseline's block in the same round)."""
        return statistics.median(self.ratios(name, baseline))

    def spread(self, name: str, baseline: str) -> tuple[float, float]:
        """The middle half of the per-round ratios (first and third quartile): how far a
        single round can be trusted (how far the median can be: ``median_interval``)."""
        q1, _, q3 = statistics.quantiles(self.ratios(name, baseline), n=4)
        return q1, q3

    def median_interval(self, name: str, baseline: str) -> tuple[float, float]:
        """A confidence interval of at least 95% for the median per-round ratio, from the rounds'
        order statistics alone (each round lies below the true median with probability 1/2):
        where the median may be for all these rounds tell, so a limit inside it is not decided."""
        ratios = sorted(self.ratios(name, baseline))
        k = median_rank(len(ratios))
        return ratios[k - 1], ratios[len(ratios) - k]


def median_rank(n: int, level: float = 0.95) -> int:
    """The largest k with P(at most k - 1 of n rounds below the median) <= (1 - level) / 2: the
    k-th smallest and k-th largest of n rounds then bracket the median with at least ``level``."""
    below, k = 0.0, 0
    while below + math.comb(n, k) / 2**n <= (1 - level) / 2:
        below += math.comb(n, k) / 2**n
        k += 1
    if k == 0:
        raise ValueError(f"{n} rounds are too few for a {level:.0%} interval of the median.")
    return k


def interleaved(
    configs: list[Config], *, rounds: int = 30, block: int = 10, warmup: int = 3
) -> Timings:
    """Time every config block by block, in turn; enter/exit are timed with the block they serve."""
    for config in configs:
        for _ in range(warmup):
            config.enter()
            config.step()
            config.exit()
    per_block: dict[str, list[float]] = {c.name: [] for c in configs}
    shuffler = random.Random(0)
    was_enabled = gc.isenabled()
    try:
        for _ in range(rounds):
            # As timeit does: no garbage collection inside a timed block, where one
            # configuration's garbage would make another one pay for the collection.
            gc.collect()
            gc.disable()
            # A fresh order each round: no configuration always follows the same one, and noise
            # that comes back with a period (another VM's timer) cannot keep hitting one of them.
            order = shuffler.sample(configs, len(configs))
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
    return Timings(per_block)


def report(
    title: str, timings: Timings, baseline: str, limits: dict[str, float] | None = None
) -> list[str]:
    """Print one line per config: median time per step and its ratio to the baseline (paired by
    round), with the limit where there is one."""
    lines = [f"## {title}"]
    for name in timings.blocks:
        ratio = timings.ratio(name, baseline)
        line = f"{name:<44} {timings.median(name) * 1e3:9.3f} ms/step  {ratio:6.3f}x"
        if limits and name in limits:
            line += f"  (limit {limits[name]:.2f}x: {'ok' if ratio <= limits[name] else 'OVER'})"
        lines.append(line)
    print("\n".join(lines), flush=True)
    return lines
