"""The hooks a Recording puts on a model: steps, calls, and each firing written as an event.

Each top-level call of the model starts a step (``every=N`` keeps the hooks on one step in N).
Each module call is numbered within its step and opened by a forward pre-hook, which notes the
nodes that made its tensor inputs, and closed by a forward hook, which hooks the nodes of its
outputs and those that send its inputs their gradients (``module_grads``). The hooks never
return anything: the model's inputs, outputs and graph stay its own. Both stay last in the
module's dicts, where torch makes its own backward nodes (after every other hook, also one
registered during forward): an event holds what ``forward`` received and what the call returned,
after every other hook's replacement. Every firing goes into ``summaries.Pending`` as an event;
the Recording that owns these hooks computes the statistics and keeps the events.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import torch
from torch import nn
from torch.utils.hooks import RemovableHandle

from .module_grads import ModuleCall, StepGraph
from .store import BACKWARD, BACKWARD_PRE, FORWARD, FORWARD_PRE
from .summaries import BUFFER_ROWS, Pending

__all__ = ["MAX_LEAVES", "ModuleHooks", "leaves_of"]

MAX_LEAVES = 32  # values summarised per event (a huge tuple output is cut here)
_LONE_OUTPUT_GRAD = "grad_output"  # the name of a lone tensor output's gradient
_INPUT_GRADS = tuple(f"grad_input[{i}]" for i in range(8))  # names made once for the usual sizes
_grad_enabled = torch.is_grad_enabled  # False under no_grad and inference_mode
_functorch_active = torch._C._are_functorch_transforms_active  # vmap, grad: no engine backward
_inference_mode = torch.is_inference_mode_enabled  # enable_grad() inside it: outputs need none


class ModuleHooks:
    """record()'s hooks on ``model``'s ``targets`` (path, module), for the phases in
    ``phase_ids``; events go to ``pending``, numbered from ``seq``. ``flush()`` empties a full
    ``pending``; ``step_began()`` is told each time a step starts (the owner may flush there)."""

    def __init__(
        self,
        model: nn.Module,
        targets: list[tuple[str, nn.Module]],
        phase_ids: Iterable[int],
        every: int,
        pending: Pending,
        seq: Iterator[int],
        *,
        flush: Callable[[], Any],
        step_began: Callable[[], None],
    ):
        self.model, self.targets, self.every = model, targets, every
        self.step = -1  # index of the current step (a step starts at each top-level call)
        self.steps_recorded = 0
        self._pending, self._seq = pending, seq
        self._flush, self._step_began = flush, step_began
        self._model_handle = None
        self._model_hooks: list[Any] = []  # the root's own hooks: on for the whole recording
        self._module_handles: list[Any] = []  # the other modules': with every > 1, per step
        self._tick = itertools.count()  # orders torch's would-be nodes made at one number
        self._graph = StepGraph()
        # event number -> (node number, tick) where torch's node would stand: kept for
        # trace_hooks, which places its markers among the user's hooks by it (None: not kept)
        self.event_keys: dict[int, tuple[int, int]] | None = None
        self._hooks_seen = -1  # RemovableHandle.next_id when our hooks were last put last
        self._active = False
        self._recording_step = False
        self._path_id_of = {id(m): i for i, (_, m) in enumerate(targets)}
        phase_ids = frozenset(phase_ids)
        self._wants_grad_outputs = BACKWARD_PRE in phase_ids
        self._wants_grad_inputs = BACKWARD in phase_ids
        self._wants_backward = self._wants_grad_outputs or self._wants_grad_inputs
        self._wants_forward_pre = FORWARD_PRE in phase_ids
        self._wants_forward = FORWARD in phase_ids
        self._reset_step_state()

    @property
    def active(self) -> bool:
        """True while the hooks are registered."""
        return self._active

    def start(self) -> None:
        """Register the hooks; on an error, none stays."""
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

    def stop(self) -> None:
        """Remove every hook. Graphs made while recording keep hooks on their nodes: those record
        nothing once stopped, and go with the graph."""
        if self._model_handle is not None:
            self._model_handle.remove()
            self._model_handle = None
        for handle in self._model_hooks:
            handle.remove()
        self._model_hooks = []
        self._detach()
        self._reset_step_state()
        self._active = False

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
        self._watching: list[ModuleCall] = []  # calls whose nodes are watched, not yet returned
        if hasattr(self, "_graph"):
            self._graph.clear()

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
        self._step_began()

    def _on_model_call(self, module, args) -> None:
        self._begin_step()

    next_step = _begin_step

    # -- hooks -----------------------------------------------------------------------------

    def _on_forward_pre(self, module, args, kwargs):
        if not self._recording_step:
            if self.step >= 0:
                return
            self._begin_step()  # a submodule called before the model itself: step 0
            if not self._recording_step:
                return
        if RemovableHandle.next_id != self._hooks_seen:
            self._keep_hooks_last()  # a hook registered during forward: ours still run last
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
                leaves = leaves_of(args, "input")
                if kwargs:
                    leaves += leaves_of(kwargs, "input")  # input['name']
                self._emit(FORWARD_PRE, call.step, call.path_id, index, leaves)
        if (
            self._wants_backward
            and _grad_enabled()
            and not _inference_mode()
            and not _functorch_active()
        ):
            call.watch_inputs(args, next(self._tick), self._wants_grad_inputs)
            self._watching.append(call)

    def _on_forward(self, module, args, output):
        if not self._recording_step:
            if self.step >= 0:
                return
            self._begin_step()
            if not self._recording_step:
                return
        if RemovableHandle.next_id != self._hooks_seen:
            self._keep_hooks_last()
        key = id(module)
        stack = self._open.get(key)
        if stack:
            call = stack.pop()
            step, path_id, index = call.step, call.path_id, call.index
        else:  # no pre-hook (forward phase only): the call is numbered as it returns
            call = None
            step, path_id, index = self.step, self._path_id_of[key], self._calls.get(key, 0)
            self._calls[key] = index + 1
        if self._wants_forward:
            if type(output) is torch.Tensor:  # the usual single output, kept off the general path
                self._emit_tensor(FORWARD, step, path_id, index, "output", output)
            else:
                self._emit(FORWARD, step, path_id, index, leaves_of(output, "output"))
        if call is not None and call.first_seq >= 0 and _grad_enabled() and not _functorch_active():
            watching = self._watching
            while watching and watching.pop() is not call:
                pass  # a call inside raised before it returned: it is not running any more
            returned = self._graph.watch_outputs(call, output, next(self._tick), tuple(watching))
            self._hooks_seen = RemovableHandle.next_id  # the node hooks just made are ours
            if module is self.model:
                self._graph.close(returned or {})

    # -- what the watched nodes report (module_grads.GradReceiver) ---------------------------

    def on_grad_outputs(self, call: ModuleCall, grads: tuple) -> None:
        """A call's grad_output, where torch's full backward pre-hooks fire."""
        if not (self._active and self._wants_grad_outputs):
            return
        seq = self._next_backward_seq(call.key_out)
        if call.n_outputs < 0:  # one tensor
            self._emit_tensor(
                BACKWARD_PRE, call.step, call.path_id, call.index, _LONE_OUTPUT_GRAD, grads[0], seq
            )
        else:
            names = [f"grad_output[{i}]" for i in range(len(grads))]
            leaves = zip(names, grads, strict=True)
            self._emit(BACKWARD_PRE, call.step, call.path_id, call.index, leaves, seq)

    def on_grad_inputs(self, call: ModuleCall, grads: tuple) -> None:
        """A call's grad_input, where torch's full backward hooks fire."""
        if not (self._active and self._wants_grad_inputs):
            return
        seq = self._next_backward_seq(call.key_in if call.producers else call.key_out)
        if len(grads) == 1:
            self._emit_tensor(
                BACKWARD, call.step, call.path_id, call.index, "grad_input[0]", grads[0], seq
            )
        else:
            names = _INPUT_GRADS if len(grads) <= len(_INPUT_GRADS) else _input_grad_names(grads)
            # the names made once may outnumber the gradients: zip stops at the last gradient
            leaves = zip(names, grads, strict=False)
            self._emit(BACKWARD, call.step, call.path_id, call.index, leaves, seq)

    def _next_backward_seq(self, key: tuple[int, int]) -> int:
        """The event's number; with ``event_keys`` kept, also where torch's node would stand."""
        seq = next(self._seq)
        if self.event_keys is not None:
            self.event_keys[seq] = key
        return seq

    # -- events ----------------------------------------------------------------------------

    def _emit(
        self,
        phase_id: int,
        step: int,
        path_id: int,
        call: int,
        leaves: Iterable[tuple[str, Any]],
        seq: int | None = None,
    ) -> None:
        pending = self._pending
        if len(pending.written) > BUFFER_ROWS - MAX_LEAVES:  # room for every leaf of the event
            self._flush()
        seq = next(self._seq) if seq is None else seq
        pending.add_event(seq, step, phase_id, path_id, call, leaves)

    def _emit_tensor(
        self, phase_id: int, step: int, path_id: int, call: int, name: str, tensor, seq=None
    ) -> None:
        """``_emit`` for the usual event: one plain tensor."""
        if type(tensor) is not torch.Tensor:
            self._emit(phase_id, step, path_id, call, ((name, tensor),), seq)
            return
        pending = self._pending
        if len(pending.written) >= BUFFER_ROWS:
            self._flush()
        seq = next(self._seq) if seq is None else seq
        pending.add_tensor_event(seq, step, phase_id, path_id, call, name, tensor)


def _input_grad_names(grads: tuple) -> list[str]:
    return [f"grad_input[{i}]" for i in range(len(grads))]


def leaves_of(value: Any, name: str) -> list[tuple[str, Any]]:
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
