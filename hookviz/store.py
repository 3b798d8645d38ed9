"""How record() keeps its events: the column layout, a ring buffer of chunks, and the Reader.

Events are kept as columns in ``array``s, not as objects: a long training loop adds almost
nothing for Python's garbage collector to walk (a full collection in a kernel costs tens of
ms). Every table is a flat array of fixed-width records, and every field of a record is read
through a named offset defined here (``summaries`` writes the records, the Reader reads them).
The Reader turns records back into ``TensorStats``, only for the events someone reads.
"""

from __future__ import annotations

import collections
import dataclasses
import math
import warnings
from array import array
from dataclasses import dataclass
from typing import Any

import torch

from .hook_kinds import PHASES

# -- phases: each event stores its phase as an index into PHASES (hook_kinds owns their names) -

FORWARD_PRE, FORWARD, BACKWARD_PRE, BACKWARD = range(len(PHASES))

# -- the layout ------------------------------------------------------------------------------
# Unpacking range(len(...)) fails at import if a name list and its offsets ever disagree.

# events (array "q"): one record per hook firing; its values are leaves FIRST_LEAF onwards
EVENT_FIELDS = ("seq", "step", "phase", "path", "call", "first_leaf", "leaves")
EVENT_SEQ, EVENT_STEP, EVENT_PHASE, EVENT_PATH, EVENT_CALL, EVENT_FIRST_LEAF, EVENT_LEAVES = range(
    len(EVENT_FIELDS)
)
EVENT_WIDTH = len(EVENT_FIELDS)

# leaves (array "q"): one per value an event carries (a tensor, None, or another value)
LEAF_FIELDS = ("name", "type", "shape", "row")  # "type": TensorStats.value_type, interned
LEAF_NAME, LEAF_TYPE, LEAF_SHAPE, LEAF_ROW = range(len(LEAF_FIELDS))
LEAF_WIDTH = len(LEAF_FIELDS)
NO_ROW = -1  # LEAF_ROW (and LEAF_SHAPE) of a value that is not a tensor

# rows (array "q"): one per tensor version summarised (aliases of one version share a row)
ROW_FIELDS = ("dtype", "device", "numel", "length", "sampled", "nan", "inf")
ROW_DTYPE, ROW_DEVICE, ROW_NUMEL, ROW_LENGTH, ROW_SAMPLED, ROW_NAN, ROW_INF = range(len(ROW_FIELDS))
ROW_WIDTH = len(ROW_FIELDS)
NOT_COUNTED = -1  # ROW_NAN / ROW_INF when the hook took no exact count
# ROW_SAMPLED: what a row holds of its tensor (nonzero: a sample). Only KEPT_SAMPLE_ONLY rows
# (record(exact=False)) have estimated min, max, NaN and Inf counts.
KEPT_WHOLE = 0  # the whole tensor: every statistic exact
KEPT_SAMPLE = 1  # a sample, and the hook's exact pass (min, max, NaN, Inf)
KEPT_SAMPLE_ONLY = 2  # a sample alone (exact=False): every statistic estimated from it
KEPT_SAMPLE_NORM = 3  # a sample, the exact pass, and the exact norm (a gradient's)

# extremes (array "d"): a row's exact min, max and norm when its hook read them (NaN: not read)
EXTREMES_FIELDS = ("min", "max", "norm")
EXTREME_MIN, EXTREME_MAX, EXTREME_NORM = range(len(EXTREMES_FIELDS))
EXTREMES_WIDTH = len(EXTREMES_FIELDS)

# statistics (array "d"): one record per row, NaN where a statistic was not computed
STAT_COLUMNS = (
    "count",
    "mean",
    "std",
    "norm",
    "zeros",
    "nan",
    "inf",
    "min",
    "max",
    "hist_lo",
    "hist_hi",
)
(
    COL_COUNT,
    COL_MEAN,
    COL_STD,
    COL_NORM,
    COL_ZEROS,
    COL_NAN,
    COL_INF,
    COL_MIN,
    COL_MAX,
    COL_HIST_LO,
    COL_HIST_HI,
) = range(len(STAT_COLUMNS))
STAT_WIDTH = len(STAT_COLUMNS)
HIST_BINS = 16  # histogram counts (array "d") per row

