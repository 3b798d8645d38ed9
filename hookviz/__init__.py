"""hookviz: see PyTorch ``nn.Module`` hooks and ``Module.apply`` at work.

The core (``trace_apply``, ``record``, ``list_hooks`` ...) needs only torch. The widgets and
plots load ipywidgets, anywidget and matplotlib the first time one of them is used, so
``import hookviz`` stays cheap.
"""

from __future__ import annotations

import importlib
from importlib import metadata as _metadata
from typing import Any

from . import examples
from .inventory import (
    DuplicateHook,
    HookInfo,
    Removed,
    find_duplicate_hooks,
    hook_table,
    list_hooks,
    remove_hook,
    remove_hooks,
)
from .recording import HookEvent, Recording, TensorStats, record
from .timeline import HookTrace, trace_hooks
from .tracing import ApplyFnError, ApplyTrace, ApplyVisit, ParamChange, trace_apply
from .tree import leaves, module_tree, postorder, preorder, shared_modules

try:  # one owner for the version: pyproject.toml, read back from the installed metadata
    __version__ = _metadata.version("hookviz")
except _metadata.PackageNotFoundError:  # imported from a source tree that was never installed
    __version__ = "0+unknown"

# Loaded on first use: name -> module that defines it.
_LAZY = {
    "ApplyTraversal": "hookviz.widgets",
    "HookMonitor": "hookviz.widgets",
    "HookTimeline": "hookviz.widgets",
    "HookInventory": "hookviz.widgets",
    "Prediction": "hookviz.widgets",
    "plots": "hookviz.plots",
    "widgets": "hookviz.widgets",
    "course": "hookviz.course",
}

__all__ = [
    "ApplyFnError",
    "ApplyTrace",
    "ApplyVisit",
    "DuplicateHook",
    "HookEvent",
    "HookInfo",
    "HookTrace",
    "ParamChange",
    "Recording",
    "Removed",
    "TensorStats",
    "examples",
    "find_duplicate_hooks",
    "hook_table",
    "leaves",
    "list_hooks",
    "module_tree",
    "postorder",
    "preorder",
    "record",
    "remove_hook",
    "remove_hooks",
    "shared_modules",
    "trace_apply",
    "trace_hooks",
    *_LAZY,
]


def __getattr__(name: str) -> Any:
    target = _LAZY.get(name)
    if target is None:
        raise AttributeError(f"module 'hookviz' has no attribute {name!r}")
    module = importlib.import_module(target)
    value = module if target.endswith(name) else getattr(module, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
