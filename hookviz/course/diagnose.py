"""The likeliest mistakes, named in plain words: what went wrong, where to look, how to fix it.

A check helper calls these when an answer raises (``explain_error``) or when it inspects what
an answer left behind (hooks, parameter writes, gradients). Each diagnosis carries a
``Hint`` in levels: a nudge that names the concept and the torch doc to read (never code),
an optional second nudge, and the code-level hint that the student sees only from the third
failed run of the same check, or on request with ``checks.hint(name)``.

This module knows torch; it never imports widgets, and it prints nothing itself.
"""

from __future__ import annotations

import re
import traceback
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Hint:
    """Help in three levels: ``nudge`` first, ``more`` on the second failure, ``code`` from the third.

    ``why`` is the other side: the explanation printed under a ✓, which would give the answer
    away before it (an entry of a hints file may hold only a why).
    """

    nudge: str
    more: str = ""
    code: str = ""
    key: str = ""  # names the check in the failure count and in checks.hint()
    why: str = ""

    def __post_init__(self):
        if type(self.nudge) is not str or not (self.nudge.strip() or self.why.strip()):
            raise TypeError("a Hint needs a nudge: one or two sentences that say what to look at.")


@dataclass(frozen=True)
class Diagnosis:
    """A recognised mistake: what the student's code did, and the hint that fixes it."""

    problem: str
    hint: Hint


# -- errors an answer raises ------------------------------------------------------------------

LEAF_IN_PLACE = Hint(
    key="diagnosis: in-place change of a parameter under autograd",
    nudge="Autograd tracks every parameter, and refuses an in-place change to one while it is "
    "recording. Switch recording off around the change: read about torch.no_grad() in the torch "
    "docs (or use an nn.init function, which does it for you).",
    more="Put the loop that changes the parameters inside a `with torch.no_grad():` block; "
    "do not reach for .data, which hides the change from autograd instead.",
    code="with torch.no_grad():\n    for param in module.parameters(recurse=False):\n        param.fill_(1.0)",
)

GRAD_INPUT_IS_NONE = Hint(
    key="diagnosis: grad_input holds None",
    nudge="grad_input holds the gradients with respect to the module's inputs, and an input that "
    "needs no gradient gets None: the first layer's input x does not require grad. The gradient "
    "with respect to the layer's output is the other argument, grad_output. See "
    "Module.register_full_backward_hook in the torch docs.",
    more="Use grad_output[0], which is never None for a layer whose output reaches the loss.",
    code="def keep(module, grad_input, grad_output, path=path):\n    norms[path] = grad_output[0].norm().item()",
)

GRAD_IS_NONE = Hint(
    key="diagnosis: .grad is None",
    nudge="A tensor's .grad stays None until backward has reached it, and for a tensor that is not "
    "a leaf (an activation) unless retain_grad() was called on it before backward. Read the "
    "gradient where it arrives instead (in a hook, from its gradient argument), or call "
    "retain_grad() on that tensor during the forward pass.",
)

HOOK_SIGNATURE = Hint(
    key="diagnosis: hook signature",
    nudge="PyTorch calls each kind of hook with its own arguments: a forward pre-hook as "
    "hook(module, inputs), a forward hook as hook(module, inputs, output), a full backward hook as "
    "hook(module, grad_input, grad_output), a tensor hook as hook(grad). Check that the function "
    "you registered takes the arguments of the kind you registered it as.",
)

NOT_A_FUNCTION = Hint(
    key="diagnosis: registered a call's result",
    nudge="register_*_hook needs the function itself. Writing hook(...) inside the call runs the "
    "function once and registers what it returned (often None).",
    code="module.register_forward_hook(hook)   # no parentheses after hook",
)

WEIGHT_LAYOUT = Hint(
    key="diagnosis: W's layout",
    nudge="W is stored like nn.Linear's weight, (out_features, in_features), so a batch x of shape "
    "(n, in_features) is multiplied by W transposed. See torch.nn.Linear in the torch docs.",
    code="return inputs[0] @ module.W.T + module.b",
)

