"""list_hooks() / find_duplicate_hooks() / remove_hooks(): what is registered, and where.

Torch keeps hooks in plain dicts keyed by the handle id: ``module._forward_hooks`` and
friends, ``tensor._backward_hooks`` and ``tensor._post_accumulate_grad_hooks``, and module-level
globals in ``torch.nn.modules.module``. This module reads those dicts; it never keeps a hook.

Some hooks belong to a library, and a model needs them: ``torch.nn.utils.prune`` applies its
masks from a forward pre-hook, FSDP gathers parameters from its own, transformers and
accelerate keep theirs, and a running ``hookviz.record`` its. ``HookInfo.library`` names the
package whose code the hook runs (installed packages and the standard library; hookviz's own
tools), and ``remove_hooks`` leaves those unless asked, and says what it left.
"""

from __future__ import annotations

import functools
import re
import site
import sys
import sysconfig
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import torch.nn.modules.module as torch_module
from torch import nn

from .hook_kinds import GLOBAL, HOOKS, MODULE, TENSOR, HookKind, of
from .hook_kinds import KINDS as HOOK_KINDS
from .tree import check_model, display_name

# The kinds list_hooks() reports and remove_hooks() takes: hook_kinds.HOOKS, where torch keeps
# each kind (its dict, its flag dicts) is in hook_kinds.KINDS.
KINDS = HOOKS

_CELL_FILE = re.compile(r"(ipykernel_\d+|<ipython-input-[^>]*>)")


@dataclass(frozen=True)
class HookInfo:
    """One registered hook."""

    path: str  # module path ("" for the root); for a parameter hook, the module owning it
    kind: str  # one of hookviz.inventory.KINDS
    target: str  # "module", "parameter" or "global"
    name: str  # qualified name of the callable
    source: str  # "file:line", or "<cell>:line" for notebook cells, or "" when unknown
    handle_id: int
    flags: tuple[str, ...] = ()
    parameter: str | None = None  # the parameter's name on its module, for tensor hooks
    library: str | None = None  # the package whose code the hook runs, if not the user's
    hook: Callable = field(default=None, repr=False, compare=False)
    owner: Any = field(default=None, repr=False, compare=False)  # the module/tensor holding it
    module: nn.Module | None = field(default=None, repr=False, compare=False)  # the module at path

    @property
    def where(self) -> str:
        """Human-readable location: module path (the root by its class name), plus parameter."""
        if self.target == "global":
            return GLOBAL_LABEL
        return where_label(self.path, self.module, self.parameter)

    def __str__(self) -> str:
        flags = f" [{', '.join(self.flags)}]" if self.flags else ""
        owner = f" (from {self.library})" if self.library else ""
        return f"{self.where}: {self.kind} hook {self.name}{owner} (id {self.handle_id}){flags}"


GLOBAL_LABEL = "(global)"


def where_label(path: str, module: nn.Module | None, parameter: str | None = None) -> str:
    """The one rule for naming a hook's place: the module's path (the root by its class name),
    then ``.parameter`` for a parameter hook; the timeline and the widgets use it too."""
    base = display_name(path, module) if module is not None else path
    return f"{base}.{parameter}" if parameter else base


@dataclass(frozen=True)
class DuplicateHook:
    """The same callable (or a re-definition of it) registered more than once on one module."""

    path: str  # the module's path, plus ".parameter" for a parameter hook ("" is the root)
    kind: str
    name: str
    handle_ids: tuple[int, ...]
    same_object: bool  # False when the copies are re-definitions, e.g. from re-running a cell
    where: str = ""  # as HookInfo.where: the root by its class name

    @property
    def count(self) -> int:
        """How many times it is registered."""
        return len(self.handle_ids)

    def __str__(self) -> str:
        how = "the same function" if self.same_object else "re-definitions of one function"
        return f"{self.where or self.path}: {self.kind} hook {self.name} registered {self.count} times ({how})"


