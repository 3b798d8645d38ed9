"""The student's answers in the notebook: found by name, or a ○ line that says what is missing.

A check cell names the functions it checks (``checks.Check("print_module")``). This module
finds them among the notebook's names, says "not done yet" for one that is missing or still
the stub, and names a close name the student may have given it instead.
"""

from __future__ import annotations

import difflib
import inspect
import linecache
from typing import Any

from .conventions import FAIL_MARK, NOT_DONE_MARK
from .tracebacks import failing_function, is_stub
from .values import describe, listing
from .wording import words


class NotDefinedYet(NameError):
    """Raised by the placeholder a check leaves for an answer the notebook has not defined yet."""


class Placeholder:
    """Stands for an answer that is not defined yet, so the rest of its check cell runs quietly."""

    def __init__(self, name: str):
        self.name = name

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise NotDefinedYet(words("checks.not_defined", name=self.name))

    def __repr__(self) -> str:
        return f"<{self.name}: not defined yet>"


def is_defined(name: str, names: dict[str, Any]) -> bool:
    """True when the notebook binds ``name`` to something other than a check's placeholder."""
    return name in names and not isinstance(names[name], Placeholder)


def missing_answer(answers: tuple[str, ...], names: dict[str, Any]) -> tuple[str, bool] | None:
    """The line that stops a check whose answers are not all functions, and whether it is a ✗
    (a value that is no function) rather than a ○ (not defined yet); None when all are there.

    A missing answer gets a placeholder, with every other missing one: the rest of the cell
    names them (``check.run(visit_order, ...)``) and must not raise NameError.
    """
    for name in answers:
        if not is_defined(name, names):
            line = f"{NOT_DONE_MARK} " + words("checks.not_defined_check", name=name)
            for missing in answers:
                names.setdefault(missing, Placeholder(missing))
            return line + _defined_instead(name, names), False
        if not callable(names[name]):
            value = describe(names[name])
            return (
                f"{FAIL_MARK} "
                + words("checks.not_a_function", name=name, value=value)
                + f"\n    {words('label.hint')} {words('checks.define_it', name=name)}"
            ), True
    return None


def not_done_line(root: BaseException, answer: str) -> str | None:
    """The ○ line for an answer not written yet (its stub raised) or not defined yet, else None."""
    if type(root) is NotImplementedError and is_stub(root):
        return f"{NOT_DONE_MARK} " + not_done(failing_function(root, answer))
    if type(root) is NotDefinedYet:
        return f"{NOT_DONE_MARK} {root}"
    return None


def not_done(function: str) -> str:
    """'print_module: not done yet. Write your answer ...', in the course's language."""
    return words("checks.not_done", function=function, advice=words("checks.todo_advice"))


def _defined_instead(name: str, names: dict[str, Any]) -> str:
    """A line naming the functions and classes the notebook's own cells define, a close name first."""
    mine = sorted(n for n, value in names.items() if _defined_by_answer_cell(n, value))
    if not mine:
        return ""
    close = difflib.get_close_matches(name, mine, n=1, cutoff=0.6)
    if close:
        return "\n    " + words("checks.defined_close", name=name, close=close[0])
    return "\n    " + words("checks.defined_other", name=name, mine=listing(mine))


def _defined_by_answer_cell(name: str, value: Any) -> bool:
    """True for a function or class defined in a notebook cell that is not a check cell."""
    if name.startswith("_") or isinstance(value, Placeholder):
        return False
    if not (inspect.isfunction(value) or inspect.isclass(value)):
        return False
    if getattr(value, "__module__", None) != "__main__":
        return False
    codes = (
        [value.__code__]
        if inspect.isfunction(value)
        else [member.__code__ for member in vars(value).values() if inspect.isfunction(member)]
    )
    cells = {"".join(linecache.getlines(code.co_filename)) for code in codes}
    return bool(cells) and not any("checks.Check(" in cell for cell in cells)
