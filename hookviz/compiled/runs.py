"""The two runs of a comparison, each on a deep copy of the model: its hooks observed in place.

Each hook is wrapped where it sits (same dict, same handle id, same order):

- when eager code calls it (the eager run; a graph break's fallback; a frame past
  `recompile_limit`; the root's own hooks; autograd calling a backward hook), the observer
  notes the call as it happens, with dynamo off;
- when dynamo traces it into a graph, the observer stores what the hook saw on an object of its
  own, a side effect dynamo replays after the graph runs: no op, no guard and no frame is added,
  so the graphs, breaks and recompiles are those of the model without hookviz
  (tests/test_compiled.py checks this against the bare model). A traced hook is seen once per
  step, whatever the number of its calls. It also notes, while dynamo traces, which compile
  traced it: inside a higher-order op, where dynamo refuses the store, that note is all there is.
"""

from __future__ import annotations

import copy
import functools
import itertools
import time
import traceback
import types
import warnings
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch
import torch.nn.modules.module as torch_module
from torch import nn

from .. import dynamo_reading
from ..hook_kinds import GLOBAL, KINDS, MODULE, TENSOR, acting_as
from ..inventory import GLOBAL_LABEL, HookInfo, list_hooks
from .report import EAGER, GRAPH, OUTSIDE_DYNAMO, WRAPPER, RunError

SEED = 0  # both runs start from this seed, so that dropout draws the same masks
# Which argument of each kind of hook is the value it can replace (what is compared).
_SEEN_AT = {"forward_pre": 1, "forward": -1, "backward_pre": 1, "backward": 1}
_SEEN_AT |= {"tensor": 0, "post_accumulate_grad": 0}


@dataclass
class Spec:
    """A hook being observed, the same in both runs: where it is and what it is."""

    key: tuple  # (path, kind, parameter, ordinal among hooks of that place and kind)
    path: str
    label: str
    kind: str
    name: str
    registered_at: int
    handle_id: int
    code: tuple[str, int, int] | None  # its code: (file, first line, last line)
    empty_before: bool  # its hook dict was empty just before it was registered


@dataclass
class Firing:
    clock: int
    step: int
    key: tuple  # the spec's key, and for a global hook the module's path last
    how: str  # GRAPH or EAGER
    seen: list[torch.Tensor]
    returned: list[torch.Tensor]
    inferred: bool = False  # in a graph, read from the compile that traced it (a quiet hook)


@dataclass
class Run:
    """One run's record."""

    firings: list[Firing] = field(default_factory=list)
    outputs: list[list[torch.Tensor]] = field(default_factory=list)
    specs: dict[tuple, Spec] = field(default_factory=dict)
    error: RunError | None = None
    warnings: list[str] = field(default_factory=list)
    step_starts: list[int] = field(default_factory=list)  # when each step started (µs, epoch)
    quiet: frozenset = frozenset()  # keys of the hooks not watched inside graphs
    key_of: dict[int, tuple] = field(default_factory=dict)  # the observer's number -> key
    traced: list[tuple[tuple, str]] = field(default_factory=list)  # (key, compile id) traced

    def step_at(self, time_us: int) -> int:
        """The step that was running at `time_us` (microseconds since the epoch)."""
        step = 0
        for s, start in enumerate(self.step_starts):
            if start <= time_us:
                step = s
        return step


class _Signals:
    """Where a hook traced into a graph leaves what it saw: dynamo replays the store after the graph."""