# record(stats=...) name -> TensorStats field, statistics column, type
_STAT_FIELDS = (
    ("mean", "mean", COL_MEAN, float),
    ("std", "std", COL_STD, float),
    ("norm", "norm", COL_NORM, float),
    ("zeros", "zero_fraction", COL_ZEROS, float),
    ("nan", "nan_count", COL_NAN, int),
    ("inf", "inf_count", COL_INF, int),
    ("min", "min", COL_MIN, float),
    ("max", "max", COL_MAX, float),
)


@dataclass(frozen=True, slots=True)
class TensorStats:
    """A summary of one tensor (or of a non-tensor value) seen by a hook.

    Statistics not asked for (`record(stats=...)`) are None. A complex tensor's statistics are
    those of its magnitude |z| (`magnitude` is True; `brief()` writes `|z|`): an element with
    an infinite part counts as Inf, one with a NaN part (and none infinite) as NaN, and its
    values are not kept. For tensors larger than
    `summaries.SAMPLE_SIZE` elements, mean, std, zero_fraction and histogram are estimated
    from a fixed-stride sample (`sampled` is True); min, max and the NaN/Inf counts are exact,
    and so is a gradient's norm (`norm_exact`: a flag rests on it), unless the recording was
    made with `exact=False`: then they are estimated from the sample too (min and max of the
    sample, its norm and its NaN and Inf counts scaled to the tensor's size) and `exact` is
    False. An output's norm is the sample's, scaled (`norm_exact` False, written `norm≈`). Mean, std and norm are taken over the finite values; NaN and
    Inf are counted apart; so are min and max, when NaN/Inf counts are asked for too (without
    them, a large tensor's exact min and max are torch's own, NaN when a NaN is present).
    """

    name: str  # "input[0]", "output", "grad_output[0]", ...
    value_type: str  # "tensor", "None" or the type name of another value
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
    exact: bool = (
        True  # False: min, max, norm, NaN and Inf are estimates from the sample (exact=False)
    )
    norm_exact: bool = True  # False: the norm is the sample's, scaled to the tensor's size
    magnitude: bool = False  # True: the statistics are of |z| (a complex tensor)
    text: str | None = None  # repr of a non-tensor value

    @property
    def kind(self) -> str:
        """Deprecated: `value_type` (a hook's kind is `hookviz.hook_kinds`' word)."""
        warnings.warn(
            "TensorStats.kind is now TensorStats.value_type ('tensor', 'None' or a type name); "
            "kind will be removed in a later release.",
            DeprecationWarning,
            stacklevel=2,
        )
        return self.value_type

    def brief(self) -> str:
        """One short line: name, dtype and shape, and the main statistics."""
        if self.value_type != "tensor":
            return f"{self.name}={self.text}"
        shape = "x".join(str(s) for s in self.shape) if self.shape else "scalar"
        parts = [f"{self.name} {self.dtype}[{shape}]"]
        if self.magnitude:  # a complex tensor: the statistics are its magnitude's
            parts.append("|z|")
        # An estimate reads "max≈…": from the sample alone (exact=False), not the whole tensor.
        extreme = "=" if self.exact else "≈"
        for label, value, sign in (
            ("mean", self.mean, "="),
            ("std", self.std, "="),
            ("max", self.max, extreme),
            ("norm", self.norm, "=" if self.norm_exact else "≈"),
        ):
            if value is not None:
                parts.append(f"{label}{sign}{_fmt(value)}")
        if self.nan_count:
            parts.append(f"NaN{extreme}{self.nan_count}")
        if self.inf_count:
            parts.append(f"Inf{extreme}{self.inf_count}")
        return " ".join(parts)


# What one row decodes to: TensorStats' fields from dtype up to text (name, value_type and shape come
# from the leaf, text only from non-tensor values).
_DECODED = tuple(f.name for f in dataclasses.fields(TensorStats))[3:-1]
_AT_DTYPE, _AT_VALUES = _DECODED.index("dtype"), _DECODED.index("values")


