"""A check grades its own cell: an earlier answer that failed its own check is replaced, while a
later check runs, by the correct version the later check cell carries.

linear_transformation runs the student's add_bias, weight_initialization and hook, and
capture_gradients calls their gradient_hook. When one of those has a ✗ in its own cell, the
later check would fail as well, for a mistake its cell already cost, and its hints would send
the student to the wrong function. So each check remembers how it ended for the very object it
checked (``Verdict``), and a check cell that builds on earlier answers runs its checks in a
``with check.upstream(hook=correct_hook, ...)`` block: each of those answers whose own check
did not pass, for the object the notebook holds now, is bound to its correct version for as
long as the block runs, and a note (``NOTE_MARK``) says so; the grader does not compare notes.
An answer whose check has not run on it (redefined since, or never checked) stays the student's.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .answers import is_defined
from .conventions import NOTE_MARK
from .wording import words

# How a check of an answer ended: the keys of the wording that says why it was replaced.
PASSED, FAILED, HIDDEN, NOT_DONE = "passed", "failed", "hidden", "not_done"
_ABSENT = object()


@dataclass(frozen=True)
class Verdict:
    """How the last run of an answer's check ended, and the object it checked."""

    checked: Any
    ended: str


def replaced_because(name: str, names: dict[str, Any], verdicts: dict[str, Verdict]) -> str | None:
    """Why the notebook's ``name`` gives way to its correct version (how its check ended), or
    None when it stays: its check passed, or has not run on the object the notebook holds."""
    if not is_defined(name, names):
        return NOT_DONE
    verdict = verdicts.get(name)
    if verdict is None or verdict.checked is not names[name] or verdict.ended == PASSED:
        return None
    return verdict.ended


class Upstream:
    """For a with block: the earlier answers that failed their checks, replaced by correct ones.

    ``names`` is the notebook's namespace, ``correct`` maps an answer's name to its correct
    version, ``say`` prints a note line. Everything is bound back when the block ends, also
    when it raises (a hidden test that failed).
    """

    def __init__(
        self,
        names: dict[str, Any],
        correct: dict[str, Callable[..., Any]],
        verdicts: dict[str, Verdict],
        say: Callable[[str], None],
    ):
        for name, function in correct.items():
            if not callable(function):
                raise TypeError(f"upstream needs a correct function for {name}, got {function!r}.")
        self.names, self.correct, self.verdicts, self.say = names, correct, verdicts, say
        self.saved: dict[str, Any] = {}

    def __enter__(self) -> Upstream:
        for name, function in self.correct.items():
            because = replaced_because(name, self.names, self.verdicts)
            if because is None:
                continue
            self.saved[name] = self.names.get(name, _ABSENT)
            self.names[name] = function
            self.say(f"{NOTE_MARK} " + words(f"upstream.{because}", name=name))
        return self

    def __exit__(self, *exc: object) -> None:
        for name, value in self.saved.items():
            if value is _ABSENT:
                self.names.pop(name, None)
            else:
                self.names[name] = value
        self.saved = {}

    @property
    def replaced(self) -> list[str]:
        """The answers the block runs with correct versions of (while it runs)."""
        return list(self.saved)
