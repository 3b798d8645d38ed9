"""Tensor summaries for record(): what a hook keeps, how statistics are computed, how events are stored.

The design keeps the cost inside a hook small and the number of Python objects low:
- A hook writes a fixed-size sample of each tensor into a preallocated buffer row (one copy)
  and, for a large tensor, takes one exact pass (min/max, which also reveals NaN and Inf).
- Statistics for all buffered rows are computed together, in a few batched ops on the
  tensor's device, with one transfer to the host (never one per module).
- Events are kept as columns in ``array``s: a long training loop adds almost nothing for
  Python's garbage collector to walk (a full collection in a kernel costs tens of ms).
"""

from __future__ import annotations

import collections
import math
import weakref
from array import array
from dataclasses import dataclass
from typing import Any

import torch

STATS = ("mean", "std", "min", "max", "norm", "zeros", "nan", "inf", "histogram", "values")
HIST_BINS = 16
RUNS, RUN = 16, 16  # a large tensor's sample: 16 runs of 16 contiguous elements
SAMPLE_SIZE = RUNS * RUN  # larger tensors: mean, std, norm, zeros and histogram are estimated
TINY = 16  # tensors with at most this many elements keep their values
BUFFER_ROWS = 1024  # sample rows held before statistics are computed
SLAB = 256  # rows computed together (a slab fits in cache)

_COLUMNS = ("count", "mean", "std", "norm", "zeros", "nan", "inf", "min", "max", "hist_lo", "hist_hi")
_NCOL = len(_COLUMNS)
_SUMMARISABLE = {
    torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.bool,
    torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64,
}
# record(stats=...) name -> TensorStats field, column in _COLUMNS, type
_FIELDS = (
    ("mean", "mean", 1, float), ("std", "std", 2, float), ("norm", "norm", 3, float),
    ("zeros", "zero_fraction", 4, float), ("nan", "nan_count", 5, int), ("inf", "inf_count", 6, int),
    ("min", "min", 7, float), ("max", "max", 8, float),
)
_STRIDED = torch.strided
_NO_EXTREMES = (math.nan, math.nan)
_EV = 7  # ints per event: seq, step, phase, path id, call, first leaf, number of leaves
_LF = 4  # ints per leaf: name id, kind id, shape id, row (-1: not a tensor)
_RW = 7  # ints per row: dtype id, device id, numel, sample length, sampled, exact NaN and Inf counts (-1: none)


@dataclass(frozen=True, slots=True)
class TensorStats:
    """A summary of one tensor (or of a non-tensor value) seen by a hook.

    Statistics not asked for (``record(stats=...)``) are None. For tensors larger than
    ``SAMPLE_SIZE`` elements, mean, std, norm, zero_fraction and histogram are estimated from
    a fixed-stride sample (``sampled`` is True); min, max and the NaN/Inf counts are exact.
    Mean, std and norm are taken over the finite values; NaN and Inf are counted apart; so are
    min and max, when NaN/Inf counts are asked for too (without them, a large tensor's min and
    max are torch's own, NaN when a NaN is present).
    """

    name: str  # "input[0]", "output", "grad_output[0]", ...
    kind: str  # "tensor", "None" or the type name of another value
    shape: tuple[int, ...] | None = None
    dtype: str | None = None
    device: str | None = None
    numel: int = 0
    mean: float | None = None
    std: float | None = None
    min: float | None = None
    max: float | None = None
    norm: float | None = None
    zero_fraction: float | None = None
    nan_count: int | None = None
    inf_count: int | None = None
    histogram: tuple[int, ...] | None = None
    hist_range: tuple[float, float] | None = None
    values: Any = None
    sampled: bool = False
    sample_size: int = 0
    text: str | None = None  # repr of a non-tensor value

    def brief(self) -> str:
        """One short line: name, dtype and shape, and the main statistics."""
        if self.kind != "tensor":
            return f"{self.name}={self.text}"
        shape = "x".join(str(s) for s in self.shape) if self.shape else "scalar"
        parts = [f"{self.name} {self.dtype}[{shape}]"]
        for label, value in (("mean", self.mean), ("std", self.std), ("max", self.max), ("norm", self.norm)):
            if value is not None:
                parts.append(f"{label}={_fmt(value)}")
        if self.nan_count:
            parts.append(f"NaN={self.nan_count}")
        if self.inf_count:
            parts.append(f"Inf={self.inf_count}")
        return " ".join(parts)