FULL_HOOK_IN_PLACE = Hint(
    key="diagnosis: full backward hook and an in-place op",
    nudge="A full backward hook wraps the module's output, and a later in-place op (such as "
    "ReLU(inplace=True)) may not modify that wrapped output. A tensor hook on the output "
    "(registered from a forward hook) sees the same gradient and survives in-place ops.",
)

TUPLE_INPUTS = Hint(
    key="diagnosis: inputs is a tuple",
    nudge="inputs is the tuple of positional arguments the module was called with, even when there "
    "is only one: the input tensor is its first item.",
    code="x = inputs[0]",
)

COPY_SHAPE = Hint(
    key="diagnosis: copy_ from a tensor of another shape",
    nudge="copy_ needs a source that broadcasts to the parameter's shape. A tensor of a fixed shape "
    "fits one model only: build the source from the parameter itself, or use fill_, which needs "
    "no shape at all.",
    code="param.fill_(1.0)   # or param.copy_(torch.ones_like(param))",
)

NO_GRAD_TENSOR = Hint(
    key="diagnosis: tensor hook on a tensor without grad",
    nudge="A tensor hook fires when autograd computes that tensor's gradient, so it can only be "
    "registered on a tensor that requires grad.",
)


INTEGER_PARAMETER = Hint(
    key="diagnosis: an integer Parameter",
    nudge="A Parameter must hold floating-point values to require grad, and this one got integers: "
    "torch.arange of ints, torch.tensor of Python ints or a LongTensor is int64. Make the tensor "
    "floating point (torch.rand and torch.zeros are; or pass dtype=, e.g. the dtype of the module's "
    "other parameters) before you wrap it in nn.Parameter.",
)

DTYPE_MISMATCH = Hint(
    key="diagnosis: two dtypes",
    nudge="Two tensors of different dtypes met in a matrix product: usually a float64 tensor (made "
    "by numpy, or by torch.tensor from a numpy array or with dtype=torch.float64) next to the "
    "model's float32 ones. Make every parameter with torch's default dtype, or give it the dtype of "
    "the tensors it works with (tensor.to(other.dtype)).",
)


LATE_BINDING = Hint(
    key="diagnosis: a loop variable read late",
    nudge="A function defined in a loop reads the loop's variables when it runs, not when it was "
    "defined: by then the loop has ended, and every such function sees the last value. Freeze the "
    "value when you define the function (a default argument does that).",
    more="A default argument is evaluated once, when the def statement runs.",
    code="def hook(module, inputs, output, path=path):   # path frozen here\n    ...",
)


PLAIN_TENSOR_AS_PARAMETER = Hint(
    key="diagnosis: a plain tensor where a Parameter is",
    nudge="Once a module holds an nn.Parameter under a name, nn.Module only lets a Parameter (or "
    "None) be assigned to that name: a plain tensor there would drop out of parameters() and every "
    "optimizer. To change the values, change the existing parameter in place with autograd "
    "switched off (torch.no_grad); to make a new parameter, wrap the tensor in nn.Parameter.",
)

FORWARD_HOOK_RETURNED = Hint(
    key="diagnosis: a forward hook returned a value",
    nudge="What a forward hook returns replaces the module's output, so the next layer receives "
    "it. A hook that only records what it sees must return nothing (None): a hook that returns the "
    "list or dict it fills hands that container on instead of the tensor. See "
    "Module.register_forward_hook in the torch docs.",
    more="End the hook after it stores the output, with no return statement, or return None.",
)

BACKWARD_HOOK_RETURNED = Hint(
    key="diagnosis: a backward hook returned a value",
    nudge="What a backward hook returns replaces a gradient: a full backward hook's return value "
    "replaces grad_input (one gradient per input of the module, each of the input's shape), a "
    "tensor hook's replaces the gradient it received. A hook that only records must return nothing "
    "(None); one that changes the gradient must return a tensor of the same shape.",
)

NEEDS_A_MATRIX = Hint(
    key="diagnosis: a 1-D tensor where a matrix is needed",
    nudge="torch.mm and torch.addmm take 2-D matrices only, and a single sample of shape "
    "(features,) is 1-D. The @ operator (torch.matmul) works on 1-D and 2-D inputs alike, the way "
    "nn.Linear does.",
)