def list_hooks(model: nn.Module, *, include_globals: bool = True) -> list[HookInfo]:
    """Every hook on `model`, its submodules and their parameters, plus global module hooks.

    A parameter shared by two modules (tied weights) is listed once, under the first module
    that holds it, flagged with the other names it has.

    Parameters
    ----------
    model : nn.Module
        The model to read. Nothing on it changes.
    include_globals : bool
        Also list the global module hooks (`register_module_forward_hook` and friends),
        which fire for every module.

    Returns
    -------
    list of HookInfo
        One entry per hook, in the order torch would call them on each module.
    """
    check_model(model)
    found: list[HookInfo] = []
    names = _parameter_names(model)
    listed: set[int] = set()
    for path, module in model.named_modules():
        for kind in of(MODULE):
            hooks = getattr(module, kind.attribute, None) or {}
            for handle_id, hook in list(hooks.items()):
                flags = _flags(module, kind.flags, handle_id)
                if kind.name == "backward":
                    flags += ("full",) if module._is_full_backward_hook else ("legacy",)
                found.append(
                    _info(path, kind.name, "module", handle_id, hook, flags, None, module, module)
                )
        for name, param in module.named_parameters(recurse=False):
            if id(param) in listed:
                continue
            listed.add(id(param))
            tied = tuple(f"tied to {other}" for other in names[id(param)][1:])
            for kind in of(TENSOR):
                hooks = getattr(param, kind.attribute, None) or {}
                for handle_id, hook in list(hooks.items()):
                    found.append(
                        _info(
                            path, kind.name, "parameter", handle_id, hook, tied, name, param, module
                        )
                    )
    if include_globals:
        for kind in of(GLOBAL):
            hooks = getattr(torch_module, kind.attribute, None) or {}
            for handle_id, hook in list(hooks.items()):
                flags = _flags(torch_module, kind.flags, handle_id)
                if kind.name == "global_backward":
                    full = getattr(torch_module, "_global_is_full_backward_hook", None)
                    flags += ("full",) if full else ("legacy",)
                found.append(
                    _info("", kind.name, "global", handle_id, hook, flags, None, None, None)
                )
    return found


def _parameter_names(model: nn.Module) -> dict[int, list[str]]:
    """Every name each parameter has in ``model`` (more than one: tied weights)."""
    names: dict[int, list[str]] = {}
    for name, param in model.named_parameters(remove_duplicate=False):
        names.setdefault(id(param), []).append(name)
    return names


def hook_table(model: nn.Module) -> str:
    """`list_hooks` as a text table, deterministic (no addresses, no temporary paths).

    Parameters
    ----------
    model : nn.Module
        The model to read.

    Returns
    -------
    str
        One line per hook: where it is, its kind, its name and where it was defined.
    """
    rows = [f"{'where':<22} {'kind':<20} {'hook':<28} {'id':>5}  flags"]
    for info in list_hooks(model):
        rows.append(
            f"{info.where:<22} {info.kind:<20} {info.name:<28} {info.handle_id:>5}  {', '.join(info.flags)}"
        )
    return "\n".join(r.rstrip() for r in rows)


def find_duplicate_hooks(model: nn.Module) -> list[DuplicateHook]:
    """Hooks registered more than once on one module (or parameter) for one kind.

    A copy is the same callable object, or a re-definition of it: the same code at the same
    place (a cell run again) holding the same state (closure cells, defaults, bound arguments).
    Two hooks made by one factory with different captured values, or two lambdas with one body
    written on two lines, are different hooks, and are never offered for removal.

    Parameters
    ----------
    model : nn.Module
        The model to read.

    Returns
    -------
    list of DuplicateHook
        One entry per duplicated hook, with the handle ids of every registration.
    """
    groups: dict[tuple, list[HookInfo]] = {}
    for info in list_hooks(model, include_globals=False):
        groups.setdefault((info.path, info.parameter, info.kind, _identity(info.hook)), []).append(
            info
        )
    duplicates = []
    for (path, parameter, kind, _), infos in groups.items():
        if len(infos) < 2:
            continue
        first = infos[0].hook
        duplicates.append(
            DuplicateHook(
                path=f"{path}.{parameter}" if parameter else path,
                kind=kind,
                name=infos[0].name,
                handle_ids=tuple(i.handle_id for i in infos),
                same_object=all(i.hook is first or i.hook == first for i in infos),
                where=infos[0].where,
            )
        )
    return duplicates


class Removed(int):
    """How many hooks `remove_hooks` removed (an int), with a count per kind in `by_kind`,
    and the hooks it left because a library owns them in `left`."""

    by_kind: dict[str, int]
    left: tuple[HookInfo, ...]

    def __new__(cls, by_kind: dict[str, int], left: Iterable[HookInfo] = ()):
        obj = super().__new__(cls, sum(by_kind.values()))
        obj.by_kind = dict(by_kind)
        obj.left = tuple(left)
        return obj

    def __repr__(self) -> str:
        parts = ", ".join(f"{k}={n}" for k, n in self.by_kind.items())
        left = f", left={len(self.left)}" if self.left else ""
        return f"Removed({int(self)}{': ' + parts if parts else ''}{left})"

    def __str__(self) -> str:
        if not self:
            text = "removed 0 hooks"
        else:
            parts = ", ".join(f"{n} {k}" for k, n in self.by_kind.items())
            text = f"removed {int(self)} hook{'s' if self != 1 else ''} ({parts})"
        if self.left:
            owners: dict[str, int] = {}
            for info in self.left:
                owners[info.library] = owners.get(info.library, 0) + 1
            kept = ", ".join(f"{n} from {library}" for library, n in owners.items())
            text += (
                f"; left {len(self.left)} that libraries own ({kept}): the model needs them "
                "(include_libraries=True removes them too)"
            )
        return text