class Plan:
    """The steps to run, the same for both runs."""

    def __init__(self, model, inputs, loss_fn, backward, steps, before_step):
        self.model, self.inputs, self.loss_fn = model, inputs, loss_fn
        self.backward, self.steps, self.before_step = backward, steps, before_step
        self._clock = itertools.count()

    def clock(self) -> int:
        return next(self._clock)

    def run(
        self, compiler: Callable[[nn.Module], Callable] | None, quiet: frozenset = frozenset()
    ) -> Run:
        """The steps on a fresh deep copy: eagerly (`compiler` None) or through `compiler`;
        the hooks of `quiet` are not watched inside graphs (they run in a higher-order op)."""
        run = Run()
        try:
            module = _deep_copy(self.model)
        except Exception as error:  # noqa: BLE001 (the report says what deepcopy refused)
            run.error = RunError(
                "eager" if compiler is None else "compiled",
                None,
                type(error).__name__,
                f"compare_compiled runs on deep copies of the model (yours stays untouched), and "
                f"copy.deepcopy(model) raised: {error}",
            )
            return run
        observer = _Observer(module, run, self.clock, compiled=compiler is not None, quiet=quiet)
        with warnings.catch_warnings(record=True) as caught, torch.random.fork_rng(devices=[]):
            warnings.simplefilter("always")
            torch.manual_seed(SEED)
            try:
                observer.wrap_new(step=0)
                call = module if compiler is None else compiler(module)
                for step in range(self.steps):
                    self._step(module, call, observer, step)
            except Exception as error:  # noqa: BLE001 (the report says which run, step and hook)
                run.error = observer.error(error, "eager" if compiler is None else "compiled")
            finally:
                observer.restore()
        run.warnings = [f"{w.category.__name__}: {w.message}" for w in caught]
        return run

    def _step(self, module: nn.Module, call: Callable, observer: _Observer, step: int) -> None:
        observer.step = step
        observer.run.step_starts.append(time.time_ns() // 1000)
        if self.before_step is not None:
            observer.note_dicts()
            self.before_step(module, step)
            observer.wrap_new(step)
        for p in module.parameters():
            p.grad = None
        output = call(*_fresh(self.inputs))
        observer.run.outputs.append(_tensors(output))
        if self.backward:
            loss = self.loss_fn(output) if self.loss_fn is not None else _default_loss(output)
            if loss is not None and loss.requires_grad:
                loss.backward()
        observer.end_step(step)


def _deep_copy(model: nn.Module) -> nn.Module:
    """A deep copy with the parameters' hooks too (deepcopy drops a tensor's hook dicts)."""
    clone = copy.deepcopy(model)
    for (_, mine), (_, theirs) in zip(
        model.named_parameters(remove_duplicate=False),
        clone.named_parameters(remove_duplicate=False),
        strict=True,
    ):
        for kind in (k for k in KINDS.values() if k.target == TENSOR):
            hooks = getattr(mine, kind.attribute, None)
            if hooks:
                setattr(theirs, kind.attribute, OrderedDict(hooks))
    return clone


def _fresh(value: Any) -> Any:
    """The inputs again, each tensor a copy (its requires_grad kept): no .grad lands on yours."""
    if isinstance(value, torch.Tensor):
        return value.detach().clone().requires_grad_(value.requires_grad)
    if isinstance(value, tuple) and hasattr(value, "_fields"):  # a named tuple
        return type(value)(*(_fresh(v) for v in value))
    if isinstance(value, (tuple, list)):
        return type(value)(_fresh(v) for v in value)
    if isinstance(value, dict):
        return {k: _fresh(v) for k, v in value.items()}
    return value


def _default_loss(output: Any) -> torch.Tensor | None:
    tensors = [t for t in _tensors(output) if t.requires_grad and t.is_floating_point()]
    return sum(t.sum() for t in tensors) if tensors else None


def _tensors(value: Any) -> list[torch.Tensor]:
    """The tensors in `value` (a tensor, a tuple, list or dict of them, nested)."""
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (tuple, list)):
        return [t for v in value for t in _tensors(v)]
    if isinstance(value, dict):
        return [t for v in value.values() for t in _tensors(v)]
    return []