class Needs:
    """Which pieces of work the selected statistics require."""

    def __init__(self, stats: tuple[str, ...]):
        self.stats = frozenset(stats)
        self.sample = bool(self.stats)
        self.lo = bool(self.stats & {"min", "histogram"})
        self.hi = bool(self.stats & {"max", "histogram"})
        self.minmax = self.lo or self.hi
        self.nonfinite = bool(self.stats & {"nan", "inf"})


def check_stats(stats) -> tuple[str, ...]:
    """Validate a ``stats=`` argument: None means all of ``STATS``."""
    if stats is None:
        return STATS
    if isinstance(stats, str):
        stats = [stats]
    chosen = tuple(stats)
    unknown = [s for s in chosen if s not in STATS]
    if unknown:
        raise ValueError(
            f"unknown statistic(s) {', '.join(map(repr, unknown))}; valid names are {', '.join(STATS)}."
        )
    return chosen


class Interner:
    """Small tables that turn repeated strings and shapes into ints."""

    def __init__(self):
        self.index: dict[Any, int] = {}
        self.items: list[Any] = []

    def __call__(self, value) -> int:
        i = self.index.get(value)
        if i is None:
            i = self.index[value] = len(self.items)
            self.items.append(value)
        return i


class Lane:
    """The sample buffer of one device, and views of its rows made once and kept (so that a
    hook needs no indexing op)."""

    def __init__(self, device: torch.device, words: Interner):
        self.device = device
        self.buffer = torch.full((BUFFER_ROWS, SAMPLE_SIZE), math.nan, dtype=torch.float32, device=device)
        self.small: dict[tuple, torch.Tensor] = {}  # (row, shape) -> the row's first cells in that shape
        self.row_views: list[torch.Tensor | None] = [None] * BUFFER_ROWS  # row -> view of that row
        self.positions: dict[int, torch.Tensor] = {}  # numel -> sample positions
        self.used = 0
        self.rows: list[int] = []  # the pending rows held in this lane, in order
        # Exact min, max, NaN and Inf counts that hooks reduce on the device (NaN: none).
        self.exact = torch.full((BUFFER_ROWS, 4), math.nan, dtype=torch.float32, device=device)
        self._cells: list[tuple | None] = [None] * BUFFER_ROWS
        self.type_ids: dict[torch.dtype, tuple[int, int, bool, bool, bool]] = {}
        self._words = words
        # Work space for the batched statistics (see _compute_slab).
        self.work = torch.empty((2, SLAB, SAMPLE_SIZE), dtype=torch.float32, device=device)
        self.bin_index = torch.empty((SLAB, SAMPLE_SIZE), dtype=torch.int32, device=device)
        self.ones = torch.ones(SAMPLE_SIZE, dtype=torch.float32, device=device)
        bins = HIST_BINS + 2
        self.bin_offsets = torch.arange(0, SLAB * bins, bins, dtype=torch.float32, device=device)[:, None]

    def type_id(self, dtype: torch.dtype) -> tuple[int, int, bool, bool, bool]:
        """(dtype id, device id, summarisable, floating point, float32), made once per dtype."""
        ids = self.type_ids[dtype] = (
            self._words(str(dtype).removeprefix("torch.")), self._words(str(self.device)),
            dtype in _SUMMARISABLE and self.device.type != "meta",  # meta tensors hold no values
            dtype.is_floating_point, dtype is torch.float32,
        )
        return ids

    def exact_cells(self, slot: int) -> tuple[torch.Tensor, ...]:
        """The row's four 0-d cells of ``exact``, made once and kept."""
        cells = self._cells[slot]
        if cells is None:
            cells = self._cells[slot] = tuple(self.exact[slot].unbind())
        return cells

    def row(self, slot: int) -> torch.Tensor:
        """Buffer row ``slot``, as a view made once and kept."""
        view = self.row_views[slot]
        if view is None:
            view = self.row_views[slot] = self.buffer[slot]
        return view

    def sample_positions(self, n: int) -> torch.Tensor:
        """Where a tensor of ``n`` elements is sampled: RUNS runs of RUN contiguous elements,
        spread over the whole tensor (few cache lines to touch), an odd gap apart (so that
        the runs do not line up with power-of-two dimensions)."""
        gap = (n - RUN) // (RUNS - 1)
        gap -= 1 - gap % 2
        starts = torch.arange(RUNS, device=self.device) * gap
        positions = (starts[:, None] + torch.arange(RUN, device=self.device)).reshape(-1)
        if len(self.positions) > 256:
            self.positions.clear()
        self.positions[n] = positions
        return positions

    def small_view(self, slot: int, shape: tuple[int, ...], n: int) -> torch.Tensor:
        if len(self.small) > 4 * BUFFER_ROWS:
            self.small.clear()
        view = self.small[(slot, shape)] = self.buffer[slot, :n].view(shape)
        return view


