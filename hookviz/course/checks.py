"""The helpers behind the course's check cells: ✓ or ✗ with a hint, "not done yet" for a missing answer.

A check cell reads like this::

    check = checks.Check("print_module")
    printed = check.printed(lambda: model.apply(print_module))
    check.equal(printed, expected, "print_module prints every module in post-order",
                hint="print(module), then print('-' * 30)")
    checks.sentinel("check_print_module")

Three rules keep the grade honest:
- Comparisons are type-strict (``type(a) is type(b)``, ``torch.equal``), so an object with a
  home-made ``__eq__`` cannot pass.
- A ✓ line never shows a value that could differ between two correct answers, and whatever
  your code prints while it is checked is captured: every correct answer gives the same output.
- ``sentinel`` prints the cell's last line. When anything in the cell raises, it never prints.
"""

from __future__ import annotations

import contextlib
import io
import math
import re
import sys
import traceback
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

PASSED, FAILED, NOT_DONE = "✓", "✗", "○"
TODO_ADVICE = (
    "Write your answer where it says YOUR CODE HERE, run that cell, then run this check again."
)
RERUN_ADVICE = "Fix your answer, run its cell, then run this check again."

_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")
_LIBRARY_DIRS = tuple(
    str(Path(p).resolve())
    for p in (
        Path(torch.__file__).parent,
        Path(__file__).parent.parent,
        Path(contextlib.__file__).parent,
    )
)


class _Stopped:
    """What a check returns instead of a value once it has stopped (the reason is already printed)."""

    def __repr__(self) -> str:
        return "STOPPED"


STOPPED = _Stopped()


@dataclass
class Captured:
    """What a call returned, printed and warned."""

    result: Any
    stdout: str
    warnings: list[str] = field(default_factory=list)


