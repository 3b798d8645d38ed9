"""Values named and compared in the student's terms: the first difference, never a memory address.

The check cells' ✗ lines come from here: ``difference`` says where two results first differ
("value['4'] is 10.0, expected 3.16"), ``describe`` names a value by its type and size.
"""

from __future__ import annotations

import contextlib
import functools
import math
import re
from collections import Counter
from collections.abc import Callable
from typing import Any

import torch

from .conventions import shorten
from .wording import words

_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


def listing(items: list[str]) -> str:
    """'a', 'a and b', 'a, b and c' (the root, '', as 'the root')."""
    names = [item if item else words("values.root") for item in items]
    if len(names) == 1:
        return names[0]
    return words("values.list_sep").join(names[:-1]) + words("values.and") + names[-1]


def difference(
    actual: Any, expected: Any, *, rtol: float | None = None, atol: float = 0.0, where: str = ""
) -> str | None:
    """Describe the first way ``actual`` differs from ``expected`` (None when they are equal)."""
    label = where or words("values.the_result")
    if type(actual) is not type(expected):
        return _is(label, describe(actual), describe(expected))
    if isinstance(expected, torch.Tensor):
        return _tensor_difference(actual, expected, label, rtol, atol)
    if isinstance(expected, (list, tuple)):
        if len(actual) != len(expected):
            if _plain(actual) and _plain(expected) and len(repr(actual) + repr(expected)) < 120:
                return _is(label, repr(actual), repr(expected))
            return words(
                "values.has_items", label=label, actual=len(actual), expected=len(expected)
            )
        for i, (a, e) in enumerate(zip(actual, expected, strict=True)):
            found = difference(
                a, e, rtol=rtol, atol=atol, where=f"{where or words('values.item')}[{i}]"
            )
            if found:
                return found
        return None
    if isinstance(expected, dict):
        missing = [k for k in expected if not _has_key(actual, k)]
        extra = [k for k in actual if not _has_key(expected, k)]
        if missing or extra:
            parts = [
                words("values.missing_keys", keys=_brief(list(map(_key_text, missing))))
                if missing
                else "",
                words("values.unexpected_keys", keys=_brief(list(map(_key_text, extra))))
                if extra
                else "",
            ]
            found = words("values.and").join(p for p in parts if p)
            return words("values.has_keys", label=label, parts=found)
        for key in expected:
            found = difference(
                actual[key],
                expected[key],
                rtol=rtol,
                atol=atol,
                where=f"{where or words('values.value')}[{key!r}]",
            )
            if found:
                return found
        return None
    if isinstance(expected, (set, frozenset)):
        if not all(type(a) in {type(e) for e in expected} for a in actual) or actual != expected:
            return _is(
                label, _brief(sorted(map(repr, actual))), _brief(sorted(map(repr, expected)))
            )
        return None
    if isinstance(expected, float):
        same = actual == expected or (
            rtol is not None and math.isclose(actual, expected, rel_tol=rtol, abs_tol=atol)
        )
        return None if same else _is(label, repr(actual), repr(expected))
    if isinstance(expected, str):
        return None if actual == expected else _text_difference(actual, expected, label)
    if expected is None or isinstance(expected, (bool, int, bytes)):
        return None if actual == expected else _is(label, repr(actual), repr(expected))
    raise TypeError(
        f"difference() compares tensors, numbers, strings, None and containers of them, not {type(expected).__name__}."
    )


def _tensor_difference(
    actual: torch.Tensor, expected: torch.Tensor, label: str, rtol: float | None, atol: float
) -> str | None:
    if actual.shape != expected.shape:
        shapes = {"actual": tuple(actual.shape), "expected": tuple(expected.shape)}
        return words("values.has_shape", label=label, **shapes)
    if actual.dtype != expected.dtype:
        return words("values.has_dtype", label=label, actual=actual.dtype, expected=expected.dtype)
    if actual.device != expected.device:
        return words("values.is_on", label=label, actual=actual.device, expected=expected.device)
    a, e = actual.detach(), expected.detach()
    same = torch.equal(a, e) if rtol is None else bool(torch.allclose(a, e, rtol=rtol, atol=atol))
    return None if same else _is(label, _values(a), _values(e))


def _text_difference(actual: str, expected: str, label: str) -> str:
    got, want = actual.splitlines(), expected.splitlines()
    if len(got) <= 1 and len(want) <= 1:
        return _is(label, repr(clip(actual)), repr(clip(expected)))
    for number, (g, w) in enumerate(zip(got, want, strict=False), start=1):
        if g != w:
            pair = {"actual": repr(clip(g)), "expected": repr(clip(w))}
            return words("values.line_is", number=number, label=label, **pair)
    if len(got) != len(want):
        return words("values.has_lines", label=label, actual=len(got), expected=len(want))
    return words("values.whitespace", label=label)


