"""Tensor summaries for record(), the hook side: what a hook keeps of each tensor it sees.

The design keeps the cost inside a hook small:
- A hook writes a fixed-size sample of each tensor into a preallocated buffer row of its
  device's ``Lane`` (one copy) and, for a large tensor, takes one exact pass (min/max, which
  also reveals NaN and Inf) and, for a gradient when the norm is asked for, a second (a
  gradient's norm is what a dashboard flags as vanishing or exploding, so it must not be a
  sample's guess; an output's norm stays an estimate, flagged, to keep forward hooks cheap),
  unless ``record(exact=False)``: then min, max, the norm, NaN and Inf are estimated from the
  sample. How a (shape, dtype, layout) is kept is planned once (``RowPlan``).
- A hook appends one tuple per event and one per row to ``Pending``; the flush lays them out
  in the flat columns ``store`` defines, and ``batch_stats`` computes the statistics of all
  buffered rows together.
- The float32 path is the hot one. The rare dtypes leave it by one test that was already
  there (``mode >= NOT_KEPT``): float64 rows live in a float64 lane (float32 would turn 1e40
  into Inf and 1e-50 into 0), and a complex tensor keeps its magnitude |z|.
- Whatever mode the user's code runs in (no_grad, inference_mode, enable_grad inside it,
  forward-mode AD), hookviz reads and computes with autograd off (``autograd_off``): its
  buffers never join the user's graph.
"""

from __future__ import annotations

import contextlib
import math
import weakref
from array import array
from typing import Any, NamedTuple

import torch
from torch.autograd import forward_ad

from .store import (
    BACKWARD_PRE,
    KEPT_SAMPLE,
    KEPT_SAMPLE_NORM,
    KEPT_SAMPLE_ONLY,
    KEPT_WHOLE,
    LEAF_WIDTH,
    NO_ROW,
    NOT_COUNTED,
    ROW_NUMEL,
    ROW_SAMPLED,
    ROW_WIDTH,
    TensorStats,
)

__all__ = ["BUFFER_ROWS", "SAMPLE_SIZE", "STATS", "TensorStats", "check_names", "check_stats"]

STATS = ("mean", "std", "min", "max", "norm", "zeros", "nan", "inf", "histogram", "values")
RUNS, RUN = 16, 16  # a large tensor's sample: 16 runs of 16 contiguous elements
SAMPLE_SIZE = RUNS * RUN  # larger tensors: mean, std, norm, zeros and histogram are estimated
TINY = 16  # tensors with at most this many elements keep their values
BUFFER_ROWS = 1024  # sample rows held before statistics are computed

# Dtypes whose rows are not kept the float32 way (RowPlan.conversion): (statistics of |z|, rows
# in the device's float64 lane, the kept tensor's dtype is its lane's buffer's). float32 would
# overflow or flush to zero what float64 holds (1e40, 1e-50). A complex tensor keeps its
# magnitude |z| (TensorStats.magnitude), in its own precision.
_CONVERTED = {
    torch.float64: (False, True, True),
    torch.complex64: (True, False, True),
    torch.complex128: (True, True, True),
    torch.complex32: (True, False, False),  # |z| is float16
}
_SUMMARISABLE = {
    torch.float32,
    torch.float64,
    torch.float16,
    torch.bfloat16,
    torch.bool,
    torch.uint8,
    torch.int8,
    torch.int16,
    torch.int32,
    torch.int64,
    *_CONVERTED,
}
_STRIDED = torch.strided
_grad_enabled = torch.is_grad_enabled
_inference_mode = torch.is_inference_mode_enabled
# torch's own switch (what torch.no_grad calls), for the hot path; the public one if it is gone
_set_grad_enabled = getattr(torch._C, "_set_grad_enabled", torch.set_grad_enabled)
# forward-mode AD's switch (private in torch 2.13); without it, forward AD stays as it is
_forward_grad_off = getattr(
    forward_ad, "_set_fwd_grad_enabled", lambda enabled: contextlib.nullcontext()
)


@contextlib.contextmanager
def autograd_off():
    """Neither reverse-mode nor forward-mode autograd, and not in inference mode: how hookviz
    reads a user's tensors into its own buffers and computes their statistics, whatever mode
    the user's code runs in.

    ``inference_mode(False)`` alone turns grad mode back *on*: an out= op then refuses a tensor
    that requires grad, and a copy links hookviz's buffer into the user's graph."""
    with torch.inference_mode(False), torch.no_grad(), _forward_grad_off(False):
        yield