def capture(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Captured:
    """Call ``fn(*args, **kwargs)`` with its prints and warnings captured (errors pass through)."""
    out = io.StringIO()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
            result = fn(*args, **kwargs)
    return Captured(result, out.getvalue(), [f"{w.category.__name__}: {w.message}" for w in caught])


def sentinel(grade_id: str) -> None:
    """Print the check cell's last line, ``[hookviz] <grade_id>: finished``."""
    if type(grade_id) is not str or not grade_id:
        raise TypeError(f"sentinel needs the check cell's grade_id as a string, got {grade_id!r}.")
    print(f"[hookviz] {grade_id}: finished")


def try_it(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Run your answer in the open (its prints show); returns None after saying why when it cannot."""
    try:
        return fn(*args, **kwargs)
    except Exception as error:
        root = _root_cause(error)
        if type(root) is NotImplementedError and _is_stub(root):
            print(f"{NOT_DONE} {_where(root, 'your answer')}: not done yet. {TODO_ADVICE}")
        else:
            print(_clean(f"{FAILED} {_where(root, 'your answer')} raised {_raised_text(error)}"))
        return None


class Check:
    """The checks of one answer cell: one line per check; stops at the first missing answer or error."""

    def __init__(self, *answers: str):
        if not answers or not all(type(a) is str for a in answers):
            raise TypeError(
                "Check needs the names of the functions it checks, e.g. Check('print_module')."
            )
        self.answer = answers[0]
        self.stopped = False
        self.passed = 0
        self.failed = 0
        names = sys._getframe(1).f_globals  # the notebook's variables
        for name in answers:
            if name not in names:
                self._stop(
                    f"{NOT_DONE} {name} is not defined yet: run the cell where you write it, then run this check again."
                )
                return
            if not callable(names[name]):
                self.failed += 1
                self._stop(
                    f"{FAILED} {name} should be a function, but it is {_kind(names[name])}.\n"
                    f"    Hint: define it with `def {name}(...):` and run that cell again."
                )
                return

    @property
    def ok(self) -> bool:
        """True until the check stops (a missing answer or an error); later checks need its values."""
        return not self.stopped

    # -- running the answer ------------------------------------------------------------------

    def capture(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Captured | _Stopped:
        """Run the answer quietly; STOPPED (after a ○ or ✗ line) when it is missing or raises."""
        if self.stopped:
            return STOPPED
        try:
            return capture(fn, *args, **kwargs)
        except Exception as error:
            root = _root_cause(error)
            if type(root) is NotImplementedError and _is_stub(root):
                self._stop(f"{NOT_DONE} {_where(root, self.answer)}: not done yet. {TODO_ADVICE}")
                return STOPPED
            self.failed += 1
            self._stop(
                f"{FAILED} {_where(root, self.answer)} raised {_raised_text(error)}\n    Hint: {RERUN_ADVICE}"
            )
            return STOPPED

    def run(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """The answer's result (its prints are captured), or STOPPED."""
        captured = self.capture(fn, *args, **kwargs)
        return STOPPED if captured is STOPPED else captured.result

    def printed(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> str | _Stopped:
        """What the answer printed, or STOPPED."""
        captured = self.capture(fn, *args, **kwargs)
        return STOPPED if captured is STOPPED else captured.stdout

    def raises(
        self, error_type: type[BaseException], fn: Callable[..., Any], claim: str, hint: str
    ) -> bool:
        """✓ when ``fn()`` raises ``error_type`` (or a subclass), as the claim says it should."""
        if self.stopped:
            return False
        try:
            capture(fn)
        except Exception as error:
            root = _root_cause(error)
            if (
                type(root) is NotImplementedError
                and _is_stub(root)
                and error_type is not NotImplementedError
            ):
                self._stop(f"{NOT_DONE} {_where(root, self.answer)}: not done yet. {TODO_ADVICE}")
                return False
            return self._report(
                None if isinstance(error, error_type) else f"it raised {_raised_text(error)}",
                claim,
                hint,
            )
        return self._report(f"it did not raise (expected {error_type.__name__})", claim, hint)

    # -- expectations ----------------------------------------------------------------------

    def equal(
        self, actual: Any, expected: Any, claim: str, hint: str, *, why: str | None = None
    ) -> bool:
        """✓ when ``actual`` equals ``expected`` exactly: same types, tensors by ``torch.equal``.

        ``why`` is printed under the ✓ only: an explanation that would give the answer away.
        """
        if self.stopped or actual is STOPPED:
            return False
        return self._report(difference(actual, expected), claim, hint, why)

    def close(
        self,
        actual: Any,
        expected: Any,
        claim: str,
        hint: str,
        *,
        rtol: float = 1e-5,
        atol: float = 1e-7,
    ) -> bool:
        """✓ when ``actual`` matches ``expected`` up to float rounding (types still exact)."""
        if self.stopped or actual is STOPPED:
            return False
        return self._report(difference(actual, expected, rtol=rtol, atol=atol), claim, hint)

    def is_type(self, value: Any, expected_type: type, claim: str, hint: str) -> bool:
        """✓ when ``type(value) is expected_type`` (a subclass does not count); a ✗ stops the check."""
        if self.stopped or value is STOPPED:
            return False
        if type(value) is expected_type:
            return self._report(None, claim, hint)
        self._report(
            f"it is {_kind(value)}, expected {_article(expected_type.__name__)}", claim, hint
        )
        self.stopped = True  # the checks after this one need a value of the right type
        return False

    def true(self, condition: bool, claim: str, hint: str, problem: str | None = None) -> bool:
        """✓ when ``condition`` (computed by the check cell) is exactly True."""
        if self.stopped:
            return False
        if type(condition) is not bool:
            raise TypeError(
                f"Check.true needs a bool computed by the check cell, got {_kind(condition)}."
            )
        return self._report(None if condition else (problem or ""), claim, hint)

    # -- printing --------------------------------------------------------------------------

    def _report(self, problem: str | None, claim: str, hint: str, why: str | None = None) -> bool:
        if problem is None:
            self.passed += 1
            print(f"{PASSED} {claim}" + (f"\n    Why: {why}" if why else ""))
            return True
        self.failed += 1
        detail = f"\n    {_clean(problem)}" if problem else ""
        print(f"{FAILED} {claim}{detail}\n    Hint: {hint}")
        return False

    def _stop(self, line: str) -> None:
        self.stopped = True
        print(_clean(line))


# -- comparing ------------------------------------------------------------------------------


def difference(
    actual: Any, expected: Any, *, rtol: float | None = None, atol: float = 0.0, where: str = ""
) -> str | None:
    """Describe the first way ``actual`` differs from ``expected`` (None when they are equal)."""
    label = where or "the result"
    if type(actual) is not type(expected):
        return f"{label} is {_kind(actual)}, expected {_kind(expected)}"
    if isinstance(expected, torch.Tensor):
        return _tensor_difference(actual, expected, label, rtol, atol)
    if isinstance(expected, (list, tuple)):
        if len(actual) != len(expected):
            if _plain(actual) and _plain(expected) and len(repr(actual) + repr(expected)) < 120:
                return f"{label} is {actual!r}, expected {expected!r}"
            return f"{label} has {len(actual)} items, expected {len(expected)}"
        for i, (a, e) in enumerate(zip(actual, expected, strict=True)):
            found = difference(a, e, rtol=rtol, atol=atol, where=f"{where or 'item'}[{i}]")
            if found:
                return found
        return None
    if isinstance(expected, dict):
        missing = [k for k in expected if not _has_key(actual, k)]
        extra = [k for k in actual if not _has_key(expected, k)]
        if missing or extra:
            parts = [
                f"missing keys {_brief(missing)}" if missing else "",
                f"unexpected keys {_brief(extra)}" if extra else "",
            ]
            return f"{label} has " + " and ".join(p for p in parts if p)
        for key in expected:
            found = difference(
                actual[key],
                expected[key],
                rtol=rtol,
                atol=atol,
                where=f"{where or 'value'}[{key!r}]",
            )
            if found:
                return found
        return None
    if isinstance(expected, (set, frozenset)):
        if not all(type(a) in {type(e) for e in expected} for a in actual) or actual != expected:
            return f"{label} is {_brief(sorted(map(repr, actual)))}, expected {_brief(sorted(map(repr, expected)))}"
        return None
    if isinstance(expected, float):
        same = actual == expected or (
            rtol is not None and math.isclose(actual, expected, rel_tol=rtol, abs_tol=atol)
        )
        return None if same else f"{label} is {actual!r}, expected {expected!r}"
    if isinstance(expected, str):
        return None if actual == expected else _text_difference(actual, expected, label)
    if expected is None or isinstance(expected, (bool, int, bytes)):
        return None if actual == expected else f"{label} is {actual!r}, expected {expected!r}"
    raise TypeError(
        f"difference() compares tensors, numbers, strings, None and containers of them, not {type(expected).__name__}."
    )


def _tensor_difference(
    actual: torch.Tensor, expected: torch.Tensor, label: str, rtol: float | None, atol: float
) -> str | None:
    if actual.shape != expected.shape:
        return f"{label} has shape {tuple(actual.shape)}, expected {tuple(expected.shape)}"
    if actual.dtype != expected.dtype:
        return f"{label} has dtype {actual.dtype}, expected {expected.dtype}"
    if actual.device != expected.device:
        return f"{label} is on {actual.device}, expected {expected.device}"
    a, e = actual.detach(), expected.detach()
    same = torch.equal(a, e) if rtol is None else bool(torch.allclose(a, e, rtol=rtol, atol=atol))
    return None if same else f"{label} is {_values(a)}, expected {_values(e)}"


def _text_difference(actual: str, expected: str, label: str) -> str:
    got, want = actual.splitlines(), expected.splitlines()
    if len(got) <= 1 and len(want) <= 1:
        return f"{label} is {_clip(actual)!r}, expected {_clip(expected)!r}"
    for number, (g, w) in enumerate(zip(got, want, strict=False), start=1):
        if g != w:
            return f"line {number} of {label} is {_clip(g)!r}, expected {_clip(w)!r}"
    if len(got) != len(want):
        return f"{label} has {len(got)} lines, expected {len(want)}"
    return f"{label} differs from the expected text in its whitespace"


def _plain(value: Any) -> bool:
    """True for None, numbers, strings and lists or tuples of them: safe to show with repr."""
    if type(value) in (list, tuple):
        return all(_plain(item) for item in value)
    return value is None or type(value) in (bool, int, float, str)


def _has_key(mapping: dict, key: Any) -> bool:
    return any(type(k) is type(key) and k == key for k in mapping)


# -- describing values without addresses -----------------------------------------------------


def _kind(value: Any) -> str:
    if value is None:
        return "None"
    if isinstance(value, torch.Tensor):
        return f"{_article(type(value).__name__)} of shape {tuple(value.shape)}"
    if isinstance(value, (list, tuple, dict, set, frozenset)):
        return f"{_article(type(value).__name__)} of {len(value)} items"
    return _article(type(value).__name__)


def _article(name: str) -> str:
    return f"{'an' if name[:1].lower() in 'aeiou' else 'a'} {name}"


def _values(t: torch.Tensor) -> str:
    if t.numel() <= 16:
        return str(_rounded(t.tolist() if t.dim() else t.item()))
    flat = t.double().reshape(-1)
    return f"a tensor with mean {flat.mean().item():.4g} and max {flat.max().item():.4g}"


def _rounded(value: Any) -> Any:
    if isinstance(value, list):
        return [_rounded(v) for v in value]
    return float(f"{value:.4g}") if isinstance(value, float) else value


def _brief(items: list) -> str:
    text = ", ".join(map(str, items[:6])) + (", ..." if len(items) > 6 else "")
    return f"[{text}]"


def _clip(text: str, limit: int = 200) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _clean(text: str) -> str:
    return _ADDRESS.sub("", text)


# -- finding the student's code in a traceback -----------------------------------------------


def _student_frames(error: BaseException) -> list[traceback.FrameSummary]:
    frames = traceback.extract_tb(error.__traceback__)
    return [f for f in frames if not str(Path(f.filename).resolve()).startswith(_LIBRARY_DIRS)]


def _is_stub(error: NotImplementedError) -> bool:
    """True for the stub's own ``raise NotImplementedError()``, not one raised inside torch."""
    frames = traceback.extract_tb(error.__traceback__)
    return bool(frames) and frames[-1] in _student_frames(error)


def _where(error: BaseException, fallback: str) -> str:
    for frame in reversed(_student_frames(error)):
        if frame.name not in ("<module>", "<lambda>"):
            return frame.name
    return fallback


def _root_cause(error: BaseException) -> BaseException:
    """The original error behind wrappers such as ``hookviz.ApplyFnError`` (``raise ... from``)."""
    seen = {id(error)}
    while error.__cause__ is not None and id(error.__cause__) not in seen:
        error = error.__cause__
        seen.add(id(error))
    return error


def _raised_text(error: BaseException) -> str:
    message = str(error).strip().splitlines()
    return f"{type(error).__name__}: {_clip(message[0]) if message else '(no message)'}"
