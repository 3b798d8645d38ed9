"""What the diagnosed checks look at: a model's hooks and parameters, and an ``apply`` trace.

Each function inspects and returns ``(problem, hint)``: the problem in words (None when there
is none) and the hint for that mistake. ``checks.Check`` prints the ✓ or ✗; nothing here prints.
"""

from __future__ import annotations

from typing import Any

import torch

from ..inventory import list_hooks, remove_hook
from . import diagnose
from .diagnose import Hint
from .tracebacks import raised_text
from .values import listing
from .wording import words

Found = tuple[str | None, Any]  # (problem or None, the hint: a key or a Hint)


def hooks_left(model: torch.nn.Module, keep: tuple[Any, ...], hint: str | Hint | None) -> Found:
    """Hooks left on ``model`` but the handles in ``keep``; global ones are removed as found."""
    kept = {handle.id for handle in keep}
    left = [info for info in list_hooks(model) if info.handle_id not in kept]
    problem = diagnose.describe_hooks_left(left, type(model).__name__) if left else None
    globals_left = [info for info in left if info.target == "global"]
    for info in globals_left:
        remove_hook(model, info.handle_id)
    if hint is None:
        hint = diagnose.GLOBAL_HOOKS_LEFT if globals_left else diagnose.HOOKS_LEFT
    return problem, hint


def untrainable(model: torch.nn.Module) -> Found:
    """Parameters that do not require grad, or that one SGD step leaves unchanged (undone after)."""
    params = list(model.named_parameters())
    frozen = [name for name, param in params if not param.requires_grad]
    if frozen:
        problem = words(f"inspect.frozen_{_one_or_many(frozen)}", names=listing(frozen))
        return problem, diagnose.FROZEN_PARAMETERS
    before = [(param.detach().clone(), param.grad) for _, param in params]
    problem = None
    try:
        if params:
            problem = _stuck_after_one_step(params, before)
    except Exception as error:
        problem = words("inspect.step_raised", error=raised_text(error))
    finally:
        with torch.no_grad():
            for (_, param), (value, grad) in zip(params, before, strict=True):
                param.copy_(value)
                param.grad = grad
    return problem, diagnose.FROZEN_PARAMETERS


def _stuck_after_one_step(params: list, before: list) -> str | None:
    for _, param in params:
        param.grad = None
    optimizer = torch.optim.SGD([param for _, param in params], lr=0.5)
    sum(param.sum().double() for _, param in params).backward()
    optimizer.step()
    stuck = [
        name
        for (name, param), (value, _) in zip(params, before, strict=True)
        if torch.equal(param.detach(), value)
    ]
    return words("inspect.stuck", names=listing(stuck)) if stuck else None


def forward_hooks_wrong(model: torch.nn.Module, paths: list[str], hint: str | Hint) -> Found:
    """What keeps ``model`` from having exactly one forward hook on each of ``paths``, and no other."""
    root = type(model).__name__
    infos = list_hooks(model, include_globals=False)
    label = lambda path: words("inspect.root", root=root) if path == "" else path  # noqa: E731
    problems = []
    wrong_kind = [i for i in infos if i.kind != "forward"]
    if wrong_kind:
        kinds = sorted({diagnose.kind_words(i.kind) for i in wrong_kind})
        problems.append(
            words(
                f"inspect.other_kind_{_one_or_many(wrong_kind)}",
                count=len(wrong_kind),
                kinds=", ".join(kinds),
                where=listing(sorted({label(i.path) for i in wrong_kind})),
            )
        )
        hint = diagnose.WRONG_HOOK_KIND
    forward = [i.path for i in infos if i.kind == "forward"]
    extra = sorted({p for p in forward if p not in paths}, key=forward.index)
    missing = [p for p in paths if p not in forward]
    twice = sorted({p for p in forward if forward.count(p) > 1 and p in paths}, key=forward.index)
    if extra:
        problems.append(words("inspect.extra", where=listing(list(map(label, extra)))))
    if missing and not wrong_kind:
        problems.append(words("inspect.missing", where=listing(list(map(label, missing)))))
    if twice:
        problems.append(
            words(f"inspect.twice_{_one_or_many(twice)}", where=listing(list(map(label, twice))))
        )
    return ("; ".join(problems) if problems else None), hint


def parameter_writes_wrong(trace: Any, only: list[str] | None = None) -> Found:
    """A parameter the ``hv.trace_apply`` trace wrote more than once, or never (of ``only``,
    the names of the parameters the answer must write, when given)."""
    names = [name for name, _ in trace.model.named_parameters() if only is None or name in only]
    writers: dict[str, list[str]] = {}
    for visit in trace.visits:
        for change in visit.changes:
            if change.name in names:
                writers.setdefault(change.name, []).append(visit.name)
    many = [(n, w) for n, w in writers.items() if len(w) > 1]
    never = [n for n in names if n not in writers]
    if many:
        name, where = many[0]
        problem = words("inspect.written_many", name=name, count=len(where), where=listing(where))
        if len(many) > 1:
            problem += words("inspect.more_written", count=len(many) - 1)
        return problem, diagnose.RECURSIVE_PARAMETERS
    if never:
        problem = words(f"inspect.never_{_one_or_many(never)}", names=listing(never))
        return problem, diagnose.PARAMETERS_MISSED
    return None, diagnose.RECURSIVE_PARAMETERS


