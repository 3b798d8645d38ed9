"""record(): a hook recorder that sees forward and backward as torch's hooks do, and always cleans up.

What is exact, and why:
- The model computes what it computes alone, bit for bit: record() adds no autograd node and no
  alias, and its hooks return nothing. Outputs, parameter gradients and input gradients are
  those of the bare model, wherever torch's full hooks would run and where they would raise (an
  in-place op on a module's input or output), ``query is key is value`` still holds for
  attention's fast path, and a tensor read by several modules has its gradient summed in the
  engine's own order (tests/oracle/test_never_changes.py).
- Forward events come from a forward pre-hook and a forward hook on each module, kept last in
  the module's dicts (also after a hook registered during forward): an event holds what
  ``forward`` received (after every pre-hook's replacement) and the output the call returned
  (after every forward hook's). Keyword arguments are recorded too (``input['name']``).
- Backward events are those of torch's full backward hooks, event for event: a
  ``backward_pre`` event where ``register_full_backward_pre_hook`` fires (grad_output), a
  ``backward`` event where ``register_full_backward_hook`` fires (grad_input: *this call's own
  share* of each positional input's gradient), in torch's order, once per call and per backward
  pass, with torch's values (a sum of several parts may round differently in its last bit).
  ``module_grads`` reads them off the model's own graph, at the moment torch's nodes would run.
  Where torch's full hooks fire nothing, record() records nothing: an output that is a dict, a
  list or a dataclass (a transformers ``ModelOutput``), an output that needs no gradient, a pass
  under ``no_grad`` or ``inference_mode``.
- Where torch's full backward hooks raise (an in-place op on the module's output or input,
  ``ReLU(inplace=True)``), record() works: the events hold the gradient w.r.t. the value the
  module returned, before the in-place op changed it; a module that changes its own input in
  place sends the share of every later reader of that tensor through its op, so its grad_input
  holds them too.
- What torch keeps apart only by handing the caller a new tensor, record() reports together: a
  tensor passed at several positions of one call (``attn(x, x, x)``) gets its whole share at
  each position; readers of a tensor that a forward hook kept, or of a pass-through module's
  input read again after it, count in that call's grad_output. And what torch computes only
  because its node asks for it is not computed: in ``torch.autograd.grad`` (or
  ``backward(inputs=...)``) a call's share for an input whose gradient that pass does not need
  is None.
- A hook does little (see ``summaries``): one small copy per tensor, and one exact pass for
  large tensors (none with ``exact=False``). Statistics are computed later, for many events at once.
"""

from __future__ import annotations

import functools
import itertools
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

from torch import nn

from .batch_stats import compute
from .histogram_history import (
    SIGNAL_PHASES,
    STATIC_BINS,
    HistogramHistory,
    from_batches,
    signal_or_kind,
)
from .module_hooks import ModuleHooks
from .store import (
    BACKWARD_PRE,
    PHASES,
    Chunk,
    EventStore,
    HistogramBatch,
    Reader,
    TensorStats,
)
from .summaries import (
    BUFFER_ROWS,
    SAMPLE_SIZE,
    STATS,
    Interner,
    Needs,
    Pending,
    check_names,
    check_stats,
)
from .tree import ModuleSelector, check_compiled, check_model, display_name, select_modules

__all__ = [
    "PHASES",
    "STATS",
    "HookEvent",
    "Recording",
    "TensorStats",
    "check_every",
    "check_exact",
    "record",
]

# How every view says that a recording's extremes are estimates (exact=False).
ESTIMATED_NOTE = "min/max/norm/NaN/Inf estimated from a sample (exact=False)"
FLUSH_SECONDS = 0.25  # with listeners, compute statistics at a step boundary this often


@dataclass(slots=True)
class HookEvent:
    """One hook firing: which module, which phase, which call, and what it carried."""

    seq: int
    step: int
    phase: str
    path: str
    module: nn.Module = field(repr=False, compare=False)
    call: int
    tensors: tuple[TensorStats, ...] = ()

    @property
    def name(self) -> str:
        """The module path, or the class name for the root."""
        return display_name(self.path, self.module)

    @property
    def main(self) -> TensorStats | None:
        """The first tensor summary (the usual single input, output or gradient)."""
        return next((t for t in self.tensors if t.value_type == "tensor"), None)

    def __repr__(self) -> str:
        body = "; ".join(t.brief() for t in self.tensors) or "-"
        return f"HookEvent(#{self.seq} step {self.step} {self.phase} {self.name!r} call {self.call}: {body})"


