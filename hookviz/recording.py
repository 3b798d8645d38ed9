"""record(): a hook recorder that sees forward and backward, and always cleans up.

Why it is built the way it is:
- Forward events come from ordinary forward pre-hooks and forward hooks.
- Backward events come from *tensor* hooks on the inputs and outputs of each call, not from
  full backward hooks: tensor hooks are about 10x cheaper and survive in-place ops after the
  module (``ReLU(inplace=True)``), where full backward hooks raise. A hook registered on a
  tensor before an in-place op sees the gradient of the value before the op, which is exactly
  the module's gradient. All hooks on one tensor go through one dispatcher that fires them in
  the reverse of the order they were registered during forward: the order in which torch's
  full backward hooks would fire.
- A hook does little (see ``summaries``): one small copy per tensor, and one exact pass for
  large tensors (none with ``exact=False``). Statistics are computed later, for many events at once.
"""

from __future__ import annotations

import collections
import functools
import itertools
import time
import weakref
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import torch
from torch import nn

from .batch_stats import compute
from .histogram_history import (
    SIGNAL_PHASES,
    STATIC_BINS,
    HistogramHistory,
    from_batches,
    signal_or_kind,
)
from .store import (
    BACKWARD,
    BACKWARD_PRE,
    FORWARD,
    FORWARD_PRE,
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
    check_stats,
)
from .tensor_hooks import direct_hooks_work, hook_tensor, unhook_tensors
from .tree import ModuleSelector, check_model, display_name, select_modules

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

