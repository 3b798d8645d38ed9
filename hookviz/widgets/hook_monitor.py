"""HookMonitor: a live dashboard of what every module outputs and what gradient flows back.

Built on ``hookviz.record``: its listener receives statistics in batches (a few times a
second); the monitor keeps one small summary per module (never the events) and sends the
browser a compact JSON snapshot at most ``updates_per_second`` times a second. Its heat-map
view (each module's histogram over time) folds the histograms record() already computed into
a fixed-size ``RollingHistograms``, sent as one character per cell.
"""

from __future__ import annotations

import collections
import math
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
import traitlets
from torch import nn

from ..histogram_history import (
    SIGNAL_PHASES,
    SIGNALS,
    HistogramHistory,
    RollingHistograms,
    check_signal,
    signal_or_kind,
)
from ..recording import ESTIMATED_NOTE, Recording, TensorStats, check_every, check_exact, record
from ..store import FORWARD, PHASES, HistogramBatch
from ..tree import ModuleSelector, check_model, display_name, select_modules
from . import static_html
from .base import HookvizWidget, front_end, number, shape_text

# What the dashboard shows, and nothing more: the cost of a statistic is paid in the training loop.
MONITOR_STATS = ("mean", "std", "min", "max", "norm", "nan", "inf", "histogram", "values")
TREND = 40  # recent values kept per module for the trend line
MAX_EVENTS = 512  # record()'s own buffer: the monitor reads events as they come, it never re-reads
VIEWS = ("table", "heatmap")
# The table view's columns in order, (key, heading, numeric): the static picture reads them
# here and the browser through the read-only table_columns trait; each side fills a cell by key.
TABLE_COLUMNS = (
    ("module", "module", False),
    ("class", "class", False),
    ("calls", "calls", True),
    ("output", "output", False),
    ("mean", "mean", True),
    ("std", "std", True),
    ("min", "min", True),
    ("max", "max", True),
    ("histogram", "histogram", False),
    ("grad_norm", "‖grad‖", True),
    ("warnings", "warnings", False),
)
# The heat map travels as one character per cell: level round(LEVEL_SCALE * log(1 + count)),
# 0 for an empty cell, so a cell's level says its count within about 15%.
LEVEL_ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
LEVEL_SCALE = 7.0
_TO_CHARS = bytes.maketrans(bytes(range(len(LEVEL_ALPHABET))), LEVEL_ALPHABET.encode())
# A big model's heat map is sent less often, so that it streams at most this fast.
HEATMAP_BYTES_PER_SECOND = 200_000


@dataclass
class TensorSummary:
    """The latest statistics of one tensor stream (a module's output, or its output gradient)."""

    events: int = 0
    nan_events: int = 0
    inf_events: int = 0
    first_bad_step: int | None = None
    trend: collections.deque = field(
        default_factory=lambda: collections.deque(maxlen=TREND)
    )  # as number() gives
    # The latest event's whole TensorStats is built only when it is read (a few times a
    # second), not for each of the hundreds of events a second that pass through.
    _latest: TensorStats | None = field(default=None, repr=False)
    _source: tuple[Callable[[int], TensorStats], int] | None = field(
        default=None, repr=False
    )  # (stats_at, leaf)

    @property
    def latest(self) -> TensorStats | None:
        if self._source is not None:
            stats_at, leaf = self._source
            self._latest, self._source = stats_at(leaf), None
        return self._latest

    def add(
        self,
        step: int,
        source: tuple[Callable[[int], TensorStats], int],
        trend_value: float | None,
        nan_count: float | None,
        inf_count: float | None,
    ) -> None:
        """Take one event: its statistics, and how to build its whole summary if needed."""
        self._source = source
        self.events += 1
        bad = False
        if nan_count and nan_count == nan_count:  # None: no statistics; NaN: not asked for
            self.nan_events += 1
            bad = True
        if inf_count and inf_count == inf_count:
            self.inf_events += 1
            bad = True
        if bad and self.first_bad_step is None:
            self.first_bad_step = step
        if trend_value is not None:
            self.trend.append(number(trend_value))  # JSON-ready now: a snapshot sends all of them

    def as_json(self) -> dict[str, Any] | None:
        """The summary as JSON-safe values."""
        t = self.latest
        if t is None:
            return None
        return {
            "shape": shape_text(t.shape),
            "dtype": t.dtype,
            "numel": t.numel,
            "mean": number(t.mean),
            "std": number(t.std),
            "min": number(t.min),
            "max": number(t.max),
            "norm": number(t.norm),
            "hist": list(t.histogram) if t.histogram else [],
            "range": [number(v) for v in t.hist_range] if t.hist_range else None,
            "values": _json_values(t.values),
            "sampled": t.sampled,
            "exact": t.exact,  # False: min, max, norm, NaN, Inf estimated from the sample (exact=False)
            "nan": self.nan_events,
            "inf": self.inf_events,
            "bad_step": self.first_bad_step,
            "trend": list(self.trend),
        }