# A norm taken in float32 (of float32 and half-precision tensors) or float64 holds all its
# digits at or above this floor, by dtype taken in: below, squares left the normal range. Above
# it, only an overflow (Inf) is wrong, as the sum of squares of finite values cannot shrink.
NORM_FLOOR = {torch.float32: 1e-16, torch.float64: 1e-145}
_INF = math.inf


class NormTaken(tuple):
    """EXACT_CELLS of a row whose norm the hook took exactly (on the host, or on the device)."""

    __slots__ = ()


# no exact pass: min, max, norm, NaN, Inf (EXACT_CELLS)
_NOT_TAKEN = (math.nan, math.nan, math.nan, NOT_COUNTED, NOT_COUNTED)
_MANY_LEAVES = -1  # a log entry's LOG_NAME when its LOG_ROW lists the event's leaves

# -- what hooks append: one tuple where the store's layout takes a dozen steps ----------------
# Hooks run between large ops, where caches are cold and each step costs several times what it
# costs in a loop; ``Pending.layout`` lays the tuples out in the store's columns at the flush.
# Unpacking range(len(...)) fails at import if a name list and its offsets ever disagree.

# Pending.log, per event: its EVENT_FIELDS up to the call, then the name id of its one tensor
# and that tensor's row, or _MANY_LEAVES and a list of (leaf record, text or None)
LOG_FIELDS = ("seq", "step", "phase", "path", "call", "name", "row")
LOG_SEQ, LOG_STEP, LOG_PHASE, LOG_PATH, LOG_CALL, LOG_NAME, LOG_ROW = range(len(LOG_FIELDS))
# Pending.written, per row: the lane and buffer row holding its sample (None, -1: none), its
# RowPlan, and the exact values its hook took (EXACT_CELLS)
WRITTEN_FIELDS = ("lane", "slot", "plan", "exact")
WRITTEN_LANE, WRITTEN_SLOT, WRITTEN_PLAN, WRITTEN_EXACT = range(len(WRITTEN_FIELDS))
# Pending.slots, per row: the lane and buffer row of its sample
SLOT_FIELDS = ("lane", "row")
SLOT_LANE, SLOT_ROW = range(len(SLOT_FIELDS))
# The exact values of a row (a tuple in Pending.written, or Lane.exact's cells on the device):
# min, max, norm (store.EXTREMES_WIDTH: the cells before the counts), NaN count, Inf count (NaN
# or NOT_COUNTED: not taken)
EXACT_CELLS = ("min", "max", "norm", "nan", "inf")
EXACT_MIN, EXACT_MAX, EXACT_NORM, EXACT_NAN, EXACT_INF = range(len(EXACT_CELLS))


class TensorType(NamedTuple):
    """What a hook needs to know about a dtype on one device, made once per dtype."""

    dtype_id: int
    device_id: int
    summarisable: bool
    floating: bool
    float32: bool


# RowPlan.mode, how _write keeps a tensor of that plan: all its values; a sample; no values (not
# summarisable, empty, or no statistics asked for); converted first (RowPlan.conversion), then
# kept as the plan it carries says. The last two are the rare ones: one test (>= NOT_KEPT).
WHOLE, SAMPLED, NOT_KEPT, CONVERTED = range(4)


class RowPlan(NamedTuple):
    """How _write keeps one (shape, dtype, layout) on one lane, planned once, so that a hook
    does one dictionary lookup where it would do a dozen steps."""

    shape_id: int
    # The row (ROW_FIELDS); a SAMPLED row with an exact pass lacks its last two, the counts.
    fields: tuple[int, ...]
    mode: int
    positions: torch.Tensor | None  # SAMPLED: where the sample is taken
    straight: bool  # the kept tensor's dtype is its lane buffer's: gathered straight into it
    floating: bool  # else converted to float64 first
    tiny: bool  # WHOLE and at most TINY elements: its values are kept
    # CONVERTED: (statistics of |z|, rows in the float64 lane, the RowPlan of the converted tensor)
    conversion: tuple[bool, bool, RowPlan] | None = None
    converted: bool = False  # the plan a CONVERTED plan carries: it keeps a converted tensor