_ONE_INPUT_GRAD = ("grad_input[0]",)
_ONE_OUTPUT_GRAD = ("grad_output",)
MAX_LEAVES = 32  # tensors summarised per event (a huge tuple output is cut here)
# How every view says that a recording's extremes are estimates (exact=False).
ESTIMATED_NOTE = "min/max/NaN/Inf estimated from a sample (exact=False)"
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
    """Records hook events on a model; use as ``with hookviz.record(model) as rec: ...``."""

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
        """See ``record``. ``clock``: where events take their ``seq`` numbers from (default: a
        fresh count from 0); share one with other hooks to put all of them in one order."""
        self.model = check_model(model)
        self.targets = select_modules(model, modules)
        self.phases = _check_phases(phases, gradients)
        self.stats = check_stats(stats)
        self.every = check_every(every)
        self.exact = check_exact(exact)
        if not isinstance(max_events, int) or isinstance(max_events, bool) or max_events < 1:
            raise ValueError(f"max_events must be a positive whole number, got {max_events!r}.")
        self.max_events = max_events
        self.step = -1  # index of the current step (a step starts at each top-level call)
        self.steps_recorded = 0
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
        self._seq = itertools.count() if clock is None else clock
        self._listeners: list[Callable[[Recording, list[HookEvent]], None]] = []
        self._column_listeners: list[Callable] = []
        self._histogram_listeners: list[Callable[[HistogramBatch], None]] = []
        self._model_handle = None
        self._module_handles: list[Any] = []
        self._tensor_handles: collections.deque[list] = collections.deque()
        self._active = False
        self._recording_step = False
        self._last_flush = time.monotonic()
        self._path_id_of = {id(m): i for i, (_, m) in enumerate(self.targets)}
        self._path_id = {p: i for i, (p, _) in enumerate(self.targets)}
        self._phase_ids = frozenset(PHASES.index(p) for p in self.phases)
        self._wants_backward = BACKWARD_PRE in self._phase_ids or BACKWARD in self._phase_ids
        self._wants_input_grads = (
            BACKWARD in self._phase_ids
        )  # grad_input: watch each call's inputs
        self._wants_forward_pre = FORWARD_PRE in self._phase_ids
        self._wants_forward = FORWARD in self._phase_ids
        self._reset_step_state()

    # -- lifecycle -------------------------------------------------------------------------

    def __enter__(self) -> Recording:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def start(self) -> Recording:
        """Register the hooks (``with`` does this for you)."""
        if self._active:
            raise RuntimeError(
                "this recording is already running; use a new record(...) to record again."
            )
        self._active = True
        if self._wants_backward:
            direct_hooks_work()  # checked once, here, rather than inside the first forward
        try:
            self._model_handle = self.model.register_forward_pre_hook(
                self._on_model_call, prepend=True
            )
            if self.every == 1:
                self._attach()  # hooks stay on; with every > 1 they come and go per recorded step
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        """Remove every hook this recording added, and compute what is still pending."""
        if self._model_handle is not None:
            self._model_handle.remove()
            self._model_handle = None
        self._detach()
        while self._tensor_handles:
            unhook_tensors(self._tensor_handles.popleft())
        self._active = False
        self.flush()

    @property
    def active(self) -> bool:
        """True while the hooks are registered."""
        return self._active

    def next_step(self) -> None:
        """Start a new step by hand (steps also start at each top-level call of the model)."""
        self._begin_step(None)

    def on_step(self, listener: Callable[[Recording, list[HookEvent]], None]) -> None:
        """Call ``listener(recording, new_events)`` when new events are ready (a few times a second)."""
        self._listeners.append(listener)

    def on_columns(self, listener: Callable) -> None:
        """Like ``on_step``, without making an object per event: ``listener(mains, stats_at)``
        gets an iterator of (step, phase id, path id, leaf, mean, norm, NaN count, Inf count),
        one per new event (``Reader.mains``), and ``stats_at(leaf)`` builds a leaf's whole
        TensorStats. For readers that keep a few summaries out of many events (HookMonitor)."""
        self._column_listeners.append(listener)

    def on_histograms(self, listener: Callable[[HistogramBatch], None]) -> None:
        """Call ``listener(batch)`` with the histograms of new events, as tensors, when they are
        ready (``summaries.HistogramBatch``; nothing when ``stats`` leaves out 'histogram')."""
        self._histogram_listeners.append(listener)

    # -- reading ---------------------------------------------------------------------------

    def flush(self) -> list[HookEvent]:
        """Compute the statistics of pending events now (batched; one host transfer)."""
        pending = self._pending
        if not pending.n_events:
            pending.reset()
            return []
        stats, hist, values = compute(pending)
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
        """Events pushed out of the buffer by ``max_events``."""
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
        """Each module's histogram over the recorded steps (``signal``: 'output' or 'gradient',
        the gradient w.r.t. the module's output), on ``bins`` fixed bins per module; what
        ``hookviz.plots.activation_heatmap`` draws. See ``hookviz.histogram_history``.
        (``kind=`` is ``signal``'s deprecated name.)"""
        signal = signal_or_kind(signal, kind, "Recording.histogram_history")
        phase = SIGNAL_PHASES[signal]
        if not len(self):
            raise ValueError(
                "this Recording has no events yet: run the model inside `with hv.record(model) as rec:` first."
            )
        if "histogram" not in self.stats:
            raise ValueError(
                f"this Recording kept no histograms (stats={self.stats!r}); record with stats=None "
                "(all statistics) or include 'histogram'."
            )
        if phase not in self._phase_ids:
            fix = (
                "gradients=True (the default)"
                if signal == "gradient"
                else "phases=None (all of them)"
            )
            raise ValueError(
                f"this Recording has no {signal} histograms: they come from the {PHASES[phase]!r} phase, and it "
                f"recorded {', '.join(self.phases)}. Record with {fix}."
            )
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
        """A text table of the events (the first ``limit``)."""
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
        state = "running" if self._active else "stopped"
        events = len(self._store) + self._pending.n_events
        return (
            f"Recording({type(self.model).__name__}, {len(self.targets)} modules, "
            f"phases={','.join(self.phases)}, {state}, {events} events, "
            f"{self.steps_recorded} steps recorded{'' if self.exact else ', ' + ESTIMATED_NOTE})"
        )

    # -- hooks on and off ------------------------------------------------------------------

    def _attach(self) -> None:
        if self._module_handles:
            return
        # The pre-hook opens each call (its number, its inputs); the forward hook closes it.
        # Recording the forward phase alone needs no pre-hook: one hook per module, not two.
        opens_calls = self._wants_forward_pre or self._wants_backward
        for _, module in self.targets:
            if opens_calls:
                self._module_handles.append(module.register_forward_pre_hook(self._on_forward_pre))
            self._module_handles.append(module.register_forward_hook(self._on_forward))

    def _detach(self) -> None:
        for handle in self._module_handles:
            handle.remove()
        self._module_handles.clear()

    def _reset_step_state(self) -> None:
        self._calls: dict[int, int] = {}
        self._open: dict[int, list[_Call]] = {}
        self._slots: dict[int, _Slot] = {}

    def _begin_step(self, model_args: tuple | None) -> None:
        self.step += 1
        self._recording_step = self.step % self.every == 0
        if self._recording_step:
            self.steps_recorded += 1
        self._reset_step_state()
        # Tensor hooks of the step before last can no longer fire usefully: remove them.
        while len(self._tensor_handles) >= 2:
            unhook_tensors(self._tensor_handles.popleft())
        self._tensor_handles.append([])
        if self.every > 1 and self._active:
            if self._recording_step:
                self._attach()
                if model_args is not None and id(self.model) in self._path_id_of:
                    # The model's own pre-hooks were fixed before this call began.
                    self._on_forward_pre(self.model, model_args)
            else:
                self._detach()
        if self._pending.n_rows >= BUFFER_ROWS // 2 or (
            (self._listeners or self._column_listeners)
            and time.monotonic() - self._last_flush >= FLUSH_SECONDS
        ):
            self.flush()

    def _on_model_call(self, module, args) -> None:
        self._begin_step(args)

    # -- hooks -----------------------------------------------------------------------------

    def _on_forward_pre(self, module, args) -> None:
        if not self._recording_step:
            if self.step >= 0:
                return
            self._begin_step(None)  # a submodule called before the model itself: step 0
            if not self._recording_step:
                return
        key = id(module)
        index = self._calls.get(key, 0)
        self._calls[key] = index + 1
        call = _Call(module, self._path_id_of[key], self.step, index)
        stack = self._open.get(key)
        if stack is None:
            self._open[key] = [call]
        else:
            stack.append(call)
        if type(args) is tuple and len(args) == 1 and type(args[0]) is torch.Tensor:
            leaves = None  # the usual single input, kept off the general path
            tensor = args[0]
        else:
            leaves = _leaves(args, "input")
        if self._wants_forward_pre:
            if leaves is None:
                self._emit_tensor(FORWARD_PRE, call.step, call.path_id, index, "input[0]", tensor)
            else:
                self._emit(FORWARD_PRE, call.step, call.path_id, index, leaves)
        if self._wants_input_grads and torch.is_grad_enabled():
            if leaves is None:
                if tensor.requires_grad:
                    call.inputs = side = _GradSide(self, call, BACKWARD, _ONE_INPUT_GRAD)
                    self._watch(tensor, side, 0)
                else:
                    call.inputs = _GradSide(self, call, BACKWARD, ())
                return
            inputs = [(n, t) for n, t in leaves if _needs_grad(t)]
            call.inputs = side = _GradSide(self, call, BACKWARD, ["grad_" + n for n, _ in inputs])
            for position, (_, tensor) in enumerate(inputs):
                self._watch(tensor, side, position)

    def _on_forward(self, module, args, output) -> None:
        if not self._recording_step:
            if self.step >= 0:
                return
            self._begin_step(None)
            if not self._recording_step:
                return
        key = id(module)
        stack = self._open.get(key)
        if stack:
            call = stack.pop()
            step, path_id, index = call.step, call.path_id, call.index
        else:  # no pre-hook (forward phase only): the call is numbered as it returns
            call = None
            step, path_id, index = self.step, self._path_id_of[key], self._calls.get(key, 0)
            self._calls[key] = index + 1
        single = type(output) is torch.Tensor  # the usual single output, kept off the general path
        leaves = None if single else _leaves(output, "output")
        if self._wants_forward:
            if single:
                self._emit_tensor(FORWARD, step, path_id, index, "output", output)
            else:
                self._emit(FORWARD, step, path_id, index, leaves)
        if self._wants_backward and torch.is_grad_enabled():
            if call is None:
                call = _Call(module, path_id, step, index)
            if single:
                if output.requires_grad:
                    self._watch(output, _GradSide(self, call, BACKWARD_PRE, _ONE_OUTPUT_GRAD), 0)
                return
            outputs = [(n, t) for n, t in leaves if _needs_grad(t)]
            if outputs:
                side = _GradSide(self, call, BACKWARD_PRE, ["grad_" + n for n, _ in outputs])
                for position, (_, tensor) in enumerate(outputs):
                    self._watch(tensor, side, position)

    def _watch(self, tensor: torch.Tensor, side: _GradSide, position: int) -> None:
        """Route the gradient of ``tensor`` to ``side`` through the tensor's one dispatcher."""
        key = id(tensor)
        slot = self._slots.get(key)
        if slot is None or slot.ref() is not tensor or slot.version != tensor._version:
            slot = _Slot(tensor)
            self._slots[key] = slot
            self._tensor_handles[-1].append(hook_tensor(tensor, slot.dispatch))
        slot.entries.append((side, position))

    def _emit(
        self, phase_id: int, step: int, path_id: int, call: int, leaves: Iterable[tuple[str, Any]]
    ) -> None:
        pending = self._pending
        if len(pending.written) > BUFFER_ROWS - MAX_LEAVES:  # room for every leaf of the event
            self.flush()
        pending.add_event(next(self._seq), step, phase_id, path_id, call, leaves)

    def _emit_tensor(
        self, phase_id: int, step: int, path_id: int, call: int, name: str, tensor
    ) -> None:
        """``_emit`` for the usual event: one plain tensor."""
        if type(tensor) is not torch.Tensor:
            self._emit(phase_id, step, path_id, call, ((name, tensor),))
            return
        pending = self._pending
        if len(pending.written) >= BUFFER_ROWS:
            self.flush()
        pending.add_tensor_event(next(self._seq), step, phase_id, path_id, call, name, tensor)