@dataclass
class ModuleSummary:
    """Everything the dashboard knows about one module."""

    path: str
    type_name: str
    depth: int
    calls: int = 0
    output: TensorSummary = field(default_factory=TensorSummary)
    grad: TensorSummary = field(default_factory=TensorSummary)


class HookMonitor(HookvizWidget):
    """A live dashboard over ``hookviz.record``: outputs, gradients and warnings per module.

    Use it around a training loop; it shows itself and removes every hook it added when the
    block ends, even when the loop raises::

        with hookviz.HookMonitor(model) as monitor:
            for x, y in batches:
                ...

    ``modules`` picks what to watch (as in ``record``); ``every=N`` records every N-th step;
    ``gradients=False`` skips the gradient view; ``exact=False`` estimates min, max and NaN/Inf
    counts from a sample, as ``record(exact=False)`` does (the dashboard marks them ≈). A
    gradient norm below ``vanishing_below`` or above ``exploding_above`` is flagged.
    ``view='heatmap'`` opens on each module's histogram over time (the table is one click or
    the key V away); ``heatmap=False`` keeps no such history.
    """

    _front_end = "hook_monitor"  # static/hook_monitor.js and .css
    _esm, _css = front_end(_front_end)

    title = traitlets.Unicode("").tag(sync=True)
    modules = traitlets.List().tag(sync=True)  # {"label", "type_name", "depth"} per watched module
    snapshot = traitlets.Dict().tag(sync=True)  # the live numbers
    selected = traitlets.Int(-1).tag(sync=True)  # index into modules; -1: none
    # gradient norms flagged: {"vanishing": ..., "exploding": ...}
    thresholds = traitlets.Dict().tag(sync=True)
    gradients = traitlets.Bool(True).tag(sync=True)  # False: no gradient view
    view = traitlets.Unicode("table").tag(sync=True)  # 'table' or 'heatmap'
    # the signal the heat map shows: 'output' or 'gradient' (heatmap_kind: its deprecated name)
    heatmap_signal = traitlets.Unicode("output").tag(sync=True)
    # each module's histogram over time, compact (see _heatmap_json)
    heatmap = traitlets.Dict().tag(sync=True)
    # the characters of the heat map's cells, level 0 first: the browser decodes with these
    level_alphabet = traitlets.Unicode(LEVEL_ALPHABET, read_only=True).tag(sync=True)
    # the table view's columns, {"key", "label", "numeric"} each, in order (see TABLE_COLUMNS)
    table_columns = traitlets.List(
        [{"key": k, "label": label, "numeric": numeric} for k, label, numeric in TABLE_COLUMNS],
        read_only=True,
    ).tag(sync=True)

    def __init__(
        self,
        model: nn.Module,
        *,
        modules: ModuleSelector = None,
        gradients: bool = True,
        every: int = 1,
        exact: bool = True,
        updates_per_second: float = 4.0,
        vanishing_below: float = 1e-6,
        exploding_above: float = 1e3,
        heatmap: bool = True,
        view: str = "table",
        theme: str = "auto",
    ):
        """Prepare the dashboard (no hook is added until ``with`` or ``start()``)."""
        check_model(model, what="HookMonitor's model")
        self._model = model
        self._selector = modules
        self._summaries = _watched(model, modules)
        self._interval = 1.0 / _check_rate(updates_per_second)
        self._vanishing, self._exploding = _check_thresholds(vanishing_below, exploding_above)
        self._keeps_heatmap = _check_heatmap(heatmap, view)
        self._signals = SIGNALS if gradients else SIGNALS[:1]
        # A recording is made at each start(): check now what it would refuse.
        self._every = check_every(every)
        self._exact = check_exact(exact)
        self._clear_live_state()
        super().__init__(
            title=f"HookMonitor · {type(model).__name__}",
            modules=[
                {"label": display_name(path, model), "type_name": s.type_name, "depth": s.depth}
                for path, s in self._summaries.items()
            ],
            thresholds={"vanishing": self._vanishing, "exploding": self._exploding},
            gradients=bool(gradients),
            view=view,
            theme=theme,
        )
        self.snapshot = self._snapshot()
        self.heatmap = self._heatmap_json() if heatmap else {}  # {}: the browser offers no heat map

    def _clear_live_state(self) -> None:
        """What a monitor knows before its first start(): no recording, no step, no heat map."""
        self._recording: Recording | None = None
        self._rows_by_path_id: list[ModuleSummary | None] = []  # the recording's path ids -> rows
        self._steps_before = 0  # steps seen by earlier recordings (a monitor can be entered again)
        self._last_push = 0.0
        self._shown = False
        self._heat: RollingHistograms | None = None  # made at the first start(); then kept
        self._stream_of: torch.Tensor | None = None  # (phase id, path id) -> stream; -1: none
        self._heat_sent = -1  # the heat map's version the browser has
        self._next_heat = 0.0  # when the heat map may be sent again

    @traitlets.validate("selected")
    def _valid_selected(self, proposal):
        index = proposal["value"]
        if not -1 <= index < len(self.modules):
            raise traitlets.TraitError(
                f"selected must be the index of a watched module (0 to {len(self.modules) - 1}) or -1 for "
                f"none, got {index}."
            )
        return index

    @traitlets.validate("view")
    def _valid_view(self, proposal):
        view = proposal["value"]
        if view not in VIEWS:
            raise traitlets.TraitError(f"view must be 'table' or 'heatmap', got {view!r}.")
        return view

    @traitlets.validate("heatmap_signal")
    def _valid_heatmap_signal(self, proposal):
        signal = proposal["value"]
        try:
            check_signal(signal, "heatmap_signal")
        except ValueError as error:
            raise traitlets.TraitError(str(error)) from None
        if signal == "gradient" and not self.gradients:
            raise traitlets.TraitError(
                "this monitor watches no gradients (gradients=False): heatmap_signal must be 'output'."
            )
        return signal

    @property
    def heatmap_kind(self) -> str:
        """Deprecated: ``heatmap_signal``."""
        _warn_heatmap_kind()
        return self.heatmap_signal

    @heatmap_kind.setter
    def heatmap_kind(self, signal: str) -> None:
        _warn_heatmap_kind()
        self.heatmap_signal = signal

    # -- lifecycle -------------------------------------------------------------------------

    def __enter__(self) -> HookMonitor:
        self.start()
        try:
            if not self._shown:
                _display(self)
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def start(self) -> HookMonitor:
        """Add the hooks and start recording (``with`` does this for you)."""
        if self.running:
            raise RuntimeError(
                "this HookMonitor is already recording; stop() it first, or use it in one `with` block."
            )
        recording = record(
            self._model,
            modules=self._selector,
            gradients=self.gradients,
            phases=("forward", "backward_pre") if self.gradients else ("forward",),
            stats=MONITOR_STATS,
            every=self._every,
            max_events=MAX_EVENTS,
            exact=self._exact,
        )
        self._rows_by_path_id = [self._summaries.get(path) for path, _ in recording.targets]
        recording.on_columns(self._take)
        if self._keeps_heatmap:
            if self._heat is None:
                # Columns start one recorded step wide: every=N leaves no empty column between.
                self._heat = RollingHistograms(self._stream_count, span=self._every)
            self._stream_of = self._streams(recording)
            recording.on_histograms(self._take_histograms)
        recording.start()  # on failure it removes what it added, and raises
        self._recording = recording
        self._push(final=True)
        return self

    def stop(self) -> None:
        """Remove every hook the monitor added and show the final numbers."""
        recording = self._recording
        if recording is None:
            return
        try:
            recording.stop()  # computes what is pending, then calls _take one last time
        finally:
            self._steps_before += recording.step + 1
            self._recording = None
            self._push(final=True)

    @property
    def running(self) -> bool:
        """True while the hooks are on the model."""
        return self._recording is not None and self._recording.active

    @property
    def exact(self) -> bool:
        """False when min, max and NaN/Inf counts are estimated from a sample (``exact=False``)."""
        return self._exact

    @property
    def steps(self) -> int:
        """Steps (top-level calls of the model) seen so far."""
        current = self._recording.step + 1 if self._recording is not None else 0
        return self._steps_before + current

    # -- numbers ---------------------------------------------------------------------------

    def summary(self, path: str) -> ModuleSummary:
        """The summary kept for the module at ``path`` ('' is the root)."""
        try:
            return self._summaries[path]
        except KeyError:
            raise ValueError(
                f"{path!r} is not a watched module; watched paths are "
                + ", ".join(repr(p) for p in self._summaries)
                + "."
            ) from None

    def gradient_flags(self) -> dict[str, str]:
        """Modules whose latest output gradient is 'vanishing', 'exploding' or 'nan/inf'."""
        flags = {}
        for path, summary in self._summaries.items():
            flag = self._flag(summary.grad.latest)
            if flag:
                flags[path] = flag
        return flags

    def _flag(self, grad: TensorStats | None) -> str | None:
        if grad is None:
            return None
        if grad.nan_count or grad.inf_count:
            return "nan/inf"
        norm = grad.norm
        if norm is None or math.isnan(norm):
            return None
        if norm < self._vanishing:
            return "vanishing"
        if norm > self._exploding:
            return "exploding"
        return None

    def _take(self, mains, stats_at: Callable[[int], TensorStats]) -> None:
        """record()'s column listener: fold new events into the summaries, then maybe push."""
        rows = self._rows_by_path_id
        for step, phase, path_id, leaf, mean, norm, nans, infs in mains:
            summary = rows[path_id]
            if summary is None:
                continue
            if phase == FORWARD:
                summary.calls += 1
                if leaf >= 0:
                    summary.output.add(step, (stats_at, leaf), mean, nans, infs)
            elif leaf >= 0:
                summary.grad.add(step, (stats_at, leaf), norm, nans, infs)
        if time.monotonic() - self._last_push >= self._interval:
            self._push()

    # The heat map's streams: signal after signal, and within a signal one per watched module
    # in order.
    def _signal_streams(self, signal: str) -> range:
        """The heat-map streams of ``signal``, the i-th watched module's at index i."""
        n = len(self._summaries)
        first = self._signals.index(signal) * n
        return range(first, first + n)

    @property
    def _stream_count(self) -> int:
        return self._signal_streams(self._signals[-1]).stop

    def _streams(self, recording: Recording) -> torch.Tensor:
        """The heat-map stream of each (phase id, path id) of ``recording``; -1: not watched."""
        streams = torch.full((len(PHASES), len(recording.targets)), -1, dtype=torch.int64)
        position = {path: i for i, path in enumerate(self._summaries)}
        for signal in self._signals:
            signal_streams = self._signal_streams(signal)
            for path_id, (path, _) in enumerate(recording.targets):
                if path in position:
                    streams[SIGNAL_PHASES[signal], path_id] = signal_streams[position[path]]
        return streams

    def _take_histograms(self, batch: HistogramBatch) -> None:
        """record()'s histogram listener: fold a batch of events' histograms into the heat map."""
        streams = self._stream_of[batch.phases, batch.path_ids]
        keep = streams >= 0
        self._heat.add(
            streams[keep],
            batch.steps[keep] + self._steps_before,
            batch.counts[keep],
            batch.lo[keep],
            batch.hi[keep],
        )

    def histogram_history(
        self, signal: str = "output", *, kind: str | None = None
    ) -> list[HistogramHistory]:
        """Each watched module's histogram over the steps so far (``signal``: 'output' or
        'gradient'), on its live bins; what ``hookviz.plots.activation_heatmap`` draws.
        (``kind=`` is ``signal``'s deprecated name.)"""
        signal = signal_or_kind(signal, kind, "HookMonitor.histogram_history")
        if not self._keeps_heatmap:
            raise ValueError(
                "this HookMonitor keeps no histograms over time (heatmap=False); make it with heatmap=True."
            )
        if signal not in self._signals:
            raise ValueError(
                "this HookMonitor watches no gradients (gradients=False); make it with gradients=True."
            )
        if self._recording is not None:
            self._recording.flush()
        if self._heat is None or not self.steps:
            raise ValueError(
                "this HookMonitor has seen no steps yet: run your training loop inside `with monitor:` first."
            )
        histories = [
            self._heat.history(stream, path, shown["label"], signal)
            for stream, path, shown in zip(
                self._signal_streams(signal), self._summaries, self.modules, strict=True
            )
        ]
        histories = [h for h in histories if h is not None]
        if not histories:
            raise ValueError(
                "no gradient has reached a watched module yet: call loss.backward() inside the with block."
                if signal == "gradient"
                else "no watched module's output has held a finite value yet."
            )
        return histories

    def _heatmap_json(self) -> dict[str, Any]:
        """The heat map for the browser: per signal, per module, None or its value range, its number
        of bins and its cells, column after column, one LEVEL_ALPHABET character each."""
        heat = self._heat
        if heat is None:
            return {
                "columns": 0,
                "span": self._every,
                "steps": self.steps,
                "scale": LEVEL_SCALE,
                **{signal: [None] * len(self._summaries) for signal in self._signals},
            }
        # In numpy, single-threaded: on a busy machine each of torch's parallel ops would wait
        # for its threads, and this runs a few times a second beside the training loop.
        used = heat.used
        steps = np.maximum(heat.steps_per_column[:used].numpy(), 1)
        means = heat.counts[:, :used].numpy() / steps[None, :, None]
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
            "steps": self.steps,
            "scale": LEVEL_SCALE,
        }
        for signal in self._signals:
            panels: list[dict[str, Any] | None] = []
            for stream in self._signal_streams(signal):
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

    def _snapshot(self) -> dict[str, Any]:
        rows = []
        for summary in self._summaries.values():
            rows.append(
                {
                    "calls": summary.calls,
                    "out": summary.output.as_json(),
                    "grad": summary.grad.as_json(),
                    "flag": self._flag(summary.grad.latest),
                }
            )
        # "note": what the browser shows when min, max and NaN/Inf counts are estimates
        return {
            "steps": self.steps,
            "running": self.running,
            "exact": self._exact,
            "note": "" if self._exact else ESTIMATED_NOTE,
            "rows": rows,
        }

    def _push(self, final: bool = False) -> None:
        """Send one snapshot to the browser, and the heat map when it changed and is due."""
        now = self._last_push = time.monotonic()
        with self.hold_sync():
            self.snapshot = self._snapshot()
            heat = self._heat
            if (
                heat is not None
                and heat.version != self._heat_sent
                and (final or now >= self._next_heat)
            ):
                self.heatmap = self._heatmap_json()
                self._heat_sent = heat.version
                size = sum(
                    len(p["cells"]) for signal in self._signals for p in self.heatmap[signal] if p
                )
                self._next_heat = now + max(self._interval, size / HEATMAP_BYTES_PER_SECOND)

    def _repr_mimebundle_(self, **kwargs):
        self._shown = True
        return super()._repr_mimebundle_(**kwargs)

    def __repr__(self) -> str:
        state = "recording" if self.running else "stopped"
        flags = self.gradient_flags()
        warn = f", {len(flags)} gradient warning{'s' if len(flags) != 1 else ''}" if flags else ""
        return (
            f"HookMonitor({type(self._model).__name__}, {len(self._summaries)} modules, {state}, "
            f"{self.steps} steps{warn})"
        )

    # -- static pictures -------------------------------------------------------------------

    def to_html(self) -> str:
        """A self-contained HTML table of the latest numbers (no scripts)."""
        rows = []
        for shown, summary in zip(self.modules, self._summaries.values(), strict=True):
            cells = self._static_cells(shown, summary)
            rows.append([cells[key] for key, _, _ in TABLE_COLUMNS])
        body = (
            static_html.tag("div", self.title, cls="hvs-title")
            + static_html.tag(
                "div",
                f"{self.steps} steps" + ("" if self._exact else f" · {ESTIMATED_NOTE}"),
                cls="hvs-muted",
            )
            + static_html.table(
                [label for _, label, _ in TABLE_COLUMNS],
                rows,
                numeric={i for i, (_, _, numeric) in enumerate(TABLE_COLUMNS) if numeric},
            )
        )
        return static_html.page("monitor", body)

    def _static_cells(self, shown: dict[str, Any], summary: ModuleSummary) -> dict[str, str]:
        """One module's row of the static table as HTML, by column key (TABLE_COLUMNS)."""
        out = summary.output.latest
        grad = summary.grad.latest
        estimated = bool(out) and not out.exact
        bad = summary.output.nan_events or summary.output.inf_events
        return {
            "module": static_html.tag(
                "span", shown["label"], style=f"padding-left:{shown['depth'] * 12}px"
            ),
            "class": static_html.escape(shown["type_name"]),
            "calls": str(summary.calls),
            "output": static_html.escape(shape_text(out.shape) if out else ""),
            **{k: _text(getattr(out, k, None) if out else None) for k in ("mean", "std")},
            **{
                k: _text(getattr(out, k, None) if out else None, estimated=estimated)
                for k in ("min", "max")
            },
            "histogram": static_html.bars(out.histogram if out else None, warn=bool(bad)),
            "grad_norm": _text(grad.norm if grad else None, estimated=_estimated(grad)),
            "warnings": static_html.tag(
                "span",
                _warning_text(summary, self._flag(grad), estimated=_estimated(grad)),
                cls="hvs-warn",
            ),
        }

    def plot(self, view: str = "table", signal: str = "output", *, kind: str | None = None):
        """A matplotlib Figure (needs matplotlib) of the table view (output mean ± std and gradient
        norm per module) or, with ``view='heatmap'``, of each module's ``signal`` histogram over
        time (``kind=``: its deprecated name)."""
        from .. import plots

        if view not in VIEWS:
            raise ValueError(f"view must be 'table' or 'heatmap', got {view!r}.")
        if view == "heatmap":
            return plots.activation_heatmap(self, signal_or_kind(signal, kind, "HookMonitor.plot"))
        return plots.monitor(self.snapshot, self.modules, title=self.title)


