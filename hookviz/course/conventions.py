"""The notebook conventions `hookviz build`, the check cells and `hookviz grade` share.

One owner for each: the marks a check's lines start with, the sentinel line a check cell ends
with, a cell's outputs as text and how a long one is shortened (at word boundaries), the
error a failed hidden test raises, what became of a graded cell (``Outcome``) and of a
submission (``Status``), and a flag for the instructor (``Flag``).

Standard library only: the grading plugin loads this file by its path in the grading child,
which never imports hookviz (and so never torch).
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass

# -- the marks a check's lines start with: passed, failed, not done yet ---------------------------

PASS_MARK, FAIL_MARK, NOT_DONE_MARK = "✓", "✗", "○"
CHECK_MARKS = (PASS_MARK, FAIL_MARK, NOT_DONE_MARK)
# A note: how the check ran, not what it found (a correct upstream answer stood in for the
# student's). The grader does not compare notes: a correct answer scores with or without one.
NOTE_MARK = "ⓘ"


def without_notes(text: str) -> str:
    """A check's output as text, its note lines left out: what the grader compares."""
    return "".join(
        line for line in text.splitlines(keepends=True) if not line.startswith(f"{NOTE_MARK} ")
    )


def notes(text: str) -> list[str]:
    """The note lines of a check's output, their mark left off."""
    return [line[2:] for line in text.splitlines() if line.startswith(f"{NOTE_MARK} ")]


# -- the sentinel: a check cell's last line, printed only when everything above it ran ----------

SENTINEL = "[hookviz] {grade_id}: finished"
SENTINEL_LINE = re.compile(r"^\[hookviz\] (\S+): finished$")
# What in an answer's strings could print or forge a sentinel: its prefix, or its ending.
SENTINEL_LIKE = re.compile(r"\[hookviz\]|:\s*finished\b")


def sentinel_line(grade_id: str) -> str:
    """The line a check cell prints last: ``[hookviz] <grade_id>: finished``."""
    if type(grade_id) is not str or not grade_id:
        raise TypeError(f"sentinel needs the check cell's grade_id as a string, got {grade_id!r}.")
    return SENTINEL.format(grade_id=grade_id)


def sentinel_grade_id(line: str) -> str | None:
    """The grade_id a sentinel line names (None when ``line`` is no sentinel)."""
    match = SENTINEL_LINE.match(line)
    return match.group(1) if match else None


def ends_with_sentinel(text: str, grade_id: str) -> bool:
    """True when a cell's outputs, as text (``outputs_text``), end with ``grade_id``'s sentinel."""
    return text.rstrip("\n").endswith(sentinel_line(grade_id))


# -- outputs as text ------------------------------------------------------------------------------


def outputs_text(outputs: list | None) -> str:
    """A cell's outputs as a person reads them: streams, text results, errors as ``Name: value``.

    Takes nbformat outputs (``output_type``) and the grading plugin's records (``type``), so
    what `build` checks in a stored output and what grading compares read the same. A text
    result ends its line (one newline added unless it has one).
    """
    parts = []
    for output in outputs or []:
        kind = output.get("output_type") or output.get("type")
        if kind == "stream":
            parts.append(_text(output.get("text", "")))
        elif kind in ("display_data", "execute_result"):
            data = output.get("data")
            text = _text(
                data.get("text/plain", "") if isinstance(data, dict) else output.get("text", "")
            )
            parts.append(text if text.endswith("\n") else text + "\n")
        elif kind == "error":
            parts.append(f"{output.get('ename')}: {output.get('evalue')}\n")
    return "".join(parts)


def _text(value: object) -> str:
    """nbformat's multiline string: a string, or a list of lines as stored on disk."""
    return "".join(value) if isinstance(value, list) else str(value)


# -- shortening: feedback is cut between words, never inside one ------------------------------------

_SPACE = re.compile(r"\s")