def record(
    model: nn.Module,
    *,
    modules: ModuleSelector = None,
    gradients: bool = True,
    phases: Iterable[str] | None = None,
    stats: Iterable[str] | None = None,
    every: int = 1,
    max_events: int = 100_000,
    exact: bool = True,
) -> Recording:
    """Record hook events on ``model`` inside a ``with`` block; every hook is removed on exit.

    ``modules``: None (all), a list of paths, a module type, or ``fn(path, module) -> bool``
    (``hookviz.leaves`` picks modules without children). ``phases``: any of
    ``hookviz.recording.PHASES`` (all four by default; ``gradients=False`` drops the backward
    ones). ``stats``: which statistics to compute (``hookviz.recording.STATS``). ``every=N``
    records every N-th step; a step starts at each top-level call of ``model``.
    ``max_events`` bounds memory: the oldest events are dropped first.

    ``exact``: True (the default) keeps min, max and the NaN/Inf counts exact for every tensor,
    with one full pass over each tensor larger than ``summaries.SAMPLE_SIZE`` elements: a
    dashboard that shows a max must show the true one (mean, std, norm, zeros and histogram
    of such a tensor are always estimated from a sample). ``exact=False`` skips that pass, for
    large models on a CPU: every statistic of a large tensor is then estimated from its sample
    (min and max are the sample's, NaN and Inf counts the sample's scaled to the tensor's
    size; an outlier or a NaN outside the sample is missed). What each costs is measured by
    bench/bench_record.py; its figures are in bench/README.md.
    Estimates are flagged wherever they are shown: ``TensorStats.exact`` is False, ``brief()``
    and ``table()`` write ``max≈...``, and HookMonitor marks them. Tensors of at most
    SAMPLE_SIZE elements are kept whole and stay exact either way.
    """
    return Recording(
        model,
        modules=modules,
        gradients=gradients,
        phases=phases,
        stats=stats,
        every=every,
        max_events=max_events,
        exact=exact,
    )


