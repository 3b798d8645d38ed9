"""record(): a hook recorder that sees forward and backward as torch's hooks do, and always cleans up.

What is exact, and why:
- Forward events come from a forward pre-hook and a forward hook on each module, kept last in
  the module's hook dicts: an event holds what ``forward`` received (after every pre-hook's
  replacement) and the output the call returned (after every forward hook's). Keyword
  arguments are recorded too (``input['name']``).
- Backward events are those of torch's full backward hooks, event for event: a
  ``backward_pre`` event where ``register_full_backward_pre_hook`` fires (grad_output), a
  ``backward`` event where ``register_full_backward_hook`` fires (grad_input: *this call's own
  share* of each positional input's gradient), in torch's order, once per call and per backward
  pass, with torch's values (``module_grads`` makes the same identity nodes torch makes, at
  the same points). Where torch's full hooks fire nothing, record() records nothing: an output
  that is a dict, a list or a dataclass (a transformers ``ModelOutput``), an output that needs no
  gradient, a pass under ``no_grad`` or ``inference_mode``.
- Where torch's full backward hooks raise (an in-place op on the module's output or input,
  ``ReLU(inplace=True)``), record() works: the events hold the gradient w.r.t. the value the
  module returned, before the in-place op changed it.
- A module that keeps a legacy ``register_backward_hook`` gets its ``backward_pre`` event from
  tensor hooks on its outputs (torch refuses full hooks beside a legacy one; an output node would
  move the legacy hook onto hookviz's node).
- A hook does little (see ``summaries``): one small copy per tensor, and one exact pass for
  large tensors (none with ``exact=False``). Statistics are computed later, for many events at once.
"""

from __future__ import annotations

import functools
import itertools
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import torch
import torch.nn.modules.module as torch_module
from torch import nn
from torch.utils.hooks import RemovableHandle

from .batch_stats import compute
from .histogram_history import (
    SIGNAL_PHASES,
    STATIC_BINS,
    HistogramHistory,
    from_batches,
    signal_or_kind,
)
from .module_grads import ModuleCall
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