def word_end(text: str, limit: int) -> int:
    """Where to cut ``text`` to keep at most ``limit`` characters: at the last line break that
    leaves at least half of them, else at the last space that leaves any, else at ``limit``
    (one word longer than that has no boundary to keep)."""
    if len(text) <= limit:
        return len(text)
    line_break = text.rfind("\n", 0, limit + 1)
    if line_break >= max(limit // 2, 1):
        return line_break
    space = _last_space(text, limit)
    return space if space >= 1 else max(limit, 0)


def word_start(text: str, start: int) -> int:
    """Where to begin keeping ``text`` to keep at most its last ``len(text) - start``
    characters: just after the first line break that keeps at least half of them, else after
    the first space that keeps any, else at ``start``."""
    if start <= 0:
        return 0
    least = max((len(text) - start) // 2, 1)
    for found, keeps in ((text.find("\n", start - 1), least), (_first_space(text, start - 1), 1)):
        if found != -1 and len(text) - (found + 1) >= keeps:
            return found + 1
    return start


def _last_space(text: str, limit: int) -> int:
    return max((m.start() for m in _SPACE.finditer(text, 0, limit + 1)), default=-1)


def _first_space(text: str, start: int) -> int:
    found = _SPACE.search(text, max(start, 0))
    return found.start() if found else -1


def shorten(text: str, limit: int, ellipsis: str = "…") -> str:
    """``text``, or its start cut between two words and ``ellipsis``: at most ``limit`` characters."""
    if len(text) <= limit:
        return text
    return text[: word_end(text, limit - len(ellipsis))].rstrip() + ellipsis


def shorten_middle(
    text: str, limit: int, gap: str = "\n... ({count} characters left out) ...\n"
) -> str:
    """``text``, or its start and its end with ``gap`` (which may name the ``{count}`` of
    characters left out) between them, each cut between lines or words: about ``limit``
    characters."""
    if len(text) <= limit:
        return text
    half = limit // 2
    head = word_end(text, half)
    tail = max(word_start(text, len(text) - half), head)
    return text[:head] + gap.format(count=tail - head) + text[tail:]


# -- hidden tests ---------------------------------------------------------------------------------


class HiddenTestFailed(AssertionError):
    """A visible check, re-run by the grader on an instance the student never saw, failed."""


# The name grading reads in a cell's error output (it never imports the checks).
HIDDEN_TEST_FAILED = HiddenTestFailed.__name__


# -- outcomes ---------------------------------------------------------------------------------


class _Worded(str, enum.Enum):
    """A string enum whose members carry a phrase that says in words what happened."""

    words: str

    def __new__(cls, value: str, words: str) -> _Worded:
        member = str.__new__(cls, value)
        member._value_ = value
        member.words = words
        return member

    def __str__(self) -> str:
        return self.value


class Outcome(_Worded):
    """What became of one graded cell: the plugin records it, the engine scores it, the report counts it."""

    PASSED = "passed", "the check passed"
    MISMATCH = "mismatch", "the check's output is not what a correct answer prints"
    ERROR = "error", "the check stopped with an error"
    TIMEOUT = "timeout", "the check ran out of time"
    KERNEL_DIED = "kernel-died", "Python stopped while the check ran"
    NOT_RUN = "not-run", "the check did not run"
    TAMPERED = "tampered", "the grader's tools were changed while the check ran"
    GRADER_ERROR = "grader-error", "the grader could not run the check"
    SKIPPED = "skipped", "the check was skipped"
    # A question graded by hand (a written answer, a manually graded code cell, a task):
    NEEDS_MANUAL_GRADE = "needs-manual-grade", "needs a manual grade"
    GRADED_BY_HAND = "graded-by-hand", "graded by hand"


class Status(_Worded):
    """What became of a whole submission; a submission that was not run gives it to every check."""

    OK = "ok", "graded"
    MISSING = "missing", "no notebook was found to grade"
    INVALID = "invalid", "the notebook could not be read"
    EMPTY = "empty", "the notebook file is empty"
    NO_ANSWERS = "no-answers", "no answer was written"
    ERROR = "error", "the grader failed"
    TIMEOUT = "timeout", "the submission ran out of time"
    CRASHED = "crashed", "the grading run stopped"


def in_words(outcome: str) -> str:
    """What an outcome (or, for a check that never ran, a status) means, in words."""
    for kind in (Outcome, Status):
        try:
            return kind(outcome).words
        except ValueError:
            continue
    return str(outcome).replace("-", " ")


# -- flags ----------------------------------------------------------------------------------------


@dataclass(frozen=True, order=True)
class Flag:
    """Something for the instructor to look at: a kind, and what it concerns (often a grade_id).

    Its text form, ``kind (detail)``, is what results, gradebooks and feedback store.
    """

    kind: str
    detail: str = ""

    def __str__(self) -> str:
        return f"{self.kind} ({self.detail})" if self.detail else self.kind

    @classmethod
    def parse(cls, text: str) -> Flag:
        """The flag whose text form is ``text``."""
        kind, bracket, rest = text.partition(" (")
        if bracket and rest.endswith(")"):
            return cls(kind, rest[:-1])
        return cls(text)
