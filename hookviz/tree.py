"""The module tree: paths, pre-order, post-order, shared modules.

Every module is named by the dotted path ``named_modules()`` gives it; the root's path is
``""`` and is shown as its class name.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import torch
from torch import nn

ModuleSelector = None | str | Iterable[str] | type | tuple | Callable[[str, nn.Module], bool]


def check_model(model: object, *, what: str = "model") -> nn.Module:
    """Return ``model`` if it is an ``nn.Module``; otherwise raise a TypeError that says what to pass."""
    if isinstance(model, nn.Module):
        return model
    if isinstance(model, torch.Tensor):
        raise TypeError(
            f"{what} must be an nn.Module, but a tensor of shape {tuple(model.shape)} was passed. "
            "Pass the model itself (for example `model`, not `model(x)` or `x`)."
        )
    if isinstance(model, type) and issubclass(model, nn.Module):
        raise TypeError(
            f"{what} must be an nn.Module instance, but the class {model.__name__} was passed. "
            f"Create one first: `{model.__name__}()`."
        )
    raise TypeError(
        f"{what} must be an nn.Module, got {type(model).__name__}. "
        "Pass a torch.nn.Module such as `nn.Sequential(...)` or your own model."
    )


def check_compiled(model: nn.Module, tool: str) -> nn.Module:
    """Return ``model`` unless it holds a ``torch.compile`` wrapper, whose compiled graph never
    calls the hooks ``tool`` would add; then a TypeError that says what to record instead."""
    for path, module in model.named_modules():
        original = module.__dict__.get("_modules", {}).get("_orig_mod")
        if original is None or type(module).__name__ != "OptimizedModule":
            continue
        where = "the model is" if not path else f"{path!r} is"
        name = f"{path}._orig_mod" if path else "model._orig_mod"
        raise TypeError(
            f"{tool} cannot watch a torch.compile'd module: {where} an OptimizedModule, which runs "
            "its compiled graph, and module hooks added after it compiled are never called (only "
            f"the wrapper's own would fire). Watch the original module instead, and run it: "
            f"`{name}` (the module torch.compile wrapped; calling it runs eagerly). To see the "
            "compiled model's own hooks, register them before its first call."
        )
    return model


def display_name(path: str, module: nn.Module) -> str:
    """The name a person reads: the path, or the class name for the root."""
    return path if path else type(module).__name__


def preorder(model: nn.Module) -> list[str]:
    """Paths in the order `model.modules()` visits them: pre-order, each module once.

    Parameters
    ----------
    model : nn.Module
        The model to walk.

    Returns
    -------
    list of str
        Module paths as `named_modules()` names them (the root is `""`).

    Examples
    --------
    >>> import hookviz as hv
    >>> hv.preorder(hv.examples.model())
    ['', 'ab', 'ab.a', 'ab.b', 'cd', 'cd.c', 'cd.d']
    """
    check_model(model)
    return [path for path, _ in model.named_modules()]


def postorder(model: nn.Module) -> list[str]:
    """Paths in the order `model.apply` visits them: post-order, children first.

    A module shared under two parents is visited once per parent, as `apply` does.

    Parameters
    ----------
    model : nn.Module
        The model to walk.

    Returns
    -------
    list of str
        Module paths as `named_modules()` names them (the root is `""`).

    Examples
    --------
    >>> import hookviz as hv
    >>> hv.postorder(hv.examples.model())
    ['ab.a', 'ab.b', 'ab', 'cd.c', 'cd.d', 'cd', '']
    """
    check_model(model)
    order: list[str] = []

    def walk(module: nn.Module, path: str) -> None:
        for name, child in module.named_children():
            walk(child, f"{path}.{name}" if path else name)
        order.append(path)

    walk(model, "")
    return order


def canonical_paths(model: nn.Module) -> dict[int, str]:
    """Map ``id(module)`` to its first path (the one ``named_modules()`` reports)."""
    return {id(module): path for path, module in model.named_modules()}


def shared_modules(model: nn.Module) -> dict[str, list[str]]:
    """Modules reachable by more than one path, such as a layer used twice.

    Parameters
    ----------
    model : nn.Module
        The model to search.

    Returns
    -------
    dict of str to list of str
        The first path of each shared module, mapped to every path that reaches it.
    """
    paths: dict[int, list[str]] = {}
    for path, module in model.named_modules(remove_duplicate=False):
        paths.setdefault(id(module), []).append(path)
    return {found[0]: found for found in paths.values() if len(found) > 1}


def leaves(path: str, module: nn.Module) -> bool:
    """Selector for `record(modules=...)`: modules without children.

    Parameters
    ----------
    path : str
        The module's path (given by `record`).
    module : nn.Module
        The module itself.

    Returns
    -------
    bool
        True when `module` has no children.

    Examples
    --------
    >>> import hookviz as hv
    >>> model = hv.examples.model()
    >>> [p for p, m in model.named_modules() if hv.leaves(p, m)]
    ['ab.a', 'ab.b', 'cd.c', 'cd.d']
    """
    return next(iter(module.children()), None) is None


def select_modules(model: nn.Module, modules: ModuleSelector) -> list[tuple[str, nn.Module]]:
    """Resolve a selector (None, paths, a module type or a predicate) to ``(path, module)`` pairs."""
    named = list(model.named_modules())
    if modules is None:
        return named
    if isinstance(modules, type) or (
        isinstance(modules, tuple) and modules and all(isinstance(t, type) for t in modules)
    ):
        return [(p, m) for p, m in named if isinstance(m, modules)]
    if callable(modules) and not isinstance(modules, str):
        return [(p, m) for p, m in named if modules(p, m)]
    if isinstance(modules, str):
        modules = [modules]
    try:
        wanted = list(modules)
    except TypeError:
        raise TypeError(
            f"modules must be None, a list of paths, a module type or a function (path, module) -> bool; "
            f"got {type(modules).__name__}."
        ) from None
    by_path = dict(named)
    for alias, module in model.named_modules(remove_duplicate=False):
        by_path.setdefault(alias, module)
    unknown = [p for p in wanted if not isinstance(p, str) or p not in by_path]
    if unknown:
        valid = ", ".join(repr(p) for p in by_path)
        raise ValueError(
            f"unknown module path(s) {', '.join(repr(p) for p in unknown)}. "
            f"Valid paths are: {valid} ('' is the root)."
        )
    seen: set[int] = set()
    first = canonical_paths(model)
    picked = []
    for p in wanted:
        module = by_path[p]
        if id(module) not in seen:
            seen.add(id(module))
            picked.append((first[id(module)], module))
    return picked


@dataclass
class TreeNode:
    """One module in the tree, as ``apply`` walks it (a shared module appears under each parent)."""

    path: str
    name: str
    type_name: str
    depth: int
    parameters: list[tuple[str, tuple[int, ...]]]
    shared: bool
    children: list[TreeNode] = field(default_factory=list)

    def walk(self) -> Iterable[TreeNode]:
        """This node and its descendants, pre-order."""
        yield self
        for child in self.children:
            yield from child.walk()


def module_tree(model: nn.Module) -> TreeNode:
    """Build the tree `apply` walks: children in `named_children()` order.

    Parameters
    ----------
    model : nn.Module
        The root of the tree.

    Returns
    -------
    TreeNode
        The root node; each node has its path, its module and its children.
    """
    check_model(model)
    shared = {
        id(m) for paths in shared_modules(model).values() for m in [_resolve(model, paths[0])]
    }

    def build(module: nn.Module, path: str, name: str, depth: int) -> TreeNode:
        node = TreeNode(
            path=path,
            name=name,
            type_name=type(module).__name__,
            depth=depth,
            parameters=[(n, tuple(p.shape)) for n, p in module.named_parameters(recurse=False)],
            shared=id(module) in shared,
        )
        for child_name, child in module.named_children():
            child_path = f"{path}.{child_name}" if path else child_name
            node.children.append(build(child, child_path, child_name, depth + 1))
        return node

    return build(model, "", type(model).__name__, 0)


def _resolve(model: nn.Module, path: str) -> nn.Module:
    return model.get_submodule(path) if path else model