class Pending:
    """Events and samples written by hooks, waiting for their statistics."""

    def __init__(self, need: Needs, names: Interner, shapes: Interner, words: Interner):
        self.need = need
        self.names, self.shapes, self.words = names, shapes, words
        self.tensor_kind = words("tensor")
        self.dedup_on = True  # record() turns it off when no tensor can be seen twice
        self.lanes: dict[torch.device, Lane] = {}
        self._cpu: Lane | None = None
        self._pairs: dict[torch.dtype, tuple] = {}
        self.reset()

    def reset(self) -> None:
        self.events = array("q")
        self.leaves = array("q")
        self.rows = array("q")
        self.minmax = array("d")  # exact min, max per row (NaN: none)
        self.slots: list[tuple[Lane | None, int]] = []  # (lane, buffer row) per row
        for lane in self.lanes.values():
            lane.used = 0
            lane.rows = []
        self.tiny_rows: list[int] = []  # rows of tensors small enough to keep their values
        self.texts: dict[int, str] = {}
        self.dedup: dict[tuple, tuple] = {}

    @property
    def n_rows(self) -> int:
        return len(self.slots)

    @property
    def n_events(self) -> int:
        return len(self.events) // _EV

    def add_event(self, seq: int, step: int, phase: int, path_id: int, call: int, leaves) -> None:
        """Append one event; each tensor gets a buffer row, shared by aliases of the same version."""
        leaf_array = self.leaves
        first = len(leaf_array) // _LF
        n = 0
        for name, value in leaves:
            if isinstance(value, torch.Tensor):
                leaf_array.extend(self.tensor_leaf(name, value))
            else:
                name_id = self.names.index.get(name)
                if name_id is None:
                    name_id = self.names(name)
                kind = "None" if value is None else type(value).__name__
                self.texts[first + n] = "None" if value is None else _short_repr(value)
                leaf_array.extend((name_id, self.words(kind), -1, -1))
            n += 1
        self.events.extend((seq, step, phase, path_id, call, first, n))

    def add_tensor_event(self, seq: int, step: int, phase: int, path_id: int, call: int, name: str,
                         value: torch.Tensor) -> None:
        """``add_event`` for the usual event: one tensor (a hook's hot path)."""
        leaf_array = self.leaves
        first = len(leaf_array) // _LF
        leaf_array.extend(self.tensor_leaf(name, value))
        self.events.extend((seq, step, phase, path_id, call, first, 1))

    def tensor_leaf(self, name: str, value: torch.Tensor) -> tuple[int, int, int, int]:
        """The leaf columns of one tensor, writing its row unless this version has one."""
        name_id = self.names.index.get(name)
        if name_id is None:
            name_id = self.names(name)
        shape = value.shape  # a torch.Size is a tuple: it hashes and compares as one
        shape_id = self.shapes.index.get(shape)
        if shape_id is None:
            shape_id = self.shapes(tuple(shape))
        if not self.dedup_on:
            return name_id, self.tensor_kind, shape_id, self._write(value.detach(), shape)
        # The same tensor at the same version holds the same values: one row for both
        # (a module's input is usually the previous module's output). The weak reference
        # tells a live tensor from a new one that reuses a freed id.
        key = (id(value), value._version)
        hit = self.dedup.get(key)
        if hit is not None and hit[0]() is value:
            return name_id, self.tensor_kind, shape_id, hit[1]
        row = self._write(value.detach(), shape)
        self.dedup[key] = (weakref.ref(value), row)
        return name_id, self.tensor_kind, shape_id, row

    def _lane(self, t: torch.Tensor) -> Lane:
        lane = self._cpu if t.is_cpu else self.lanes.get(t.device)
        if lane is None:
            lane = self.lanes[t.device] = Lane(t.device, self.words)
            if t.is_cpu:
                self._cpu = lane
        return lane

    def _write(self, t: torch.Tensor, shape: tuple[int, ...]) -> int:
        """Copy a sample of ``t`` into the next buffer row; for a large ``t``, one exact pass."""
        slots = self.slots
        row = len(slots)
        n = t.numel()
        lane = self._cpu if t.is_cpu and self._cpu is not None else self._lane(t)
        dtype = t.dtype
        kind = lane.type_ids.get(dtype) or lane.type_id(dtype)
        if not (kind[2] and n and self.need.sample and t.layout is _STRIDED):
            slots.append((None, -1))
            self.rows.extend((kind[0], kind[1], n, 0, 0, 0, 0))
            self.minmax.extend(_NO_EXTREMES)
            return row
        slot = lane.used
        lane.used = slot + 1
        lane.rows.append(row)
        slots.append((lane, slot))
        if not kind[3]:
            t = t.to(torch.float64)
        if n <= SAMPLE_SIZE:  # small: the whole tensor, so every statistic is exact
            if n <= TINY:
                self.tiny_rows.append(row)
            # The row's first n cells, viewed in t's shape: one copy_, no reshaping.
            target = lane.small.get((slot, shape))
            if target is None:
                target = lane.small_view(slot, shape, n)
            target.copy_(t)
            # The rest of the row stays NaN: padding the statistics skip. NaN and Inf are
            # counted from the sample (-1).
            self.rows.extend((kind[0], kind[1], n, n, 0, -1, -1))
            self.minmax.extend(_NO_EXTREMES)
            return row
        extremes = self._exact_pass(t, lane, slot)
        # One gather (take reads t in its logical order, whatever its strides), after the
        # exact pass: its scattered runs then hit cache and TLB entries, not memory.
        positions = lane.positions.get(n)
        if positions is None:
            positions = lane.sample_positions(n)
        if kind[4]:
            torch.take(t, positions, out=lane.row(slot))
        else:  # the buffer is float32: gather, then convert only the sample
            lane.row(slot).copy_(torch.take(t, positions))
        self.rows.extend((kind[0], kind[1], n, SAMPLE_SIZE, 1, extremes[2], extremes[3]))
        self.minmax.extend(extremes[:2])
        return row

    def _pair(self, dtype: torch.dtype) -> tuple[torch.Tensor, tuple[torch.Tensor, torch.Tensor]]:
        """A two-cell CPU tensor of ``dtype``, and its cells, for aminmax's out=."""
        pair = torch.empty(2, dtype=dtype)
        made = self._pairs[dtype] = (pair, tuple(pair.unbind()))
        return made

    def _exact_pass(self, t: torch.Tensor, lane: Lane, slot: int) -> tuple[float, float, int, int]:
        """Exact NaN and Inf counts and min/max of a large tensor, as far as they were asked for.

        Returns (min, max, NaN count, Inf count); NaN or -1 where the value is deferred (a
        reduced scalar left on the device, read with all the others at the flush) or not asked.
        """
        need = self.need
        if need.nonfinite and t.is_cpu:
            # On the CPU a reduced scalar is already in host memory, so reading it costs no
            # transfer; the one full pass shows whether a NaN or an Inf is there, and only then
            # are they counted. Min/max are then over the finite values.
            if need.minmax:
                pair = self._pairs.get(t.dtype) or self._pair(t.dtype)
                torch.aminmax(t, out=pair[1])
                lo, hi = pair[0].tolist()  # one read for both
                probe = hi - lo
            else:
                lo = hi = math.nan
                probe = t.sum().item()
            if math.isfinite(probe):
                return lo, hi, 0, 0
            nans, infs = int(torch.isnan(t).sum()), int(torch.isinf(t).sum())
            if need.minmax:
                finite = t[torch.isfinite(t)]
                lo, hi = (finite.min().item(), finite.max().item()) if finite.numel() else (math.nan, math.nan)
            return lo, hi, nans, infs
        # Otherwise (an accelerator, or no NaN/Inf counts asked for) nothing is read per module:
        # the reductions are written, on the device, into the row's cells of lane.exact.
        lo_cell, hi_cell, nan_cell, inf_cell = lane.exact_cells(slot)
        if need.lo and need.hi:
            torch.aminmax(t, out=(lo_cell, hi_cell))
        elif need.lo:
            torch.amin(t, dim=(), out=lo_cell)
        elif need.hi:
            torch.amax(t, dim=(), out=hi_cell)
        if need.nonfinite:
            torch.sum(torch.isnan(t), dtype=torch.float32, out=nan_cell)
            torch.sum(torch.isinf(t), dtype=torch.float32, out=inf_cell)
        return math.nan, math.nan, -1, -1


