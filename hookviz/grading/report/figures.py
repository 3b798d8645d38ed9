"""The report's figures, as PNG bytes (matplotlib, imported when a figure is drawn)."""

from __future__ import annotations

import io
import statistics
from pathlib import Path

from ...course.conventions import Status, shorten
from ..core.results import SubmissionResult
from .analysis import NOT_SUBMITTED, CheckStats, flag_kinds

# The figures in the order the page shows them; each is saved as <name>.png.
NAMES = ("scores", "checks", "failures", "time", "flags")


def draw_all(document: dict, results: list[SubmissionResult], checks: list[CheckStats]) -> dict:
    """name -> PNG bytes, or None for a figure with nothing to show."""
    return {
        "scores": score_figure(results, float(document["max_total"])),
        "checks": checks_figure(checks),
        "failures": failures_figure(checks),
        "time": time_figure(results),
        "flags": flags_figure(results),
    }


def save_all(pictures: dict, folder: Path) -> dict[str, Path]:
    """Write each PNG to ``folder`` atomically; a figure with nothing to show loses its old file."""
    folder.mkdir(parents=True, exist_ok=True)
    figures = {}
    for name, data in pictures.items():
        path = folder / f"{name}.png"
        if data is None:
            path.unlink(missing_ok=True)
            continue
        temporary = path.with_name(f".{path.name}.tmp")
        temporary.write_bytes(data)
        temporary.replace(path)
        figures[name] = path
    return figures


def _figure(width: float, height: float):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=(width, height), dpi=100, layout="constrained")
    FigureCanvasAgg(figure)
    return figure


def _png(figure) -> bytes:
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", metadata={"Software": None})  # no version: same bytes
    return buffer.getvalue()


def score_figure(results: list[SubmissionResult], max_total: float) -> bytes:
    """A histogram of the totals, mean and median marked."""
    import numpy as np

    totals = [r.total for r in results]
    figure = _figure(7, 3.2)
    axes = figure.subplots()
    if all(float(t).is_integer() for t in [*totals, max_total]):
        bins = np.arange(-0.5, max_total + 1.5, 1.0)
    else:
        bins = np.linspace(0, max_total, 21)
    axes.hist(totals, bins=bins, color="#4c72b0", edgecolor="white")
    mean, median = statistics.fmean(totals), statistics.median(totals)
    axes.axvline(mean, color="#dd8452", linestyle="--", label=f"mean {mean:.2f}")
    axes.axvline(median, color="#55a868", linestyle=":", label=f"median {median:g}")
    axes.set(
        xlabel=f"score (out of {max_total:g})",
        ylabel="submissions",
        title=f"Scores of {len(totals)} submissions",
    )
    axes.set_xlim(-0.5 if bins[0] < 0 else 0, max_total + 0.5)
    axes.yaxis.get_major_locator().set_params(integer=True)
    axes.legend(frameon=False)
    return _png(figure)


def checks_figure(checks: list[CheckStats]) -> bytes:
    """The pass rate of every check, as horizontal bars."""
    figure = _figure(7, 0.5 * len(checks) + 1.2)
    axes = figure.subplots()
    labels = [f"{c.grade_id} ({c.max_points:g} pt)" for c in checks][::-1]
    rates = [100 * (c.pass_rate or 0.0) for c in checks][::-1]
    bars = axes.barh(labels, rates, color=[_rate_colour(r) for r in rates])
    for bar, check in zip(bars, checks[::-1], strict=True):
        axes.text(
            min(bar.get_width() + 1, 88),
            bar.get_y() + bar.get_height() / 2,
            f"{bar.get_width():.0f}% ({check.passed}/{check.attempted})",
            va="center",
        )
    axes.set(xlim=(0, 100), xlabel="submissions that passed (%)", title="Pass rate of every check")
    return _png(figure)


def _rate_colour(rate: float) -> str:
    return "#c44e52" if rate < 50 else "#dd8452" if rate < 80 else "#55a868"


def failures_figure(checks: list[CheckStats]) -> bytes | None:
    """The most common failure messages, across checks (None when nothing failed)."""
    rows = sorted(
        (
            (count, f"{c.grade_id}: {message}")
            for c in checks
            for message, count in c.failures.items()
        ),
        key=lambda row: (-row[0], row[1]),
    )[:12]
    if not rows:
        return None
    figure = _figure(9, 0.42 * len(rows) + 1.2)
    axes = figure.subplots()
    labels = [_short(label, 70) for _, label in rows][::-1]
    axes.barh(range(len(rows)), [count for count, _ in rows][::-1], color="#c44e52")
    axes.set_yticks(range(len(rows)), labels, fontsize=8)
    axes.set(xlabel="submissions", title="Most common failure messages")
    axes.xaxis.get_major_locator().set_params(integer=True)
    return _png(figure)


def _short(text: str, limit: int) -> str:
    return shorten(text, limit)


def time_figure(results: list[SubmissionResult]) -> bytes:
    """Seconds per submission, the ones that timed out apart."""
    ran = [r for r in results if r.status not in NOT_SUBMITTED]
    figure = _figure(7, 3.2)
    axes = figure.subplots()
    in_time = [r.seconds for r in ran if r.status != Status.TIMEOUT]
    late = [r.seconds for r in ran if r.status == Status.TIMEOUT]
    axes.hist(
        [in_time, late],
        bins=20,
        stacked=True,
        color=["#4c72b0", "#c44e52"],
        label=["finished", "timed out"],
    )
    if ran:
        axes.axvline(
            statistics.median(r.seconds for r in ran), color="black", linestyle=":", label="median"
        )
    axes.set(xlabel="seconds", ylabel="submissions", title="Time per submission")
    axes.yaxis.get_major_locator().set_params(integer=True)
    axes.legend(frameon=False)
    return _png(figure)


def flags_figure(results: list[SubmissionResult]) -> bytes | None:
    """Submissions per kind of flag (None when nobody was flagged)."""
    counts = flag_kinds(results)
    if not counts:
        return None
    kinds = sorted(counts, key=lambda k: (-counts[k], k))
    figure = _figure(7, 0.42 * len(kinds) + 1.2)
    axes = figure.subplots()
    axes.barh(kinds[::-1], [counts[k] for k in kinds][::-1], color="#8172b3")
    axes.set(xlabel="submissions", title="Flags (for you to look at; no flag changes a score)")
    axes.xaxis.get_major_locator().set_params(integer=True)
    return _png(figure)
