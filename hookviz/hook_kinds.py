"""The kinds of hook torch has, and the markers of what torch itself does: the one table.

Every view of a hook kind derives from ``KINDS``: where torch keeps those hooks
(``inventory``), the phases ``record()`` hooks (``store.PHASES``), which firings belong to the
backward pass and what a returned value replaces (``timeline``), the words and the marks of
the timeline (``widgets.hook_timeline`` sends them to the browser in the widget's state, and
``plots`` draws with the same style). Torch only: no widget or plotting import.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

# HookKind.target: what the hook is registered on; TORCH is a marker of what torch is doing
MODULE, TENSOR, GLOBAL, TORCH = "module", "tensor", "global", "torch"
# HookKind.shape: how the timeline draws a firing (a forward hook, a backward hook, a marker)
CIRCLE, SQUARE, DIAMOND = "circle", "square", "diamond"


@dataclass(frozen=True)
class HookKind:
    """One kind of hook (or of torch's own marker): where torch keeps it, when it fires, what
    its return value replaces, what it means to a reader, and how it is drawn."""

    name: str
    target: str  # MODULE, TENSOR, GLOBAL or TORCH
    # torch's dict of these hooks (handle id -> hook): on the module, on the tensor, or in
    # torch.nn.modules.module for GLOBAL; None for a marker
    attribute: str | None
    fires: str  # the pass or call it fires in: "forward", "backward", "state_dict", ...
    replaces: str | None  # what a value the hook returns replaces (None: nothing)
    meaning: str  # for people: the timeline's words
    colour: str  # a colour of the course palette (the widgets' CSS variable --hv-<colour>)
    shape: str  # CIRCLE, SQUARE or DIAMOND
    # flag name -> torch's attribute holding the ids of the hooks registered with that flag
    flags: Mapping[str, str] = field(default_factory=dict)

    @property
    def backward(self) -> bool:
        """True if it fires during the backward pass."""
        return self.fires == "backward"


def _kinds(*kinds: HookKind) -> Mapping[str, HookKind]:
    return MappingProxyType({kind.name: kind for kind in kinds})


_WITH_KWARGS = "with_kwargs"
_ALWAYS_CALL = "always_call"

# fmt: off
KINDS: Mapping[str, HookKind] = _kinds(
    # -- on a module (record()'s four phases come first, in the order they fire) --
    HookKind(
        "forward_pre", MODULE, "_forward_pre_hooks", "forward", "input",
        "forward pre-hook: runs BEFORE forward()", "sky", CIRCLE,
        {_WITH_KWARGS: "_forward_pre_hooks_with_kwargs"},
    ),
    HookKind(
        "forward", MODULE, "_forward_hooks", "forward", "output",
        "forward hook: runs AFTER forward() returned", "blue", CIRCLE,
        {_WITH_KWARGS: "_forward_hooks_with_kwargs", _ALWAYS_CALL: "_forward_hooks_always_called"},
    ),
    HookKind(
        "backward_pre", MODULE, "_backward_pre_hooks", "backward", "grad_output",
        "backward pre-hook: the gradient w.r.t. the output is ready", "orange", SQUARE,
    ),
    HookKind(
        "backward", MODULE, "_backward_hooks", "backward", "grad_input",
        "backward hook: the gradient w.r.t. the input is ready (during backward)", "vermillion",
        SQUARE,
    ),
    HookKind(
        "state_dict_pre", MODULE, "_state_dict_pre_hooks", "state_dict", None,
        "state_dict pre-hook: runs before state_dict() collects", "fg-muted", CIRCLE,
    ),
    HookKind(
        "state_dict", MODULE, "_state_dict_hooks", "state_dict", "state_dict",
        "state_dict hook: runs after state_dict() collected", "fg-muted", CIRCLE,
    ),
    HookKind(
        "load_state_dict_pre", MODULE, "_load_state_dict_pre_hooks", "load_state_dict", None,
        "load_state_dict pre-hook: runs before a module loads its part", "fg-muted", CIRCLE,
    ),
    HookKind(
        "load_state_dict_post", MODULE, "_load_state_dict_post_hooks", "load_state_dict", None,
        "load_state_dict post-hook: runs after load_state_dict()", "fg-muted", CIRCLE,
    ),
    # -- on a tensor (a parameter, for the inventory) --
    HookKind(
        "tensor", TENSOR, "_backward_hooks", "backward", "gradient",
        "tensor hook: this parameter's gradient is ready", "purple", SQUARE,
    ),
    HookKind(
        "post_accumulate_grad", TENSOR, "_post_accumulate_grad_hooks", "backward", None,
        "post-accumulate-grad hook: .grad was just updated", "green", SQUARE,
    ),
    # -- on every module at once (torch.nn.modules.module's globals) --
    HookKind(
        "global_forward_pre", GLOBAL, "_global_forward_pre_hooks", "forward", "input",
        "global forward pre-hook: runs BEFORE every module's forward()", "sky", CIRCLE,
    ),
    HookKind(
        "global_forward", GLOBAL, "_global_forward_hooks", "forward", "output",
        "global forward hook: runs AFTER every module's forward() returned", "blue", CIRCLE,
        {
            _WITH_KWARGS: "_global_forward_hooks_with_kwargs",
            _ALWAYS_CALL: "_global_forward_hooks_always_called",
        },
    ),
    HookKind(
        "global_backward_pre", GLOBAL, "_global_backward_pre_hooks", "backward", "grad_output",
        "global backward pre-hook: a module's gradient w.r.t. its output is ready", "orange",
        SQUARE,
    ),
    HookKind(
        "global_backward", GLOBAL, "_global_backward_hooks", "backward", "grad_input",
        "global backward hook: a module's gradient w.r.t. its input is ready", "vermillion",
        SQUARE,
    ),
    # -- torch's own markers, which the timeline shows between the hooks --
    HookKind(
        "forward_call", TORCH, None, "forward", None, "forward() starts", "fg-muted", DIAMOND
    ),
    HookKind(
        "forward_return", TORCH, None, "forward", None, "forward() returns", "fg-muted", DIAMOND
    ),
    HookKind(
        "grad_output_ready", TORCH, None, "backward", None,
        "gradient w.r.t. the output is ready (backward pre-hooks fire here)", "fg-muted", DIAMOND,
    ),
    HookKind(
        "grad_input_ready", TORCH, None, "backward", None,
        "gradient w.r.t. the input is ready (backward hooks fire here)", "fg-muted", DIAMOND,
    ),
)
# fmt: on


def of(*targets: str) -> tuple[HookKind, ...]:
    """The kinds registered on ``targets`` (MODULE, TENSOR, GLOBAL, TORCH), in table order."""
    return tuple(kind for kind in KINDS.values() if kind.target in targets)


# The kinds a user (or hookviz) can register, as the inventory lists them.
HOOKS = tuple(kind.name for kind in of(MODULE, TENSOR, GLOBAL))
# record()'s phases: the module hooks of the forward and backward passes, in firing order.
PHASES = tuple(kind.name for kind in of(MODULE) if kind.fires in ("forward", "backward"))
# What a timeline shows: the hooks of one pass on a model's modules and parameters (a global
# hook shows as the module kind it acts as), and torch's markers.
TIMELINE = tuple(
    kind.name for kind in of(MODULE, TENSOR, TORCH) if kind.fires in ("forward", "backward")
)
BACKWARD = frozenset(kind.name for kind in KINDS.values() if kind.backward)
# How torch registers each kind a timeline shows (a tooltip beside the course's words).
REGISTERED_BY = MappingProxyType(
    {
        "forward_pre": "Module.register_forward_pre_hook",
        "forward": "Module.register_forward_hook",
        "backward_pre": "Module.register_full_backward_pre_hook",
        "backward": "Module.register_full_backward_hook",
        "tensor": "Tensor.register_hook",
        "post_accumulate_grad": "Tensor.register_post_accumulate_grad_hook",
    }
)


def label(name: str, meaning: str | None = None) -> str:
    """A kind in the course's words: its meaning's first part ("forward pre-hook"); ``meaning``
    (a translation of the kind's) instead of the English one."""
    return (KINDS[name].meaning if meaning is None else meaning).split(":")[0].split(" (")[0]


def acting_as(name: str) -> str:
    """The module kind a global hook acts as ('global_forward' -> 'forward'); others unchanged."""
    return name.removeprefix("global_") if KINDS[name].target == GLOBAL else name
