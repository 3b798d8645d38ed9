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
RUNS, RUN = 16, 32  # a large tensor's sample: 16 runs of 32 contiguous elements
SAMPLE_SIZE = RUNS * RUN  # larger tensors: mean, std, norm, zeros and histogram are estimated
TINY = 16  # tensors with at most this many elements keep their values
BUFFER_ROWS = 1024  # sample rows held before statistics are computed
SLAB = 256  # rows computed together (a slab fits in cache)

_COLUMNS = ("count", "mean", "std", "norm", "zeros", "nan", "inf", "min", "max", "hist_lo", "hist_hi")
_NCOL = len(_COLUMNS)
_EV = 7  # ints per event: seq, step, phase, path id, call, first leaf, number of leaves
_LF = 4  # ints per leaf: name id, kind id, shape id, row (-1: not a tensor)
_RW = 6  # ints per row: dtype id, device id, numel, sample length, sampled, nan count (-1: unknown)


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
        self.minmax = array("d")  # exact lo, hi per row (NaN: none)
        self.slots: list[tuple[torch.device | None, int]] = []  # (buffer device, buffer row) per row
        self.used: dict[torch.device, int] = {}
        self.device_scalars: dict[int, tuple] = {}  # accelerator rows: (lo, hi, nan, inf) tensors
        self.inf_counts: dict[int, int] = {}  # CPU rows with an Inf or a NaN somewhere
        self.texts: dict[int, str] = {}
        self.dedup: dict[tuple, tuple] = {}

    @property
    def n_rows(self) -> int:
        return len(self.slots)

    @property
    def n_events(self) -> int:
        return len(self.events) // _EV

    def add_event(self, seq: int, step: int, phase: int, path_id: int, call: int, leaves) -> None:
        leaf_array = self.leaves
        first = len(leaf_array) // _LF
        names = self.names.index
        shapes = self.shapes.index
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
                leaf_array.extend((name_id, self.tensor_kind, shape_id, self.row_of(value)))
            else:
                kind = "None" if value is None else type(value).__name__
                self.texts[first + n] = "None" if value is None else _short_repr(value)
                leaf_array.extend((name_id, self.words(kind), -1, -1))
            n += 1
        self.events.extend((seq, step, phase, path_id, call, first, n))

    def row_of(self, tensor: torch.Tensor) -> int:
        """The row holding ``tensor``'s sample: one row per tensor version until the flush."""
        if tensor.is_contiguous():  # same memory, same version: the same values (an alias or a view)
            key = (tensor.data_ptr(), tensor.numel(), tensor.dtype, tensor.device, tensor._version)
        else:
            key = (tensor.data_ptr(), tuple(tensor.shape), tensor.stride(), tensor.dtype, tensor.device,
                   tensor._version)
        hit = self.dedup.get(key)
        if hit is not None and hit[0]() is not None:
            return hit[1]
        row = self._write(tensor.detach())
        self.dedup[key] = (weakref.ref(tensor), row)
        return row

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
        nan_count = -1
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
                    lo, hi, nan_count = self._exact_pass(t, row)
        else:
            self.slots.append((None, -1))
        self.rows.extend((ids[1], ids[2], n, length, sampled, nan_count))
        self.minmax.extend((lo, hi))
        return row

    def _exact_pass(self, t: torch.Tensor, row: int) -> tuple[float, float, int]:
        """Exact NaN and Inf counts (and min/max when asked for) of a large tensor."""
        need = self.need
        if t.device.type != "cpu":
            # On an accelerator never sync per module: reduce on the device, read at the flush.
            lo_t, hi_t = torch.aminmax(t) if need.minmax else (None, None)
            counts = (torch.isnan(t).sum(), torch.isinf(t).sum()) if need.nonfinite else (None, None)
            self.device_scalars[row] = (lo_t, hi_t, *counts)
            return math.nan, math.nan, -1
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
            return lo, hi, 0
        nans = int(torch.isnan(t).sum())
        self.inf_counts[row] = int(torch.isinf(t).sum())
        if need.minmax:
            finite = t[torch.isfinite(t)]
            lo, hi = (finite.min().item(), finite.max().item()) if finite.numel() else (math.nan, math.nan)
        return lo, hi, nans


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
    for device, rows in by_device.items():
        for start in range(0, len(rows), SLAB):  # slabs small enough to stay in cache
            _compute_slab(pending, device, rows[start : start + SLAB], table, hist, values)
        pending.buffers[device][0][: len(rows)].fill_(math.nan)  # ready for the next rows
    return table, hist, values


