"""The batched statistics of record(): every pending row's statistics, a slab of rows at a time.

What the hooks left (``summaries.Pending``: a sample of each tensor in a lane's buffer, exact
extremes and counts where a hook took them) becomes the store's statistics columns here, in a
few batched float ops on the tensor's device and one transfer to the host per slab (never one
per module). Only what ``record(stats=...)`` asked for is computed; the other columns stay NaN.
"""

from __future__ import annotations

import itertools
import math
from array import array
from dataclasses import dataclass

import torch

from .store import (
    EXTREME_MAX,
    EXTREME_MIN,
    EXTREME_NORM,
    EXTREMES_WIDTH,
    HIST_BINS,
    KEPT_SAMPLE,
    KEPT_SAMPLE_NORM,
    ROW_INF,
    ROW_LENGTH,
    ROW_NAN,
    ROW_NUMEL,
    ROW_SAMPLED,
    ROW_WIDTH,
    STAT_COLUMNS,
    STAT_WIDTH,
)
from .summaries import (
    EXACT_CELLS,
    EXACT_MAX,
    EXACT_MIN,
    EXACT_NORM,
    NORM_FLOOR,
    SAMPLE_SIZE,
    SLOT_ROW,
    TINY,
    Lane,
    Needs,
    Pending,
    autograd_off,
)

__all__ = ["SLAB", "compute"]

SLAB = 256  # rows computed together, give or take half (few ops per row, the work space small)
MAX_SLAB = SLAB + SLAB // 2
# Per row: bins 0..B-1, then B (exactly the maximum), then B+1 (the dump: non-finite values),
# and room for a constant row's dump, moved up by _MIDDLE like its values (``_histogram``).
_DUMP = HIST_BINS + 1
_MIDDLE = HIST_BINS // 2
_BINS = _DUMP + 1 + _MIDDLE
# A row whose largest finite |value| lies outside (low, high) for its lane's dtype is computed
# again in float64, scaled (``_in_float64``): above, squares and sums of SAMPLE_SIZE values
# overflow (256 * (2 * high)**2 < the dtype's max); below, squares leave its normal range,
# losing digits, then reaching zero. Rare values: one test per slab, not per row.
_SAFE = {torch.float32: (2.0**-56, 2.0**56), torch.float64: (2.0**-480, 2.0**480)}
_FLAT = 2.0**-20  # a constant row's histogram spans its value +- about this fraction of it


class Workspace:
    """A device's work space for its slabs, made once and kept: float ops only (on the CPU, bool
    masks and their sums cost 5-10x more), written into two work matrices, because a fresh
    256 KB temporary per op would be a fresh mmap, and page faults would cost more than the
    arithmetic."""

    def __init__(self, device: torch.device, dtype: torch.dtype = torch.float32):
        """``dtype``: the lane buffer's (float32; float64 for float64 tensors)."""
        self.work = torch.empty((2, MAX_SLAB, SAMPLE_SIZE), dtype=dtype, device=device)
        self.bin_index = torch.empty((MAX_SLAB, SAMPLE_SIZE), dtype=torch.int32, device=device)
        self.ones = torch.ones(SAMPLE_SIZE, dtype=dtype, device=device)
        offsets = torch.arange(0, MAX_SLAB * _BINS, _BINS, dtype=dtype, device=device)
        self.bin_offsets = offsets[:, None]


def compute(pending: Pending) -> tuple[array, array, dict[int, list[float]]]:
    """Statistics for every pending row: STAT_COLUMNS and ``HIST_BINS`` counts per row, with
    autograd off whatever mode the caller is in (a flush can come from inside a hook)."""
    with autograd_off():
        return _compute(pending)


