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
# record(stats=...) name -> TensorStats field, column in _COLUMNS, type
_FIELDS = (
    ("mean", "mean", 1, float), ("std", "std", 2, float), ("norm", "norm", 3, float),
    ("zeros", "zero_fraction", 4, float), ("nan", "nan_count", 5, int), ("inf", "inf_count", 6, int),
    ("min", "min", 7, float), ("max", "max", 8, float),
)
_EV = 7  # ints per event: seq, step, phase, path id, call, first leaf, number of leaves
_LF = 4  # ints per leaf: name id, kind id, shape id, row (-1: not a tensor)
_RW = 7  # ints per row: dtype id, device id, numel, sample length, sampled, exact NaN and Inf counts (-1: none)


@dataclass(frozen=True, slots=True)
class TensorStats:
    """A summary of one tensor (or of a non-tensor value) seen by a hook.

    Statistics not asked for (``record(stats=...)``) are None. For tensors larger than
    ``SAMPLE_SIZE`` elements, mean, std, norm, zero_fraction and histogram are estimated from
    a fixed-stride sample (``sampled`` is True); min, max and the NaN/Inf counts are exact.
    Mean, std and norm are taken over the finite values; NaN and Inf are counted apart.
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
        self.minmax = bool(self.stats & {"min", "max", "histogram"})
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


class Pending:
    """Events and samples written by hooks, waiting for their statistics."""

    def __init__(self, need: Needs, names: Interner, shapes: Interner, words: Interner):
        self.need = need
        self.names, self.shapes, self.words = names, shapes, words
        self.tensor_kind = words("tensor")
        self.buffers: dict[torch.device, tuple[torch.Tensor, list, list]] = {}
        self._type_ids: dict[tuple, tuple[int, int]] = {}
        self.reset()

    def reset(self) -> None:
        self.events = array("q")
        self.leaves = array("q")
        self.rows = array("q")
        self.minmax = array("d")  # exact min, max per row (NaN: none)
        self.slots: list[tuple[torch.device | None, int]] = []  # (buffer device, buffer row) per row
        self.used: dict[torch.device, int] = {}
        self.device_scalars: dict[int, tuple] = {}  # accelerator rows: (lo, hi, nan, inf) tensors
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
        names, shapes, dedup = self.names.index, self.shapes.index, self.dedup
        n = 0
        for name, value in leaves:
            name_id = names.get(name)
            if name_id is None:
                name_id = self.names(name)
            if isinstance(value, torch.Tensor):
                shape = tuple(value.shape)
                shape_id = shapes.get(shape)
                if shape_id is None:
                    shape_id = self.shapes(shape)
                # Same memory, same layout, same version: the same values (an alias or a view).
                if value.is_contiguous():
                    key = (value.data_ptr(), value.numel(), value.dtype, value._version)
                else:
                    key = (value.data_ptr(), shape, value.stride(), value.dtype, value._version)
                hit = dedup.get(key)
                if hit is not None and hit[0]() is not None:
                    row = hit[1]
                else:
                    row = self._write(value.detach())
                    dedup[key] = (weakref.ref(value), row)
                leaf_array.extend((name_id, self.tensor_kind, shape_id, row))
            else:
                kind = "None" if value is None else type(value).__name__
                self.texts[first + n] = "None" if value is None else _short_repr(value)
                leaf_array.extend((name_id, self.words(kind), -1, -1))
            n += 1
        self.events.extend((seq, step, phase, path_id, call, first, n))

    def _buffer(self, device: torch.device) -> tuple[torch.Tensor, list, list]:
        found = self.buffers.get(device)
        if found is None:
            buffer = torch.full((BUFFER_ROWS, SAMPLE_SIZE), math.nan, dtype=torch.float32, device=device)
            # Row views are made on first use and kept, so that a hook needs no indexing op.
            found = self.buffers[device] = (buffer, [None] * BUFFER_ROWS, [None] * BUFFER_ROWS)
        return found

    def _write(self, t: torch.Tensor) -> int:
        """Copy a sample of ``t`` into the next buffer row; for a large ``t``, one exact pass."""
        row = len(self.slots)
        n = t.numel()
        ids = self._type_ids.get(t.dtype)
        if ids is None or ids[0] != t.device:
            ids = self._type_ids[t.dtype] = (
                t.device, self.words(str(t.dtype).removeprefix("torch.")), self.words(str(t.device))
            )
        lo = hi = math.nan
        nan_count = inf_count = -1
        length = sampled = 0
        need = self.need
        if need.sample and n and not (t.is_complex() or t.is_sparse or t.is_quantized):
            device = ids[0]
            buffer, rows, runs = self.buffers.get(device) or self._buffer(device)
            slot = self.used.get(device, 0)
            self.used[device] = slot + 1
            self.slots.append((device, slot))
            if not t.is_floating_point():
                t = t.to(torch.float64)
            if n <= SAMPLE_SIZE:
                target = rows[slot]
                if target is None:
                    target = rows[slot] = buffer[slot]
                target[:n].copy_(t.view(-1) if t.is_contiguous() else t.reshape(-1))
                length = n  # the rest of the row stays NaN: padding the statistics skip
            else:
                if not t.is_contiguous():
                    t = t.reshape(-1)
                target = runs[slot]
                if target is None:
                    target = runs[slot] = buffer[slot].view(RUNS, RUN)
                # RUNS short contiguous runs spread over the tensor: few cache lines to touch,
                # and an odd gap, so that runs do not line up with power-of-two dimensions.
                gap = (n - RUN) // (RUNS - 1)
                gap -= 1 - gap % 2
                target.copy_(t.as_strided((RUNS, RUN), (gap, 1), t.storage_offset()))
                length = SAMPLE_SIZE
                sampled = 1
                if need.minmax or need.nonfinite:
                    lo, hi, nan_count, inf_count = self._exact_pass(t, row)
        else:
            self.slots.append((None, -1))
        self.rows.extend((ids[1], ids[2], n, length, sampled, nan_count, inf_count))
        self.minmax.extend((lo, hi))
        return row

    def _exact_pass(self, t: torch.Tensor, row: int) -> tuple[float, float, int, int]:
        """Exact NaN and Inf counts, and min/max over finite values, of a large tensor."""
        need = self.need
        if t.device.type != "cpu":
            # On an accelerator never sync per module: reduce on the device, read at the flush.
            lo_t, hi_t = torch.aminmax(t) if need.minmax else (None, None)
            counts = (torch.isnan(t).sum(), torch.isinf(t).sum()) if need.nonfinite else (None, None)
            self.device_scalars[row] = (lo_t, hi_t, *counts)
            return math.nan, math.nan, -1, -1
        # On the CPU a reduced scalar is already in host memory, so reading it is free; the one
        # full pass shows whether a NaN or an Inf is there, and only then are they counted.
        if need.minmax:
            lo_t, hi_t = torch.aminmax(t)
            lo, hi = lo_t.item(), hi_t.item()
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


def compute(pending: Pending) -> tuple[array, array, dict[int, list[float]]]:
    """Statistics for every pending row: ``_NCOL`` columns and ``HIST_BINS`` counts per row."""
    n = pending.n_rows
    table = array("d", [math.nan]) * (n * _NCOL)
    hist = array("d", [0.0]) * (n * HIST_BINS)
    values: dict[int, list[float]] = {}
    by_device: dict[torch.device, list[int]] = {}
    for row, (device, _) in enumerate(pending.slots):
        if device is not None:
            by_device.setdefault(device, []).append(row)
    if by_device:
        meta = torch.frombuffer(pending.rows, dtype=torch.int64).view(-1, _RW)
        exact = torch.frombuffer(pending.minmax, dtype=torch.float64).view(-1, 2)
    for device, rows in by_device.items():
        for start in range(0, len(rows), SLAB):  # slabs small enough to stay in cache
            _compute_slab(pending, device, rows[start : start + SLAB], meta, exact, table, hist, values)
        pending.buffers[device][0][: len(rows)].fill_(math.nan)  # ready for the next rows
    return table, hist, values


def _compute_slab(pending: Pending, device, rows: list[int], meta, exact, table, hist, values) -> None:
    """One slab: batched statistics of the samples, corrected by the exact values from the hooks."""
    n = len(rows)
    first = pending.slots[rows[0]][1]
    sample = pending.buffers[device][0][first : first + n]  # a device's rows are consecutive
    contiguous = rows[-1] - rows[0] == n - 1
    index = slice(rows[0], rows[0] + n) if contiguous else torch.tensor(rows)
    info = meta[index].to(device)
    numel, length, sampled = info[:, 2].double(), info[:, 3].double(), info[:, 4].bool()
    nan_exact, inf_exact = info[:, 5].double(), info[:, 6].double()
    lo_exact, hi_exact = exact[index].to(device).unbind(1)

    finite = torch.isfinite(sample)
    clean = torch.nan_to_num(sample, nan=0.0, posinf=0.0, neginf=0.0)
    count = finite.sum(1).double()
    mean = clean.sum(1, dtype=torch.float64) / count.clamp(min=1)
    centered = torch.where(finite, sample - mean[:, None], 0.0)
    std = torch.linalg.vector_norm(centered, dim=1, dtype=torch.float64) / (count - 1).clamp(min=1).sqrt()
    std = torch.where(count > 1, std, torch.where(count == 1, 0.0, math.nan))
    mean = torch.where(count > 0, mean, math.nan)
    norm = torch.linalg.vector_norm(clean, dim=1, dtype=torch.float64) * (numel / length).sqrt()
    zeros = (sample == 0).sum(1) / length
    nan_or_pad = torch.isnan(sample).sum(1)
    inf = (SAMPLE_SIZE - count) - nan_or_pad
    nan = nan_or_pad - (SAMPLE_SIZE - length)  # the NaN padding is not data
    lo = torch.nan_to_num(sample, nan=math.inf, neginf=math.inf).amin(1).double()  # finite values
    hi = torch.nan_to_num(sample, nan=-math.inf, posinf=-math.inf).amax(1).double()
    # A sampled tensor's exact counts and extremes, taken in the hook, replace the sample's.
    nan = torch.where(sampled & (nan_exact >= 0), nan_exact, nan)
    inf = torch.where(sampled & (inf_exact >= 0), inf_exact, inf)
    has_exact = sampled & ~torch.isnan(lo_exact)
    lo = torch.where(has_exact, lo_exact, lo)
    hi = torch.where(has_exact, hi_exact, hi)
    scalars = pending.device_scalars
    for i, r in enumerate(rows):  # accelerator rows: exact values still on the device
        found = scalars.get(r)
        if found is not None:
            for k, column in enumerate((lo, hi, nan, inf)):
                if found[k] is not None:
                    column[i] = found[k].double()
    no_value = count == 0
    lo = torch.where(no_value, math.nan, lo)
    hi = torch.where(no_value, math.nan, hi)
    # The histogram spans [min, max] (for a sampled tensor, the exact range); a constant tensor
    # lands in the middle bin.
    ok = torch.isfinite(lo) & torch.isfinite(hi)
    range_lo = torch.where(ok, lo, 0.0)
    range_hi = torch.where(ok, hi, 0.0)
    flat = range_hi <= range_lo
    range_lo = torch.where(flat, range_lo - 0.5, range_lo)
    range_hi = torch.where(flat, range_hi + 0.5, range_hi)
    scale = (HIST_BINS / (range_hi - range_lo)).float()
    bins = ((clean - range_lo.float()[:, None]) * scale[:, None]).floor_().clamp_(0, HIST_BINS - 1).long()
    bins += torch.arange(n, device=sample.device)[:, None] * HIST_BINS
    bins.masked_fill_(~finite, n * HIST_BINS)
    counts = torch.bincount(bins.view(-1), minlength=n * HIST_BINS + 1)[: n * HIST_BINS]
    columns = torch.stack([count, mean, std, norm, zeros, nan, inf, lo, hi, range_lo, range_hi], 1)
    parts = [columns.view(-1), counts.double()]
    tiny = [i for i, r in enumerate(rows) if pending.rows[r * _RW + 2] <= TINY] if "values" in pending.need.stats else []
    if tiny:
        parts.append(sample[tiny, :TINY].double().reshape(-1))
    host = torch.cat(parts).cpu().tolist()  # one transfer for the slab
    at_hist = n * _NCOL
    if contiguous:
        r0 = rows[0]
        table[r0 * _NCOL : (r0 + n) * _NCOL] = array("d", host[:at_hist])
        hist[r0 * HIST_BINS : (r0 + n) * HIST_BINS] = array("d", host[at_hist : at_hist + n * HIST_BINS])
    else:
        for i, r in enumerate(rows):
            table[r * _NCOL : (r + 1) * _NCOL] = array("d", host[i * _NCOL : (i + 1) * _NCOL])
            base = at_hist + i * HIST_BINS
            hist[r * HIST_BINS : (r + 1) * HIST_BINS] = array("d", host[base : base + HIST_BINS])
    at_tiny = at_hist + n * HIST_BINS
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


class Reader:
    """Turns stored columns back into TensorStats for one recording."""

    def __init__(self, names: Interner, shapes: Interner, words: Interner, want: frozenset[str]):
        self.names, self.shapes, self.words, self.want = names.items, shapes.items, words.items, want

    def events(self, chunk: Chunk):
        """Yield (seq, step, phase id, path id, call, tensors) for each event in ``chunk``."""
        cache: dict[int, dict] = {}
        ev, lv = chunk.events, chunk.leaves
        for e in range(chunk.skip, len(ev) // _EV):
            seq, step, phase, path_id, call, first, n = ev[e * _EV : (e + 1) * _EV]
            tensors = []
            for leaf in range(first, first + n):
                name_id, kind_id, shape_id, row = lv[leaf * _LF : (leaf + 1) * _LF]
                name = self.names[name_id]
                if row < 0:
                    tensors.append(TensorStats(name=name, kind=self.words[kind_id], text=chunk.texts.get(leaf)))
                    continue
                fields = cache.get(row)
                if fields is None:
                    fields = cache[row] = self._fields(chunk, row)
                shape = self.shapes[shape_id]
                tiny = fields.get("values")
                if tiny is not None:
                    fields = {**fields, "values": _shape_values(tiny, shape, fields["dtype"])}
                tensors.append(TensorStats(name=name, kind="tensor", shape=shape, **fields))
            yield seq, step, phase, path_id, call, tuple(tensors)

    def _fields(self, chunk: Chunk, row: int) -> dict:
        dtype_id, device_id, numel, length, sampled, _, _ = chunk.rows[row * _RW : (row + 1) * _RW]
        fields: dict[str, Any] = {
            "dtype": self.words[dtype_id],
            "device": self.words[device_id],
            "numel": numel,
            "sampled": bool(sampled),
            "sample_size": length,
        }
        c = chunk.stats[row * _NCOL : (row + 1) * _NCOL]
        if math.isnan(c[0]):  # no statistics for this tensor (none asked for, or not computable)
            return fields
        want = self.want
        for stat, name, column, kind in _FIELDS:
            if stat in want:
                fields[name] = kind(c[column])
        if "histogram" in want:
            fields["histogram"] = tuple(int(v) for v in chunk.hist[row * HIST_BINS : (row + 1) * HIST_BINS])
            fields["hist_range"] = (c[9], c[10])
        if "values" in want and row in chunk.values:
            fields["values"] = chunk.values[row]
        return fields


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
