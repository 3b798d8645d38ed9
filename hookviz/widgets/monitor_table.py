"""What HookMonitor knows about each watched module, and how its row reads.

One ``ModuleSummary`` per watched module: the latest output and output gradient (their whole
statistics built only when read), a trend of recent values, when NaN or Inf first appeared,
and the flag on the gradient's norm ('vanishing', 'exploding', 'nan/inf'). ``ModuleTable``
folds record()'s column events into them and lays a row out for the browser's snapshot and
for the static table (``TABLE_COLUMNS`` are that table's columns, for both).
"""

from __future__ import annotations

import collections
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from torch import nn

from ..recording import TensorStats
from ..store import FORWARD
from ..tree import ModuleSelector, select_modules
from . import static_html
from .base import number, shape_text
from .messages import say

TREND = 40  # recent values kept per module for the trend line
# The table view's columns in order, (key, numeric); each heading is the message table's
# "monitor.column_<key>". The static picture reads them here and the browser through the
# read-only table_columns trait (`table_columns`); each side fills a cell by key.
TABLE_COLUMNS = (
    ("module", False),
    ("class", False),
    ("calls", True),
    ("output", False),
    ("mean", True),
    ("std", True),
    ("min", True),
    ("max", True),
    ("histogram", False),
    ("grad_norm", True),
    ("warnings", False),
)


def table_columns(lang: str) -> list[dict[str, Any]]:
    """The table view's columns as the browser reads them: key, heading in ``lang``, numeric."""
    return [
        {"key": key, "label": say(lang, f"monitor.column_{key}"), "numeric": numeric}
        for key, numeric in TABLE_COLUMNS
    ]


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
            "exact": t.exact,
            "norm_exact": t.norm_exact,  # False: the norm is the sample's (an output's, or exact=False)  # False: min, max, norm, NaN, Inf estimated from the sample (exact=False)
            "magnitude": t.magnitude,  # True: the statistics are of |z| (a complex tensor)
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


class ModuleTable:
    """The summaries of the modules ``modules`` selects on ``model``, by path in the model's
    order, and the gradient-norm limits that flag them."""

    def __init__(
        self,
        model: nn.Module,
        modules: ModuleSelector,
        vanishing_below: float,
        exploding_above: float,
    ):
        self.summaries = _watched(model, modules)
        self.vanishing, self.exploding = _check_thresholds(vanishing_below, exploding_above)
        self._rows_by_path_id: list[ModuleSummary | None] = []  # a recording's path ids -> rows

    def __len__(self) -> int:
        return len(self.summaries)

    def summary(self, path: str) -> ModuleSummary:
        """The summary kept for the module at ``path`` ('' is the root)."""
        try:
            return self.summaries[path]
        except KeyError:
            raise ValueError(
                f"{path!r} is not a watched module; watched paths are "
                + ", ".join(repr(p) for p in self.summaries)
                + "."
            ) from None

    def flag(self, grad: TensorStats | None) -> str | None:
        """'nan/inf', 'vanishing' or 'exploding' for a gradient's latest statistics, or None."""
        if grad is None:
            return None
        if grad.nan_count or grad.inf_count:
            return "nan/inf"
        norm = grad.norm
        if norm is None or math.isnan(norm):
            return None
        if norm < self.vanishing:
            return "vanishing"
        if norm > self.exploding:
            return "exploding"
        return None

    def gradient_flags(self) -> dict[str, str]:
        """Modules whose latest output gradient is flagged, by path."""
        flags = {}
        for path, summary in self.summaries.items():
            flag = self.flag(summary.grad.latest)
            if flag:
                flags[path] = flag
        return flags

    def follow(self, targets: list[tuple[str, Any]]) -> None:
        """Read a new recording's events: its path ids, in ``targets``' order, to rows."""
        self._rows_by_path_id = [self.summaries.get(path) for path, _ in targets]

    def take(self, mains, stats_at: Callable[[int], TensorStats]) -> None:
        """record()'s column listener: fold new events into the summaries."""
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

    def snapshot_rows(self) -> list[dict[str, Any]]:
        """Every row for the browser's snapshot, in order."""
        return [
            {
                "calls": summary.calls,
                "out": summary.output.as_json(),
                "grad": summary.grad.as_json(),
                "flag": self.flag(summary.grad.latest),
            }
            for summary in self.summaries.values()
        ]

    def static_page(self, title: str, subtitle: str, shown: list[dict[str, Any]], lang: str) -> str:
        """The table as a self-contained HTML page in ``lang``; ``shown``: each module's label
        and depth."""
        rows = []
        for module, summary in zip(shown, self.summaries.values(), strict=True):
            cells = self.static_cells(module, summary, lang)
            rows.append([cells[key] for key, _ in TABLE_COLUMNS])
        body = (
            static_html.tag("div", title, cls="hvs-title")
            + static_html.tag("div", subtitle, cls="hvs-muted")
            + static_html.table(
                [column["label"] for column in table_columns(lang)],
                rows,
                numeric={i for i, (_, numeric) in enumerate(TABLE_COLUMNS) if numeric},
            )
        )
        return static_html.page("monitor", body)

    def static_cells(
        self, shown: dict[str, Any], summary: ModuleSummary, lang: str
    ) -> dict[str, str]:
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
            "output": static_html.escape(_output_text(out)),
            **{k: _text(getattr(out, k, None) if out else None) for k in ("mean", "std")},
            **{
                k: _text(getattr(out, k, None) if out else None, estimated=estimated)
                for k in ("min", "max")
            },
            "histogram": static_html.bars(out.histogram if out else None, warn=bool(bad)),
            "grad_norm": _text(grad.norm if grad else None, estimated=_estimated(grad)),
            "warnings": static_html.tag(
                "span",
                _warning_text(summary, self.flag(grad), lang, estimated=_estimated(grad)),
                cls="hvs-warn",
            ),
        }


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


def _warning_text(
    summary: ModuleSummary, flag: str | None, lang: str, *, estimated: bool = False
) -> str:
    notes = []
    if summary.output.nan_events:
        notes.append(say(lang, "monitor.static_nan", step=summary.output.first_bad_step))
    elif summary.output.inf_events:
        notes.append(say(lang, "monitor.static_inf", step=summary.output.first_bad_step))
    if flag:
        warning = say(lang, f"monitor.static_flag_{flag}")
        # With exact=False the norm is a sample's estimate: the flag says so.
        if estimated:
            warning = say(lang, "monitor.static_norm_estimated", warning=warning)
        notes.append(warning)
    return "; ".join(notes)


def _output_text(t: TensorStats | None) -> str:
    """The output column: the shape, and ``|z|`` when the statistics are a complex tensor's
    magnitude."""
    if t is None:
        return ""
    return shape_text(t.shape) + (" |z|" if t.magnitude else "")


def _estimated(t: TensorStats | None) -> bool:
    """True when a gradient's norm is a sample's estimate (exact=False)."""
    return bool(t) and not t.norm_exact


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
