"""HookMonitor: a live dashboard of what every module outputs and what gradient flows back.

Built on ``hookviz.record``: its listener receives statistics in batches (a few times a
second); the monitor keeps one small summary per module (never the events) and sends the
browser a compact JSON snapshot at most ``updates_per_second`` times a second. Its heat-map
view (each module's histogram over time) folds the histograms record() already computed into
a fixed-size ``RollingHistograms``, sent as one character per cell.
"""

from __future__ import annotations

import time
import warnings
from typing import Any

import traitlets
from torch import nn

from ..histogram_history import SIGNALS, HistogramHistory, check_signal, signal_or_kind
from ..recording import Recording, check_every, check_exact, record
from ..tree import ModuleSelector, check_model, display_name
from .base import HookvizWidget, front_end
from .messages import widget_language
from .monitor_heatmap import LEVEL_ALPHABET, LEVEL_SCALE, MonitorHeatmap
from .monitor_table import TABLE_COLUMNS, TREND, ModuleSummary, ModuleTable, table_columns

__all__ = ["LEVEL_ALPHABET", "LEVEL_SCALE", "MAX_EVENTS", "TABLE_COLUMNS", "TREND", "HookMonitor"]

# What the dashboard shows, and nothing more: the cost of a statistic is paid in the training loop.
MONITOR_STATS = ("mean", "std", "min", "max", "norm", "nan", "inf", "histogram", "values")
MAX_EVENTS = 512  # record()'s own buffer: the monitor reads events as they come, it never re-reads
VIEWS = ("table", "heatmap")


def _heatmap_kind(monitor: Any, *signal: str) -> str | None:
    """HookMonitor.heatmap_kind, read or set (deprecated: heatmap_signal)."""
    _warn_heatmap_kind()
    if signal:
        monitor.heatmap_signal = signal[0]
        return None
    return monitor.heatmap_signal


def _warn_heatmap_kind() -> None:
    warnings.warn(
        "HookMonitor.heatmap_kind is now HookMonitor.heatmap_signal, 'output' or 'gradient' "
        "(heatmap_kind will be removed in a later release).",
        DeprecationWarning,
        stacklevel=3,
    )