# -- calls and gradients -------------------------------------------------------------------


class _Call:
    """One call of one module within a step, from its forward pre-hook to its forward hook."""

    __slots__ = ("module", "path_id", "step", "index", "inputs")

    def __init__(self, module, path_id, step, index):
        self.module, self.path_id, self.step, self.index = module, path_id, step, index
        self.inputs: _GradSide | None = None


class _GradSide:
    """Collects the gradients of one side (inputs or outputs) of a call, then emits one event.

    References point one way only (outputs side -> inputs side), so that no reference cycle
    keeps these short-lived objects waiting for the garbage collector.
    """

    __slots__ = (
        "recording",
        "step",
        "path_id",
        "index",
        "phase_id",
        "names",
        "grads",
        "missing",
        "done",
        "inputs",
    )

    def __init__(self, recording, call: _Call, phase_id: int, names: list[str]):
        self.recording, self.step, self.path_id, self.index = (
            recording,
            call.step,
            call.path_id,
            call.index,
        )
        self.phase_id, self.names = phase_id, names
        self.grads: list[Any] = [None] * len(names)
        self.missing = len(names)
        self.done = False
        self.inputs: _GradSide | None = call.inputs if phase_id == BACKWARD_PRE else None

    def deliver(self, position: int, grad: torch.Tensor) -> None:
        if self.done:
            return
        if self.missing == 1 and len(self.names) == 1:  # the usual single gradient: fire now
            self.done = True
            rec = self.recording
            if self.phase_id in rec._phase_ids:
                rec._emit_tensor(
                    self.phase_id, self.step, self.path_id, self.index, self.names[0], grad
                )
            self._after_fire(rec)
            return
        if self.grads[position] is None:
            self.missing -= 1
        self.grads[position] = grad
        if self.missing == 0:
            self.fire()

    def fire(self) -> None:
        self.done = True
        rec = self.recording
        if self.phase_id in rec._phase_ids:
            rec._emit(
                self.phase_id,
                self.step,
                self.path_id,
                self.index,
                zip(self.names, self.grads, strict=True),
            )
        self.grads = None  # holding gradients past this point would keep their memory from reuse
        self._after_fire(rec)

    def _after_fire(self, rec) -> None:
        inputs = self.inputs
        if inputs is not None and not inputs.names and not inputs.done:
            # No input needs a gradient: torch's full backward hook fires right away, with None.
            inputs.done = True
            if BACKWARD in rec._phase_ids:
                rec._emit(BACKWARD, self.step, self.path_id, self.index, [("grad_input", None)])