HOOK_TUPLE_INDEX = Hint(
    key="diagnosis: an index past the end of a hook's tuple",
    nudge="inputs and grad_input hold one item per positional argument of the module's forward, "
    "and grad_output one per output: for an nn.Linear each holds one item, at index 0. See "
    "Module.register_full_backward_hook and register_forward_hook in the torch docs.",
)

CONTEXT_MANAGER_SIGNATURE = Hint(
    key="diagnosis: __enter__ or __exit__ signature",
    nudge="A with block calls __enter__(self) when it starts and __exit__(self, exc_type, "
    "exc_value, traceback) when it ends: three arguments after self, all None when the block "
    "ended normally. Define them to take exactly these (def __exit__(self, *exc) takes any).",
)

METHOD_SIGNATURE = Hint(
    key="diagnosis: a method's arguments",
    nudge="Python passes the object itself as a method's first argument (self), then the "
    "arguments of the call. Check that the method's def lists self first, then what its callers "
    "pass.",
)

MODULE_LACKS_ATTRIBUTE = Hint(
    key="diagnosis: an attribute only some modules have",
    nudge="apply calls your function on every module of the model, the containers included (a "
    "Layer, the Model, a Sequential), and only some modules have that attribute. Test the "
    "module's type first (isinstance, or a helper such as is_function) and leave the others alone.",
)


def _first_group(pattern: str, error: BaseException) -> str:
    """The first group of ``pattern`` that matched in the error's message ('' when none)."""
    found = re.search(pattern, str(error))
    return next((group for group in found.groups() if group), "") if found else ""


_CALLED_AT_REGISTRATION = re.compile(r"register_\w*hook\(\s*([A-Za-z_]\w*)\(")


def _hook_called_at_registration(error: BaseException) -> str | None:
    """The hook's name when a line calls it inside register_*_hook(...) and the error came from that call.

    The called function must take a hook's arguments (inputs, output, grad...): a factory
    that builds a hook, register_forward_hook(make_hook(path)), is a right answer.
    """
    summaries = traceback.extract_tb(error.__traceback__)
    tb, frames = error.__traceback__, []
    while tb is not None:
        frames.append(tb.tb_frame)
        tb = tb.tb_next
    for index, summary in enumerate(summaries[:-1]):
        found = _CALLED_AT_REGISTRATION.search(summary.line or "")
        if not found or "/torch/" in summary.filename:
            continue
        code = frames[index + 1].f_code
        arguments = set(code.co_varnames[: code.co_argcount])
        if code.co_name == found.group(1) and arguments & _HOOK_ARGUMENTS:
            return found.group(1)
    return None


_HOOK_ARGUMENTS = {"inputs", "input", "output", "grad_input", "grad_output", "grad", "args"}
_PARAMETER_NAME = r"as parameter ('\w+')"
_RECEIVED = r"must be Tensor, not (\w+)|^'(\w+)' object"
_NOT_A_TENSOR = re.compile(r"must be Tensor, not (list|tuple|dict|set|int|float|str|bool)\b")


def _tensor_model_got_non_tensor(error: BaseException) -> bool:
    """A layer inside a model got a container although the model itself was called with a tensor.

    Between the two, only a forward hook's return value (or a forward of the student's) can
    have replaced a tensor with something else.
    """
    if not (
        (type(error) is TypeError and _NOT_A_TENSOR.search(str(error)))
        or (
            type(error) is AttributeError
            and re.match(r"'(list|tuple|dict)' object has no attribute", str(error))
        )
    ):
        return False
    tb, calls = error.__traceback__, []
    while tb is not None:
        if tb.tb_frame.f_code.co_name == "_call_impl":
            calls.append(tb.tb_frame.f_locals.get("args"))
        tb = tb.tb_next
    return (
        len(calls) >= 2 and bool(calls[0]) and type(calls[0][0]).__name__ in ("Tensor", "Parameter")
    )