class HookMonitor(HookvizWidget):
    """A live dashboard over `hookviz.record`: outputs, gradients and warnings per module.

    Use it around a training loop; it shows itself and removes every hook it added when the
    block ends, even when the loop raises.

    Parameters
    ----------
    model : nn.Module
        The model to watch.
    modules : None, list of str, type or callable
        What to watch, as in `record`.
    gradients : bool
        Also watch gradients; False skips the gradient view.
    every : int
        Record every N-th step.
    exact : bool
        False estimates min, max and NaN/Inf counts from a sample, as `record(exact=False)`
        does (the dashboard marks them ≈).
    updates_per_second : float
        How often the page is updated while the loop runs.
    vanishing_below : float
        A gradient norm below it is flagged as vanishing.
    exploding_above : float
        A gradient norm above it is flagged as exploding.
    heatmap : bool
        Keep each module's histogram over time; False keeps no such history.
    view : str
        `"table"`, or `"heatmap"` to open on the histograms (the other view is one click or
        the key V away).
    theme : str
        `"auto"` (follow JupyterLab), `"light"` or `"dark"`.
    lang : str or None
        The language of its words (`"en"` or `"ko"`); None follows
        `hookviz.language.current_language()`.

    Examples
    --------
    >>> with hookviz.HookMonitor(model) as monitor:  # doctest: +SKIP
    ...     for x, y in batches:
    ...         train_step(x, y)
    """

    _vocabulary = ("monitor",)  # its keys in the message tables (messages/*.json)
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
    # each module's histogram over time, compact (see MonitorHeatmap.as_json)
    heatmap = traitlets.Dict().tag(sync=True)
    # the characters of the heat map's cells, level 0 first: the browser decodes with these
    level_alphabet = traitlets.Unicode(LEVEL_ALPHABET, read_only=True).tag(sync=True)
    # the table view's columns, {"key", "label", "numeric"} each, in order (see TABLE_COLUMNS),
    # their headings in the widget's language
    table_columns = traitlets.List(read_only=True).tag(sync=True)

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
        lang: str | None = None,
    ):
        """Prepare the dashboard (no hook is added until ``with`` or ``start()``)."""
        lang = widget_language(lang)
        check_model(model, what="HookMonitor's model")
        self._model = model
        self._selector = modules
        self._table = ModuleTable(model, modules, vanishing_below, exploding_above)
        self._interval = 1.0 / _check_rate(updates_per_second)
        self._signals = SIGNALS if gradients else SIGNALS[:1]
        # A recording is made at each start(): check now what it would refuse.
        self._every = check_every(every)
        self._exact = check_exact(exact)
        self._heatmap = (
            MonitorHeatmap(self._signals, list(self._table.summaries), self._every)
            if _check_heatmap(heatmap, view)
            else None
        )
        self._recording: Recording | None = None
        self._steps_before = 0  # steps seen by earlier recordings (a monitor can be entered again)
        self._last_push = 0.0
        self._shown = False
        super().__init__(
            title=f"HookMonitor · {type(model).__name__}",
            modules=[
                {"label": display_name(path, model), "type_name": s.type_name, "depth": s.depth}
                for path, s in self._table.summaries.items()
            ],
            thresholds={"vanishing": self._table.vanishing, "exploding": self._table.exploding},
            gradients=bool(gradients),
            view=view,
            theme=theme,
            lang=lang,
        )
        self.set_trait("table_columns", table_columns(lang))
        self.snapshot = self._snapshot()
        # {}: the browser offers no heat map
        self.heatmap = self._heatmap.as_json(self.steps) if self._heatmap else {}

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

    heatmap_kind = property(_heatmap_kind, _heatmap_kind, doc="Deprecated: `heatmap_signal`.")

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
        """Add the hooks and start recording (`with` does this for you)."""
        if self.running:
            raise RuntimeError(
                "this HookMonitor is already recording; stop() it first, or use it in one `with` block."
            )
        recording = _monitor_recording(
            self._model, self._selector, self.gradients, self._every, self._exact
        )
        self._table.follow(recording.targets)
        recording.on_columns(self._take)
        if self._heatmap is not None:
            self._heatmap.follow(recording, self._steps_before)
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
        """False when min, max and NaN/Inf counts are estimated from a sample (`exact=False`)."""
        return self._exact

    @property
    def steps(self) -> int:
        """Steps (top-level calls of the model) seen so far."""
        current = self._recording.step + 1 if self._recording is not None else 0
        return self._steps_before + current

    # -- numbers ---------------------------------------------------------------------------

    def summary(self, path: str) -> ModuleSummary:
        """The summary kept for the module at `path` ('' is the root)."""
        return self._table.summary(path)

    def gradient_flags(self) -> dict[str, str]:
        """Modules whose latest output gradient is 'vanishing', 'exploding' or 'nan/inf'."""
        return self._table.gradient_flags()

    def _take(self, mains, stats_at) -> None:
        """record()'s column listener: fold new events into the table, then maybe push."""
        self._table.take(mains, stats_at)
        if time.monotonic() - self._last_push >= self._interval:
            self._push()

    def histogram_history(
        self, signal: str = "output", *, kind: str | None = None
    ) -> list[HistogramHistory]:
        """Each watched module's histogram over the steps so far (`signal`: 'output' or
        'gradient'), on its live bins; what `hookviz.plots.activation_heatmap` draws.
        (`kind=` is `signal`'s deprecated name.)"""
        signal = signal_or_kind(signal, kind, "HookMonitor.histogram_history")
        if self._heatmap is None:
            raise ValueError(
                "this HookMonitor keeps no histograms over time (heatmap=False); make it with heatmap=True."
            )
        if signal not in self._signals:
            raise ValueError(
                "this HookMonitor watches no gradients (gradients=False); make it with gradients=True."
            )
        if self._recording is not None:
            self._recording.flush()
        return self._heatmap.histories(signal, [m["label"] for m in self.modules], self.steps)

    def _snapshot(self) -> dict[str, Any]:
        rows = self._table.snapshot_rows()
        # "note": what the browser shows when min, max and NaN/Inf counts are estimates
        return {
            "steps": self.steps,
            "running": self.running,
            "exact": self._exact,
            "note": "" if self._exact else self.say("monitor.estimated"),
            "rows": rows,
        }

    def _push(self, final: bool = False) -> None:
        """Send one snapshot to the browser, and the heat map when it changed and is due."""
        now = self._last_push = time.monotonic()
        with self.hold_sync():
            self.snapshot = self._snapshot()
            if self._heatmap is not None and self._heatmap.due(now, final):
                self.heatmap = self._heatmap.as_json(self.steps)
                self._heatmap.sent(self.heatmap, now, self._interval)

    def _repr_mimebundle_(self, **kwargs):
        self._shown = True
        return super()._repr_mimebundle_(**kwargs)

    def __repr__(self) -> str:
        state = "recording" if self.running else "stopped"
        flags = self.gradient_flags()
        warn = f", {len(flags)} gradient warning{'s' if len(flags) != 1 else ''}" if flags else ""
        return (
            f"HookMonitor({type(self._model).__name__}, {len(self._table)} modules, {state}, "
            f"{self.steps} steps{warn})"
        )

    # -- static pictures -------------------------------------------------------------------

    def to_html(self) -> str:
        """A self-contained HTML table of the latest numbers (no scripts)."""
        note = "" if self._exact else f" · {self.say('monitor.estimated')}"
        subtitle = f"{self.say('monitor.steps', count=self.steps)}{note}"
        return self._table.static_page(self.title, subtitle, self.modules, self.lang)

    def plot(self, view: str = "table", signal: str = "output", *, kind: str | None = None):
        """A matplotlib Figure (needs matplotlib) of the table view (output mean ± std and gradient
        norm per module) or, with `view='heatmap'`, of each module's `signal` histogram over
        time (`kind=`: its deprecated name)."""
        from .. import plots

        if view not in VIEWS:
            raise ValueError(f"view must be 'table' or 'heatmap', got {view!r}.")
        if view == "heatmap":
            return plots.activation_heatmap(self, signal_or_kind(signal, kind, "HookMonitor.plot"))
        return plots.monitor(self.snapshot, self.modules, title=self.title)


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


def _check_heatmap(heatmap: Any, view: str) -> bool:
    """``heatmap`` if it is a bool that ``view`` can open on."""
    if not isinstance(heatmap, bool):
        raise TypeError(f"heatmap must be True or False, got {heatmap!r}.")
    if view == "heatmap" and not heatmap:
        raise ValueError(
            "view='heatmap' needs heatmap=True: a monitor made with heatmap=False keeps no histograms."
        )
    return heatmap


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


def _monitor_recording(model, selector, gradients: bool, every: int, exact: bool):
    """The recording a monitor reads: outputs, and gradients w.r.t. them, with its statistics."""
    return record(
        model,
        modules=selector,
        gradients=gradients,
        phases=("forward", "backward_pre") if gradients else ("forward",),
        stats=MONITOR_STATS,
        every=every,
        max_events=MAX_EVENTS,
        exact=exact,
    )
