"""Each module's histogram over training steps: the data behind the activation heat map.

Built from what ``record()`` already keeps for every event (no new pass over any tensor): a
``HIST_BINS``-bin histogram of the event's first tensor over that tensor's own exact range
(for a tensor larger than ``SAMPLE_SIZE`` elements, of a ``SAMPLE_SIZE``-value sample), and
its exact min and max (with ``record(exact=False)``, the sample's range and extremes).

An event's bins span its own range, so two events cannot be compared bin by bin. A heat map
needs one set of bins per module, the same at every step: each event's counts are moved onto
the module's bins by spreading every one of its bins' count evenly over the module bins it
overlaps (the density a histogram stands for, uniform within a bin). What that costs: where
values lay *within* one of the event's bins (a 16th of its range) is lost, so features finer
than that come out smeared over it; module bins finer than that gain nothing; one outlier
widens an event's range and so coarsens its 16 bins; counts become fractions; a constant
tensor (min == max) goes whole into the bin that holds its value.

Two ways to fix a module's bins:
- ``from_batches`` (a finished ``Recording``): ``bins`` equal bins over the module's range
  over the whole run, so a drifting distribution shows as a drift, not rescaled away.
- ``RollingHistograms`` (a live ``HookMonitor``, whose run has no end yet): bins of a
  power-of-two width on a grid aligned at multiples of that width. When values fall outside,
  the width doubles (as often as needed) and the window moves; old bins then merge exactly, in
  pairs, into the new ones, so every column keeps sharing one set of bins without being
  estimated twice. The price: the live bins can be up to twice as coarse as the range needs.
  Time is bounded too: at most ``columns`` columns; when the run outgrows them, neighbouring
  columns merge in pairs and each covers twice as many steps.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import torch

from .store import BACKWARD_PRE, FORWARD, HistogramBatch

# What a histogram counts, its signal: a module's output, or the gradient w.r.t. that output;
# and the phase (id) whose events each signal reads.
SIGNALS = ("output", "gradient")
SIGNAL_PHASES = {"output": FORWARD, "gradient": BACKWARD_PRE}
STATIC_BINS = 40  # value bins per module in a figure (fastai's "colourful dimension" has 40)
LIVE_BINS = 32  # value bins per module in the live view
LIVE_COLUMNS = 100  # time columns in the live view (even: they merge in pairs)


def check_signal(signal, name: str = "signal") -> str:
    """Return ``signal`` if it is one of SIGNALS; otherwise raise a ValueError naming them
    (``name``: what the caller calls it)."""
    if signal not in SIGNALS:
        raise ValueError(
            f"{name} must be 'output' (each module's output) or 'gradient' (the gradient w.r.t. "
            f"each module's output), got {signal!r}."
        )
    return signal


def signal_or_kind(signal, kind, function: str) -> str:
    """``signal``, checked; or the value of ``kind=``, its deprecated name, with a warning that
    names the new one (``function``: the caller, as the user wrote it)."""
    if kind is not None:
        warnings.warn(
            f"{function}(kind=...) is now {function}(signal=...), 'output' or 'gradient' "
            "(kind= will be removed in a later release).",
            DeprecationWarning,
            stacklevel=3,
        )
        signal = kind
    return check_signal(signal)


@dataclass(frozen=True, eq=False)
class HistogramHistory:
    """One module's histogram over training steps: ``counts[c, b]`` is how many of its values
    per recorded step fell in value bin ``b`` during time column ``c`` (of a SAMPLE_SIZE-value
    sample, for larger tensors)."""

    path: str
    name: str  # the path, or the class name for the root
    signal: str  # 'output' or 'gradient'
    step_edges: tuple[int, ...]  # column c covers steps step_edges[c] up to step_edges[c + 1]
    value_edges: tuple[float, ...]  # bin b covers values value_edges[b] up to value_edges[b + 1]
    counts: torch.Tensor  # float64, (columns, bins)
    events: int  # events folded in

    @property
    def kind(self) -> str:
        """Deprecated: ``signal``."""
        warnings.warn(
            "HistogramHistory.kind is now HistogramHistory.signal, 'output' or 'gradient' "
            "(kind will be removed in a later release).",
            DeprecationWarning,
            stacklevel=2,
        )
        return self.signal

    @property
    def columns(self) -> int:
        return self.counts.shape[0]

    @property
    def bins(self) -> int:
        return self.counts.shape[1]

    def __repr__(self) -> str:
        lo, hi = self.value_edges[0], self.value_edges[-1]
        return (
            f"HistogramHistory({self.name!r} {self.signal}: {self.columns} columns over steps "
            f"{self.step_edges[0]}-{self.step_edges[-1] - 1}, {self.bins} bins over [{lo:.4g}, {hi:.4g}], "
            f"{self.events} events)"
        )


def rebin(
    counts: torch.Tensor, lo: torch.Tensor, hi: torch.Tensor, edges: torch.Tensor
) -> torch.Tensor:
    """Move each row's counts, equal bins over ``[lo, hi]``, onto the bins between ``edges``
    (one row of edges per row, covering ``[lo, hi]``), spreading each bin evenly over what it
    overlaps. A row with ``lo == hi`` goes whole into the bin that holds ``lo``."""
    n, k = counts.shape
    width = hi - lo
    flat = width <= 0
    scale = k / torch.where(flat, 1.0, width)
    # Where each edge falls on the row's own bins, in bins; the cumulative count there is
    # the full bins below it plus the covered fraction of the one it cuts.
    at = ((edges - lo[:, None]) * scale[:, None]).clamp_(0, k)
    below = torch.cat([counts.new_zeros(n, 1), counts.cumsum(1)], 1)
    index = at.floor().long().clamp_(max=k - 1)
    cumulative = below.gather(1, index) + (at - index) * counts.gather(1, index)
    moved = cumulative.diff(dim=1)
    if flat.any():
        rows = flat.nonzero().flatten()
        bin_of = torch.searchsorted(edges[rows], lo[rows, None], right=True).flatten() - 1
        moved[rows] = 0
        moved[rows, bin_of.clamp_(0, edges.shape[1] - 2)] = counts[rows].sum(1)
    return moved


def from_batches(
    batches: Iterable[HistogramBatch],
    phase_id: int,
    targets: Sequence[tuple[str, object]],
    names: Sequence[str],
    signal: str,
    bins: int = STATIC_BINS,
) -> list[HistogramHistory]:
    """One history per module with events of ``phase_id``, in the targets' order: ``bins``
    equal bins over the module's range over the whole run, one column per recorded step."""
    if isinstance(bins, bool) or not isinstance(bins, int) or bins < 2:
        raise ValueError(f"bins must be a whole number of value bins, at least 2, got {bins!r}.")
    parts = []
    for batch in batches:
        mine = batch.phases == phase_id
        parts.append(
            (
                batch.steps[mine],
                batch.path_ids[mine],
                batch.counts[mine],
                batch.lo[mine],
                batch.hi[mine],
            )
        )
    if not parts:
        return []
    steps, path_ids, counts, lo, hi = (torch.cat(column) for column in zip(*parts, strict=True))
    histories = []
    for path_id in torch.unique(path_ids).tolist():  # sorted: the targets' (pre-)order
        mine = path_ids == path_id
        layer_lo, layer_hi = lo[mine].min().item(), hi[mine].max().item()
        if layer_hi <= layer_lo:  # one value at every step: a bin of width 1 around it
            layer_lo, layer_hi = layer_lo - 0.5, layer_hi + 0.5
        edges = torch.linspace(layer_lo, layer_hi, bins + 1, dtype=torch.float64)
        edges[0], edges[-1] = layer_lo, layer_hi  # exactly: no value may fall outside
        events = int(mine.sum())
        moved = rebin(counts[mine], lo[mine], hi[mine], edges.expand(events, -1))
        recorded, column_of = torch.unique(steps[mine], return_inverse=True)
        grid = torch.zeros(len(recorded), bins, dtype=torch.float64).index_put_(
            (column_of,), moved, accumulate=True
        )
        starts = recorded.tolist()
        last = starts[-1] + min(
            (b - a for a, b in zip(starts, starts[1:], strict=False)), default=1
        )
        path = targets[path_id][0]
        histories.append(
            HistogramHistory(
                path, names[path_id], signal, (*starts, last), tuple(edges.tolist()), grid, events
            )
        )
    return histories


