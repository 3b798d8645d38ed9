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
from dataclasses import dataclass, replace

from .wording import has, words


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


_WORDED: dict[str, str] = {}  # a diagnosis hint's key -> its name in the wording tables


def worded(name: str, key: str, code: str = "") -> Hint:
    """A diagnosed mistake's hint, its words from the wording table (English; see ``in_language``)."""
    _WORDED[key] = name
    more = f"hint.{name}.more"
    return Hint(
        words(f"hint.{name}.nudge", "en"),
        words(more, "en") if has(more, "en") else "",
        code,
        key=key,
    )


def in_language(hint: Hint, lang: str | None = None) -> Hint:
    """``hint`` in ``lang`` (default: the course's) when it is one of the diagnoses' own hints."""
    name = _WORDED.get(hint.key)
    if name is None or hint.nudge != words(f"hint.{name}.nudge", "en"):
        return hint  # a course's own hint (hints files translate themselves)
    more = f"hint.{name}.more"
    return replace(
        hint,
        nudge=words(f"hint.{name}.nudge", lang),
        more=words(more, lang) if hint.more and has(more, lang) else hint.more,
    )


# -- errors an answer raises ------------------------------------------------------------------

LEAF_IN_PLACE = worded(
    "leaf_in_place",
    key="diagnosis: in-place change of a parameter under autograd",
    code="with torch.no_grad():\n    for param in module.parameters(recurse=False):\n        param.fill_(1.0)",
)

GRAD_INPUT_IS_NONE = worded(
    "grad_input_is_none",
    key="diagnosis: grad_input holds None",
    code="def keep(module, grad_input, grad_output, path=path):\n    norms[path] = grad_output[0].norm().item()",
)

GRAD_IS_NONE = worded(
    "grad_is_none",
    key="diagnosis: .grad is None",
)

HOOK_SIGNATURE = worded(
    "hook_signature",
    key="diagnosis: hook signature",
)

NOT_A_FUNCTION = worded(
    "not_a_function",
    key="diagnosis: registered a call's result",
    code="module.register_forward_hook(hook)   # no parentheses after hook",
)

WEIGHT_LAYOUT = worded(
    "weight_layout",
    key="diagnosis: W's layout",
    code="return inputs[0] @ module.W.T + module.b",
)

FULL_HOOK_IN_PLACE = worded(
    "full_hook_in_place",
    key="diagnosis: full backward hook and an in-place op",
)

TUPLE_INPUTS = worded(
    "tuple_inputs",
    key="diagnosis: inputs is a tuple",
    code="x = inputs[0]",
)

COPY_SHAPE = worded(
    "copy_shape",
    key="diagnosis: copy_ from a tensor of another shape",
    code="param.fill_(1.0)   # or param.copy_(torch.ones_like(param))",
)

NO_GRAD_TENSOR = worded(
    "no_grad_tensor",
    key="diagnosis: tensor hook on a tensor without grad",
)


INTEGER_PARAMETER = worded(
    "integer_parameter",
    key="diagnosis: an integer Parameter",
)

DTYPE_MISMATCH = worded(
    "dtype_mismatch",
    key="diagnosis: two dtypes",
)


LATE_BINDING = worded(
    "late_binding",
    key="diagnosis: a loop variable read late",
    code="def hook(module, inputs, output, path=path):   # path frozen here\n    ...",
)


PLAIN_TENSOR_AS_PARAMETER = worded(
    "plain_tensor_as_parameter",
    key="diagnosis: a plain tensor where a Parameter is",
)

FORWARD_HOOK_RETURNED = worded(
    "forward_hook_returned",
    key="diagnosis: a forward hook returned a value",
)

BACKWARD_HOOK_RETURNED = worded(
    "backward_hook_returned",
    key="diagnosis: a backward hook returned a value",
)

NEEDS_A_MATRIX = worded(
    "needs_a_matrix",
    key="diagnosis: a 1-D tensor where a matrix is needed",
)

HOOK_TUPLE_INDEX = worded(
    "hook_tuple_index",
    key="diagnosis: an index past the end of a hook's tuple",
)

CONTEXT_MANAGER_SIGNATURE = worded(
    "context_manager_signature",
    key="diagnosis: __enter__ or __exit__ signature",
)

