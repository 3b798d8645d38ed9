"""HookMonitor's heat map: each watched module's histogram over time, kept and sent.

It folds the histograms record() already computed into one fixed-size ``RollingHistograms``
(made at the monitor's first start, kept across starts), a stream per (signal, module): the
outputs' streams first, then the gradients'. The browser gets it as one character per cell:
level round(LEVEL_SCALE * log(1 + count)), 0 for an empty cell, so a level says its count
within about 15%.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from ..histogram_history import SIGNAL_PHASES, HistogramHistory, RollingHistograms
from ..recording import Recording
from ..store import PHASES, HistogramBatch
from .base import number

LEVEL_ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
LEVEL_SCALE = 7.0
_TO_CHARS = bytes.maketrans(bytes(range(len(LEVEL_ALPHABET))), LEVEL_ALPHABET.encode())
# A big model's heat map is sent less often, so that it streams at most this fast.
HEATMAP_BYTES_PER_SECOND = 200_000


class MonitorHeatmap:
    """The heat map of ``paths`` (the watched modules, in order) for ``signals``, in columns
    ``every`` recorded steps wide at first."""

    def __init__(self, signals: tuple[str, ...], paths: list[str], every: int):
        self.signals, self.paths, self.every = signals, paths, every
        self.heat: RollingHistograms | None = None  # made at the first start(); then kept
        self._stream_of: torch.Tensor | None = None  # (phase id, path id) -> stream; -1: none
        self._steps_before = 0  # steps of earlier recordings: this one's step 0 comes after
        self._sent = -1  # the heat map's version the browser has
        self._next = 0.0  # when the heat map may be sent again

    def streams(self, signal: str) -> range:
        """The streams of ``signal``, the i-th watched module's at index i."""
        n = len(self.paths)
        first = self.signals.index(signal) * n
        return range(first, first + n)

    def follow(self, recording: Recording, steps_before: int) -> None:
        """Take ``recording``'s histograms from now on; its step 0 is the monitor's ``steps_before``."""
        if self.heat is None:
            # Columns start one recorded step wide: every=N leaves no empty column between.
            self.heat = RollingHistograms(self.streams(self.signals[-1]).stop, span=self.every)
        streams = torch.full((len(PHASES), len(recording.targets)), -1, dtype=torch.int64)
        position = {path: i for i, path in enumerate(self.paths)}
        for signal in self.signals:
            signal_streams = self.streams(signal)
            for path_id, (path, _) in enumerate(recording.targets):
                if path in position:
                    streams[SIGNAL_PHASES[signal], path_id] = signal_streams[position[path]]
        self._stream_of, self._steps_before = streams, steps_before
        recording.on_histograms(self.take)

    def take(self, batch: HistogramBatch) -> None:
        """record()'s histogram listener: fold a batch of events' histograms in."""
        streams = self._stream_of[batch.phases, batch.path_ids]
        keep = streams >= 0
        self.heat.add(
            streams[keep],
            batch.steps[keep] + self._steps_before,
            batch.counts[keep],
            batch.lo[keep],
            batch.hi[keep],
        )

    def histories(self, signal: str, labels: list[str], steps: int) -> list[HistogramHistory]:
        """Each watched module's history of ``signal`` that holds values, on its live bins; a
        ValueError that says what to run when there is none yet."""
        if self.heat is None or not steps:
            raise ValueError(
                "this HookMonitor has seen no steps yet: run your training loop inside `with monitor:` first."
            )
        histories = [
            self.heat.history(stream, path, label, signal)
            for stream, path, label in zip(self.streams(signal), self.paths, labels, strict=True)
        ]
        histories = [h for h in histories if h is not None]
        if not histories:
            raise ValueError(
                "no gradient has reached a watched module yet: call loss.backward() inside the with block."
                if signal == "gradient"
                else "no watched module's output has held a finite value yet."
            )
        return histories

    def due(self, now: float, final: bool) -> bool:
        """True when the heat map changed since it was sent and may be sent again."""
        heat = self.heat
        return heat is not None and heat.version != self._sent and (final or now >= self._next)

    def sent(self, message: dict[str, Any], now: float, interval: float) -> None:
        """Note that ``message`` went to the browser at ``now``: a big one waits longer."""
        self._sent = self.heat.version
        size = sum(len(p["cells"]) for signal in self.signals for p in message[signal] if p)
        self._next = now + max(interval, size / HEATMAP_BYTES_PER_SECOND)

    def as_json(self, steps: int) -> dict[str, Any]:
        """The heat map for the browser: per signal, per module, None or its value range, its number
        of bins and its cells, column after column, one LEVEL_ALPHABET character each."""
        heat = self.heat
        if heat is None:
            return {
                "columns": 0,
                "span": self.every,
                "steps": steps,
                "scale": LEVEL_SCALE,
                **{signal: [None] * len(self.paths) for signal in self.signals},
            }
        # In numpy, single-threaded: on a busy machine each of torch's parallel ops would wait
        # for its threads, and this runs a few times a second beside the training loop.
        used = heat.used
        per_column = np.maximum(heat.steps_per_column[:used].numpy(), 1)
        means = heat.counts[:, :used].numpy() / per_column[None, :, None]
        levels = np.rint(np.log1p(means) * LEVEL_SCALE)
        np.clip(levels, 1, len(LEVEL_ALPHABET) - 1, out=levels, where=means > 0)
        levels = levels.astype(np.uint8)
        filled = levels.any(axis=1)  # (streams, bins)
        first, last = (
            filled.argmax(axis=1).tolist(),
            (heat.bins - 1 - filled[:, ::-1].argmax(axis=1)).tolist(),
        )
        has_values = filled.any(axis=1).tolist()
        lows, widths = heat.first_edges(), heat.widths()
        found: dict[str, Any] = {
            "columns": used,
            "span": heat.span,
            "steps": steps,
            "scale": LEVEL_SCALE,
        }
        for signal in self.signals:
            panels: list[dict[str, Any] | None] = []
            for stream in self.streams(signal):
                if not has_values[stream]:
                    panels.append(None)
                    continue
                a, b = first[stream], last[stream]
                cells = levels[stream, :, a : b + 1].tobytes().translate(_TO_CHARS).decode("ascii")
                panels.append(
                    {
                        "lo": number(lows[stream] + widths[stream] * a),
                        "hi": number(lows[stream] + widths[stream] * (b + 1)),
                        "bins": b - a + 1,
                        "cells": cells,
                    }
                )
            found[signal] = panels
        return found