class Needs:
    """Which pieces of work the selected statistics require."""

    def __init__(self, stats: tuple[str, ...], *, exact: bool = True):
        self.stats = frozenset(stats)
        self.exact = exact  # a large tensor's min, max, NaN and Inf taken exactly (one full pass)
        self.kept_large = KEPT_SAMPLE if exact else KEPT_SAMPLE_ONLY  # a large tensor's ROW_SAMPLED
        self.sample = bool(self.stats)
        self.lo = bool(self.stats & {"min", "histogram"})
        self.hi = bool(self.stats & {"max", "histogram"})
        self.minmax = self.lo or self.hi
        self.norm = exact and "norm" in self.stats  # a large gradient's norm taken exactly
        self.nonfinite = bool(self.stats & {"nan", "inf"})


def check_names(chosen, valid: tuple[str, ...], what: str, plural: str) -> tuple[str, ...]:
    """Validate a name or names chosen from ``valid`` (an argument such as ``stats=`` or
    ``phases=``); the error names the unknown ones and lists the valid ones (``what``: the
    word for one, ``plural`` for many)."""
    if isinstance(chosen, str):
        chosen = [chosen]
    try:
        chosen = tuple(chosen)
    except TypeError:
        raise TypeError(
            f"expected a {what} name or a list of them, got {type(chosen).__name__}; "
            f"valid {plural} are {', '.join(valid)}."
        ) from None
    unknown = [c for c in chosen if c not in valid]
    if unknown:
        raise ValueError(
            f"unknown {what}(s) {', '.join(map(repr, unknown))}; valid {plural} are {', '.join(valid)}."
        )
    return chosen