_HOOK_INDEX = re.compile(r"\b(grad_input|grad_output|inputs|input|args)\[(\d+)\]")


def _hook_tuple_index(error: BaseException) -> tuple[str, str] | None:
    """('grad_input', '1') when the line that raised IndexError indexes a hook's tuple."""
    if type(error) is not IndexError or "out of range" not in str(error):
        return None
    frames = [f for f in traceback.extract_tb(error.__traceback__) if "/torch/" not in f.filename]
    found = _HOOK_INDEX.search(frames[-1].line or "") if frames else None
    return (found.group(1), found.group(2)) if found else None


_TAKES_ARGUMENTS = re.compile(
    r"^(?:(\w+)\.)?(\w+)\(\) takes (\d+) positional arguments? but (\d+) (?:was|were) given"
)


def _method_signature(error: BaseException) -> tuple[str, str, int, int] | None:
    """(class, method, takes, given) for a method of the answer called with the wrong count."""
    found = _TAKES_ARGUMENTS.match(str(error)) if type(error) is TypeError else None
    if found is None or found.group(1) is None:
        return None
    return found.group(1), found.group(2), int(found.group(3)), int(found.group(4))


def _module_attribute(error: BaseException) -> tuple[str, str] | None:
    """(class, attribute) when nn.Module.__getattr__ found no such attribute on a module."""
    if type(error) is not AttributeError:
        return None
    frames = traceback.extract_tb(error.__traceback__)
    if not frames or frames[-1].name != "__getattr__" or "/torch/" not in frames[-1].filename:
        return None
    found = re.match(r"^'(\w+)' object has no attribute '(\w+)'", str(error))
    return (found.group(1), found.group(2)) if found else None


def _method_diagnosis(error: BaseException) -> Diagnosis:
    owner, method, takes, given = _method_signature(error)
    if method in ("__enter__", "__exit__"):
        return Diagnosis(
            f"the with block called {owner}.{method} with {given} argument"
            f"{'s' if given != 1 else ''} (self included), and it takes {takes}",
            CONTEXT_MANAGER_SIGNATURE,
        )
    return Diagnosis(
        f"{owner}.{method} was called with {given} argument{'s' if given != 1 else ''} "
        f"(self included), and its def takes {takes}",
        METHOD_SIGNATURE,
    )


def _late_bound_key(error: BaseException) -> bool:
    """A KeyError whose key is the value of a variable the failing function took from its loop."""
    if type(error) is not KeyError or not error.args:
        return False
    tb, frame = error.__traceback__, None
    while tb is not None:
        if "/torch/" not in tb.tb_frame.f_code.co_filename:
            frame = tb.tb_frame
        tb = tb.tb_next
    if frame is None:
        return False
    return any(frame.f_locals.get(name) == error.args[0] for name in frame.f_code.co_freevars)


def _line_mentions(error: BaseException, *words: str) -> bool:
    """True when the last frame of the traceback outside torch shows one of ``words``."""
    frames = [f for f in traceback.extract_tb(error.__traceback__) if "/torch/" not in f.filename]
    return bool(frames) and any(word in (frames[-1].line or "") for word in words)