def remove_hooks(
    model: nn.Module,
    kinds: Iterable[str] | str | None = None,
    *,
    include_globals: bool = False,
    include_libraries: bool = False,
) -> Removed:
    """Remove hooks of the given kinds (all module and parameter kinds by default); say how many.

    Hooks a library owns (`HookInfo.library`: pruning's masks, FSDP's, transformers', a
    running `hookviz.record`) stay, and the result says which, unless `include_libraries`:
    removing pruning's pre-hook would leave the masks in place but no longer applied.

    Parameters
    ----------
    model : nn.Module
        The model to clean, its submodules and their parameters included.
    kinds : str or iterable of str or None
        The hook kinds to remove, as `list_hooks` names them (`"forward"`, `"forward_pre"`,
        ...); None removes every module and parameter kind.
    include_globals : bool
        Also remove global module hooks, which affect every model in the process.
    include_libraries : bool
        Also remove hooks that a library owns.

    Returns
    -------
    Removed
        How many were removed (an int), with a count per kind and the hooks left in place.
    """
    check_model(model)
    if isinstance(kinds, str):
        kinds = [kinds]
    chosen = set(KINDS if kinds is None else kinds)
    unknown = chosen - set(KINDS)
    if unknown:
        raise ValueError(
            f"unknown hook kind(s) {', '.join(sorted(map(repr, unknown)))}; valid kinds are {', '.join(KINDS)}."
        )
    globals_ = {kind.name for kind in of(GLOBAL)}
    if not include_globals and kinds is None:
        chosen -= globals_
    counts: dict[str, int] = {}
    left = []
    for info in list_hooks(model, include_globals=bool(chosen & globals_)):
        if info.kind not in chosen:
            continue
        if info.library and not include_libraries:
            left.append(info)
            continue
        _remove(info)
        counts[info.kind] = counts.get(info.kind, 0) + 1
    return Removed(counts, left)


def remove_hook(model: nn.Module, handle_id: int) -> HookInfo:
    """Remove the one hook with this handle id, as `list_hooks` reports it.

    Parameters
    ----------
    model : nn.Module
        The model that holds the hook.
    handle_id : int
        The hook's `HookInfo.handle_id`.

    Returns
    -------
    HookInfo
        What the removed hook was.

    Raises
    ------
    ValueError
        When no hook on `model` has that handle id.
    """
    check_model(model)
    found = [info for info in list_hooks(model) if info.handle_id == handle_id]
    if not found:
        raise ValueError(
            f"no hook with handle id {handle_id!r} on this model; "
            "`hookviz.list_hooks(model)` shows the hooks there are and their ids."
        )
    _remove(found[0])
    return found[0]


# -- helpers -------------------------------------------------------------------------------


def _remove(info: HookInfo) -> None:
    """Take one hook out of the dict that holds it (and out of its flag dicts)."""
    kind = HOOK_KINDS[info.kind]
    _drop(torch_module if kind.target == GLOBAL else info.owner, kind, info.handle_id)
    if info.kind == "backward" and not info.owner._backward_hooks:
        info.owner._is_full_backward_hook = None


def _drop(owner: Any, kind: HookKind, handle_id: int) -> None:
    getattr(owner, kind.attribute).pop(handle_id, None)
    for flag_attr in kind.flags.values():
        getattr(owner, flag_attr, {}).pop(handle_id, None)


def _flags(owner: Any, flag_attrs: Mapping[str, str], handle_id: int) -> tuple[str, ...]:
    return tuple(
        flag for flag, attr in flag_attrs.items() if handle_id in (getattr(owner, attr, None) or {})
    )


def _info(path, kind, target, handle_id, hook, flags, parameter, owner, module) -> HookInfo:
    return HookInfo(
        path=path,
        kind=kind,
        target=target,
        name=callable_name(hook),
        source=callable_source(hook),
        handle_id=handle_id,
        flags=tuple(flags),
        parameter=parameter,
        library=library_of(hook),
        hook=hook,
        owner=owner,
        module=module,
    )


