"""Static matplotlib pictures of what the widgets show, for exports and viewers without a kernel.

Each function returns a closed ``matplotlib.figure.Figure``: a notebook shows it once (as the
cell's value) and nothing is left open in pyplot. Colours are the Okabe-Ito palette (safe for
colour-blind readers), and every mark also carries a number, a symbol or a word. The words
are in the course's language (`hookviz.language`); Hangul is drawn with the Korean font the
package ships, so a Korean plot needs no font installed.
"""

from __future__ import annotations

import math
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.figure import Figure
from matplotlib.ticker import NullFormatter

from .fonts import hangul_fallback, with_fallback
from .histogram_history import signal_or_kind
from .hook_kinds import BACKWARD, CIRCLE, DIAMOND, KINDS, SQUARE, TORCH
from .plot_labels import LABEL_KEYS, label
from .timeline import HookTrace
from .tracing import ApplyTrace
from .tree import TreeNode, module_tree, preorder

BLUE, SKY, GREEN, ORANGE, VERMILLION, PURPLE, GREY = (
    "#0072B2",
    "#56B4E9",
    "#009E73",
    "#E69F00",
    "#D55E00",
    "#CC79A7",
    "#7F7F7F",
)
# The course palette by the names hook_kinds.HookKind.colour uses, and its shapes as markers.
PALETTE = {
    "blue": BLUE,
    "sky": SKY,
    "green": GREEN,
    "orange": ORANGE,
    "vermillion": VERMILLION,
    "purple": PURPLE,
    "fg-muted": GREY,
}
MARKERS = {CIRCLE: "o", SQUARE: "s", DIAMOND: "d"}
MAX_TREE_NODES = 60  # bigger trees are drawn to the depth that fits; deeper levels are counted
MAX_TREE_LEVEL = 30  # nor more than this many boxes side by side


@hangul_fallback()
def apply_traversal(trace: ApplyTrace) -> Figure:
    """The module tree with the number of each `apply` visit (post-order) and `modules()`' order.

    Parameters
    ----------
    trace : ApplyTrace
        What `trace_apply` recorded.

    Returns
    -------
    Figure
        A matplotlib figure.
    """
    if not isinstance(trace, ApplyTrace):
        raise TypeError(
            f"apply_traversal needs an ApplyTrace (from hookviz.trace_apply), got {type(trace).__name__}."
        )
    root = module_tree(trace.model)
    visit_number = {}
    for visit in trace.visits:
        visit_number.setdefault(visit.path, visit.index + 1)
    pre_number = {path: k + 1 for k, path in enumerate(preorder(trace.model))}
    depth_limit = _depth_that_fits(root)
    positions: dict[str, tuple[float, float]] = {}
    drawn: list[TreeNode] = []
    next_x = [0.0]

    def place(node: TreeNode) -> float:
        drawn.append(node)
        children = node.children if node.depth < depth_limit else []
        if children:
            xs = [place(child) for child in children]
            x = (xs[0] + xs[-1]) / 2
        else:
            x = next_x[0]
            next_x[0] += 1.0
        positions[node.path] = (x, -node.depth)
        return x

    place(root)
    width = max(5.0, min(16.0, 1.2 * next_x[0] + 1))
    height = 1.1 * (max(-y for _, y in positions.values()) + 1) + 0.8
    fig, ax = plt.subplots(figsize=(width, height))
    for node in drawn:
        x, y = positions[node.path]
        for child in node.children if node.depth < depth_limit else []:
            cx, cy = positions[child.path]
            ax.plot([x, cx], [y - 0.18, cy + 0.18], color=GREY, linewidth=1, zorder=1)
    for node in drawn:
        hidden = (
            sum(1 for _ in node.walk()) - 1 if node.depth >= depth_limit and node.children else 0
        )
        _draw_node(
            ax,
            positions[node.path],
            node,
            visit_number.get(node.path),
            pre_number.get(node.path),
            hidden,
        )
    ax.set_xlim(-0.8, max(next_x[0] - 0.2, 0.8))
    ax.set_ylim(min(y for _, y in positions.values()) - 0.6, 0.7)
    ax.axis("off")
    fn = label("no_op") if trace.fn_name == "None" else trace.fn_name
    ax.set_title(label("apply_title", model=type(trace.model).__name__, fn=fn), fontsize=9)
    fig.tight_layout()
    plt.close(fig)
    return fig