class Recording:
    """Record hook events on `model` inside a `with` block; every hook is removed on exit.

    `hookviz.record` is this class under its verb's name: `with hv.record(model) as rec:`.
    A step starts at each top-level call of `model`.

    Parameters
    ----------
    model : nn.Module
        The model to watch.
    modules : None, list of str, type or callable
        Which modules to watch: None (all), a list of paths, a module type, or
        `fn(path, module) -> bool` (`hookviz.leaves` picks modules without children).
    gradients : bool
        Also record the backward phases; False records the forward alone.
    phases : iterable of str or None
        Any of `hookviz.recording.PHASES`; None means all four (the forward ones only with
        `gradients=False`).
    stats : iterable of str or None
        Which statistics to compute for every tensor (`hookviz.recording.STATS`); None, all.
    every : int
        Record every N-th step.
    max_events : int or None
        Bounds memory: the oldest events are dropped first.
    exact : bool
        True keeps min, max, the NaN/Inf counts and a gradient's norm exact for every tensor,
        with one full pass over each tensor larger than `summaries.SAMPLE_SIZE` elements: a
        dashboard that flags a vanishing gradient must show the true one. Mean, std, zeros,
        histogram and an output's norm are always estimated from a sample for such a tensor
        (`TensorStats.norm_exact` says which norms are). False skips that pass, for large models
        on a CPU: every statistic of a large tensor is then estimated from its sample, and an
        outlier or a NaN outside it is missed. Estimates are flagged wherever they are shown
        (`max≈...`, `norm≈`). The costs are measured by bench/bench_record.py.
    clock : callable or None
        Where events take their `seq` numbers from (default: a fresh count from 0); share one
        with other hooks to put all of them in one order.

    Examples
    --------
    >>> import torch, hookviz as hv
    >>> model = hv.examples.model()
    >>> with hv.record(model) as rec:
    ...     model(torch.ones(1, 2)).sum().backward()
    >>> rec.order()[0]
    ('forward_pre', '')
    """

    def __init__(
        self,
        model: nn.Module,
        *,
        modules: ModuleSelector = None,
        gradients: bool = True,
        phases: Iterable[str] | None = None,
        stats: Iterable[str] | None = None,
        every: int = 1,
        max_events: int = 100_000,
        exact: bool = True,
        clock: Iterator[int] | None = None,
    ):
        self.model = check_compiled(check_model(model), "record()")
        self.targets = select_modules(model, modules)
        self.phases = check_phases(phases, gradients)
        self.stats = check_stats(stats)
        self.every = check_every(every)
        self.exact = check_exact(exact)
        if not isinstance(max_events, int) or isinstance(max_events, bool) or max_events < 1:
            raise ValueError(f"max_events must be a positive whole number, got {max_events!r}.")
        self.max_events = max_events
        self._need = Needs(self.stats, exact=self.exact)
        names, shapes, words = Interner(), Interner(), Interner()
        # One tensor is seen twice only when more than one phase is recorded (an input is the
        # previous output) or a container is (its output is its last child's): else no lookups.
        seen_twice = len(self.phases) > 1 or any(
            next(iter(m.children()), None) is not None for _, m in self.targets
        )
        self._pending = Pending(self._need, names, shapes, words, dedup=seen_twice)
        self._store = EventStore(max_events)
        self._reader = Reader(names.items, shapes.items, words.items, self._need.stats)
        self._listeners: list[Callable[[Recording, list[HookEvent]], None]] = []
        self._column_listeners: list[Callable] = []
        self._histogram_listeners: list[Callable[[HistogramBatch], None]] = []
        self._last_flush = time.monotonic()
        self._path_id = {p: i for i, (p, _) in enumerate(self.targets)}
        self._phase_ids = frozenset(PHASES.index(p) for p in self.phases)
        self._hooks = ModuleHooks(
            self.model,
            self.targets,
            self._phase_ids,
            self.every,
            self._pending,
            itertools.count() if clock is None else clock,
            flush=self.flush,
            step_began=self._step_began,
        )

    # -- lifecycle -------------------------------------------------------------------------

    def __enter__(self) -> Recording:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def start(self) -> Recording:
        """Register the hooks (`with` does this for you)."""
        if self._hooks.active:
            raise RuntimeError(
                "this recording is already running; use a new record(...) to record again."
            )
        self._hooks.start()
        return self

    def stop(self) -> None:
        """Remove every hook this recording added, and compute what is still pending."""
        self._hooks.stop()
        self.flush()

    @property
    def active(self) -> bool:
        """True while the hooks are registered."""
        return self._hooks.active

    @property
    def step(self) -> int:
        """The current step (a step starts at each top-level call of the model); -1 before."""
        return self._hooks.step

    @property
    def steps_recorded(self) -> int:
        """Steps recorded so far (one in `every`)."""
        return self._hooks.steps_recorded

    def next_step(self) -> None:
        """Start a new step by hand (steps also start at each top-level call of the model)."""
        self._hooks.next_step()

    def _keep_event_keys(self) -> dict[int, tuple[int, int]]:
        """Keep, per backward event's number, where torch's node for it stands (trace_hooks uses
        it to place its markers among the user's hooks)."""
        self._hooks.event_keys = keys = {}
        return keys

    def on_step(self, listener: Callable[[Recording, list[HookEvent]], None]) -> None:
        """Call `listener(recording, new_events)` when new events are ready (a few times a second)."""
        self._listeners.append(listener)

    def on_columns(self, listener: Callable) -> None:
        """Like `on_step`, without making an object per event: `listener(mains, stats_at)`
        gets an iterator of (step, phase id, path id, leaf, mean, norm, NaN count, Inf count),
        one per new event (`Reader.mains`), and `stats_at(leaf)` builds a leaf's whole
        TensorStats. For readers that keep a few summaries out of many events (HookMonitor)."""
        self._column_listeners.append(listener)

    def on_histograms(self, listener: Callable[[HistogramBatch], None]) -> None:
        """Call `listener(batch)` with the histograms of new events, as tensors, when they are
        ready (`summaries.HistogramBatch`; nothing when `stats` leaves out 'histogram')."""
        self._histogram_listeners.append(listener)

    # -- reading ---------------------------------------------------------------------------

    def flush(self) -> list[HookEvent]:
        """Compute the statistics of pending events now (batched; one host transfer)."""
        pending = self._pending
        if not pending.n_events:
            pending.reset()
            return []
        stats, hist, values = compute(pending)  # with autograd off, whatever the caller's mode
        chunk = Chunk(
            pending.events, pending.leaves, pending.rows, pending.texts, stats, hist, values
        )
        pending.reset()
        # Read the events before the store may drop some of them (a chunk bigger than max_events):
        # listeners get every new event, max_events only bounds what is kept.
        fresh = self._materialize(chunk) if self._listeners else []
        self._store.add(chunk)
        self._last_flush = time.monotonic()
        for listener in list(self._listeners):
            listener(self, fresh)
        if self._histogram_listeners:  # before the column listeners, which may push a view of both
            batch = self._reader.histograms(chunk)
            if batch is not None:
                for listener in list(self._histogram_listeners):
                    listener(batch)
        for listener in list(self._column_listeners):
            listener(self._reader.mains(chunk), functools.partial(self._reader.stats_at, chunk))
        return fresh

    def _materialize(self, chunk: Chunk) -> list[HookEvent]:
        targets = self.targets
        return [
            HookEvent(
                seq, step, PHASES[phase], targets[path_id][0], targets[path_id][1], call, tensors
            )
            for seq, step, phase, path_id, call, tensors in self._reader.events(chunk)
        ]

    @property
    def events(self) -> list[HookEvent]:
        """Every recorded event still in the buffer, oldest first."""
        self.flush()
        return [e for chunk in self._store.chunks for e in self._materialize(chunk)]

    @property
    def dropped(self) -> int:
        """Events pushed out of the buffer by `max_events`."""
        return self._store.dropped

    def __iter__(self) -> Iterator[HookEvent]:
        return iter(self.events)

    def __len__(self) -> int:
        self.flush()
        return len(self._store)

    def __bool__(self) -> bool:
        return True  # a recording with no events yet is still a recording

    def histogram_batches(self) -> Iterator[HistogramBatch]:
        """The histograms of every event still in the buffer, as tensors, one batch per chunk."""
        self.flush()
        for chunk in self._store.chunks:
            batch = self._reader.histograms(chunk, chunk.skip)
            if batch is not None:
                yield batch

    def histogram_history(
        self, signal: str = "output", *, bins: int = STATIC_BINS, kind: str | None = None
    ) -> list[HistogramHistory]:
        """Each module's histogram over the recorded steps (`signal`: 'output' or 'gradient',
        the gradient w.r.t. the module's output), on `bins` fixed bins per module; what
        `hookviz.plots.activation_heatmap` draws. See `hookviz.histogram_history`.
        (`kind=` is `signal`'s deprecated name.)"""
        signal = signal_or_kind(signal, kind, "Recording.histogram_history")
        phase = SIGNAL_PHASES[signal]
        _check_histograms_kept(self, signal, phase)
        names = [display_name(path, module) for path, module in self.targets]
        histories = from_batches(self.histogram_batches(), phase, self.targets, names, signal, bins)
        if not histories:
            raise ValueError(
                "no gradient reached any recorded module: call loss.backward() inside the with block "
                "(and record with gradients=True, the default)."
                if signal == "gradient"
                else "no recorded output holds a finite value to place in a histogram."
            )
        return histories

    def select(self, *, phase: str | None = None, path: str | None = None, step: int | None = None):
        """Events filtered by phase, path and step."""
        if phase is not None and phase not in PHASES:
            raise ValueError(f"unknown phase {phase!r}; valid phases are {', '.join(PHASES)}.")
        if path is not None and path not in self._path_id:
            raise ValueError(
                f"{path!r} is not a recorded module path; recorded paths are "
                + ", ".join(repr(p) for p, _ in self.targets)
                + "."
            )
        return [
            e
            for e in self.events
            if (phase is None or e.phase == phase)
            and (path is None or e.path == path)
            and (step is None or e.step == step)
        ]

    def order(self, phase: str | None = None) -> list[tuple[str, str]]:
        """(phase, path) pairs in firing order."""
        return [(e.phase, e.path) for e in self.select(phase=phase)]

    def table(self, limit: int = 50) -> str:
        """A text table of the events (the first `limit`)."""
        rows = (
            []
            if self.exact
            else [f"{ESTIMATED_NOTE}: marked ≈ for tensors over {SAMPLE_SIZE} elements"]
        )
        rows.append(f"{'seq':>4} {'step':>4}  {'phase':<12} {'module':<20} {'call':>4}  summary")
        for e in self.events[:limit]:
            body = "; ".join(t.brief() for t in e.tensors) or "-"
            rows.append(f"{e.seq:>4} {e.step:>4}  {e.phase:<12} {e.name:<20} {e.call:>4}  {body}")
        return "\n".join(rows)

    def __repr__(self) -> str:
        state = "running" if self.active else "stopped"
        events = len(self._store) + self._pending.n_events
        return (
            f"Recording({type(self.model).__name__}, {len(self.targets)} modules, "
            f"phases={','.join(self.phases)}, {state}, {events} events, "
            f"{self.steps_recorded} steps recorded{'' if self.exact else ', ' + ESTIMATED_NOTE})"
        )

    # -- what the hooks report ------------------------------------------------------------

    def _step_began(self) -> None:
        """A step starts: compute what is pending when the buffer is half full, or a few times
        a second for listeners."""
        if self._pending.n_rows >= BUFFER_ROWS // 2 or (
            (self._listeners or self._column_listeners)
            and time.monotonic() - self._last_flush >= FLUSH_SECONDS
        ):
            self.flush()