class RollingHistograms:
    """Histograms over time of ``streams`` value streams (a module's outputs, or its gradients),
    in memory fixed when it is made: ``streams × columns × bins`` float32 counts.

    See the module's docstring for how bins and columns grow. ``add`` takes a batch at a time
    (a few torch ops per batch, a few Python steps per stream in it)."""

    def __init__(
        self, streams: int, *, bins: int = LIVE_BINS, columns: int = LIVE_COLUMNS, span: int = 1
    ):
        if columns < 2 or columns % 2:
            raise ValueError(
                f"columns must be an even number of at least 2 (they merge in pairs), got {columns}."
            )
        self.bins, self.columns, self.span = bins, columns, span  # span: steps per column
        self.counts = torch.zeros(streams, columns, bins, dtype=torch.float32)
        self.steps_per_column = torch.zeros(
            columns, dtype=torch.float32
        )  # recorded steps seen in each
        self.used = 0  # columns that have begun (the last one may still be filling)
        self.last_step = -1  # the latest step counted in steps_per_column
        self.events = torch.zeros(streams, dtype=torch.int64)
        self.version = 0  # changes with every batch: readers can tell whether to look again
        self._exponent: list[int | None] = [
            None
        ] * streams  # bins are 2**exponent wide; None: no value yet
        self._origin = [0] * streams  # the first bin starts at origin * 2**exponent
        self._seen = [(math.inf, -math.inf)] * streams  # the stream's min and max so far
        self._first_edge = torch.zeros(streams, dtype=torch.float64)  # origin * width, as a tensor
        self._width = torch.ones(streams, dtype=torch.float64)
        self._steps = torch.arange(bins + 1, dtype=torch.float64)

    def add(
        self,
        streams: torch.Tensor,
        steps: torch.Tensor,
        counts: torch.Tensor,
        lo: torch.Tensor,
        hi: torch.Tensor,
    ) -> None:
        """Fold in one histogram per row: ``counts`` HIST_BINS equal bins over ``[lo, hi]``,
        for stream ``streams[i]`` at step ``steps[i]``."""
        if not len(steps):
            return
        counts, lo, hi = counts.double(), lo.double(), hi.double()  # no copy when they are already
        last = int(steps.max())
        while last // self.span >= self.columns:
            self._merge_columns()
        fresh = torch.unique(steps[steps > self.last_step])
        # index_put_(accumulate=True) rather than index_add_: torch runs index_add_ in parallel,
        # and on a busy machine its threads then wait for each other (6 us alone, 270 us then).
        if len(fresh):
            self.steps_per_column.index_put_(
                (fresh // self.span,), torch.ones(len(fresh)), accumulate=True
            )
            self.last_step = int(fresh[-1])
        n_streams = len(self._exponent)
        lows = torch.full((n_streams,), math.inf, dtype=torch.float64).scatter_reduce_(
            0, streams, lo, "amin"
        )
        highs = torch.full((n_streams,), -math.inf, dtype=torch.float64).scatter_reduce_(
            0, streams, hi, "amax"
        )
        present = torch.unique(streams).tolist()
        for stream, low, high in zip(
            present, lows[present].tolist(), highs[present].tolist(), strict=True
        ):
            self._cover(stream, low, high)
        edges = self._first_edge[streams, None] + self._width[streams, None] * self._steps
        moved = rebin(counts, lo, hi, edges)
        self.counts.view(-1, self.bins).index_put_(
            (streams * self.columns + steps // self.span,), moved.float(), accumulate=True
        )
        self.used = max(self.used, last // self.span + 1)
        self.events += torch.bincount(streams, minlength=n_streams)
        self.version += 1

    def means(self) -> torch.Tensor:
        """(streams, used columns, bins): values per recorded step in each bin."""
        used = self.used
        return self.counts[:, :used] / self.steps_per_column[:used].clamp(min=1)[None, :, None]

    def occupied(self) -> list[tuple[int, int] | None]:
        """Per stream, the first and last bin holding anything (None: nothing yet)."""
        filled = self.counts[:, : self.used].sum(1) > 0
        first = filled.int().argmax(1).tolist()
        last = (self.bins - 1 - filled.flip(1).int().argmax(1)).tolist()
        return [
            (a, b) if any_ else None
            for a, b, any_ in zip(first, last, filled.any(1).tolist(), strict=True)
        ]

    def first_edges(self) -> list[float]:
        """Per stream, where its first bin starts."""
        return self._first_edge.tolist()

    def widths(self) -> list[float]:
        """Per stream, its bins' width."""
        return self._width.tolist()

    def edges(self, stream: int, first: int, last: int) -> list[float]:
        """The value edges of bins ``first`` to ``last`` (inclusive) of ``stream``."""
        return (
            self._first_edge[stream] + self._width[stream] * self._steps[first : last + 2]
        ).tolist()

    def history(self, stream: int, path: str, name: str, signal: str) -> HistogramHistory | None:
        """The stream as a HistogramHistory over its occupied bins (None: nothing yet)."""
        span = self.occupied()[stream]
        if span is None:
            return None
        first, last = span
        counts = self.means()[stream, :, first : last + 1].double()
        step_edges = (
            *(c * self.span for c in range(self.used)),
            min(self.used * self.span, self.last_step + 1),
        )
        return HistogramHistory(
            path,
            name,
            signal,
            step_edges,
            tuple(self.edges(stream, first, last)),
            counts,
            int(self.events[stream]),
        )

    # -- growing -------------------------------------------------------------------------------

    def _merge_columns(self) -> None:
        """Halve the time resolution: columns 2c and 2c + 1 become column c."""
        half = self.columns // 2
        streams = self.counts.shape[0]
        self.counts[:, :half] = self.counts.view(streams, half, 2, self.bins).sum(2)
        self.counts[:, half:] = 0
        self.steps_per_column[:half] = self.steps_per_column.view(half, 2).sum(1)
        self.steps_per_column[half:] = 0
        self.span *= 2
        self.used = (self.used + 1) // 2

    def _cover(self, stream: int, low: float, high: float) -> None:
        """Make the stream's bins cover ``[low, high]`` too, merging old bins exactly if they grow."""
        seen_lo, seen_hi = self._seen[stream]
        low, high = min(seen_lo, low), max(seen_hi, high)
        self._seen[stream] = (low, high)
        exponent, origin = self._exponent[stream], self._origin[stream]
        top = self.bins - 1
        if exponent is not None and (
            origin <= math.floor(math.ldexp(low, -exponent))
            and math.floor(math.ldexp(high, -exponent)) <= origin + top
        ):
            return
        new = exponent if exponent is not None else _first_exponent(low, high, self.bins)
        while math.floor(math.ldexp(high, -new)) - math.floor(math.ldexp(low, -new)) > top:
            new += 1
        new_origin = math.floor(math.ldexp(low, -new))
        if exponent is not None:
            # Bin origin + k of width 2**exponent lies inside bin (origin + k) >> shift of the new width.
            shift = new - exponent
            index = torch.tensor(
                [min(max(((origin + k) >> shift) - new_origin, 0), top) for k in range(self.bins)]
            )
            merged = torch.zeros(self.bins, self.columns).index_put_(
                (index,), self.counts[stream].t(), accumulate=True
            )
            self.counts[stream] = merged.t()
        self._exponent[stream], self._origin[stream] = new, new_origin
        self._width[stream] = math.ldexp(1.0, new)
        self._first_edge[stream] = math.ldexp(float(new_origin), new)


def _first_exponent(low: float, high: float, bins: int) -> int:
    """A first bin width, 2**exponent: ``bins`` of them about span ``[low, high]``."""
    if high > low:
        return math.frexp((high - low) / bins)[1]
    if low != 0:  # one value so far: bins a 32nd to a 64th of its size
        return math.frexp(abs(low))[1] - 6
    return -24