def check_stats(stats) -> tuple[str, ...]:
    """Validate a ``stats=`` argument: None means all of ``STATS``."""
    return STATS if stats is None else check_names(stats, STATS, "statistic", "statistics")


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

    def __init__(self, device: torch.device, words: Interner, dtype: torch.dtype = torch.float32):
        """``dtype``: the buffer's, float32; float64 for the rows of float64 tensors (``wide``)."""
        self.device, self.dtype = device, dtype
        self.buffer = torch.full((BUFFER_ROWS, SAMPLE_SIZE), math.nan, dtype=dtype, device=device)
        # (row, shape) -> the row's first cells in that shape
        self.small: dict[tuple, torch.Tensor] = {}
        self.row_views: list[torch.Tensor | None] = [None] * BUFFER_ROWS  # row -> view of that row
        self.positions: dict[int, torch.Tensor] = {}  # numel -> sample positions
        self.used = 0
        self.rows: list[int] = []  # the pending rows held in this lane, in order
        # Exact min, max, norm, NaN and Inf counts that hooks reduce on the device (EXACT_CELLS;
        # NaN: none).
        self.exact = torch.full(
            (BUFFER_ROWS, len(EXACT_CELLS)), math.nan, dtype=dtype, device=device
        )
        self.exact_written = False  # a hook wrote cells of ``exact`` since the last compute
        self._cells: list[tuple | None] = [None] * BUFFER_ROWS
        self.type_ids: dict[torch.dtype, TensorType] = {}
        self.plans: dict[tuple, RowPlan] = {}  # (shape, dtype, layout) -> RowPlan
        self._words = words
        self.workspace: Any = None  # the batched statistics' work space (batch_stats makes it)
        self.wide: Lane | None = None  # the device's float64 lane, once a row needs it

    def reset(self) -> None:
        """Free every row (their statistics were computed)."""
        self.used = 0
        self.rows = []

    def drop_autograd(self) -> None:
        """Make the buffers plain tensors again, with fresh views: a forward-mode dual tensor
        copied into a row gives the whole buffer a tangent (until its dual level ends)."""
        self.buffer, self.exact = self.buffer.detach(), self.exact.detach()
        self.small.clear()
        self.row_views = [None] * BUFFER_ROWS
        self._cells = [None] * BUFFER_ROWS

    def type_id(self, dtype: torch.dtype) -> TensorType:
        """The TensorType of ``dtype`` on this lane's device, made once per dtype."""
        ids = self.type_ids[dtype] = TensorType(
            self._words(str(dtype).removeprefix("torch.")),
            self._words(str(self.device)),
            dtype in _SUMMARISABLE and self.device.type != "meta",  # meta tensors hold no values
            dtype.is_floating_point,
            dtype is torch.float32,
        )
        return ids

    def exact_cells(self, slot: int) -> tuple[torch.Tensor, ...]:
        """The row's 0-d cells of ``exact`` (EXACT_CELLS), made once and kept."""
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

    def __init__(
        self, need: Needs, names: Interner, shapes: Interner, words: Interner, *, dedup: bool = True
    ):
        """``dedup``: look each tensor version up, so that one seen twice is summarised once
        (False saves the lookups when no tensor can be seen twice)."""
        self.need = need
        self.names, self.shapes, self.words = names, shapes, words
        self.tensor_type = words("tensor")  # LEAF_TYPE of a tensor
        self.dedup_on = dedup
        self.lanes: dict[torch.device, Lane] = {}
        self._cpu: Lane | None = None
        self._exact = ExactPass(need)
        self._reading_again = False  # _read_again is reading a tensor with autograd off
        self.reset()

    def reset(self) -> None:
        # What hooks append (one entry per event, one per row), laid out by ``layout``:
        # hooks run between large ops, where caches are cold and each step costs several times
        # what it costs in a loop, so they append one tuple where the layout takes a dozen steps.
        self.log: list[tuple] = []  # per event: LOG_FIELDS
        self.written: list[tuple] = []  # per row: WRITTEN_FIELDS
        # The same, laid out in the store's columns (store.py) by ``layout``:
        self.events = array("q")
        self.leaves = array("q")
        self.rows = array("q")
        self.minmax = array("d")  # exact min, max, norm per row (EXTREMES_WIDTH; NaN: none)
        self.slots: list[tuple[Lane | None, int]] = []  # per row: SLOT_FIELDS
        for lane in self.lanes.values():
            lane.reset()
        self.tiny_rows: list[int] = []  # rows of tensors small enough to keep their values
        self.texts: dict[int, str] = {}
        self.dedup: dict[tuple, tuple] = {}

    @property
    def n_rows(self) -> int:
        return len(self.written)

    @property
    def n_events(self) -> int:
        return len(self.log)

    def add_event(self, seq: int, step: int, phase: int, path_id: int, call: int, leaves) -> None:
        """Append one event; each tensor gets a buffer row, shared by aliases of the same version."""
        found = []  # (leaf record, its text or None)
        gradient = phase >= BACKWARD_PRE
        for name, value in leaves:
            if isinstance(value, torch.Tensor):
                found.append((self.tensor_leaf(name, value, gradient), None))
            else:
                name_id = self.names.index.get(name)
                if name_id is None:
                    name_id = self.names(name)
                value_type = "None" if value is None else type(value).__name__
                text = "None" if value is None else _short_repr(value)
                found.append(((name_id, self.words(value_type), NO_ROW, NO_ROW), text))
        self.log.append((seq, step, phase, path_id, call, _MANY_LEAVES, found))

    def add_tensor_event(
        self,
        seq: int,
        step: int,
        phase: int,
        path_id: int,
        call: int,
        name: str,
        value: torch.Tensor,
    ) -> None:
        """``add_event`` for the usual event: one tensor. A hook's hot path, in one frame."""
        name_id = self.names.index.get(name)
        if name_id is None:
            name_id = self.names(name)
        dedup_on = self.dedup_on and not value.is_inference()  # no version counter to key on
        if dedup_on:
            key = (id(value), value._version)
            hit = self.dedup.get(key)
            if hit is not None and hit[0]() is value:
                self.log.append((seq, step, phase, path_id, call, name_id, hit[1]))
                return
        if value.requires_grad and _grad_enabled():
            # out= copies refuse a tensor that requires grad in grad mode: switching grad mode
            # off costs less than detach(), which makes a new tensor each time
            _set_grad_enabled(False)
            try:
                row = self._write(value, phase >= BACKWARD_PRE)
            finally:
                _set_grad_enabled(True)
        else:
            row = self._write(value, phase >= BACKWARD_PRE)
        if dedup_on:
            self.dedup[key] = (weakref.ref(value), row)
        self.log.append((seq, step, phase, path_id, call, name_id, row))

    def tensor_leaf(
        self, name: str, value: torch.Tensor, gradient: bool = False
    ) -> tuple[int, int, int, int]:
        """The leaf record (LEAF_FIELDS) of one tensor, writing its row unless this version has one."""
        name_id = self.names.index.get(name)
        if name_id is None:
            name_id = self.names(name)
        # The same tensor at the same version holds the same values: one row for both
        # (a module's input is usually the previous module's output). The weak reference
        # tells a live tensor from a new one that reuses a freed id.
        dedup_on = self.dedup_on and not value.is_inference()  # no version counter to key on
        key = (id(value), value._version) if dedup_on else None
        hit = self.dedup.get(key) if dedup_on else None
        if hit is not None and hit[0]() is value:
            row = hit[1]
        else:
            row = self._write(value.detach(), gradient)
            if dedup_on:
                self.dedup[key] = (weakref.ref(value), row)
        return name_id, self.tensor_type, self.written[row][WRITTEN_PLAN].shape_id, row

    def layout(self) -> None:
        """Lay what hooks appended out in the store's columns (before statistics are computed)."""
        rows, minmax, slots, tiny = self.rows, self.minmax, self.slots, self.tiny_rows
        for row, (lane, slot, plan, exact) in enumerate(
            self.written, start=len(slots)
        ):  # WRITTEN_FIELDS
            slots.append((lane, slot))  # SLOT_FIELDS
            if lane is not None:
                lane.rows.append(row)
            if plan.tiny:
                tiny.append(row)
            rows.extend(plan.fields)  # in ROW_FIELDS order
            if type(exact) is NormTaken:  # the hook took this gradient's norm exactly
                rows[-len(plan.fields) + ROW_SAMPLED] = KEPT_SAMPLE_NORM
            if len(plan.fields) < ROW_WIDTH:  # sampled, with an exact pass: its NaN and Inf counts
                rows.extend(exact[EXACT_NAN:])
            minmax.extend(exact[:EXACT_NAN])  # min, max, norm (EXTREMES_WIDTH)
        written, events, leaves, tensor_type = (
            self.written,
            self.events,
            self.leaves,
            self.tensor_type,
        )
        for seq, step, phase, path_id, call, name_id, row in self.log:  # LOG_FIELDS
            first = len(leaves) // LEAF_WIDTH
            if name_id != _MANY_LEAVES:
                leaves.extend((name_id, tensor_type, written[row][WRITTEN_PLAN].shape_id, row))
                n = 1
            else:
                for n, (leaf, text) in enumerate(row):
                    leaves.extend(leaf)
                    if text is not None:
                        self.texts[first + n] = text
                n = len(row)
            events.extend((seq, step, phase, path_id, call, first, n))  # in EVENT_FIELDS order
        self.log, self.written = [], []

    def _lane(self, t: torch.Tensor) -> Lane:
        lane = self._cpu if t.is_cpu else self.lanes.get(t.device)
        if lane is None:
            lane = self.lanes[t.device] = Lane(t.device, self.words)
            if t.is_cpu:
                self._cpu = lane
        return lane

    def _plan(self, lane: Lane, key: tuple) -> RowPlan:
        """The RowPlan of ``key`` = (shape, dtype, layout) on ``lane``, made and kept."""
        shape, dtype, layout = key
        shape_id = self.shapes.index.get(shape)
        if shape_id is None:
            shape_id = self.shapes(tuple(shape))
        n = math.prod(shape)
        dtype_id, device_id, summarisable, floating, straight = lane.type_ids.get(
            dtype
        ) or lane.type_id(dtype)
        positions = None
        # rows are written in ROW_FIELDS order: dtype, device, numel, length, sampled, NaN, Inf
        if not (summarisable and n and self.need.sample and layout is _STRIDED):
            mode, fields = NOT_KEPT, (dtype_id, device_id, n, 0, KEPT_WHOLE, 0, 0)
        elif n <= SAMPLE_SIZE:  # small: the whole tensor, so every statistic is exact
            # NaN and Inf are counted from the sample (the whole tensor).
            mode, fields = WHOLE, (dtype_id, device_id, n, n, KEPT_WHOLE, NOT_COUNTED, NOT_COUNTED)
        else:
            mode, fields = SAMPLED, (dtype_id, device_id, n, SAMPLE_SIZE, self.need.kept_large)
            if not self.need.exact:  # no exact pass: NaN and Inf are estimated from the sample
                fields += (NOT_COUNTED, NOT_COUNTED)
            positions = lane.positions.get(n)
            if positions is None:
                positions = lane.sample_positions(n)
        tiny = mode == WHOLE and n <= TINY
        conversion = _CONVERTED.get(dtype) if mode != NOT_KEPT else None
        if conversion is not None:
            magnitude, wide, straight = conversion
            # |z| is not a complex tensor's values: they are not kept
            inner = RowPlan(
                shape_id, fields, mode, positions, straight, True, tiny and not magnitude
            )
            mode, conversion = CONVERTED, (magnitude, wide, inner._replace(converted=True))
        if len(lane.plans) > 256:
            lane.plans.clear()
        plan = lane.plans[key] = RowPlan(
            shape_id, fields, mode, positions, straight, floating, tiny, conversion
        )
        return plan

    def _converted(self, t: torch.Tensor, lane: Lane, plan: RowPlan) -> tuple:
        """(the tensor to keep, its lane, its RowPlan) for a tensor of a CONVERTED plan."""
        magnitude, wide, inner = plan.conversion
        if magnitude:
            t = t.abs()
        if wide:
            lane = lane.wide or self._wide_lane(lane)
        return t, lane, inner

    def _wide_lane(self, lane: Lane) -> Lane:
        """The float64 lane beside ``lane``, made on first use."""
        wide = lane.wide = self.lanes[(lane.device, torch.float64)] = Lane(
            lane.device, self.words, torch.float64
        )
        return wide

    def _write(self, t: torch.Tensor, gradient: bool = False) -> int:
        """Copy a sample of ``t`` into the next buffer row; for a large ``t``, one exact pass
        (none when ``need.exact`` is False). ``t`` must not require grad, or grad mode be off
        (out= copies)."""
        if _inference_mode():
            # The buffers must stay normal tensors, which inference mode cannot write or make;
            # leaving it turns grad mode on (even under no_grad): autograd_off turns it off.
            with autograd_off():
                return self._write(t, gradient)
        written = self.written
        row = len(written)
        lane = self._cpu if t.is_cpu and self._cpu is not None else self._lane(t)
        key = (t.shape, t.dtype, t.layout)  # a torch.Size is a tuple: it hashes and compares as one
        plan = lane.plans.get(key)
        if plan is None:
            plan = self._plan(lane, key)
        mode = plan.mode
        if mode >= NOT_KEPT:  # the rare ones: NOT_KEPT, CONVERTED
            if mode == NOT_KEPT:
                written.append((None, -1, plan, _NOT_TAKEN))
                return row
            source = t
            t, lane, plan = self._converted(t, lane, plan)
            mode = plan.mode
        slot = lane.used
        lane.used = slot + 1
        try:
            if not plan.floating:
                t = t.to(torch.float64)
            if mode == WHOLE:
                # The row's first n cells, viewed in t's shape: one copy_, no reshaping. The rest
                # of the row stays NaN: padding the statistics skip.
                target = lane.small.get((slot, key[0]))
                if target is None:
                    target = lane.small_view(slot, key[0], plan.fields[ROW_NUMEL])
                target.copy_(t)
                written.append((lane, slot, plan, _NOT_TAKEN))
                return row
            # exact=False: the sample alone; batch_stats estimates from it
            exact = self._exact.take(t, lane, slot, gradient) if self.need.exact else _NOT_TAKEN
            # One gather (take reads t in its logical order, whatever its strides), after the
            # exact pass: its scattered runs then hit cache and TLB entries, not memory.
            if plan.straight:
                torch.take(t, plan.positions, out=lane.row(slot))
            else:  # the buffer is float32: gather, then convert only the sample
                lane.row(slot).copy_(torch.take(t, plan.positions))
        except BaseException as error:
            # The slot stays with a row no event names: a lane's rows must hold consecutive
            # slots, and cells this read filled must not pass to the next tensor's row.
            written.append((lane, slot, plan, _NOT_TAKEN))
            if isinstance(error, NotImplementedError) and plan.floating:
                original = source if plan.converted else t  # source: set where converted
                return self._read_again(error, original, lane, slot, gradient)
            if isinstance(error, RuntimeError) and _inside_vmap():
                raise RuntimeError(INSIDE_VMAP) from error
            raise
        written.append((lane, slot, plan, exact))
        return row

    def _read_again(
        self, error: BaseException, t: torch.Tensor, lane: Lane, slot: int, gradient: bool
    ) -> int:
        """After a read raised NotImplementedError, read ``t`` once more with autograd off, or
        raise ``error``: forward-mode AD refuses out= ops on a dual tensor, or on a buffer one
        was copied into (grad mode is off on the hot path already; forward AD has no cheap test)."""
        if self._reading_again:
            raise error
        # Undo the failed row: the same row and slot are written again, cell for cell.
        self.written.pop()
        lane.used = slot
        lane.drop_autograd()
        self._reading_again = True
        try:
            with autograd_off():
                return self._write(t.detach(), gradient)
        finally:
            self._reading_again = False