def library_of(hook: Any) -> str | None:
    """The package a hook's code belongs to, if it is not the user's: an installed package or the
    standard library (``torch`` for pruning's and FSDP's, ``transformers``...), or ``hookviz`` for
    its own tools. None for code in a notebook, a script, or the user's own source tree."""
    target = _unwrap(hook)
    module_name = getattr(target, "__module__", None)
    if not isinstance(module_name, str) or not hasattr(target, "__code__"):
        module_name = type(target).__module__  # a callable object: its class's home
    if module_name in (None, "__main__", "builtins") or module_name.startswith("<"):
        return None
    top = module_name.split(".")[0]
    if top == "hookviz":
        return top
    module = sys.modules.get(module_name)
    filename = getattr(module, "__file__", None)
    if not filename:
        return None
    return top if filename.startswith(_installed_roots()) else None


@functools.cache
def _installed_roots() -> tuple[str, ...]:
    """Where installed packages and the standard library live."""
    roots = {sysconfig.get_paths()[key] for key in ("stdlib", "platstdlib", "purelib", "platlib")}
    roots.update(site.getsitepackages() if hasattr(site, "getsitepackages") else ())
    roots.add(site.getusersitepackages())
    return tuple(sorted(r.rstrip("/") + "/" for r in roots if r))


def _unwrap(hook: Any) -> Any:
    while isinstance(hook, functools.partial):
        hook = hook.func
    return getattr(hook, "__func__", hook)


def callable_name(hook: Any) -> str:
    """A readable qualified name: ``print_output``, ``Tracker.hook``, ``partial(scale)``."""
    if isinstance(hook, functools.partial):
        return f"partial({callable_name(hook.func)})"
    name = getattr(hook, "__qualname__", None) or getattr(hook, "__name__", None)
    if name is None:
        name = type(hook).__qualname__  # a callable object
    return name.rsplit(".<locals>.", 1)[-1]  # a nested function is named as it was written


def callable_source(hook: Any) -> str:
    """Where the hook was defined: ``file:line``, or ``<cell>:line`` for a notebook cell."""
    target = _unwrap(hook)
    code = getattr(target, "__code__", None)
    if code is None:
        call = getattr(type(target), "__call__", None)  # noqa: B004 (a callable object: its __call__)
        code = getattr(call, "__code__", None)
    if code is None:
        return ""
    filename = code.co_filename
    if _CELL_FILE.search(filename):
        filename = "<cell>"
    return f"{filename}:{code.co_firstlineno}"


def _identity(hook: Any) -> tuple:
    """What makes two hooks copies: one object, or one definition site holding the same state."""
    target = _unwrap(hook)
    owner = getattr(hook, "__self__", None)
    code = getattr(target, "__code__", None)
    bound = _state(getattr(hook, "args", ())) + _state(getattr(hook, "keywords", {}))  # partials
    owner_id = id(owner) if owner is not None else None
    if code is None:  # a callable object: only itself
        return ("object", id(hook))
    # The raw file name: IPython names a cell's file by its source, so a cell run again compiles
    # to the same file and line, while two lambdas on two lines differ.
    site = (code.co_filename, code.co_firstlineno, code.co_name, code.co_code)
    closure = tuple(
        _state(_cell_value(cell)) for cell in (getattr(target, "__closure__", None) or ())
    )
    defaults = _state(getattr(target, "__defaults__", None)) + _state(
        getattr(target, "__kwdefaults__", None)
    )
    return (site, closure, defaults, bound, owner_id)


def _cell_value(cell: Any) -> Any:
    try:
        return cell.cell_contents
    except ValueError:  # an empty cell
        return None


_PLAIN = (type(None), bool, int, float, complex, str, bytes)


def _state(value: Any) -> str:
    """A value for comparing hooks: plain immutable values (and tuples of them) by value, else by type.

    Numbers, strings and flags a hook captured configure it: different ones make different
    hooks. A cell run again makes new objects of the same kinds (a new list to fill, a new
    tensor), whose contents change as the hooks run: by type, that is the same state.
    """
    if isinstance(value, _PLAIN):
        return repr(value)
    if isinstance(value, (tuple, frozenset)):
        return f"{type(value).__name__}({', '.join(_state(v) for v in value)})"
    if isinstance(value, dict) and type(value) is dict and not value:
        return "{}"
    if callable(value) and hasattr(value, "__code__"):
        return f"function {getattr(value, '__qualname__', '')}"
    return type(value).__qualname__