class _Slot:
    """The one tensor hook on a tensor version; fires its entries as torch would."""

    __slots__ = ("ref", "version", "entries", "__weakref__")

    def __init__(self, tensor: torch.Tensor):
        self.ref = weakref.ref(tensor)
        self.version = tensor._version
        self.entries: list[tuple[_GradSide, int]] = []

    def dispatch(self, grad: torch.Tensor) -> None:
        for side, position in reversed(self.entries):
            side.deliver(position, grad)


def _needs_grad(value: Any) -> bool:
    return isinstance(value, torch.Tensor) and value.requires_grad


def _leaves(value: Any, name: str) -> list[tuple[str, Any]]:
    """Tensors and other values in a nested structure (depth first), each with a readable name."""
    if isinstance(value, torch.Tensor):  # the common cases, kept fast
        return [(name, value)]
    if type(value) is tuple and len(value) == 1 and isinstance(value[0], torch.Tensor):
        return [(name + "[0]", value[0])]
    found: list[tuple[str, Any]] = []
    todo = [(name, value)]
    while todo and len(found) < MAX_LEAVES:
        label, item = todo.pop(0)
        if isinstance(item, (tuple, list)):
            todo[0:0] = [(f"{label}[{i}]", v) for i, v in enumerate(item)]
        elif isinstance(item, dict):
            todo[0:0] = [(f"{label}[{k!r}]", v) for k, v in item.items()]
        else:
            found.append((label, item))
    return found


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


def _check_phases(phases: Iterable[str] | None, gradients: bool) -> tuple[str, ...]:
    if phases is None:
        return PHASES if gradients else PHASES[:BACKWARD_PRE]
    if isinstance(phases, str):
        phases = [phases]
    chosen = tuple(phases)
    unknown = [p for p in chosen if p not in PHASES]
    if unknown:
        raise ValueError(
            f"unknown phase(s) {', '.join(map(repr, unknown))}; valid phases are {', '.join(PHASES)}."
        )
    if not gradients and any(PHASES.index(p) >= BACKWARD_PRE for p in chosen):
        raise ValueError(
            "gradients=False contradicts the backward phase(s) asked for in phases=; drop one of the two."
        )
    return tuple(p for p in PHASES if p in chosen)