class ExactPass:
    """A large tensor's exact min, max, norm and NaN/Inf counts, as far as ``need`` asks for
    them: one full pass (aminmax), a second for the norm, and NaN/Inf counted only when that
    pass shows one. On the CPU the results are read on the host at once (no transfer to wait
    for); on an accelerator they stay on the device, in the row's cells of ``Lane.exact``."""

    def __init__(self, need: Needs):
        self.need = need
        self._pairs: dict[torch.dtype, tuple] = {}

    def _count_non_finite(
        self, t: torch.Tensor, norm: bool
    ) -> tuple[float, float, float, int, int]:
        """(min, max, norm of the finite values, NaN count, Inf count) of a tensor holding a NaN
        or an Inf (``norm``: take the norm too)."""
        nans, infs = int(torch.isnan(t).sum()), int(torch.isinf(t).sum())
        lo = hi = math.nan
        norm = math.nan if not norm else None
        if self.need.minmax or norm is None:
            finite = t[torch.isfinite(t)]
            if finite.numel() and self.need.minmax:
                lo, hi = finite.min().item(), finite.max().item()
            if norm is None:
                norm = self._norm(finite) if finite.numel() else 0.0
        return lo, hi, norm, nans, infs

    def _pair(self, dtype: torch.dtype) -> tuple[array | None, torch.Tensor, tuple, float]:
        """Three cells of ``dtype`` for aminmax's and vector_norm's out=: (host, tensor, its
        0-d cells, the NORM_FLOOR of a norm taken of ``dtype``). For float32 and float64 the
        tensor's memory is ``host``, a Python array read with no torch op (between two
        convolutions an op costs tens of microseconds); else ``host`` is None."""
        code = {torch.float32: "f", torch.float64: "d"}.get(dtype)
        host = array(code, (0.0, 0.0, 0.0)) if code else None
        cells = torch.empty(3, dtype=dtype) if host is None else torch.frombuffer(host, dtype=dtype)
        floor = NORM_FLOOR[torch.float64 if dtype is torch.float64 else torch.float32]
        made = self._pairs[dtype] = (host, cells, tuple(cells.unbind()), floor)
        return made

    def _extremes_apart(
        self, t: torch.Tensor, lo_cell: torch.Tensor, hi_cell: torch.Tensor
    ) -> None:
        """The device path's min and max of a tensor whose dtype is not its cells' (half
        precision on a float32 lane), reduced first, then copied into the cells."""
        need = self.need
        if need.lo and need.hi:
            lo, hi = torch.aminmax(t)
            lo_cell.copy_(lo)
            hi_cell.copy_(hi)
        elif need.lo:
            lo_cell.copy_(t.amin())
        elif need.hi:
            hi_cell.copy_(t.amax())

    def _norm(self, t: torch.Tensor) -> float:
        """The exact norm of ``t`` (finite values), read on the host (float32 and float64: no
        torch op to read); taken again in float64 where float32 overflowed or lost digits."""
        host, _, cells, floor = self._pairs.get(t.dtype) or self._pair(t.dtype)
        if host is None:  # half precision: accumulate in float32
            norm = torch.linalg.vector_norm(t, dtype=torch.float32).item()
        else:
            torch.linalg.vector_norm(t, out=cells[2])
            norm = host[2]
        if floor <= norm < _INF:
            return norm
        return _norm_in_float64(t, norm)

    def take(
        self, t: torch.Tensor, lane: Lane, slot: int, gradient: bool = False
    ) -> tuple[float, float, float, int, int]:
        """Exact NaN and Inf counts, min/max and (for a ``gradient``) the norm of a large tensor,
        as far as they were asked for.

        Returns EXACT_CELLS: (min, max, norm, NaN count, Inf count), a NormTaken when the norm
        was taken; NaN or NOT_COUNTED where the value is deferred (a reduced scalar left on the
        device, read with all the others at the flush) or not asked.
        """
        need = self.need
        norm = need.norm and gradient
        if need.nonfinite and t.is_cpu:
            # On the CPU a reduced scalar is already in host memory, so reading it costs no
            # transfer; the one full pass shows whether a NaN or an Inf is there, and only then
            # are they counted. Min/max and norm are then over the finite values.
            if need.minmax:
                host, pair, cells, _ = self._pairs.get(t.dtype) or self._pair(t.dtype)
                torch.aminmax(t, out=cells[:2])
                lo, hi = (host[0], host[1]) if host is not None else pair[:2].tolist()
                probe = hi - lo
            else:
                lo = hi = math.nan
                probe = t.sum().item()
            if math.isfinite(probe):
                if norm:
                    return NormTaken((lo, hi, self._norm(t), 0, 0))
                return lo, hi, math.nan, 0, 0
            found = self._count_non_finite(t, norm)
            return NormTaken(found) if norm else found
        # Otherwise (an accelerator, or no NaN/Inf counts asked for) nothing is read per module:
        # the reductions are written, on the device, into the row's cells of lane.exact.
        lo_cell, hi_cell, norm_cell, nan_cell, inf_cell = lane.exact_cells(slot)  # EXACT_CELLS
        lane.exact_written = True
        if t.dtype is not lane.dtype:  # half precision on a float32 lane: out= wants one dtype
            self._extremes_apart(t, lo_cell, hi_cell)
        elif need.lo and need.hi:
            torch.aminmax(t, out=(lo_cell, hi_cell))
        elif need.lo:
            torch.amin(t, dim=(), out=lo_cell)
        elif need.hi:
            torch.amax(t, dim=(), out=hi_cell)
        if norm:  # over the finite values when NaN and Inf are counted apart
            finite = torch.nan_to_num(t, nan=0.0, posinf=0.0, neginf=0.0) if need.nonfinite else t
            norm_cell.copy_(torch.linalg.vector_norm(finite, dtype=norm_cell.dtype))
        if need.nonfinite:
            torch.sum(torch.isnan(t), dtype=nan_cell.dtype, out=nan_cell)
            torch.sum(torch.isinf(t), dtype=inf_cell.dtype, out=inf_cell)
        deferred = (math.nan, math.nan, math.nan, NOT_COUNTED, NOT_COUNTED)
        return NormTaken(deferred) if norm else deferred