def _draw_node(ax, at, node: TreeNode, number: int | None, pre: int | None, hidden: int) -> None:
    """One module's box, its apply visit number (blue) and its modules() number (green)."""
    x, y = at
    name = node.name if node.path else node.type_name
    text = f"{name}\n{node.type_name}" if node.path else name
    if hidden:
        text += "\n" + label("hidden_modules", count=hidden)
    ax.text(
        x,
        y,
        text,
        ha="center",
        va="center",
        fontsize=9,
        zorder=3,
        bbox={
            "boxstyle": "round,pad=0.3",
            "facecolor": "#FFF4D6" if number else "white",
            "edgecolor": ORANGE if number else GREY,
        },
    )
    if number is not None:
        ax.text(
            x - 0.42,
            y + 0.3,
            str(number),
            ha="center",
            va="center",
            fontsize=9,
            color="white",
            fontweight="bold",
            zorder=4,
            bbox={"boxstyle": "circle,pad=0.25", "facecolor": BLUE, "edgecolor": BLUE},
        )
    if pre is not None:
        ax.text(
            x + 0.42, y + 0.3, str(pre), ha="center", va="center", fontsize=9, color=GREEN, zorder=4
        )


@hangul_fallback()
def monitor(snapshot: dict[str, Any], modules: list[dict], *, title: str = "HookMonitor") -> Figure:
    """Output mean ± std and output-gradient norm per module, from a HookMonitor snapshot.

    Parameters
    ----------
    snapshot : dict
        A HookMonitor's `snapshot`.
    modules : list of dict
        The same HookMonitor's `modules`.
    title : str
        The figure's title.

    Returns
    -------
    Figure
        A matplotlib figure.
    """
    rows = snapshot.get("rows", []) if isinstance(snapshot, dict) else None
    if rows is None or len(rows) != len(modules):
        raise ValueError(
            "monitor needs a HookMonitor's snapshot and modules (monitor.snapshot, monitor.modules)."
        )
    labels = [m["label"] for m in modules]
    positions = list(range(len(labels)))[::-1]
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 0.32 * len(labels) + 1.6), sharey=True)
    for y, row in zip(positions, rows, strict=True):
        out = row.get("out")
        if out and _finite(out.get("mean")) and _finite(out.get("std")):
            left.errorbar(
                out["mean"], y, xerr=out["std"], fmt="o", color=BLUE, ecolor=SKY, capsize=3
            )
        if out and (out.get("nan") or out.get("inf")):
            left.text(
                0.98,
                y,
                "⚠ NaN/Inf",
                transform=left.get_yaxis_transform(),
                ha="right",
                va="center",
                color=VERMILLION,
                fontsize=9,
            )
        grad = row.get("grad")
        norm = grad.get("norm") if grad else None
        if _finite(norm) and norm > 0:
            flagged = bool(row.get("flag"))
            right.barh(y, norm, color=VERMILLION if flagged else BLUE)
            if flagged:
                flag = row["flag"]
                said = label(f"flag_{flag}") if f"flag_{flag}" in LABEL_KEYS else flag
                right.text(norm, y, f"  {said}", va="center", color=VERMILLION, fontsize=9)
    left.set_yticks(positions, labels, fontsize=9)
    left.set_xlabel(label("monitor_mean"))
    left.axvline(0, color=GREY, linewidth=0.8)
    right.set_xscale("log")
    right.xaxis.set_minor_formatter(NullFormatter())
    right.set_xlabel(label("monitor_norm"))
    note = snapshot.get("note")  # set when min, max and NaN/Inf are estimates (exact=False)
    fig.suptitle(
        label("monitor_title", title=title, steps=snapshot.get("steps", 0))
        + (f"\n≈ {note}" if note else ""),
        fontsize=10,
    )
    fig.tight_layout()
    plt.close(fig)
    return fig