def compute(pending: Pending) -> tuple[array, array, dict[int, list[float]]]:
    """Statistics for every pending row: ``_NCOL`` columns and ``HIST_BINS`` counts per row."""
    n = pending.n_rows
    table = array("d", [math.nan]) * (n * _NCOL)
    hist = array("d", [0.0]) * (n * HIST_BINS)
    values: dict[int, list[float]] = {}
    by_lane = {lane: lane.rows for lane in pending.lanes.values() if lane.rows}
    if by_lane:
        meta = torch.frombuffer(pending.rows, dtype=torch.int64).view(-1, _RW)
        exact = torch.frombuffer(pending.minmax, dtype=torch.float64).view(-1, 2)
    for lane, rows in by_lane.items():
        for start in range(0, len(rows), SLAB):  # slabs small enough to stay in cache
            _compute_slab(pending, lane, rows[start : start + SLAB], meta, exact, table, hist, values)
        lane.buffer[: len(rows)].fill_(math.nan)  # ready for the next rows
        lane.exact[: len(rows)].fill_(math.nan)
    return table, hist, values


def _compute_slab(pending: Pending, lane: Lane, rows: list[int], meta, exact, table, hist, values) -> None:
    """One slab: batched statistics of the samples, corrected by the exact values from the hooks.

    Only what ``record(stats=...)`` asked for is computed; the other columns stay NaN.
    """
    need = pending.need
    want = need.stats
    n = len(rows)
    first = pending.slots[rows[0]][1]
    device = lane.device
    sample = lane.buffer[first : first + n]  # a device's rows are consecutive
    contiguous = rows[-1] - rows[0] == n - 1
    index = slice(rows[0], rows[0] + n) if contiguous else torch.tensor(rows)
    info = meta[index].to(device)
    numel, length, sampled = info[:, 2].double(), info[:, 3].double(), info[:, 4].bool()
    nothing = torch.full((n,), math.nan, dtype=torch.float64, device=sample.device)

    # Float ops only (on the CPU, bool masks and their sums cost 5-10x more), written into the
    # lane's two work matrices: a fresh 256 KB temporary per op would be a fresh mmap, and
    # page faults would cost more than the arithmetic.
    width = sample.shape[1]
    ones = lane.ones
    clean, work = lane.work[0][:n], lane.work[1][:n]
    torch.nan_to_num(sample, nan=0.0, posinf=0.0, neginf=0.0, out=clean)  # non-finite -> 0
    torch.mul(sample, 0, out=work)  # 0 where finite, NaN where NaN or Inf
    non_finite = (work.nan_to_num_(nan=1.0) @ ones).double()
    count = width - non_finite  # the finite values (the NaN padding is non-finite)
    mean = std = norm = zeros = nan = inf = lo = hi = range_lo = range_hi = nothing
    if want & {"mean", "std"}:
        mean = torch.where(count > 0, (clean @ ones).double() / count.clamp(min=1), math.nan)
    if "std" in want:
        # Two passes, centred: no cancellation. The non-finite cells hold 0, so each adds mean^2.
        safe_mean = torch.nan_to_num(mean)
        centered = torch.sub(clean, safe_mean.float()[:, None], out=work)
        spread = torch.linalg.vector_norm(centered, dim=1).double().square() - non_finite * safe_mean.square()
        variance = (spread / (count - 1).clamp(min=1)).clamp(min=0)
        std = torch.where(count > 1, variance.sqrt(), torch.where(count == 1, 0.0, math.nan))
    if "norm" in want:
        norm = torch.linalg.vector_norm(clean, dim=1).double() * (numel / length).sqrt()
    if "zeros" in want:
        nonzero = (torch.abs(clean, out=work).sign_() @ ones).double()
        zeros = (count - nonzero) / length
    if need.nonfinite:
        ones_at_inf = torch.nan_to_num(sample, nan=0.0, posinf=1.0, neginf=1.0, out=work).sub_(clean)
        infinite = (ones_at_inf @ ones).double()
        inf = infinite
        nan = non_finite - infinite - (SAMPLE_SIZE - length)  # the NaN padding is not data
        # A sampled tensor's exact counts, taken in the hook, replace the sample's.
        nan_exact, inf_exact = info[:, 5].double(), info[:, 6].double()
        nan = torch.where(sampled & (nan_exact >= 0), nan_exact, nan)
        inf = torch.where(sampled & (inf_exact >= 0), inf_exact, inf)
    if need.minmax:  # over finite values; a sampled tensor's exact extremes replace the sample's
        lo_exact, hi_exact = exact[index].to(device).unbind(1)
        has_exact = sampled & ~torch.isnan(lo_exact)
        if need.lo:
            lo = torch.nan_to_num(sample, nan=math.inf, neginf=math.inf, out=work).amin(1).double()
            lo = torch.where(has_exact, lo_exact, lo)
        if need.hi:
            hi = torch.nan_to_num(sample, nan=-math.inf, posinf=-math.inf, out=work).amax(1).double()
            hi = torch.where(has_exact, hi_exact, hi)
    # Exact values the hooks reduced on the device replace the sample's.
    cells = lane.exact[first : first + n].double().unbind(1)
    lo, hi, nan, inf = (
        torch.where(torch.isnan(cell), column, cell) for cell, column in zip(cells, (lo, hi, nan, inf), strict=True)
    )
    if need.minmax:
        lo = torch.where(count == 0, math.nan, lo)
        hi = torch.where(count == 0, math.nan, hi)
    parts = []
    if "histogram" in want:
        # The bins span [min, max] (for a sampled tensor, the exact range); a constant tensor
        # lands in the middle bin; non-finite values go to a last, discarded bin.
        ok = torch.isfinite(lo) & torch.isfinite(hi)
        range_lo = torch.where(ok, lo, 0.0)
        range_hi = torch.where(ok, hi, 0.0)
        flat = range_hi <= range_lo
        range_lo = torch.where(flat, range_lo - 0.5, range_lo)
        range_hi = torch.where(flat, range_hi + 0.5, range_hi)
        scale = (HIST_BINS / (range_hi - range_lo)).float()
        # Per row: bins 0..B-1, then B (exactly the maximum: folded into B-1), then B+1 (dump).
        bins = HIST_BINS + 2
        u = torch.sub(sample, range_lo.float()[:, None], out=work).mul_(scale[:, None])
        u.nan_to_num_(nan=bins - 1, posinf=bins - 1, neginf=bins - 1).clamp_(0, bins - 1)
        u += lane.bin_offsets[:n]
        index_of = lane.bin_index[:n]
        index_of.copy_(u)  # to int32, in place
        counts = torch.bincount(index_of.view(-1), minlength=n * bins).view(n, bins)
        counts[:, HIST_BINS - 1] += counts[:, HIST_BINS]
        parts.append(counts[:, :HIST_BINS].reshape(-1).double())
    columns = torch.stack([count, mean, std, norm, zeros, nan, inf, lo, hi, range_lo, range_hi], 1)
    parts.insert(0, columns.view(-1))
    tiny = []
    if "values" in want and pending.tiny_rows:
        in_slab = set(rows)
        tiny = [rows.index(r) for r in pending.tiny_rows if r in in_slab]
    if tiny:
        parts.append(sample[tiny, :TINY].double().reshape(-1))
    host = torch.cat(parts).cpu().tolist()  # one transfer for the slab
    at_hist = n * _NCOL
    at_tiny = at_hist + (n * HIST_BINS if "histogram" in want else 0)
    if contiguous:
        r0 = rows[0]
        table[r0 * _NCOL : (r0 + n) * _NCOL] = array("d", host[:at_hist])
        if "histogram" in want:
            hist[r0 * HIST_BINS : (r0 + n) * HIST_BINS] = array("d", host[at_hist:at_tiny])
    else:
        for i, r in enumerate(rows):
            table[r * _NCOL : (r + 1) * _NCOL] = array("d", host[i * _NCOL : (i + 1) * _NCOL])
            if "histogram" in want:
                base = at_hist + i * HIST_BINS
                hist[r * HIST_BINS : (r + 1) * HIST_BINS] = array("d", host[base : base + HIST_BINS])
    for k, i in enumerate(tiny):
        r = rows[i]
        values[r] = host[at_tiny + k * TINY : at_tiny + k * TINY + pending.rows[r * _RW + 2]]


