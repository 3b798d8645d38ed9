"""Catalogues of answers for every exercise: real mistakes, correct answers in other styles, cheats.

Each assignment has a module here (``a01_apply.py`` ...) with ``ANSWERS``, a list of ``Answer``.
tests/course/test_exercises_mutants.py runs each one through the real check cell of solutions/,
hidden tests included, in a kernel as a student's notebook would:

- ``wrong``: a mistake students make. Its check cell shows a ✗ whose text contains every
  fragment of ``expect`` (the claim that failed and the words of the hint specific to that
  mistake), raises nothing, and never shows a line of the solution at the first failure.
- ``correct``: a right answer in another style. Its check cell prints exactly the instructor's
  stored output, so the grader gives full marks.
- ``cheat``: hard-coded to the instances the visible checks use. It passes every visible check
  and fails a hidden test: the hidden tests guard against that, and only that.
"""

from __future__ import annotations

from dataclasses import dataclass

KINDS = ("wrong", "correct", "cheat")
# The mistakes the course promises to catch, so a catalogue can be read by kind of mistake.
MISTAKES = (
    "the blog's version",
    "recursive parameters()",
    ".data",
    "the wrong hook kind",
    "in-place change of grad",
    "hard-coded to the visible model",
    "a hook never removed",
    "global state shared across calls or modules",
    "the root forgotten",
    "autograd left on",
    "wrong argument",
    "wrong formula",
    "wrong type",
    "wrong place",
    "wrong prediction",
    "a frozen parameter",
    "a hook it did not add removed",
    "tensors kept while it runs",
    "wrong dtype",
    "the caller's model changed",
    "a hook's return value ignored",
    "a leaf taken for a Function",
    "values kept without .detach().clone()",
    "the caller's grad mode overridden",
)


@dataclass(frozen=True)
class Answer:
    """One answer to one exercise (``exercise`` is the answer cell's grade_id)."""

    exercise: str
    kind: str
    label: str
    source: str
    expect: tuple[str, ...] = ()
    mistake: str = ""

    def __post_init__(self):
        assert self.kind in KINDS, self.kind
        assert self.kind != "wrong" or (self.expect and self.mistake in MISTAKES), self
        assert "def " in self.source, self.label

    @property
    def id(self) -> str:
        return f"{self.exercise}: {self.kind}: {self.label}"


def wrong(exercise: str, label: str, mistake: str, source: str, *expect: str) -> Answer:
    """A mistake: ``expect`` holds the fragments its ✗ output must contain."""
    return Answer(exercise, "wrong", label, source.strip("\n") + "\n", tuple(expect), mistake)


def correct(exercise: str, label: str, source: str) -> Answer:
    """A right answer in a style of its own."""
    return Answer(exercise, "correct", label, source.strip("\n") + "\n")


def cheat(exercise: str, label: str, source: str) -> Answer:
    """An answer hard-coded to the visible instances: passes them, fails a hidden test."""
    return Answer(exercise, "cheat", label, source.strip("\n") + "\n")