def _norm_in_float64(t: torch.Tensor, norm: float) -> float:
    """The norm of ``t`` (finite values) where ``norm``, taken in float32 or float64, overflowed
    or fell under its floor: squares of float32 and half-precision values neither overflow nor
    underflow in float64; float64 values are divided by their largest magnitude first."""
    if norm == 0.0 and not bool(t.any()):
        return 0.0  # all zeros
    if t.dtype is not torch.float64:
        return torch.linalg.vector_norm(t, dtype=torch.float64).item()
    largest = t.abs().max().item()
    return largest * torch.linalg.vector_norm(t / largest).item()


INSIDE_VMAP = (
    "record() cannot read tensors inside torch.func.vmap: a batched tensor holds every example "
    "at once and gives no values of its own to copy. Call the model outside vmap while it is "
    "recorded, or stop the recording around the vmap call (rec.stop() or monitor.stop(), or "
    "leave the `with` block)."
)


def _inside_vmap() -> bool:
    """True while torch.func.vmap runs (asked of torch's private interpreter stack, only after a
    read failed; False if this torch has moved it)."""
    try:
        from torch._C._functorch import TransformType
        from torch._functorch.pyfunctorch import retrieve_all_functorch_interpreters

        return any(i.key() == TransformType.Vmap for i in retrieve_all_functorch_interpreters())
    except Exception:  # noqa: BLE001 - no answer: the read's own error stands
        return False


def _short_repr(value: Any, limit: int = 40) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