class Chunk:
    """The events of one flush, as flat arrays."""

    __slots__ = ("events", "leaves", "rows", "stats", "hist", "values", "texts", "skip")

    def __init__(self, pending: Pending, results):
        self.events, self.leaves, self.rows, self.texts = (
            pending.events, pending.leaves, pending.rows, pending.texts
        )
        self.stats, self.hist, self.values = results
        self.skip = 0  # leading events dropped by max_events

    def __len__(self) -> int:
        return len(self.events) // _EV - self.skip


class EventStore:
    """A ring buffer of chunks holding at most ``max_events`` events."""

    def __init__(self, max_events: int):
        self.max_events = max_events
        self.chunks: collections.deque[Chunk] = collections.deque()
        self.count = 0
        self.dropped = 0

    def __len__(self) -> int:
        return self.count

    def add(self, chunk: Chunk) -> None:
        self.chunks.append(chunk)
        self.count += len(chunk)
        while self.count > self.max_events:
            first = self.chunks[0]
            excess = self.count - self.max_events
            if len(first) <= excess:
                self.chunks.popleft()
                self.count -= len(first)
                self.dropped += len(first)
            else:
                first.skip += excess
                self.count -= excess
                self.dropped += excess


@dataclass(frozen=True, slots=True)
class HistogramBatch:
    """Events' histograms as tensors, one row per event: ``counts[i]`` are HIST_BINS equal bins
    over ``[lo[i], hi[i]]`` (of a SAMPLE_SIZE-value sample for larger tensors; a constant
    tensor, lo == hi, has all its values in one bin)."""

    steps: torch.Tensor  # int64
    phases: torch.Tensor  # int64: index into recording.PHASES
    path_ids: torch.Tensor  # int64: index into the recording's targets
    counts: torch.Tensor  # float64, (events, HIST_BINS)
    lo: torch.Tensor  # float64: the exact min of the finite values
    hi: torch.Tensor  # float64: the exact max