def _is(label: str, actual: str, expected: str) -> str:
    """'the result is 3, expected 4': the values already as the student reads them."""
    return words("values.is_expected", label=label, actual=actual, expected=expected)


def _plain(value: Any) -> bool:
    """True for None, numbers, strings and lists or tuples of them: safe to show with repr."""
    if type(value) in (list, tuple):
        return all(_plain(item) for item in value)
    return value is None or type(value) in (bool, int, float, str)


def _has_key(mapping: dict, key: Any) -> bool:
    return any(type(k) is type(key) and k == key for k in mapping)


def multiset_difference(actual: list, expected: list) -> str | None:
    """'missing Model; unexpected Linear, Linear' for two lists of names (None when they match)."""
    have, want = Counter(map(_key_text, actual)), Counter(map(_key_text, expected))
    missing, extra = sorted((want - have).elements()), sorted((have - want).elements())
    parts = [
        words("values.missing", names=_brief(missing)[1:-1]) if missing else "",
        words("values.unexpected", names=_brief(extra)[1:-1]) if extra else "",
    ]
    return "; ".join(p for p in parts if p) or None


def same_values(value: Any, make: Callable[[], Any]) -> bool:
    """True when ``make()`` runs and gives a tensor of ``value``'s shape and values (up to rounding).

    Check cells use it to tell mistakes apart: did the answer compute this other formula?
    """
    try:
        other = make()
        return (
            isinstance(value, torch.Tensor)
            and isinstance(other, torch.Tensor)
            and value.shape == other.shape
            and bool(
                torch.allclose(
                    value.detach().double(), other.detach().double(), rtol=1e-4, atol=1e-6
                )
            )
        )
    except Exception:
        return False


def lists_held_by(fn: Any) -> list[list]:
    """The lists a callable reaches directly: its closure, defaults, globals it names, its object's attributes.

    A check cell uses it to see what an answer's hook keeps while it runs (a log of tensors
    converted to floats only at the end, say), without calling the answer.
    """
    found: list[list] = []

    def add(value: Any) -> None:
        if type(value) is list and all(value is not seen for seen in found):
            found.append(value)

    try:
        while isinstance(fn, functools.partial):
            for value in (*fn.args, *fn.keywords.values()):
                add(value)
            fn = fn.func
        owner = getattr(fn, "__self__", None)
        if owner is None and not hasattr(fn, "__code__"):
            owner = fn  # an object with a __call__ method: its attributes
        if owner is not None and isinstance(getattr(owner, "__dict__", None), dict):
            for value in list(vars(owner).values()):
                add(value)
        function = getattr(fn, "__func__", fn)
        for cell in getattr(function, "__closure__", None) or ():
            with contextlib.suppress(ValueError):  # an empty cell
                add(cell.cell_contents)
        for value in getattr(function, "__defaults__", None) or ():
            add(value)
        code, names = getattr(function, "__code__", None), getattr(function, "__globals__", None)
        if code is not None and isinstance(names, dict):
            for name in code.co_names:
                add(names.get(name))
    except Exception:  # an odd callable: report what was found so far
        pass
    return found


# -- describing values without addresses -----------------------------------------------------


def describe(value: Any) -> str:
    """'a list of 3 items', 'a Tensor of shape (2,)': a value named without its memory address."""
    if value is None:
        return "None"
    if isinstance(value, torch.Tensor):
        return words(
            "values.of_shape", kind=article(type(value).__name__), shape=tuple(value.shape)
        )
    if isinstance(value, (list, tuple, dict, set, frozenset)):
        return words("values.of_items", kind=article(type(value).__name__), count=len(value))
    return article(type(value).__name__)


def article(name: str) -> str:
    """'a Tensor', 'an int': a type's name as a sentence uses it."""
    return words("values.an_name" if name[:1].lower() in "aeiou" else "values.a_name", name=name)


def _values(t: torch.Tensor) -> str:
    if t.numel() <= 16:
        return str(_rounded(t.tolist() if t.dim() else t.item()))
    flat = t.double().reshape(-1)
    mean, top = f"{flat.mean().item():.4g}", f"{flat.max().item():.4g}"
    return words("values.tensor_stats", mean=mean, max=top)


def _rounded(value: Any) -> Any:
    if isinstance(value, list):
        return [_rounded(v) for v in value]
    return float(f"{value:.4g}") if isinstance(value, float) else value


def _key_text(key: Any) -> str:
    """A dict key as code shows it; the empty path is the root module's."""
    return words("values.root_key") if key == "" else repr(key)


def _brief(items: list) -> str:
    text = ", ".join(map(str, items[:6])) + (", ..." if len(items) > 6 else "")
    return f"[{text}]"


def clip(text: str, limit: int = 200) -> str:
    """``text``, or its start cut between two words, then "...": at most ``limit`` characters."""
    return shorten(text, limit, "...")


def without_addresses(text: str) -> str:
    """The text with every `` at 0x...`` removed, so outputs stay the same from run to run."""
    return _ADDRESS.sub("", text)