class Chunk:
    """The events of one flush, as flat arrays (the layout above)."""

    __slots__ = ("events", "leaves", "rows", "stats", "hist", "values", "texts", "skip")

    def __init__(
        self,
        events: array,
        leaves: array,
        rows: array,
        texts: dict[int, str],
        stats: array,
        hist: array,
        values: dict[int, list[float]],
    ):
        self.events, self.leaves, self.rows, self.texts = events, leaves, rows, texts
        self.stats, self.hist, self.values = stats, hist, values
        self.skip = 0  # leading events dropped by max_events

    def __len__(self) -> int:
        return len(self.events) // EVENT_WIDTH - self.skip


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
    phases: torch.Tensor  # int64: index into PHASES
    path_ids: torch.Tensor  # int64: index into the recording's targets
    counts: torch.Tensor  # float64, (events, HIST_BINS)
    lo: torch.Tensor  # float64: the exact min of the finite values (the sample's, with exact=False)
    hi: torch.Tensor  # float64: the exact max (the sample's, with exact=False)


class Reader:
    """Turns stored columns back into TensorStats for one recording.

    ``names``, ``shapes`` and ``words`` are the recording's interned values (ids index them);
    ``want`` the statistics it computes."""

    def __init__(
        self,
        names: list[str],
        shapes: list[tuple[int, ...]],
        words: list[str],
        want: frozenset[str],
    ):
        self.names, self.shapes, self.words, self.want = names, shapes, words, want
        self._wanted = [
            (name, column, kind) for stat, name, column, kind in _STAT_FIELDS if stat in want
        ]

    def events(self, chunk: Chunk):
        """Yield (seq, step, phase id, path id, call, tensors) for each event in ``chunk``."""
        cache: dict[int, tuple] = {}
        ev, lv = chunk.events, chunk.leaves
        for e in range(chunk.skip, len(ev) // EVENT_WIDTH):
            record = ev[e * EVENT_WIDTH : (e + 1) * EVENT_WIDTH]
            first = record[EVENT_FIRST_LEAF]
            tensors = []
            for leaf in range(first, first + record[EVENT_LEAVES]):
                row = lv[leaf * LEAF_WIDTH + LEAF_ROW]
                fields = None
                if row != NO_ROW:
                    fields = cache.get(row)
                    if fields is None:
                        fields = cache[row] = self._fields(chunk, row)
                tensors.append(self._stats(chunk, leaf, fields))
            yield (
                record[EVENT_SEQ],
                record[EVENT_STEP],
                record[EVENT_PHASE],
                record[EVENT_PATH],
                record[EVENT_CALL],
                tuple(tensors),
            )

    def mains(self, chunk: Chunk):
        """Per event of a fresh chunk, straight from the columns: (step, phase id, path id, leaf, mean, norm,
        NaN count, Inf count) of its first tensor (the usual single output or gradient).

        ``leaf`` is -1 when the event holds no tensor; the numbers are None when that tensor has
        no statistics, NaN when a statistic was not asked for. ``stats_at(chunk, leaf)`` builds
        the whole TensorStats, for the few events a reader keeps."""
        ev, lv, table = chunk.events, chunk.leaves, chunk.stats
        # Every event: what max_events trims is still new to a listener.
        for e in range(len(ev) // EVENT_WIDTH):
            at = e * EVENT_WIDTH
            step, phase, path_id = ev[at + EVENT_STEP], ev[at + EVENT_PHASE], ev[at + EVENT_PATH]
            first = ev[at + EVENT_FIRST_LEAF]
            for leaf in range(first, first + ev[at + EVENT_LEAVES]):
                row = lv[leaf * LEAF_WIDTH + LEAF_ROW]
                if row != NO_ROW:
                    c = row * STAT_WIDTH
                    if math.isnan(
                        table[c + COL_COUNT]
                    ):  # no statistics (not computable, or none asked for)
                        yield step, phase, path_id, leaf, None, None, None, None
                    else:
                        yield (
                            step,
                            phase,
                            path_id,
                            leaf,
                            table[c + COL_MEAN],
                            table[c + COL_NORM],
                            table[c + COL_NAN],
                            table[c + COL_INF],
                        )
                    break
            else:
                yield step, phase, path_id, -1, None, None, None, None

    def histograms(self, chunk: Chunk, start: int = 0) -> HistogramBatch | None:
        """The histograms of the events of ``chunk`` from event ``start`` on, as tensors (one
        row per event whose first tensor has one); None when histograms were not asked for.

        Read straight from the columns, in a few indexing ops: no per-event Python object."""
        n_events = len(chunk.events) // EVENT_WIDTH
        if "histogram" not in self.want or n_events <= start or not len(chunk.stats):
            return None
        events = torch.frombuffer(chunk.events, dtype=torch.int64).view(-1, EVENT_WIDTH)[start:]
        events = events[events[:, EVENT_LEAVES] > 0]  # events that carry at least one value
        leaves = torch.frombuffer(chunk.leaves, dtype=torch.int64).view(-1, LEAF_WIDTH)
        rows = leaves[events[:, EVENT_FIRST_LEAF], LEAF_ROW]
        # The first *tensor* of an event, as mains() reads it: rarely not its first value.
        for i in ((events[:, EVENT_LEAVES] > 1) & (rows == NO_ROW)).nonzero().flatten().tolist():
            first, n = events[i, EVENT_FIRST_LEAF].item(), events[i, EVENT_LEAVES].item()
            rows[i] = next(
                (r for r in leaves[first + 1 : first + n, LEAF_ROW].tolist() if r != NO_ROW), NO_ROW
            )
        events, rows = events[rows != NO_ROW], rows[rows != NO_ROW]
        table = torch.frombuffer(chunk.stats, dtype=torch.float64).view(-1, STAT_WIDTH)[rows]
        lo, hi = table[:, COL_MIN], table[:, COL_MAX]
        # No statistics (NaN count column), or no finite value: nothing to place in a bin.
        keep = (table[:, COL_COUNT] > 0) & torch.isfinite(lo) & torch.isfinite(hi)
        counts = torch.frombuffer(chunk.hist, dtype=torch.float64).view(-1, HIST_BINS)[rows[keep]]
        events = events[keep]
        return HistogramBatch(
            events[:, EVENT_STEP],
            events[:, EVENT_PHASE],
            events[:, EVENT_PATH],
            counts,
            lo[keep],
            hi[keep],
        )

    def stats_at(self, chunk: Chunk, leaf: int) -> TensorStats:
        """The TensorStats of one leaf of ``chunk``."""
        row = chunk.leaves[leaf * LEAF_WIDTH + LEAF_ROW]
        return self._stats(chunk, leaf, self._fields(chunk, row) if row != NO_ROW else None)

    def _stats(self, chunk: Chunk, leaf: int, fields: tuple | None) -> TensorStats:
        at = leaf * LEAF_WIDTH
        name = self.names[chunk.leaves[at + LEAF_NAME]]
        if fields is None:  # not a tensor
            return TensorStats(
                name, self.words[chunk.leaves[at + LEAF_TYPE]], text=chunk.texts.get(leaf)
            )
        shape = self.shapes[chunk.leaves[at + LEAF_SHAPE]]
        values = fields[_AT_VALUES]
        if values is not None:
            values = _shape_values(values, shape, fields[_AT_DTYPE])
        # positional, in TensorStats' field order: it is the hot path of every reader
        return TensorStats(
            name, "tensor", shape, *fields[:_AT_VALUES], values, *fields[_AT_VALUES + 1 :]
        )

    def _fields(self, chunk: Chunk, row: int) -> tuple:
        """The values of ``_DECODED`` for one row (values still flat)."""
        record = chunk.rows[row * ROW_WIDTH : (row + 1) * ROW_WIDTH]
        kept = record[ROW_SAMPLED]
        found: dict[str, Any] = dict.fromkeys(_DECODED)
        found.update(
            dtype=self.words[record[ROW_DTYPE]],
            device=self.words[record[ROW_DEVICE]],
            numel=record[ROW_NUMEL],
            sampled=kept != KEPT_WHOLE,
            sample_size=record[ROW_LENGTH],
            exact=kept != KEPT_SAMPLE_ONLY,
            norm_exact=kept in (KEPT_WHOLE, KEPT_SAMPLE_NORM),
            magnitude=self.words[record[ROW_DTYPE]].startswith("complex"),
        )
        c = chunk.stats[row * STAT_WIDTH : (row + 1) * STAT_WIDTH]
        want = self.want
        if not math.isnan(c[COL_COUNT]):  # else: no statistics (none asked for, or not computable)
            for name, column, kind in self._wanted:
                found[name] = kind(c[column])
            if "histogram" in want:
                found["histogram"] = tuple(
                    map(int, chunk.hist[row * HIST_BINS : (row + 1) * HIST_BINS])
                )
                found["hist_range"] = (c[COL_HIST_LO], c[COL_HIST_HI])
        if "values" in want:
            found["values"] = chunk.values.get(row)
        return tuple(found.values())


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


def _fmt(value: float) -> str:
    return f"{value:.4g}" if isinstance(value, float) else str(value)