def _watched(model: nn.Module, modules: ModuleSelector) -> dict[str, ModuleSummary]:
    """An empty summary for each module ``modules`` selects, by path, in the model's order."""
    targets = select_modules(model, modules)
    if not targets:
        raise ValueError(
            "modules= selected no module of this model; pass None to watch all of them."
        )
    return {
        path: ModuleSummary(path, type(m).__name__, 0 if not path else path.count(".") + 1)
        for path, m in targets
    }


def _check_rate(updates_per_second: Any) -> float:
    """``updates_per_second`` if it is a number in (0, 30]; otherwise a ValueError."""
    if (
        isinstance(updates_per_second, bool)
        or not isinstance(updates_per_second, (int, float))
        or not (0 < updates_per_second <= 30)
    ):
        raise ValueError(
            f"updates_per_second must be a number above 0 and at most 30, got {updates_per_second!r}."
        )
    return float(updates_per_second)


def _check_thresholds(vanishing_below: Any, exploding_above: Any) -> tuple[float, float]:
    """The two gradient-norm limits as floats, if both are positive and in order."""
    for name, value in (
        ("vanishing_below", vanishing_below),
        ("exploding_above", exploding_above),
    ):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
            raise ValueError(f"{name} must be a positive number, got {value!r}.")
    if vanishing_below >= exploding_above:
        raise ValueError(
            f"vanishing_below ({vanishing_below}) must be smaller than exploding_above ({exploding_above})."
        )
    return float(vanishing_below), float(exploding_above)