def _compute(pending: Pending) -> tuple[array, array, dict[int, list[float]]]:
    pending.layout()
    n = len(pending.slots)
    table = array("d", [math.nan]) * (n * STAT_WIDTH)
    hist = array("d", [0.0]) * (n * HIST_BINS)
    values: dict[int, list[float]] = {}
    by_lane = {lane: lane.rows for lane in pending.lanes.values() if lane.rows}
    if by_lane:
        meta = torch.frombuffer(pending.rows, dtype=torch.int64).view(-1, ROW_WIDTH)
        exact = torch.frombuffer(pending.minmax, dtype=torch.float64).view(-1, EXTREMES_WIDTH)
    for lane, rows in by_lane.items():
        if lane.workspace is None:
            lane.workspace = Workspace(lane.device, lane.dtype)
        # Slabs of equal size, about SLAB rows each: the ~80 small ops of a slab cost the same
        # for 9 rows as for 256, so the 9 rows past a flush's 512 join the others.
        count = max(1, round(len(rows) / SLAB))  # at most MAX_SLAB rows a slab
        bounds = [len(rows) * i // count for i in range(count + 1)]
        for start, end in itertools.pairwise(bounds):
            slab = Slab.of(pending, lane, rows[start:end], meta)
            columns, histograms = _statistics(slab, pending.need, exact, pending.rows)
            _store(slab, columns, histograms, pending, (table, hist, values))
        lane.buffer[: len(rows)].fill_(math.nan)  # ready for the next rows
        if lane.exact_written:
            lane.exact[: len(rows)].fill_(math.nan)
            lane.exact_written = False
    return table, hist, values


@dataclass
class Slab:
    """Consecutive buffer rows of one lane, with what the statistics read of them."""

    lane: Lane
    rows: list[int]  # the pending rows, in order
    index: slice | torch.Tensor  # those rows in the pending columns
    contiguous: bool  # rows[i] == rows[0] + i
    first: int  # the buffer row of rows[0] (a lane's rows are consecutive in its buffer)
    sample: torch.Tensor  # (n, SAMPLE_SIZE) in the lane's dtype, NaN past each row's length
    info: torch.Tensor  # the rows' ROW_FIELDS, on the device
    clean: torch.Tensor  # work matrix: the sample with every non-finite value 0
    work: torch.Tensor  # work matrix for each op's result in turn
    # float64 per row: the tensor's size, the sample's length, whether it is a sample (bool);
    # the sample's non-finite cells (the NaN padding included) and finite values
    numel: torch.Tensor
    length: torch.Tensor
    sampled: torch.Tensor
    non_finite: torch.Tensor
    count: torch.Tensor

    @classmethod
    def of(cls, pending: Pending, lane: Lane, rows: list[int], meta: torch.Tensor) -> Slab:
        n = len(rows)
        first = pending.slots[rows[0]][SLOT_ROW]
        contiguous = rows[-1] - rows[0] == n - 1
        index = slice(rows[0], rows[0] + n) if contiguous else torch.tensor(rows)
        space = lane.workspace
        sample, info = lane.buffer[first : first + n], meta[index].to(lane.device)
        clean, work = space.work[0][:n], space.work[1][:n]
        torch.nan_to_num(sample, nan=0.0, posinf=0.0, neginf=0.0, out=clean)  # non-finite -> 0
        torch.mul(sample, 0, out=work)  # 0 where finite, NaN where NaN or Inf
        non_finite = (work.nan_to_num_(nan=1.0) @ space.ones).double()
        return cls(
            lane,
            rows,
            index,
            contiguous,
            first,
            sample,
            info,
            clean,
            work,
            info[:, ROW_NUMEL].double(),
            info[:, ROW_LENGTH].double(),
            info[:, ROW_SAMPLED].bool(),
            non_finite,
            sample.shape[1] - non_finite,  # the NaN padding is non-finite
        )

    def __len__(self) -> int:
        return len(self.rows)


def _statistics(
    slab: Slab, need: Needs, exact: torch.Tensor, rows: array
) -> tuple[dict[str, torch.Tensor], torch.Tensor | None]:
    """The slab's STAT_COLUMNS (float64, one value per row) and, if asked for, its histograms.
    ``rows``: the pending rows' ROW_FIELDS, where a norm the device lost is marked estimated."""
    n, count = len(slab), slab.count
    nothing = torch.full((n,), math.nan, dtype=torch.float64, device=slab.sample.device)
    found = dict.fromkeys(STAT_COLUMNS, nothing)
    found["count"] = count
    _moments(slab, need.stats, found)
    if need.nonfinite:
        found["nan"], found["inf"] = _non_finite(slab, need)
    sample_lo = sample_hi = largest = None  # the sample's finite extremes, largest |value|
    if need.minmax:
        found["min"], found["max"], sample_lo, sample_hi = _extremes(slab, need, exact)
        if need.lo and need.hi:
            largest = torch.maximum(sample_hi, -sample_lo)
    risky = _risky(slab, largest)
    if risky is not None:
        _in_float64(slab, need.stats, found, risky)
    if need.norm:
        norm_exact = exact[slab.index, EXTREME_NORM].to(slab.lane.device)
        found["norm"] = torch.where(
            slab.sampled & ~torch.isnan(norm_exact), norm_exact, found["norm"]
        )
    if slab.lane.exact_written:
        _device_cells(slab, need, found, rows)
    if need.minmax:
        found["min"] = torch.where(count == 0, math.nan, found["min"])
        found["max"] = torch.where(count == 0, math.nan, found["max"])
    histograms = None
    if "histogram" in need.stats:
        lo, hi = found["min"], found["max"]
        if not need.nonfinite:  # torch's own extremes, maybe NaN or Inf: else the sample's
            known = lo.isfinite() & hi.isfinite()
            lo, hi = torch.where(known, lo, sample_lo), torch.where(known, hi, sample_hi)
        found["hist_lo"], found["hist_hi"], histograms = _histogram(slab, lo, hi, risky)
        histograms = histograms.reshape(-1)
    return found, histograms


def _device_cells(slab: Slab, need: Needs, found: dict[str, torch.Tensor], rows: array) -> None:
    """Exact values the hooks reduced on the device replace the sample's, in the rows that took
    them: every sampled row (a lane's exact passes all take the device path, or none), and for
    the norm a gradient's (torch's own min and max are NaN where a NaN is: a NaN cell is a
    result there, not a cell left empty). A norm the device lost (a float32 sum of squares
    overflowed, or fell under float32's normal range) keeps the sample's estimate, marked so in
    ``rows`` (``TensorStats.norm_exact`` False)."""
    n = len(slab)
    cells = slab.lane.exact[slab.first : slab.first + n].double().unbind(1)  # EXACT_CELLS
    took = slab.sampled
    took_norm = slab.info[:, ROW_SAMPLED] == KEPT_SAMPLE_NORM
    norm = cells[EXACT_NORM]
    # Inf is an overflow where the norm is over finite values: with NaN/Inf counted apart, or
    # when min and max show that no value is NaN or infinite (else it is torch's own norm).
    finite = cells[EXACT_MIN].isfinite() & cells[EXACT_MAX].isfinite()
    overflow = norm.isinf() & (finite | need.nonfinite)
    # under the floor it lost digits, or all of them; unless the sample holds no nonzero value
    lost = overflow | ((norm < NORM_FLOOR[slab.lane.dtype]) & (found["norm"] > 0))
    asked = {"min": need.lo, "max": need.hi, "norm": need.norm}
    asked["nan"] = asked["inf"] = need.nonfinite
    for cell, name in zip(cells, EXACT_CELLS, strict=True):
        if asked[name]:
            use = took_norm & ~lost if name == "norm" else took
            found[name] = torch.where(use, cell, found[name])
    lost &= took_norm
    if need.norm and bool(lost.any()):
        for i in lost.nonzero().flatten().tolist():
            rows[slab.rows[i] * ROW_WIDTH + ROW_SAMPLED] = KEPT_SAMPLE


def _risky(slab: Slab, largest: torch.Tensor | None) -> torch.Tensor | None:
    """Positions in the slab of the rows whose largest finite |value| lies outside the lane
    dtype's safe range (``_SAFE``), or None: usually none."""
    if largest is None:
        largest = torch.abs(slab.clean, out=slab.work).amax(1)
    low, high = _SAFE[slab.lane.dtype]
    risky = (largest > high) | ((largest < low) & (largest > 0))
    if not bool(risky.any()):
        return None
    return risky.nonzero().flatten()


def _power_of_two(largest: torch.Tensor) -> torch.Tensor:
    """Per row, a power of two at most twice ``largest`` (positive, finite), at least half of it:
    values divided by it lie within [-2, 2], exactly (no rounding)."""
    exponent = torch.frexp(largest).exponent - 1
    return torch.ldexp(torch.ones_like(largest), exponent)


def _in_float64(
    slab: Slab, want: frozenset[str], found: dict[str, torch.Tensor], risky: torch.Tensor
) -> None:
    """Mean, std and norm of the ``risky`` rows again, in float64, over their values divided by
    a power of two near the largest: what the lane's dtype overflowed or lost, exact."""
    sample = slab.sample[risky].double()  # NaN past its length
    values = sample.nan_to_num(nan=0.0, posinf=0.0, neginf=0.0)
    power = _power_of_two(values.abs().amax(1))
    values /= power[:, None]
    count = slab.count[risky]
    if want & {"mean", "std"}:
        mean = values.sum(1) / count.clamp(min=1)
        found["mean"] = found["mean"].index_put(
            (risky,), torch.where(count > 0, mean * power, math.nan)
        )
    if "std" in want:
        centered = sample / power[:, None] - mean[:, None]
        spread = centered.nan_to_num_(nan=0.0, posinf=0.0, neginf=0.0).square().sum(1)
        variance = (spread / (count - 1).clamp(min=1)).clamp(min=0)
        std = torch.where(
            count > 1, variance.sqrt() * power, torch.where(count == 1, 0.0, math.nan)
        )
        found["std"] = found["std"].index_put((risky,), std)
    if "norm" in want:
        scale = (slab.numel[risky] / slab.length[risky]).sqrt()
        found["norm"] = found["norm"].index_put(
            (risky,), torch.linalg.vector_norm(values, dim=1) * power * scale
        )


def _moments(slab: Slab, want: frozenset[str], found: dict[str, torch.Tensor]) -> None:
    """Mean, std, norm and zero fraction over the finite values, as far as they were asked for."""
    clean, work, ones = slab.clean, slab.work, slab.lane.workspace.ones
    count, numel, length = slab.count, slab.numel, slab.length
    if want & {"mean", "std"}:
        found["mean"] = torch.where(
            count > 0, (clean @ ones).double() / count.clamp(min=1), math.nan
        )
    if "std" in want:
        # Two passes, centred, and the non-finite cells (the padding too) 0 once centred: a
        # padding cell centred is -mean, and taking its mean^2 back out cancelled every digit
        # of a row whose spread is small beside its mean (1000 +- 0.01 read std 0).
        safe_mean = torch.nan_to_num(found["mean"])
        centered = torch.sub(slab.sample, safe_mean.to(clean.dtype)[:, None], out=work)
        centered.nan_to_num_(nan=0.0, posinf=0.0, neginf=0.0)
        spread = torch.linalg.vector_norm(centered, dim=1).double().square()
        variance = (spread / (count - 1).clamp(min=1)).clamp(min=0)
        found["std"] = torch.where(
            count > 1, variance.sqrt(), torch.where(count == 1, 0.0, math.nan)
        )
    if "norm" in want:
        found["norm"] = torch.linalg.vector_norm(clean, dim=1).double() * (numel / length).sqrt()
    if "zeros" in want:
        nonzero = (torch.abs(clean, out=work).sign_() @ ones).double()
        found["zeros"] = (count - nonzero) / length


def _non_finite(slab: Slab, need: Needs) -> tuple[torch.Tensor, torch.Tensor]:
    """The NaN and Inf counts: the sample's, scaled to the tensor's size (a whole tensor's scale
    is 1), unless the hook's exact counts replace them (a sampled tensor, exact=True)."""
    ones_at_inf = torch.nan_to_num(
        slab.sample, nan=0.0, posinf=1.0, neginf=1.0, out=slab.work
    ).sub_(slab.clean)
    inf = (ones_at_inf @ slab.lane.workspace.ones).double()
    numel, length, sampled = slab.numel, slab.length, slab.sampled
    nan = slab.non_finite - inf - (SAMPLE_SIZE - length)  # the NaN padding is not data
    # Without exact counts (exact=False) the sample's counts are scaled: an estimate. (On an
    # accelerator, the device's exact cells replace both, in _statistics.)
    scale = numel / length
    nan, inf = (nan * scale).round(), (inf * scale).round()
    if need.exact:
        nan_exact, inf_exact = slab.info[:, ROW_NAN].double(), slab.info[:, ROW_INF].double()
        nan = torch.where(sampled & (nan_exact >= 0), nan_exact, nan)
        inf = torch.where(sampled & (inf_exact >= 0), inf_exact, inf)
    return nan, inf


def _extremes(slab: Slab, need: Needs, exact: torch.Tensor) -> tuple[torch.Tensor, ...]:
    """Min and max over the finite values; a sampled tensor's exact extremes (if the hook took
    them) replace the sample's. Then the sample's own two (finite values; +inf and -inf when
    there are none, NaN when not asked for)."""
    nothing = torch.full((len(slab),), math.nan, dtype=torch.float64, device=slab.sample.device)
    lo = hi = nothing
    if need.lo:
        lo = torch.nan_to_num(
            slab.sample, nan=math.inf, posinf=math.inf, neginf=math.inf, out=slab.work
        )
        lo = lo.amin(1).double()
    if need.hi:
        hi = torch.nan_to_num(
            slab.sample, nan=-math.inf, posinf=-math.inf, neginf=-math.inf, out=slab.work
        )
        hi = hi.amax(1).double()
    sample_lo, sample_hi = lo, hi
    if need.exact:
        extremes = exact[slab.index].to(slab.lane.device)
        lo_exact, hi_exact = extremes[:, EXTREME_MIN], extremes[:, EXTREME_MAX]
        has_exact = slab.sampled & ~torch.isnan(lo_exact)
        lo = torch.where(has_exact, lo_exact, lo) if need.lo else lo
        hi = torch.where(has_exact, hi_exact, hi) if need.hi else hi
    return lo, hi, sample_lo, sample_hi


def _histogram(
    slab: Slab, lo: torch.Tensor, hi: torch.Tensor, risky: torch.Tensor | None
) -> tuple[torch.Tensor, ...]:
    """(range_lo, range_hi, counts (rows, HIST_BINS)): HIST_BINS bins per row over [min, max]
    (for a sampled tensor, the exact range, or with exact=False the sample's: every sampled
    value is inside either); non-finite values go to a last, discarded bin. The ``risky`` rows
    (``_risky``) are binned again in float64. A constant row (min == max = x, or no finite
    value: x = 0) spans [x - d, x + d], d = 0.5 or, for a large x, 2**-20 x (x +- 0.5 is x
    itself beyond 2**53); its values are binned from x itself (x - x is 0 in any dtype, where
    x - d rounds) and moved up to the middle bin."""
    n, space = len(slab), slab.lane.workspace
    ok = torch.isfinite(lo) & torch.isfinite(hi)
    base = torch.where(ok, lo, 0.0)
    range_hi = torch.where(ok, hi, 0.0)
    flat = range_hi <= base
    half = base.abs().mul_(_FLAT).clamp_(min=0.5)
    range_lo = torch.where(flat, base - half, base)
    range_hi = torch.where(flat, range_hi + half, range_hi)
    dtype = slab.sample.dtype
    scale = (HIST_BINS / (range_hi - range_lo)).to(dtype)
    u = torch.sub(slab.sample, base.to(dtype)[:, None], out=slab.work).mul_(scale[:, None])
    u.nan_to_num_(nan=_DUMP, posinf=_DUMP, neginf=_DUMP).clamp_(0, _DUMP)
    u += space.bin_offsets[:n] + flat[:, None] * _MIDDLE
    index_of = space.bin_index[:n]
    index_of.copy_(u)  # to int32, in place
    counts = torch.bincount(index_of.view(-1), minlength=n * _BINS).view(n, _BINS)
    if risky is not None:
        _bin_in_float64(slab, risky, base, (range_lo, range_hi), flat, counts)
    counts[:, HIST_BINS - 1] += counts[:, HIST_BINS]  # exactly the maximum: the last bin
    return range_lo, range_hi, counts[:, :HIST_BINS].double()


def _bin_in_float64(
    slab: Slab,
    risky: torch.Tensor,
    base: torch.Tensor,
    ends: tuple[torch.Tensor, torch.Tensor],
    flat: torch.Tensor,
    counts: torch.Tensor,
) -> None:
    """The ``risky`` rows' bin counts again (into ``counts``, rows of _BINS), in float64, over
    values and range divided by a power of two near the range's larger end: the lane's dtype
    overflows (value - min) or the bins' scale near its ends, and float64 the range's width."""
    lo, hi, base, flat = ends[0][risky], ends[1][risky], base[risky], flat[risky]
    largest = torch.maximum(lo.abs(), hi.abs()).clamp(max=torch.finfo(torch.float64).max)
    power = _power_of_two(largest)[:, None]
    scale = HIST_BINS / (hi[:, None] / power - lo[:, None] / power)
    u = (slab.sample[risky].double() / power - base[:, None] / power) * scale
    at = u.nan_to_num_(nan=_DUMP, posinf=_DUMP, neginf=_DUMP).clamp_(0, _DUMP).long()
    k = len(risky)
    at += torch.arange(0, k * _BINS, _BINS, device=at.device)[:, None] + flat[:, None] * _MIDDLE
    counts[risky] = torch.bincount(at.view(-1), minlength=k * _BINS).view(k, _BINS)


def _tiny(slab: Slab, pending: Pending) -> list[int]:
    """Positions in the slab of the rows whose values are kept (at most TINY elements)."""
    if "values" not in pending.need.stats or not pending.tiny_rows:
        return []
    in_slab = set(slab.rows)
    return [slab.rows.index(r) for r in pending.tiny_rows if r in in_slab]


def _store(
    slab: Slab,
    columns: dict[str, torch.Tensor],
    histograms: torch.Tensor | None,
    pending: Pending,
    into: tuple[array, array, dict[int, list[float]]],
) -> None:
    """One transfer to the host for the slab, then its rows into the flush's tables."""
    table, hist, values = into
    n, rows = len(slab), slab.rows
    tiny = _tiny(slab, pending)
    parts = [torch.stack([columns[name] for name in STAT_COLUMNS], 1).view(-1)]
    if histograms is not None:
        parts.append(histograms)
    if tiny:
        parts.append(slab.sample[tiny, :TINY].double().reshape(-1))
    host = torch.cat(parts).cpu().tolist()  # one transfer for the slab
    at_hist = n * STAT_WIDTH
    at_tiny = at_hist + (n * HIST_BINS if histograms is not None else 0)
    if slab.contiguous:
        r0 = rows[0]
        table[r0 * STAT_WIDTH : (r0 + n) * STAT_WIDTH] = array("d", host[:at_hist])
        if histograms is not None:
            hist[r0 * HIST_BINS : (r0 + n) * HIST_BINS] = array("d", host[at_hist:at_tiny])
    else:
        for i, r in enumerate(rows):
            table[r * STAT_WIDTH : (r + 1) * STAT_WIDTH] = array(
                "d", host[i * STAT_WIDTH : (i + 1) * STAT_WIDTH]
            )
            if histograms is not None:
                base = at_hist + i * HIST_BINS
                hist[r * HIST_BINS : (r + 1) * HIST_BINS] = array(
                    "d", host[base : base + HIST_BINS]
                )
    for k, i in enumerate(tiny):
        r = rows[i]
        start = at_tiny + k * TINY
        values[r] = host[start : start + pending.rows[r * ROW_WIDTH + ROW_NUMEL]]