def _compute_slab(pending: Pending, device, rows: list[int], table: array, hist: array, values: dict) -> None:
    n = len(rows)
    meta = pending.rows
    buffer = pending.buffers[device][0]
    first = pending.slots[rows[0]][1]
    sample = buffer[first : first + n]  # rows of one device are consecutive buffer rows
    finite = torch.isfinite(sample)
    clean = torch.nan_to_num(sample, nan=0.0, posinf=0.0, neginf=0.0)
    count = finite.sum(1)
    mean = clean.sum(1, dtype=torch.float64) / count.clamp(min=1)
    centered = torch.where(finite, sample - mean[:, None], 0.0)
    std = torch.linalg.vector_norm(centered, dim=1, dtype=torch.float64) / (count - 1).clamp(min=1).sqrt()
    norm = torch.linalg.vector_norm(clean, dim=1, dtype=torch.float64)
    zeros = (sample == 0).sum(1)
    nan = torch.isnan(sample).sum(1)
    inf = torch.isinf(sample).sum(1)
    lo = torch.nan_to_num(sample, nan=math.inf, neginf=math.inf).amin(1)  # over finite values
    hi = torch.nan_to_num(sample, nan=-math.inf, posinf=-math.inf).amax(1)
    columns = torch.stack(
        [count.double(), mean, std, norm, zeros.double(), nan.double(), inf.double(), lo.double(), hi.double()], 1
    )
    parts = [columns.reshape(-1)]
    scalars = pending.device_scalars
    device_parts = [  # (row in slab, which scalar, the device tensor)
        (i, k, scalars[r][k]) for i, r in enumerate(rows) if r in scalars for k in range(4)
        if scalars[r][k] is not None
    ]
    if device_parts:
        parts.append(torch.stack([t.double() for _, _, t in device_parts]))
    tiny = [i for i, r in enumerate(rows) if meta[r * _RW + 2] <= TINY] if "values" in pending.need.stats else []
    if tiny:
        parts.append(sample[tiny, :TINY].double().reshape(-1))
    host = torch.cat(parts).cpu().tolist()  # one transfer for the slab
    width = len(_COLUMNS) - 2
    at_dev = n * width
    device_values = {(i, k): host[at_dev + j] for j, (i, k, _) in enumerate(device_parts)}
    at_tiny = at_dev + len(device_parts)
    minmax = pending.minmax
    ranges = []
    for i, r in enumerate(rows):
        row = host[i * width : (i + 1) * width]
        length = meta[r * _RW + 3]
        row[5] -= SAMPLE_SIZE - length  # the NaN padding is not data
        row[3] *= math.sqrt(meta[r * _RW + 2] / length)  # a sample's norm, scaled to the tensor
        row[4] /= length  # zeros: a count, made a fraction
        if meta[r * _RW + 4]:  # sampled: exact values from the hook replace the sample's
            nan_exact = meta[r * _RW + 5]
            if nan_exact >= 0:
                row[5] = float(nan_exact)
                row[6] = float(pending.inf_counts.get(r, 0))
            lo_exact, hi_exact = minmax[2 * r], minmax[2 * r + 1]
            if not math.isnan(lo_exact):
                row[7], row[8] = lo_exact, hi_exact
            for k, column in ((0, 7), (1, 8), (2, 5), (3, 6)):
                if (i, k) in device_values:
                    row[column] = device_values[(i, k)]
        if row[0] == 0:  # no finite value at all
            row[7] = row[8] = math.nan
        lo_v, hi_v = row[7], row[8]
        if math.isnan(lo_v) or not (math.isfinite(lo_v) and math.isfinite(hi_v)):
            lo_v = hi_v = 0.0
        if hi_v <= lo_v:  # a constant tensor lands in the middle bin
            lo_v, hi_v = lo_v - 0.5, hi_v + 0.5
        ranges.append((lo_v, hi_v))
        table[r * _NCOL : (r + 1) * _NCOL] = array("d", row + [lo_v, hi_v])
    # The histogram spans [min, max]; for a sampled tensor that is the exact range.
    bounds = torch.tensor(ranges, dtype=torch.float32, device=sample.device)
    scale = HIST_BINS / (bounds[:, 1] - bounds[:, 0])
    bins = ((clean - bounds[:, :1]) * scale[:, None]).floor_().clamp_(0, HIST_BINS - 1).to(torch.int64)
    bins += torch.arange(n, device=sample.device)[:, None] * HIST_BINS
    bins.masked_fill_(~finite, n * HIST_BINS)
    counts = torch.bincount(bins.reshape(-1), minlength=n * HIST_BINS + 1)[: n * HIST_BINS].tolist()
    for i, r in enumerate(rows):
        hist[r * HIST_BINS : (r + 1) * HIST_BINS] = array("d", counts[i * HIST_BINS : (i + 1) * HIST_BINS])
    for k, i in enumerate(tiny):
        r = rows[i]
        values[r] = host[at_tiny + k * TINY : at_tiny + k * TINY + meta[r * _RW + 2]]


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
        dtype_id, device_id, numel, length, sampled, _ = chunk.rows[row * _RW : (row + 1) * _RW]
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
        count, mean, std, norm, zeros, nan, inf, lo, hi, hist_lo, hist_hi = c
        want = self.want
        if "mean" in want:
            fields["mean"] = mean if count else math.nan
        if "std" in want:
            fields["std"] = std if count > 1 else (0.0 if count == 1 else math.nan)
        if "min" in want:
            fields["min"] = lo if count or nan < numel else math.nan
        if "max" in want:
            fields["max"] = hi if count or nan < numel else math.nan
        if "norm" in want:
            fields["norm"] = norm
        if "zeros" in want:
            fields["zero_fraction"] = zeros
        if "nan" in want:
            fields["nan_count"] = int(nan)
        if "inf" in want:
            fields["inf_count"] = int(inf)
        if "histogram" in want:
            fields["histogram"] = tuple(int(v) for v in chunk.hist[row * HIST_BINS : (row + 1) * HIST_BINS])
            fields["hist_range"] = (hist_lo, hist_hi)
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