class Reader:
    """Turns stored columns back into TensorStats for one recording."""

    def __init__(self, names: Interner, shapes: Interner, words: Interner, want: frozenset[str]):
        self.names, self.shapes, self.words, self.want = names.items, shapes.items, words.items, want
        self._wanted = [(name, column, kind) for stat, name, column, kind in _FIELDS if stat in want]

    def events(self, chunk: Chunk):
        """Yield (seq, step, phase id, path id, call, tensors) for each event in ``chunk``."""
        cache: dict[int, tuple] = {}
        ev, lv = chunk.events, chunk.leaves
        for e in range(chunk.skip, len(ev) // _EV):
            seq, step, phase, path_id, call, first, n = ev[e * _EV : (e + 1) * _EV]
            tensors = []
            for leaf in range(first, first + n):
                row = lv[leaf * _LF + 3]
                fields = None
                if row >= 0:
                    fields = cache.get(row)
                    if fields is None:
                        fields = cache[row] = self._fields(chunk, row)
                tensors.append(self._stats(chunk, leaf, fields))
            yield seq, step, phase, path_id, call, tuple(tensors)

    def mains(self, chunk: Chunk):
        """Per event of a fresh chunk, straight from the columns: (step, phase id, path id, leaf, mean, norm,
        NaN count, Inf count) of its first tensor (the usual single output or gradient).

        ``leaf`` is -1 when the event holds no tensor; the numbers are None when that tensor has
        no statistics, NaN when a statistic was not asked for. ``stats_at(chunk, leaf)`` builds
        the whole TensorStats, for the few events a reader keeps."""
        ev, lv, table = chunk.events, chunk.leaves, chunk.stats
        for e in range(len(ev) // _EV):  # every event: what max_events trims is still new to a listener
            at = e * _EV
            step, phase, path_id, first, n = ev[at + 1], ev[at + 2], ev[at + 3], ev[at + 5], ev[at + 6]
            for leaf in range(first, first + n):
                row = lv[leaf * _LF + 3]
                if row >= 0:
                    c = row * _NCOL
                    if math.isnan(table[c]):  # no statistics (not computable, or none asked for)
                        yield step, phase, path_id, leaf, None, None, None, None
                    else:
                        yield step, phase, path_id, leaf, table[c + 1], table[c + 3], table[c + 5], table[c + 6]
                    break
            else:
                yield step, phase, path_id, -1, None, None, None, None

    def histograms(self, chunk: Chunk, start: int = 0) -> HistogramBatch | None:
        """The histograms of the events of ``chunk`` from event ``start`` on, as tensors (one
        row per event whose first tensor has one); None when histograms were not asked for.

        Read straight from the columns, in a few indexing ops: no per-event Python object."""
        n_events = len(chunk.events) // _EV
        if "histogram" not in self.want or n_events <= start or not len(chunk.stats):
            return None
        events = torch.frombuffer(chunk.events, dtype=torch.int64).view(-1, _EV)[start:]
        events = events[events[:, 6] > 0]  # events that carry at least one value
        leaves = torch.frombuffer(chunk.leaves, dtype=torch.int64).view(-1, _LF)
        rows = leaves[events[:, 5], 3]
        # The first *tensor* of an event, as mains() reads it: rarely not its first value.
        for i in ((events[:, 6] > 1) & (rows < 0)).nonzero().flatten().tolist():
            first, n = events[i, 5].item(), events[i, 6].item()
            rows[i] = next((r for r in leaves[first + 1 : first + n, 3].tolist() if r >= 0), -1)
        events, rows = events[rows >= 0], rows[rows >= 0]
        table = torch.frombuffer(chunk.stats, dtype=torch.float64).view(-1, _NCOL)[rows]
        lo, hi = table[:, 7], table[:, 8]  # exact min and max of the finite values
        # No statistics (NaN count column), or no finite value: nothing to place in a bin.
        keep = (table[:, 0] > 0) & torch.isfinite(lo) & torch.isfinite(hi)
        counts = torch.frombuffer(chunk.hist, dtype=torch.float64).view(-1, HIST_BINS)[rows[keep]]
        events = events[keep]
        return HistogramBatch(events[:, 1], events[:, 2], events[:, 3], counts, lo[keep], hi[keep])

    def stats_at(self, chunk: Chunk, leaf: int) -> TensorStats:
        """The TensorStats of one leaf of ``chunk``."""
        row = chunk.leaves[leaf * _LF + 3]
        return self._stats(chunk, leaf, self._fields(chunk, row) if row >= 0 else None)

    def _stats(self, chunk: Chunk, leaf: int, fields: tuple | None) -> TensorStats:
        name_id, kind_id, shape_id, _ = chunk.leaves[leaf * _LF : (leaf + 1) * _LF]
        if fields is None:  # not a tensor
            return TensorStats(self.names[name_id], self.words[kind_id], text=chunk.texts.get(leaf))
        shape = self.shapes[shape_id]
        values = fields[13]
        if values is not None:
            values = _shape_values(values, shape, fields[0])
        # positional, in TensorStats' field order: it is the hot path of every reader
        return TensorStats(self.names[name_id], "tensor", shape, *fields[:13], values, *fields[14:])

    def _fields(self, chunk: Chunk, row: int) -> tuple:
        """TensorStats' fields from dtype to sample_size, for one row (values still flat)."""
        dtype_id, device_id, numel, length, sampled, _, _ = chunk.rows[row * _RW : (row + 1) * _RW]
        found: dict[str, Any] = {}
        c = chunk.stats[row * _NCOL : (row + 1) * _NCOL]
        want = self.want
        if not math.isnan(c[0]):  # else: no statistics (none asked for, or not computable)
            for name, column, kind in self._wanted:
                found[name] = kind(c[column])
            if "histogram" in want:
                found["histogram"] = tuple(map(int, chunk.hist[row * HIST_BINS : (row + 1) * HIST_BINS]))
                found["hist_range"] = (c[9], c[10])
        get = found.get
        return (
            self.words[dtype_id], self.words[device_id], numel,
            get("mean"), get("std"), get("min"), get("max"), get("norm"), get("zero_fraction"),
            get("nan_count"), get("inf_count"), get("histogram"), get("hist_range"),
            chunk.values.get(row) if "values" in want else None,
            bool(sampled), length,
        )


def _shape_values(flat: list[float], shape: tuple[int, ...], dtype: str) -> Any:
    if dtype == "bool":
        flat = [bool(v) for v in flat]
    elif not dtype.startswith(("float", "bfloat", "complex")):
        flat = [int(v) for v in flat]
    if not shape:
        return flat[0]
    for size in reversed(shape[1:]):
        flat = [flat[i : i + size] for i in range(0, len(flat), size)]
    return flat


def _short_repr(value: Any, limit: int = 40) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _fmt(value: float) -> str:
    return f"{value:.4g}" if isinstance(value, float) else str(value)