def writes_through_data(trace: Any) -> Found:
    """Parameters the trace saw changed through ``.data``."""
    hidden = sorted({c.name for c in trace.changes if c.through_data})
    problem = words("inspect.through_data", names=listing(hidden)) if hidden else None
    return problem, diagnose.THROUGH_DATA


def replaced_parameters(model: torch.nn.Module, originals: list[torch.Tensor]) -> Found:
    """Parameters of ``model`` that are no longer the objects in ``originals``."""
    now = dict(model.named_parameters())
    before = dict(zip(now, originals, strict=False))
    replaced = [name for name, param in now.items() if before.get(name) is not param]
    problem = (
        words(f"inspect.replaced_{_one_or_many(replaced)}", names=listing(replaced))
        if replaced
        else None
    )
    return problem, diagnose.NEW_PARAMETER_OBJECTS


def _one_or_many(items: list) -> str:
    """The wording key's ending for these items: 'one' or 'many'."""
    return "one" if len(items) == 1 else "many"


class OutputWatch:
    """Each module's output as its forward made it, and as the model passed it on after every
    forward hook ran: a hook that returns anything replaces the output the model computes on.

    A context manager: on entry an early forward hook on every module keeps what forward made;
    at the root's first call a late one is added after every hook registered by then (the
    answer's, registered before it runs the model) to see what was passed on. On exit every
    one of them is removed, whatever the block raised.
    """

    def __init__(self, model: torch.nn.Module):
        self.paths = {id(m): path for path, m in model.named_modules()}
        self.made: dict[int, Any] = {}
        self.handed_on: dict[int, Any] = {}
        self._model = model
        self._modules = [m for _, m in model.named_modules()]
        self._handles: list[Any] = []
        self._late_added = False

    def __enter__(self) -> OutputWatch:
        self._handles = [m.register_forward_hook(self._early, prepend=True) for m in self._modules]
        self._handles.append(self._model.register_forward_pre_hook(self._add_late))
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _early(self, module: torch.nn.Module, inputs: Any, output: Any) -> None:
        self.made[id(module)] = output

    def _late(self, module: torch.nn.Module, inputs: Any, output: Any) -> None:
        self.handed_on[id(module)] = output

    def _add_late(self, module: torch.nn.Module, inputs: Any) -> None:
        if not self._late_added:
            self._late_added = True
            self._handles += [m.register_forward_hook(self._late) for m in self._modules]

    def stop(self) -> None:
        for handle in self._handles:
            handle.remove()

    def replaced(self) -> list[str]:
        """The paths of the modules whose output a hook replaced (the root's as '')."""
        return [
            self.paths[key]
            for key, output in self.handed_on.items()
            if key in self.made and output is not self.made[key]
        ]


def outputs_replaced(watch: OutputWatch, root: str) -> Found:
    """Modules whose output a forward hook replaced while ``watch`` ran."""
    replaced = watch.replaced()
    if not replaced:
        return None, diagnose.FORWARD_HOOK_RETURNED
    label = lambda path: words("inspect.root", root=root) if path == "" else path  # noqa: E731
    where = listing([label(path) for path in replaced])
    return words("inspect.outputs_replaced", where=where), diagnose.FORWARD_HOOK_RETURNED


def path_back(result: Any, sources: dict[str, torch.Tensor]) -> str | None:
    """The sources (name -> tensor) autograd's graph leads back to from ``result``, in words,
    or None when it reaches none of them: a walk through the graph, no backward pass run."""
    tensors = result if isinstance(result, (list, tuple)) else [result]
    nodes = [t.grad_fn for t in tensors if isinstance(t, torch.Tensor) and t.grad_fn is not None]
    wanted = {id(tensor): name for name, tensor in sources.items()}
    reached = {wanted[id(t)] for t in tensors if isinstance(t, torch.Tensor) and id(t) in wanted}
    seen: set[int] = set()
    while nodes:
        node = nodes.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        variable = getattr(node, "variable", None)  # an AccumulateGrad node: a leaf's gradient
        if variable is not None and id(variable) in wanted:
            reached.add(wanted[id(variable)])
        nodes += [following for following, _ in node.next_functions]
    if not reached:
        return None
    names = [name for name in sources if name in reached]
    return words("inspect.path_back", names=listing(names))