_LONE_OUTPUT_GRAD = "grad_output"  # the name of a lone tensor output's gradient
_INPUT_GRADS = tuple(f"grad_input[{i}]" for i in range(8))  # names made once for the usual sizes
MAX_LEAVES = 32  # tensors summarised per event (a huge tuple output is cut here)
# How every view says that a recording's extremes are estimates (exact=False).
ESTIMATED_NOTE = "min/max/norm/NaN/Inf estimated from a sample (exact=False)"
FLUSH_SECONDS = 0.25  # with listeners, compute statistics at a step boundary this often
_grad_enabled = torch.is_grad_enabled  # False under no_grad and inference_mode


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
    """Record hook events on ``model`` inside a ``with`` block; every hook is removed on exit.

    ``hookviz.record`` is this class under its verb's name: ``with hv.record(model) as rec:``.

    ``modules``: None (all), a list of paths, a module type, or ``fn(path, module) -> bool``
    (``hookviz.leaves`` picks modules without children). ``phases``: any of
    ``hookviz.recording.PHASES`` (all four by default; ``gradients=False`` drops the backward
    ones). ``stats``: which statistics to compute (``hookviz.recording.STATS``). ``every=N``
    records every N-th step; a step starts at each top-level call of ``model``.
    ``max_events`` bounds memory: the oldest events are dropped first.

    ``exact``: True (the default) keeps min, max, the norm and the NaN/Inf counts exact for every
    tensor, with one full pass over each tensor larger than ``summaries.SAMPLE_SIZE`` elements
    (two for the norm): a dashboard that shows a max, or flags a vanishing gradient, must show
    the true one (mean, std, zeros and histogram of such a tensor are always estimated from a
    sample). ``exact=False`` skips that pass, for large models on a CPU: every statistic of a
    large tensor is then estimated from its sample (min and max are the sample's, the norm is
    the sample's scaled to the tensor's size, NaN and Inf counts the sample's scaled likewise;
    an outlier or a NaN outside the sample is missed). What each costs is measured by
    bench/bench_record.py; its figures are in bench/README.md.
    Estimates are flagged wherever they are shown: ``TensorStats.exact`` is False, ``brief()``
    and ``table()`` write ``max≈...``, and HookMonitor marks them. Tensors of at most
    SAMPLE_SIZE elements are kept whole and stay exact either way.

    ``clock``: where events take their ``seq`` numbers from (default: a fresh count from 0);
    share one with other hooks to put all of them in one order.
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
        self._model_hooks: list[Any] = []  # the root's own hooks: on for the whole recording
        self._module_handles: list[Any] = []  # the other modules': with every > 1, per step
        self._legacy_handles: list[Any] = []  # tensor hooks for modules with a legacy hook
        self._hooks_seen = -1  # RemovableHandle.next_id when our hooks were last checked last
        self._active = False
        self._recording_step = False
        self._last_flush = time.monotonic()
        self._path_id_of = {id(m): i for i, (_, m) in enumerate(self.targets)}
        self._path_id = {p: i for i, (p, _) in enumerate(self.targets)}
        self._phase_ids = frozenset(PHASES.index(p) for p in self.phases)
        self._wants_backward = BACKWARD_PRE in self._phase_ids or BACKWARD in self._phase_ids
        self._wants_grad_outputs = BACKWARD_PRE in self._phase_ids
        self._wants_grad_inputs = BACKWARD in self._phase_ids
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
        try:
            self._model_handle = self.model.register_forward_pre_hook(
                self._on_model_call, prepend=True
            )
            if id(self.model) in self._path_id_of:
                # The root's hooks stay on: a hook added during the root's own call would miss it.
                self._model_hooks = self._register(self.model)
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
        for handle in self._model_hooks:
            handle.remove()
        self._model_hooks = []
        self._detach()
        for handle in self._legacy_handles:
            handle.remove()
        self._legacy_handles.clear()
        # Graphs made while recording keep their identity nodes; those now pass gradients on
        # and record nothing.
        self._active = False
        self.flush()

    @property
    def active(self) -> bool:
        """True while the hooks are registered."""
        return self._active

    def next_step(self) -> None:
        """Start a new step by hand (steps also start at each top-level call of the model)."""
        self._begin_step()

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
        with torch.inference_mode(False):  # the statistics' work space: normal tensors
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

    def _register(self, module: nn.Module) -> list:
        """Our hooks on one module, appended (last): the pre-hook opens each call (its number, its
        inputs, its input node), the forward hook closes it (its output, its output node).
        Recording the forward phase alone needs no pre-hook: one hook per module, not two."""
        handles = []
        if self._wants_forward_pre or self._wants_backward:
            handles.append(module.register_forward_pre_hook(self._on_forward_pre, with_kwargs=True))
        handles.append(module.register_forward_hook(self._on_forward))
        return handles

    def _attach(self) -> None:
        if self._module_handles:
            return
        for _, module in self.targets:
            if module is not self.model:
                self._module_handles += self._register(module)
        self._hooks_seen = RemovableHandle.next_id

    def _detach(self) -> None:
        for handle in self._module_handles:
            handle.remove()
        self._module_handles.clear()

    def _keep_hooks_last(self) -> None:
        """Put our hooks back at the end of each module's dicts (the step hook at the start of
        the model's), after someone registered hooks: torch makes its backward nodes after every
        forward (pre-)hook, so ours must run after theirs to see what torch's hooks see."""
        for handle in itertools.chain(self._model_hooks, self._module_handles):
            hooks = handle.hooks_dict_ref()
            if hooks is not None and handle.id in hooks and next(reversed(hooks)) != handle.id:
                hooks.move_to_end(handle.id)
        handle = self._model_handle
        hooks = handle.hooks_dict_ref() if handle is not None else None
        if hooks is not None and handle.id in hooks and next(iter(hooks)) != handle.id:
            hooks.move_to_end(handle.id, last=False)
        self._hooks_seen = RemovableHandle.next_id

    def _reset_step_state(self) -> None:
        self._calls: dict[int, int] = {}  # module id -> calls so far in this step
        self._open: dict[int, list[ModuleCall]] = {}  # module id -> calls not yet returned

    def _begin_step(self) -> None:
        self.step += 1
        self._recording_step = self.step % self.every == 0
        if self._recording_step:
            self.steps_recorded += 1
        self._reset_step_state()
        if self.every > 1 and self._active:
            if self._recording_step:
                self._attach()
            else:
                self._detach()
        if RemovableHandle.next_id != self._hooks_seen and self._active:
            self._keep_hooks_last()
        if self._pending.n_rows >= BUFFER_ROWS // 2 or (
            (self._listeners or self._column_listeners)
            and time.monotonic() - self._last_flush >= FLUSH_SECONDS
        ):
            self.flush()

    def _on_model_call(self, module, args) -> None:
        self._begin_step()

    # -- hooks -----------------------------------------------------------------------------

    def _on_forward_pre(self, module, args, kwargs):
        if not self._recording_step:
            if self.step >= 0:
                return None
            self._begin_step()  # a submodule called before the model itself: step 0
            if not self._recording_step:
                return None
        key = id(module)
        index = self._calls.get(key, 0)
        self._calls[key] = index + 1
        call = ModuleCall(self, self._path_id_of[key], self.step, index)
        stack = self._open.get(key)
        if stack is None:
            self._open[key] = [call]
        else:
            stack.append(call)
        if self._wants_forward_pre:
            if (
                type(args) is tuple
                and len(args) == 1
                and type(args[0]) is torch.Tensor
                and not kwargs
            ):
                self._emit_tensor(FORWARD_PRE, call.step, call.path_id, index, "input[0]", args[0])
            else:
                leaves = _leaves(args, "input")
                if kwargs:
                    leaves += _leaves(kwargs, "input")  # input['name']
                self._emit(FORWARD_PRE, call.step, call.path_id, index, leaves)
        if self._wants_backward and _grad_enabled():
            wrapped = call.wrap_inputs(args)
            if wrapped is not None:
                return wrapped, kwargs
        return None

    def _on_forward(self, module, args, output):
        if not self._recording_step:
            if self.step >= 0:
                return None
            self._begin_step()
            if not self._recording_step:
                return None
        key = id(module)
        stack = self._open.get(key)
        if stack:
            call = stack.pop()
            step, path_id, index = call.step, call.path_id, call.index
        else:  # no pre-hook (forward phase only): the call is numbered as it returns
            call = None
            step, path_id, index = self.step, self._path_id_of[key], self._calls.get(key, 0)
            self._calls[key] = index + 1
        wrapped = None
        if call is not None and self._wants_backward and _grad_enabled():
            if _keeps_legacy_hook(module):
                call.watch_outputs(output, self._legacy_tensor_hook)
            else:
                wrapped = call.wrap_outputs(output)
                if wrapped is not None:
                    output = wrapped  # the alias: the next module's input, summarised once
        if self._wants_forward:
            if type(output) is torch.Tensor:  # the usual single output, kept off the general path
                self._emit_tensor(FORWARD, step, path_id, index, "output", output)
            else:
                self._emit(FORWARD, step, path_id, index, _leaves(output, "output"))
        return wrapped

    def _legacy_tensor_hook(self, tensor: torch.Tensor, hook: Callable) -> None:
        self._legacy_handles.append(tensor.register_hook(hook))

    # -- what the backward nodes report (module_grads.GradReceiver) --------------------------

    def on_grad_outputs(self, call: ModuleCall, grads: tuple) -> None:
        """A call's grad_output, where torch's full backward pre-hooks fire."""
        if not (self._active and self._wants_grad_outputs):
            return
        if call.n_outputs < 0:  # one tensor
            self._emit_tensor(
                BACKWARD_PRE, call.step, call.path_id, call.index, _LONE_OUTPUT_GRAD, grads[0]
            )
        else:
            names = [f"grad_output[{i}]" for i in range(len(grads))]
            self._emit(
                BACKWARD_PRE, call.step, call.path_id, call.index, zip(names, grads, strict=True)
            )

    def on_grad_inputs(self, call: ModuleCall, grads: tuple) -> None:
        """A call's grad_input, where torch's full backward hooks fire."""
        if not (self._active and self._wants_grad_inputs):
            return
        if len(grads) == 1:
            self._emit_tensor(
                BACKWARD, call.step, call.path_id, call.index, "grad_input[0]", grads[0]
            )
        else:
            names = _INPUT_GRADS if len(grads) <= len(_INPUT_GRADS) else _input_grad_names(grads)
            # the names made once may outnumber the gradients: zip stops at the last gradient
            self._emit(
                BACKWARD, call.step, call.path_id, call.index, zip(names, grads, strict=False)
            )

    # -- events ----------------------------------------------------------------------------

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


record = Recording  # the verb users write: ``with hv.record(model) as rec:``


def _input_grad_names(grads: tuple) -> list[str]:
    return [f"grad_input[{i}]" for i in range(len(grads))]


def _keeps_legacy_hook(module: nn.Module) -> bool:
    """True if ``module`` or torch's globals hold a legacy ``register_backward_hook``."""
    return (module._backward_hooks and module._is_full_backward_hook is False) or (
        torch_module._global_backward_hooks and torch_module._global_is_full_backward_hook is False
    )


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