# Each rule: does it match the error (and the line of student code that raised it)?
_ERROR_RULES: list[tuple[Callable[[BaseException], bool], Callable[[BaseException], Diagnosis]]] = [
    (
        _hook_called_at_registration,
        lambda e: Diagnosis(
            f"it called {_hook_called_at_registration(e)}(...) inside register_*_hook(...), so "
            "the hook ran once, there, with the arguments written in that call",
            NOT_A_FUNCTION,
        ),
    ),
    (
        lambda e: type(e) is TypeError and "(torch.nn.Parameter or None expected)" in str(e),
        lambda e: Diagnosis(
            "it assigned a plain tensor to "
            + _first_group(_PARAMETER_NAME, e)
            + ", which the module holds as a Parameter",
            PLAIN_TENSOR_AS_PARAMETER,
        ),
    ),
    (
        _tensor_model_got_non_tensor,
        lambda e: Diagnosis(
            "the model was called with a tensor, but a layer inside it received a "
            + _first_group(_RECEIVED, e)
            + ": a forward hook's return value replaced a module's output",
            FORWARD_HOOK_RETURNED,
        ),
    ),
    (
        lambda e: (
            type(e) in (RuntimeError, TypeError)
            and (
                "has changed the size of value" in str(e)
                or "has changed the type of value" in str(e)
                or "Backward hook returned an invalid number" in str(e)
                or "but hook returned" in str(e)
            )
        ),
        lambda e: Diagnosis(
            "a backward hook returned something that cannot replace the gradient it was given",
            BACKWARD_HOOK_RETURNED,
        ),
    ),
    (
        lambda e: type(e) is RuntimeError and "must be a matrix" in str(e),
        lambda e: Diagnosis(
            "a matrix product that needs 2-D matrices got a 1-D tensor", NEEDS_A_MATRIX
        ),
    ),
    (
        lambda e: _hook_tuple_index(e) is not None,
        lambda e: Diagnosis(
            "{0}[{1}] does not exist: this {0} holds fewer than {2} item{3}".format(
                *_hook_tuple_index(e),
                int(_hook_tuple_index(e)[1]) + 1,
                "s" if _hook_tuple_index(e)[1] != "0" else "",
            ),
            HOOK_TUPLE_INDEX,
        ),
    ),
    (
        lambda e: _module_attribute(e) is not None,
        lambda e: Diagnosis(
            "{} has no attribute {!r}".format(*_module_attribute(e))
            + ": apply calls your function on every module, not only on those that have it",
            MODULE_LACKS_ATTRIBUTE,
        ),
    ),
    (
        _late_bound_key,
        lambda e: Diagnosis(
            f"a hook looked up {e.args[0]!r}, the last value of a loop variable it read after the loop ended",
            LATE_BINDING,
        ),
    ),
    (
        lambda e: (
            type(e) is RuntimeError
            and "a leaf Variable that requires grad is being used in an in-place operation"
            in str(e)
        ),
        lambda e: Diagnosis(
            "it changed a parameter in place while autograd was recording",
            LEAF_IN_PLACE,
        ),
    ),
    (
        lambda e: (
            type(e) in (AttributeError, TypeError)
            and "'NoneType'" in str(e)
            and _line_mentions(e, "grad_input")
        ),
        lambda e: Diagnosis(
            "grad_input[0] is None in the first layer's hook: its input needs no gradient",
            GRAD_INPUT_IS_NONE,
        ),
    ),
    (
        lambda e: (
            type(e) in (AttributeError, TypeError)
            and "'NoneType'" in str(e)
            and _line_mentions(e, ".grad")
        ),
        lambda e: Diagnosis("a .grad was None when the code read it", GRAD_IS_NONE),
    ),
    (
        lambda e: (
            type(e) is TypeError
            and ("positional argument" in str(e))
            and any(
                f.name in ("_call_impl", "inner", "_wrapped_call_impl") or "hooks" in f.filename
                for f in traceback.extract_tb(e.__traceback__)
            )
        ),
        lambda e: Diagnosis(
            "PyTorch called a hook with arguments it does not take",
            HOOK_SIGNATURE,
        ),
    ),
    (lambda e: _method_signature(e) is not None, _method_diagnosis),
    (
        lambda e: type(e) is TypeError and "'NoneType' object is not callable" in str(e),
        lambda e: Diagnosis(
            "PyTorch tried to call a hook that is None",
            NOT_A_FUNCTION,
        ),
    ),
    (
        lambda e: (
            type(e) is RuntimeError
            and "Only Tensors of floating point and complex dtype can require gradients" in str(e)
        ),
        lambda e: Diagnosis(
            "an integer tensor was asked to require grad (a Parameter does)", INTEGER_PARAMETER
        ),
    ),
    (
        lambda e: (
            type(e) is RuntimeError
            and ("to have the same dtype" in str(e) or "expected scalar type" in str(e))
        ),
        lambda e: Diagnosis("a matrix product got tensors of two dtypes", DTYPE_MISMATCH),
    ),
    (
        lambda e: type(e) is RuntimeError and "shapes cannot be multiplied" in str(e),
        lambda e: Diagnosis("a matrix product had shapes that do not fit", WEIGHT_LAYOUT),
    ),
    (
        lambda e: (
            type(e) is RuntimeError and "BackwardHookFunction" in str(e) and "inplace" in str(e)
        ),
        lambda e: Diagnosis(
            "an in-place op modified the output of a module that has a full backward hook",
            FULL_HOOK_IN_PLACE,
        ),
    ),
    (
        lambda e: type(e) is TypeError and "unsupported operand" in str(e) and "'tuple'" in str(e),
        lambda e: Diagnosis("an arithmetic operation got the whole tuple of inputs", TUPLE_INPUTS),
    ),
    (
        lambda e: (
            type(e) is RuntimeError
            and "must match the size of tensor" in str(e)
            and _line_mentions(e, "copy_")
        ),
        lambda e: Diagnosis(
            "copy_ got a source whose shape does not fit the parameter", COPY_SHAPE
        ),
    ),
    (
        lambda e: (
            type(e) is RuntimeError
            and "cannot register a hook on a tensor that doesn't require gradient" in str(e)
        ),
        lambda e: Diagnosis(
            "it registered a tensor hook on a tensor that does not require grad", NO_GRAD_TENSOR
        ),
    ),
]