METHOD_SIGNATURE = worded(
    "method_signature",
    key="diagnosis: a method's arguments",
)

MODULE_LACKS_ATTRIBUTE = worded(
    "module_lacks_attribute",
    key="diagnosis: an attribute only some modules have",
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
            words(
                f"diagnosis.with_{_one_or_many(given)}",
                owner=owner,
                method=method,
                given=given,
                takes=takes,
            ),
            CONTEXT_MANAGER_SIGNATURE,
        )
    return Diagnosis(
        words(
            f"diagnosis.method_{_one_or_many(given)}",
            owner=owner,
            method=method,
            given=given,
            takes=takes,
        ),
        METHOD_SIGNATURE,
    )


def _one_or_many(count: int) -> str:
    """The wording key's ending for ``count`` things: 'one' or 'many'."""
    return "one" if count == 1 else "many"


def _tuple_index(error: BaseException) -> Diagnosis:
    name, index = _hook_tuple_index(error)
    count = int(index) + 1
    return Diagnosis(
        words(f"diagnosis.tuple_index_{_one_or_many(count)}", tuple=name, index=index, count=count),
        HOOK_TUPLE_INDEX,
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
            words("diagnosis.called_at_registration", hook=_hook_called_at_registration(e)),
            NOT_A_FUNCTION,
        ),
    ),
    (
        lambda e: type(e) is TypeError and "(torch.nn.Parameter or None expected)" in str(e),
        lambda e: Diagnosis(
            words("diagnosis.plain_tensor", name=_first_group(_PARAMETER_NAME, e)),
            PLAIN_TENSOR_AS_PARAMETER,
        ),
    ),
    (
        _tensor_model_got_non_tensor,
        lambda e: Diagnosis(
            words("diagnosis.hook_returned", kind=_first_group(_RECEIVED, e)),
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
            words("diagnosis.backward_returned"),
            BACKWARD_HOOK_RETURNED,
        ),
    ),
    (
        lambda e: type(e) is RuntimeError and "must be a matrix" in str(e),
        lambda e: Diagnosis(words("diagnosis.needs_matrix"), NEEDS_A_MATRIX),
    ),
    (
        lambda e: _hook_tuple_index(e) is not None,
        _tuple_index,
    ),
    (
        lambda e: _module_attribute(e) is not None,
        lambda e: Diagnosis(
            words(
                "diagnosis.no_attribute",
                module=_module_attribute(e)[0],
                attribute=repr(_module_attribute(e)[1]),
            ),
            MODULE_LACKS_ATTRIBUTE,
        ),
    ),
    (
        _late_bound_key,
        lambda e: Diagnosis(
            words("diagnosis.late_binding", key=repr(e.args[0])),
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
            words("diagnosis.leaf_in_place"),
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
            words("diagnosis.grad_input_none"),
            GRAD_INPUT_IS_NONE,
        ),
    ),
    (
        lambda e: (
            type(e) in (AttributeError, TypeError)
            and "'NoneType'" in str(e)
            and _line_mentions(e, ".grad")
        ),
        lambda e: Diagnosis(words("diagnosis.grad_none"), GRAD_IS_NONE),
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
            words("diagnosis.hook_signature"),
            HOOK_SIGNATURE,
        ),
    ),
    (lambda e: _method_signature(e) is not None, _method_diagnosis),
    (
        lambda e: type(e) is TypeError and "'NoneType' object is not callable" in str(e),
        lambda e: Diagnosis(
            words("diagnosis.hook_is_none"),
            NOT_A_FUNCTION,
        ),
    ),
    (
        lambda e: (
            type(e) is RuntimeError
            and "Only Tensors of floating point and complex dtype can require gradients" in str(e)
        ),
        lambda e: Diagnosis(words("diagnosis.integer_parameter"), INTEGER_PARAMETER),
    ),
    (
        lambda e: (
            type(e) is RuntimeError
            and ("to have the same dtype" in str(e) or "expected scalar type" in str(e))
        ),
        lambda e: Diagnosis(words("diagnosis.two_dtypes"), DTYPE_MISMATCH),
    ),
    (
        lambda e: type(e) is RuntimeError and "shapes cannot be multiplied" in str(e),
        lambda e: Diagnosis(words("diagnosis.shapes"), WEIGHT_LAYOUT),
    ),
    (
        lambda e: (
            type(e) is RuntimeError and "BackwardHookFunction" in str(e) and "inplace" in str(e)
        ),
        lambda e: Diagnosis(
            words("diagnosis.full_hook_in_place"),
            FULL_HOOK_IN_PLACE,
        ),
    ),
    (
        lambda e: type(e) is TypeError and "unsupported operand" in str(e) and "'tuple'" in str(e),
        lambda e: Diagnosis(words("diagnosis.tuple_inputs"), TUPLE_INPUTS),
    ),
    (
        lambda e: (
            type(e) is RuntimeError
            and "must match the size of tensor" in str(e)
            and _line_mentions(e, "copy_")
        ),
        lambda e: Diagnosis(words("diagnosis.copy_shape"), COPY_SHAPE),
    ),
    (
        lambda e: (
            type(e) is RuntimeError
            and "cannot register a hook on a tensor that doesn't require gradient" in str(e)
        ),
        lambda e: Diagnosis(words("diagnosis.no_grad_tensor"), NO_GRAD_TENSOR),
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

HOOKS_LEFT = worded(
    "hooks_left",
    key="diagnosis: hooks left behind",
    code="handles = []\ntry:\n    handles.append(module.register_forward_hook(keep))\n    model(x)\n"
    "finally:\n    for handle in handles:\n        handle.remove()",
)

RECURSIVE_PARAMETERS = worded(
    "recursive_parameters",
    key="diagnosis: recursive parameters()",
    code="for param in module.parameters(recurse=False):\n    ...",
)

THROUGH_DATA = worded(
    "through_data",
    key="diagnosis: writes through .data",
    code="with torch.no_grad():\n    param.fill_(1.0)",
)

NEW_PARAMETER_OBJECTS = worded(
    "new_parameter_objects",
    key="diagnosis: parameters replaced",
)

GRADIENT_CHANGED_IN_PLACE = worded(
    "gradient_changed_in_place",
    key="diagnosis: tensor hook modified its argument",
    code="def clip(grad):\n    norm = grad.norm()\n    if norm > max_norm:\n        return grad * (max_norm / norm)\n    return grad",
)


GLOBAL_HOOKS_LEFT = worded(
    "global_hooks_left",
    key="diagnosis: global hooks left behind",
)

FROZEN_PARAMETERS = worded(
    "frozen_parameters",
    key="diagnosis: parameters frozen",
)

UNREGISTERED_PARAMETER = worded(
    "unregistered_parameter",
    key="diagnosis: parameter not registered",
)

GRADIENT_CHANGED_THROUGH_DATA = worded(
    "gradient_changed_through_data",
    key="diagnosis: tensor hook modified its argument through .data",
    code="def clip(grad):\n    norm = grad.norm()\n    if norm > max_norm:\n        return grad * (max_norm / norm)\n    return grad",
)


def _module_label(path: str, root_name: str) -> str:
    return words("inspect.root", root=root_name) if path == "" else path


def kind_words(kind: str) -> str:
    """A hook kind in words: 'forward pre' ('순전파 사전' in Korean)."""
    return words(f"kind_words.{kind}") if has(f"kind_words.{kind}") else kind.replace("_", " ")


def describe_hooks_left(infos, root_name: str) -> str:
    """'2 hooks are left: a forward hook on 1, a backward hook on the root (Net)'."""
    parts = []
    for info in infos:
        if info.target == "global":
            kind = kind_words(info.kind.removeprefix("global_"))
            parts.append(words("inspect.global_hook", kind=kind, name=info.name))
            continue
        where = info.where
        if info.target == "module":
            where = _module_label(info.path, root_name)
        kind = words(f"kind.{info.kind}") if has(f"kind.{info.kind}") else info.kind
        parts.append(words("inspect.hook_on", kind=kind, name=info.name, where=where))
    shown = words("values.list_sep").join(parts[:4]) + (
        words("inspect.and_more", count=len(parts) - 4) if len(parts) > 4 else ""
    )
    return words(f"inspect.hooks_left_{_one_or_many(len(infos))}", count=len(infos), shown=shown)


PARAMETERS_MISSED = worded(
    "parameters_missed",
    key="diagnosis: parameters never written",
)

WRONG_HOOK_KIND = worded(
    "wrong_hook_kind",
    key="diagnosis: wrong hook kind",
)