def _check_heatmap(heatmap: Any, view: str) -> bool:
    """``heatmap`` if it is a bool that ``view`` can open on."""
    if not isinstance(heatmap, bool):
        raise TypeError(f"heatmap must be True or False, got {heatmap!r}.")
    if view == "heatmap" and not heatmap:
        raise ValueError(
            "view='heatmap' needs heatmap=True: a monitor made with heatmap=False keeps no histograms."
        )
    return heatmap


def _warn_heatmap_kind() -> None:
    warnings.warn(
        "HookMonitor.heatmap_kind is now HookMonitor.heatmap_signal, 'output' or 'gradient' "
        "(heatmap_kind will be removed in a later release).",
        DeprecationWarning,
        stacklevel=3,
    )


def _warning_text(summary: ModuleSummary, flag: str | None, *, estimated: bool = False) -> str:
    notes = []
    if summary.output.nan_events:
        notes.append(f"NaN in output since step {summary.output.first_bad_step}")
    elif summary.output.inf_events:
        notes.append(f"Inf in output since step {summary.output.first_bad_step}")
    if flag:
        # With exact=False the norm is a sample's estimate: the flag says so.
        notes.append(f"{flag} gradient" + (" (norm estimated from a sample)" if estimated else ""))
    return "; ".join(notes)


def _estimated(t: TensorStats | None) -> bool:
    """True for a sampled tensor's statistics taken without the exact pass (exact=False)."""
    return bool(t) and t.sampled and not t.exact


def _text(value: float | None, *, estimated: bool = False) -> str:
    """A statistic as it reads in the static table: 4 significant digits, blank when unknown,
    after ≈ when it is an estimate."""
    return "" if value is None else ("≈" if estimated else "") + str(number(value))


def _json_values(values: Any) -> Any:
    """Small tensors' values, JSON-safe (NaN and infinity as text)."""
    if values is None:
        return None
    if isinstance(values, list):
        return [_json_values(v) for v in values]
    if isinstance(values, bool):
        return int(values)
    return number(values)


def _display(widget: HookvizWidget) -> None:
    """Show ``widget`` in the running notebook, if there is one."""
    try:
        from IPython import get_ipython
        from IPython.display import display
    except ImportError:
        return
    shell = get_ipython()
    if shell is not None and getattr(shell, "kernel", None) is not None:
        display(widget)