record = Recording  # the verb users write: ``with hv.record(model) as rec:``


def _check_histograms_kept(rec: Recording, signal: str, phase: int) -> None:
    """A ValueError that says how to record them, when ``rec`` holds no ``signal`` histograms."""
    if not len(rec):
        raise ValueError(
            "this Recording has no events yet: run the model inside `with hv.record(model) as rec:` first."
        )
    if "histogram" not in rec.stats:
        raise ValueError(
            f"this Recording kept no histograms (stats={rec.stats!r}); record with stats=None "
            "(all statistics) or include 'histogram'."
        )
    if phase not in rec._phase_ids:
        fix = (
            "gradients=True (the default)" if signal == "gradient" else "phases=None (all of them)"
        )
        raise ValueError(
            f"this Recording has no {signal} histograms: they come from the {PHASES[phase]!r} phase, and it "
            f"recorded {', '.join(rec.phases)}. Record with {fix}."
        )


def check_exact(exact) -> bool:
    """Validate an ``exact=`` argument: True or False."""
    if not isinstance(exact, bool):
        raise TypeError(
            f"exact must be True or False, got {exact!r}. exact=True (the default) keeps min, max, NaN and "
            "Inf exact; exact=False estimates them from a sample, for large models on a CPU."
        )
    return exact


def check_every(every) -> int:
    """Validate an ``every=`` argument (record every N-th step): a whole number >= 1."""
    if not isinstance(every, int) or isinstance(every, bool) or every < 1:
        raise ValueError(
            f"every must be a whole number of steps >= 1, got {every!r}. "
            "Use every=1 to record every step, every=10 for every 10th."
        )
    return every


def check_phases(phases: Iterable[str] | None, gradients: bool) -> tuple[str, ...]:
    """Validate a ``phases=`` argument against ``gradients=``: None means all (forward only
    with ``gradients=False``)."""
    if phases is None:
        return PHASES if gradients else PHASES[:BACKWARD_PRE]
    chosen = check_names(phases, PHASES, "phase", "phases")
    if not gradients and any(PHASES.index(p) >= BACKWARD_PRE for p in chosen):
        raise ValueError(
            "gradients=False contradicts the backward phase(s) asked for in phases=; drop one of the two."
        )
    return tuple(p for p in PHASES if p in chosen)