def explain_error(error: BaseException) -> Diagnosis | None:
    """A diagnosis for a recognised mistake behind ``error``, or None for anything else."""
    for matches, diagnose in _ERROR_RULES:
        try:
            if matches(error):
                return diagnose(error)
        except Exception:  # a rule must never turn a student's error into a crash of the check
            continue
    return None


# -- what an answer left behind -------------------------------------------------------------

HOOKS_LEFT = Hint(
    key="diagnosis: hooks left behind",
    nudge="A hook stays on its module until its handle's remove() is called, and keeps firing on "
    "every later call. Keep the handle that register_*_hook returns, and remove it when the job is "
    "done, also when the job raises (see torch.utils.hooks.RemovableHandle).",
    more="Register, then run the model inside try:, and remove every handle in finally: "
    "(or use the handle as a context manager: `with module.register_forward_hook(...):`).",
    code="handles = []\ntry:\n    handles.append(module.register_forward_hook(keep))\n    model(x)\n"
    "finally:\n    for handle in handles:\n        handle.remove()",
)

RECURSIVE_PARAMETERS = Hint(
    key="diagnosis: recursive parameters()",
    nudge="module.parameters() yields the module's own parameters and those of every submodule. "
    "apply already calls your function on every module, so each parameter is reached again at "
    "each of its ancestors. Look at the recurse argument of Module.parameters in the torch docs.",
    more="Ask each module only for the parameters it owns itself.",
    code="for param in module.parameters(recurse=False):\n    ...",
)

THROUGH_DATA = Hint(
    key="diagnosis: writes through .data",
    nudge="param.data is the parameter's storage with autograd's bookkeeping stripped off: a "
    "change made through it is invisible to autograd, so a backward pass can silently use a stale "
    "value. Change the parameter itself, with autograd switched off (torch.no_grad).",
    code="with torch.no_grad():\n    param.fill_(1.0)",
)

NEW_PARAMETER_OBJECTS = Hint(
    key="diagnosis: parameters replaced",
    nudge="Assigning a new nn.Parameter replaces the object an optimizer already holds, so the "
    "optimizer goes on training the old one. Change the values of the existing parameter in "
    "place (methods ending in _ such as fill_ or copy_).",
)

GRADIENT_CHANGED_IN_PLACE = Hint(
    key="diagnosis: tensor hook modified its argument",
    nudge="A tensor hook must not modify the gradient it receives: the same gradient tensor can "
    "also flow to other tensors (x + y hands one gradient object to both x and y), and they would "
    "be changed too. Return a new tensor instead; see Tensor.register_hook in the torch docs.",
    more="Build the result with an out-of-place operation (grad * factor, not grad.mul_(factor)) "
    "and return it: what a tensor hook returns replaces the gradient.",
    code="def clip(grad):\n    norm = grad.norm()\n    if norm > max_norm:\n        return grad * (max_norm / norm)\n    return grad",
)