@hangul_fallback()
def activation_heatmap(source: Any, signal: str = "output", *, kind: str | None = None) -> Figure:
    """Each module's histogram over training steps, one panel per module.

    Steps across, value bins up, colour log(1 + count), as fastai's "colourful dimension" plot.
    No tensor is read again: it draws the 16-bin histogram `record()` kept for every event (of
    a 256-value sample, for larger tensors), over that tensor's own exact [min, max] (the
    sample's, with `exact=False`, and the title says so). Each module gets one set of bins for
    the whole run, so a drifting distribution shows as a drift instead of being rescaled away:
    for a Recording, 40 equal bins over the module's range over the run; for a HookMonitor, its
    live bins (a power of two wide, at most twice as coarse as the range needs). An event's
    counts are spread evenly over the module bins each of its bins overlaps: where values lay
    within one of the event's bins (a 16th of its range) is lost, an outlier coarsens all 16,
    and counts become fractions. Empty bins are blank.

    Parameters
    ----------
    source : Recording or HookMonitor
        What recorded the histograms (`hookviz.record`, or a `HookMonitor`).
    signal : str
        `"output"` (each module's output) or `"gradient"` (the gradient with respect to each
        module's output).
    kind : str or None
        The deprecated name of `signal`.

    Returns
    -------
    Figure
        A matplotlib figure, one panel per module.
    """
    read = getattr(source, "histogram_history", None)
    if isinstance(source, type) or not callable(read):
        raise TypeError(
            "activation_heatmap needs a Recording (from hookviz.record) or a HookMonitor, "
            f"got {type(source).__name__}."
        )
    signal = signal_or_kind(signal, kind, "activation_heatmap")
    histories = read(signal)
    columns = min(len(histories), 4)
    rows = math.ceil(len(histories) / columns)
    fig, axes = plt.subplots(
        rows,
        columns,
        figsize=(3.3 * columns + 1.3, 2.2 * rows + 0.9),
        squeeze=False,
        sharex=True,
        layout="constrained",
    )
    shades = [np.ma.masked_equal(np.log1p(h.counts.numpy()).T, 0.0) for h in histories]
    top = max((float(s.max()) for s in shades if s.count()), default=1.0)
    colours = plt.get_cmap("viridis").with_extremes(bad=(0, 0, 0, 0))
    mesh = None
    for k, (history, shade) in enumerate(zip(histories, shades, strict=True)):
        ax = axes[k // columns][k % columns]
        mesh = ax.pcolormesh(
            history.step_edges, history.value_edges, shade, cmap=colours, vmin=0.0, vmax=top
        )
        ax.set_title(history.name, fontsize=9, family=with_fallback("monospace"))
        ax.tick_params(labelsize=7)
        if k % columns == 0:
            ax.set_ylabel(label(f"heatmap_value_{signal}"), fontsize=9)
        if k // columns == rows - 1 or k + columns >= len(histories):
            ax.set_xlabel(label("heatmap_step"), fontsize=9)
            ax.xaxis.set_tick_params(labelbottom=True)
    for k in range(len(histories), rows * columns):
        axes[k // columns][k % columns].set_visible(False)
    fig.colorbar(mesh, ax=axes, shrink=0.9, label=label("heatmap_colour"))
    first = min(h.step_edges[0] for h in histories)
    last = max(h.step_edges[-1] for h in histories) - 1
    title = label(f"heatmap_title_{signal}", first=first, last=last)
    # With exact=False each event's bins span its sample's range, not the tensor's: say so.
    if getattr(source, "exact", True) is False:
        title += "\n" + label("heatmap_estimated")
    fig.suptitle(title, fontsize=10)
    plt.close(fig)
    return fig


@hangul_fallback()
def timeline(trace: HookTrace) -> Figure:
    """Modules down, time across: each hook firing a mark, forward() calls as bars, backward shaded.

    Parameters
    ----------
    trace : HookTrace
        What `trace_hooks` recorded.

    Returns
    -------
    Figure
        A matplotlib figure.
    """
    if not isinstance(trace, HookTrace):
        raise TypeError(
            f"timeline needs a HookTrace (from hookviz.trace_hooks), got {type(trace).__name__}."
        )
    lanes: list[str] = []
    for firing in trace.firings:
        if firing.label not in lanes:
            lanes.append(firing.label)
    lane_y = {label: len(lanes) - 1 - i for i, label in enumerate(lanes)}
    n = len(trace.firings)
    fig, ax = plt.subplots(figsize=(max(6.0, min(12.0, 0.22 * n + 2.5)), 0.38 * len(lanes) + 1.4))
    first_backward = next((k for k, f in enumerate(trace.firings) if f.kind in BACKWARD), n)
    if first_backward < n:
        ax.axvspan(first_backward - 0.5, n - 0.5, color=ORANGE, alpha=0.08, linewidth=0)
        backward = label("timeline_backward")
        ax.text(first_backward - 0.3, len(lanes) - 0.4, backward, fontsize=9, color=GREY)
    ax.text(-0.3, len(lanes) - 0.4, label("timeline_forward"), fontsize=9, color=GREY)
    started: dict[str, int] = {}
    for k, firing in enumerate(trace.firings):
        y = lane_y[firing.label]
        if firing.kind == "forward_call":
            started[firing.label] = k
        elif firing.kind == "forward_return" and firing.label in started:
            ax.plot(
                [started.pop(firing.label), k],
                [y, y],
                color=GREY,
                linewidth=4,
                alpha=0.4,
                solid_capstyle="round",
                zorder=1,
            )
        kind = KINDS[firing.kind]
        colour, marker = PALETTE[kind.colour], MARKERS[kind.shape]
        if kind.target == TORCH:
            ax.scatter(k, y, marker=marker, s=18, color=colour, zorder=2)
            continue
        ax.scatter(
            k, y, marker=marker, s=70, color=colour, edgecolor="black", linewidth=0.6, zorder=3
        )
        if firing.replaced:
            ax.scatter(
                k,
                y,
                marker="o",
                s=260,
                facecolor="none",
                edgecolor=VERMILLION,
                linewidth=1.5,
                linestyle="--",
                zorder=3,
            )
            ax.annotate(
                label("timeline_replaced", what=firing.replaced),
                (k, y),
                xytext=(6, 8),
                textcoords="offset points",
                fontsize=9,
                color=VERMILLION,
            )
    ax.set_yticks(list(lane_y.values()), list(lane_y), fontsize=9)
    ax.set_xlim(-0.8, max(n - 0.2, 1))
    ax.set_ylim(-0.7, len(lanes) - 0.1)
    ax.set_xlabel(label("timeline_axis"))
    users = len(trace.user_firings())
    title = label("timeline_title", model=type(trace.model).__name__, events=n, users=users)
    ax.set_title(title, fontsize=10)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    fig.tight_layout()
    plt.close(fig)
    return fig


def _depth_that_fits(root: TreeNode) -> int:
    per_depth: dict[int, int] = {}
    for node in root.walk():
        per_depth[node.depth] = per_depth.get(node.depth, 0) + 1
    total = 0
    for depth in sorted(per_depth):
        total += per_depth[depth]
        if total > MAX_TREE_NODES or per_depth[depth] > MAX_TREE_LEVEL:
            return max(depth - 1, 0)
    return max(per_depth)


def _finite(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
