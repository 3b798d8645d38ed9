"""Interleaved timing: every configuration runs in turn, block after block, in one process.

Noise on a shared 2-core machine drifts: on the small conv net a step's time varies by about
10%, and correlates with the next step's at 0.7, with the 23rd step after it at 0.2 only.
Interleaving puts every configuration's blocks side by side in each round, and a ratio taken
*within* a round compares blocks that ran close together, on the same machine state: the
shorter the blocks, the more of the drift cancels. Two readings of the rounds: the median of
the per-round ratios (``ratio``, which ignores the rounds a burst hit, and with short blocks
also a cost that comes once in many steps) and the ratio of total times (``total_ratio``, which
counts such a cost in proportion; ``total_ratio_interval`` says how far it can be trusted).
Medians of the block times are printed too, but ratios of those medians mix rounds that ran at
different speeds.
"""

from __future__ import annotations

import gc
import itertools
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

    def total_ratio(self, name: str, baseline: str) -> float:
        """This configuration's time over the baseline's, all rounds together (blocks are of
        equal length): what the whole run took, a cost that comes once in many steps (a
        recorder's flush) counted in proportion, where a median of short blocks would skip it."""
        return sum(self.blocks[name]) / sum(self.blocks[baseline])

    def total_ratio_interval(
        self, name: str, baseline: str, *, level: float = 0.95, resamples: int = 2000
    ) -> tuple[float, float]:
        """A percentile bootstrap interval of ``total_ratio``. Rounds are drawn in runs of
        consecutive rounds (a moving-block bootstrap, runs of about n^(1/3)), because noise drifts
        over seconds and neighbouring rounds share some of it. Seeded: one run, one answer."""
        a, b = self.blocks[name], self.blocks[baseline]
        n = len(a)
        if n < 20:
            raise ValueError(f"{n} rounds are too few for a bootstrap interval; run 20 or more.")
        run = max(1, round(n ** (1 / 3)))
        sum_a = list(itertools.accumulate(a, initial=0))  # sum of a run: two lookups
        sum_b = list(itertools.accumulate(b, initial=0))
        draws, starts = math.ceil(n / run), n - run + 1
        shuffler = random.Random(0)
        estimates = []
        for _ in range(resamples):
            total_a = total_b = 0.0
            for _ in range(draws):
                i = shuffler.randrange(starts)
                total_a += sum_a[i + run] - sum_a[i]
                total_b += sum_b[i + run] - sum_b[i]
            estimates.append(total_a / total_b)
        estimates.sort()
        tail = round(resamples * (1 - level) / 2)
        return estimates[tail], estimates[resamples - 1 - tail]


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
    # What exists now lives through the run: frozen, a collection between blocks scans only what
    # the blocks made (with torch loaded, a full one takes ~150 ms; short blocks need many).
    gc.collect()
    gc.freeze()
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
        gc.unfreeze()
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


def verdict(ratio: float, low: float, high: float, limit: float) -> str:
    """ok or OVER when the ratio's 95% interval lies on one side of the limit; else what the
    ratio says, and that these rounds do not decide it."""
    if high <= limit:
        return "ok"
    if low > limit:
        return "OVER"
    return f"{'ok' if ratio <= limit else 'over'} by the ratio, not decided at 95%"


def report_totals(
    title: str, timings: Timings, baseline: str, limits: dict[str, float] | None = None
) -> list[str]:
    """Print one line per config: mean time per step, its total time over the baseline's and
    that ratio's 95% interval, with the verdict where there is a limit (for short blocks)."""
    lines = [f"## {title}"]
    for name in timings.blocks:
        ratio = timings.total_ratio(name, baseline)
        mean = statistics.fmean(timings.blocks[name])
        line = f"{name:<44} {mean * 1e3:9.3f} ms/step  {ratio:6.3f}x"
        if name != baseline:
            low, high = timings.total_ratio_interval(name, baseline)
            line += f"  ({low:.3f}-{high:.3f})"
            if limits and name in limits:
                line += f"  limit {limits[name]:.2f}x: {verdict(ratio, low, high, limits[name])}"
        lines.append(line)
    print("\n".join(lines), flush=True)
    return lines