class _Observer:
    """Wraps every hook of one copy (and the global hooks) to see it fire; puts them back."""

    def __init__(
        self,
        module: nn.Module,
        run: Run,
        clock: Callable[[], int],
        *,
        compiled: bool,
        quiet: frozenset = frozenset(),
    ):
        self.module, self.run, self.clock, self.compiled = module, run, clock, compiled
        self.quiet = quiet  # the keys of hooks that must leave no store in a graph
        self.comptime = dynamo_reading.comptime() if compiled else None
        self.step = 0
        self.signals = _Signals()
        self.kept: dict[tuple, tuple[str, list, list, int]] = {}  # key -> the last firing
        self.paths = {id(m): p for p, m in module.named_modules()}
        self.numbers = {p: i for i, p in enumerate(self.paths.values())}
        for path, m in module.named_modules():
            m.__dict__["_hookviz_number"] = self.numbers[path]
        self._globals: list[tuple[dict, int, Any]] = []  # (dict, handle id, original hook)
        self._dicts_before: dict[tuple[int, str], int] = {}
        self._globals_at_start = {
            kind.attribute: set(getattr(torch_module, kind.attribute)) for kind in _global_kinds()
        }
        self.record = self._recorder()
        self._ordinals: dict[tuple, int] = {}

    # -- wrapping -------------------------------------------------------------------------------

    def note_dicts(self) -> None:
        """How many hooks each dict holds now, before `before_step` may add some."""
        self._dicts_before = {
            (id(d), attr): len(d) for d, attr in self._all_dicts() if d is not None
        }

    def _all_dicts(self):
        for m in self.module.modules():
            for kind in KINDS.values():
                if kind.target == MODULE and kind.attribute:
                    yield getattr(m, kind.attribute, None), kind.attribute
        for p in self.module.parameters():
            for kind in KINDS.values():
                if kind.target == TENSOR:
                    yield getattr(p, kind.attribute, None), kind.attribute
        for kind in _global_kinds():
            yield getattr(torch_module, kind.attribute), kind.attribute

    def wrap_new(self, step: int) -> None:
        """Wrap every hook not wrapped yet: the copy's own, and those `before_step` added."""
        for info in list_hooks(self.module):
            if info.kind not in _SEEN_AT and acting_as(info.kind) not in _SEEN_AT:
                continue  # state_dict hooks and friends: not fired by a step
            hooks = _dict_of(info)
            if getattr(hooks[info.handle_id], "_hookviz_observed", False):
                continue
            spec = self._spec(info, step, hooks)
            wrapper = self._wrap(hooks[info.handle_id], spec, info)
            if info.target == "global":
                self._globals.append((hooks, info.handle_id, hooks[info.handle_id]))
            hooks[info.handle_id] = wrapper

    def _spec(self, info: HookInfo, step: int, hooks: dict) -> Spec:
        place = (info.path, info.kind, info.parameter)
        ordinal = self._ordinals.get(place, 0)
        self._ordinals[place] = ordinal + 1
        key = (*place, ordinal)
        empty_before = self._dicts_before.get((id(hooks), _attribute(info)), 1) == 0
        if info.target == "global":
            empty_before = (
                step > 0 and not self._globals_at_start[_attribute(info)] and empty_before
            )
        spec = Spec(
            key,
            info.path,
            GLOBAL_LABEL if info.target == "global" else info.where,
            info.kind,
            info.name,
            step,
            info.handle_id,
            _code_range(info.hook),
            empty_before and step > 0,
        )
        self.run.specs[key] = spec
        return spec

    def _wrap(self, hook: Callable, spec: Spec, info: HookInfo) -> Callable:
        at = _SEEN_AT[acting_as(info.kind)]
        number = len(self.run.specs) - 1
        signals, record = self.signals, self.record
        is_global = info.target == "global"
        key = spec.key
        loud = key not in self.quiet  # quiet: inside a higher-order op, no store
        comptime, note = self.comptime, dynamo_reading.note_traced

        def observed(*args, **kwargs):
            result = hook(*args, **kwargs)
            if torch.compiler.is_compiling():  # dynamo is tracing this call into a graph
                hook_number = number  # noqa: F841 (note reads it while dynamo traces)
                comptime(note)
                if loud:
                    name = f"h{number}"
                    if is_global:
                        name = f"h{number}m{getattr(args[0], '_hookviz_number', -1)}"
                    setattr(signals, name, (_tensors(args[at]), _tensors(result)))
            else:
                record(key, args, result, at, is_global)
            return result

        if self.compiled:
            dynamo_reading.run_eagerly_when_called_from_eager_code(observed.__code__)
        functools.update_wrapper(observed, hook, updated=())  # its name, as list_hooks shows it
        observed._hookviz_observed = True
        self.run.key_of[number] = key
        return observed

    def _recorder(self) -> Callable:
        """The eager side of the observer, run with dynamo off (it must compile nothing)."""

        def record(key, args, result, at, is_global):
            if is_global:
                path = self.paths.get(id(args[0]), WRAPPER)
                key = (*key, path)
            self._keep(key, EAGER, _tensors(args[at]), _tensors(result))

        return torch.compiler.disable(record) if self.compiled else record

    def _keep(self, key, how, seen, returned) -> None:
        clock = self.clock()
        self.run.firings.append(Firing(clock, self.step, key, how, [], []))
        self.kept[key] = (how, seen, returned, len(self.run.firings) - 1)

    # -- each step ------------------------------------------------------------------------------

    def end_step(self, step: int) -> None:
        """The firings traced into graphs this step, and the values each hook last saw."""
        by_path = {n: p for p, n in self.numbers.items()}
        for name, (seen, returned) in self.signals.__dict__.items():
            number, _, module_number = name[1:].partition("m")
            key = self.run.key_of[int(number)]
            if module_number:
                key = (*key, by_path.get(int(module_number), WRAPPER))
            self._keep(key, GRAPH, seen, returned)
        self.signals.__dict__.clear()
        for _, seen, returned, index in self.kept.values():
            firing = self.run.firings[index]
            firing.seen = [_snapshot(t) for t in seen]
            firing.returned = [_snapshot(t) for t in returned]
        self.kept.clear()
        self.run.outputs[-1] = [_snapshot(t) for t in self.run.outputs[-1]]

    def error(self, error: BaseException, run: str) -> RunError:
        """The exception as the report tells it, with the hook it came from when there is one."""
        frames = traceback.extract_tb(error.__traceback__)
        hook = ""
        for spec in self.run.specs.values():
            if spec.code and any(in_code(spec.code, f.filename, f.lineno) for f in frames):
                hook = f"{spec.label} {spec.kind} {spec.name}"
        message = str(error).strip().split("\n\n")[0]
        return RunError(run, self.step, type(error).__name__, message, hook)

    def restore(self) -> None:
        """Put the global hooks back; remove those `before_step` added; untag the modules."""
        for hooks, handle_id, original in self._globals:
            if handle_id in hooks:
                hooks[handle_id] = original
        for kind in _global_kinds():
            hooks = getattr(torch_module, kind.attribute)
            for handle_id in set(hooks) - self._globals_at_start[kind.attribute]:
                del hooks[handle_id]
                for flags in kind.flags.values():
                    getattr(torch_module, flags, {}).pop(handle_id, None)
        for m in self.module.modules():
            m.__dict__.pop("_hookviz_number", None)