GLOBAL_HOOKS_LEFT = Hint(
    key="diagnosis: global hooks left behind",
    nudge="torch.nn.modules.module.register_module_forward_hook (and its backward and pre-hook "
    "siblings) registers a global hook: it fires for every module of every model in the kernel "
    "until its handle's remove() is called. Keep that handle too, and remove it when the job is "
    "done, also when the job raises.",
    more="A global hook is no different from one on a module here: keep the handle it returns "
    "and call remove() in finally: (or in __exit__). The check removed the ones it found, so "
    "they do not fire in the rest of this notebook.",
)

FROZEN_PARAMETERS = Hint(
    key="diagnosis: parameters frozen",
    nudge="A parameter with requires_grad=False gets no gradient, so an optimizer never changes "
    "it: the model stops learning it. Switching autograd off for a change is torch.no_grad()'s "
    "job, which leaves the parameter trainable; requires_grad=False (or requires_grad_(False)) "
    "freezes it for good. See torch.no_grad and Tensor.requires_grad_ in the torch docs.",
    more="Create parameters with the default requires_grad=True, and make in-place changes "
    "inside `with torch.no_grad():` instead of turning requires_grad off.",
)

UNREGISTERED_PARAMETER = Hint(
    key="diagnosis: parameter not registered",
    nudge="A module registers a Parameter when it is assigned as an attribute (module.name = "
    "nn.Parameter(...)), through nn.Module.__setattr__. Writing into module.__dict__, or "
    "object.__setattr__, skips that step: the attribute is there, but parameters(), state_dict() "
    "and every optimizer miss it.",
)

GRADIENT_CHANGED_THROUGH_DATA = Hint(
    key="diagnosis: tensor hook modified its argument through .data",
    nudge="Changing grad.data in place changes the gradient tensor itself: .data is the same "
    "storage, with autograd's bookkeeping (and its version counter) stripped off, so the change "
    "is silent. The same gradient tensor can also flow to other tensors (x + y hands one gradient "
    "object to both x and y), and they would be changed too. Return a new tensor instead; see "
    "Tensor.register_hook in the torch docs.",
    more="Build the result with an out-of-place operation on grad itself (grad * factor, not "
    "grad.data.mul_(factor)) and return it: what a tensor hook returns replaces the gradient.",
    code="def clip(grad):\n    norm = grad.norm()\n    if norm > max_norm:\n        return grad * (max_norm / norm)\n    return grad",
)


def _module_label(path: str, root_name: str) -> str:
    return f"the root ({root_name})" if path == "" else path


def describe_hooks_left(infos, root_name: str) -> str:
    """'2 hooks are left: a forward hook on 1, a backward hook on the root (Net)'."""
    parts = []
    for info in infos:
        if info.target == "global":
            kind = info.kind.removeprefix("global_").replace("_", " ")
            parts.append(f"a global {kind} hook {info.name} (on every module)")
            continue
        where = info.where
        if info.target == "module":
            where = _module_label(info.path, root_name)
        parts.append(f"{info.kind} hook {info.name} on {where}")
    shown = ", ".join(parts[:4]) + (f", and {len(parts) - 4} more" if len(parts) > 4 else "")
    return f"{len(infos)} hook{'s are' if len(infos) != 1 else ' is'} left: {shown}"


PARAMETERS_MISSED = Hint(
    key="diagnosis: parameters never written",
    nudge="apply calls your function once on every module; each call should handle the parameters "
    "that module owns. Look at which modules own the parameters that were missed.",
)

WRONG_HOOK_KIND = Hint(
    key="diagnosis: wrong hook kind",
    nudge="A forward pre-hook runs before forward and sees only the inputs; a forward hook runs "
    "after forward, sees the output, and what it returns replaces the output. See "
    "Module.register_forward_hook and register_forward_pre_hook in the torch docs.",
)