def _snapshot(t: torch.Tensor) -> torch.Tensor:
    return t.detach().to("cpu", copy=True)


def _global_kinds():
    return tuple(k for k in KINDS.values() if k.target == GLOBAL)


def _attribute(info: HookInfo) -> str:
    return KINDS[info.kind].attribute


def _dict_of(info: HookInfo) -> dict:
    if info.target == "global":
        return getattr(torch_module, _attribute(info))
    return getattr(info.owner, _attribute(info))


def _code_range(hook: Any) -> tuple[str, int, int] | None:
    """The file and lines of a hook's code (a function, a partial, a method, a callable object),
    nested functions included."""
    target = hook
    while isinstance(target, functools.partial):
        target = target.func
    target = getattr(target, "__func__", target)
    code = getattr(target, "__code__", None)
    if code is None:
        call = getattr(type(target), "__call__", None)  # noqa: B004 (a callable object)
        code = getattr(getattr(call, "__func__", call), "__code__", None)
    if code is None:
        return None
    lines = list(_lines(code))
    return (code.co_filename, min(lines, default=code.co_firstlineno), max(lines, default=0))


def _lines(code: types.CodeType):
    yield code.co_firstlineno
    for _, _, line in code.co_lines():
        if line is not None:
            yield line
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _lines(const)


def in_code(code: tuple[str, int, int], file: str, line: int) -> bool:
    name, first, last = code
    return (file == name or (file and name.endswith(file.lstrip(".")))) and first <= line <= last


def in_higher_order_ops(breaks: list, run: Run) -> frozenset:
    """The hooks whose store broke the graph: dynamo refuses, inside a higher-order op
    (`torch.utils.checkpoint`, `torch.cond`...), any side effect outside it, the observer's too.
    They are the forward hooks that then ran eagerly, in the step of such a break."""
    steps = {
        run.step_at(b.time_us)
        for b in breaks
        if b.frames and b.frames[-1].file == __file__ and b.frames[-1].function == "observed"
    }
    return frozenset(
        f.key[:4]
        for f in run.firings
        if f.step in steps
        and f.how == EAGER
        and not KINDS[acting_as(f.key[1])].backward
        and (f.key[4] if len(f.key) == 5 else f.key[0]) not in OUTSIDE_DYNAMO
    )


def infer_quiet_firings(run: Run) -> None:
    """A quiet hook ran in a graph at step s when a hook dynamo traced beside it, in the same
    compile (its last attempt), ran in a graph at step s: a graph runs whole or not at all."""
    last: dict[str, str] = {}  # frame compile ("0/1") -> its last attempt ("0/1_2")
    for _, cid in run.traced:
        base, _, attempt = cid.partition("_")
        if int(attempt or 0) >= int(last.get(base, base).partition("_")[2] or 0):
            last[base] = cid
    kept = set(last.values())
    beside: dict[str, set] = {}
    for key, cid in run.traced:
        if cid in kept:
            beside.setdefault(cid, set()).add(key)
    in_graph = {(f.key, f.step) for f in run.firings if f.how == GRAPH}
    for quiet in run.quiet:
        for keys in beside.values():
            if quiet not in keys:
                continue
            for step in range(len(run.step_starts)):
                loud = [k for k in keys - run.quiet if (k, step) in in_graph]
                if loud and (quiet, step) not in in_graph:
                    run.firings.append(Firing(-1, step, quiet, GRAPH, [], [], inferred=True))
                    in_graph.add((quiet, step))
