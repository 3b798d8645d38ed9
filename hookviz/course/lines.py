"""What the checks say and remember: the lines of one check, and the kernel's memory of them.

``Lines`` prints a check's ✓ (with its why), its ✗ with the hint at the level this failure has
reached in the kernel, its ○ when it stops, and its notes; ``KernelState`` is what the checks
remember from cell to cell (the assignment's hints, each check's failures, how each answer's
last check ended). Nothing here runs an answer: ``checks.Check`` does, and reports through
``Lines``.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from . import card
from .conventions import FAIL_MARK, NOT_DONE_MARK, PASS_MARK
from .diagnose import Hint
from .hint_files import CODE_LEVEL, hint_lines
from .i18n.catalogue import translate
from .upstream import Verdict
from .values import without_addresses
from .wording import words


class Stopped:
    """What a check returns instead of a value once it has stopped (the reason is already printed)."""

    def __repr__(self) -> str:
        return "STOPPED"


STOPPED = Stopped()


@dataclass
class KernelState:
    """What the checks remember in this kernel: the assignment's hints and each check's failures."""

    assignment: str = ""
    hints: dict[str, dict[str, Hint]] = field(default_factory=dict)  # answer -> key -> Hint
    messages: dict[str, str] = field(default_factory=dict)  # a check's English -> translation
    failures: dict[str, int] = field(default_factory=dict)  # "answer/key" -> failed runs
    failed: dict[str, dict[str, tuple[str, Hint]]] = field(
        default_factory=dict
    )  # answer -> key -> (claim, hint)
    cell_checks: list[Any] = field(default_factory=list)  # Checks made since the last sentinel
    verdicts: dict[str, Verdict] = field(default_factory=dict)  # answer -> its last check's end

    def translated(self, message: str) -> str:
        """A check's message in the course's language (the English when it has no translation)."""
        return translate(message, self.messages) if self.messages else message


class Lines:
    """What one Check prints and counts; while a hidden test runs, nothing: its failures are
    kept in ``hidden`` instead."""

    def __init__(self, answer: str, kernel: KernelState):
        self.answer = answer
        self.kernel = kernel
        self.stopped = False
        self.not_done = False  # stopped by a ○: an answer not written yet
        self.passed = 0
        self.failed = 0
        self.hidden: list[str] | None = None  # failures of a hidden test while one runs
        self._counted: set[str] = set()  # failures already counted in this run of the cell
        self._offered_help = False
        self._hints_shown: set[str] = set()  # a hint printed once in a run is not printed again

    def resolve(self, hint: str | Hint) -> Hint:
        if isinstance(hint, Hint):  # written in the cell: its words are the cell's messages
            said = self.kernel.translated
            return dataclasses.replace(
                hint,
                nudge=said(hint.nudge),
                more=said(hint.more) if hint.more else "",
                why=said(hint.why) if hint.why else "",
            )
        if type(hint) is not str:
            raise TypeError(
                f"hint must be a key of the assignment's hints file or a checks.Hint, got {hint!r}."
            )
        found = self.kernel.hints.get(self.answer, {}).get(hint)
        if found is None:
            where = (
                f"hints/{self.kernel.assignment}.toml"
                if self.kernel.assignment
                else "no hints file (call checks.assignment(name) in the setup cell)"
            )
            raise LookupError(
                f"no hint [{self.answer}.{hint}] in {where}: add it there, with a nudge."
            )
        return found

    def report(
        self,
        problem: str | None,
        claim: str,
        hint: str | Hint,
        why: str | Hint | None = None,
        *,
        stop: bool = False,
        at_fault: str | None = None,
    ) -> bool:
        """A ✓ when ``problem`` is None, else a ✗ with the hint; ``at_fault`` names the answer
        whose code the ✗ comes from, when it is not this check's own (its Stuck? line)."""
        found = self.resolve(hint)
        claim = self.kernel.translated(claim)
        problem = self.kernel.translated(problem) if problem else problem
        explanation = self.resolve(why).why if why is not None else ""
        if why is not None and not explanation:
            raise LookupError(f"the hint [{self.answer}.{why}] has no why to print under a ✓.")
        if problem is None:
            self.passed += 1
            if self.hidden is None:
                why_line = f"\n    {words('label.why')} {explanation}" if explanation else ""
                card.say(f"{PASS_MARK} {claim}" + why_line)
            return True
        if stop:
            self.stopped = True
        if self.hidden is not None:
            self.hidden.append(f"{claim}" + (f": {problem}" if problem else ""))
            return False
        self.failed += 1
        at_fault = at_fault or self.answer
        level = self._count(claim, found, at_fault)
        lines = [f"{FAIL_MARK} {claim}"] + ([f"    {problem}"] if problem else [])
        shown = found.key or claim
        if shown in self._hints_shown:
            lines.append(f"    {words('label.hint')} {words('label.as_above')}")
        else:
            self._hints_shown.add(shown)
            lines += hint_lines(found, level)
        if level < CODE_LEVEL and found.code and not self._offered_help:
            self._offered_help = True
            stuck = words("checks.stuck", answer=at_fault)
            lines.append(f"    {words('label.stuck')} {stuck}")
        card.say(without_addresses("\n".join(lines)))
        return False

    def _count(self, claim: str, found: Hint, answer: str) -> int:
        """How many runs of this check have failed in this kernel, this one included; the
        failure is kept under ``answer``, for ``checks.hint(answer)``."""
        key = f"{answer}/{found.key or claim}"
        if key not in self._counted:
            self._counted.add(key)
            self.kernel.failures[key] = self.kernel.failures.get(key, 0) + 1
        failed = self.kernel.failed.setdefault(answer, {})
        failed.pop(key, None)
        failed[key] = (claim, found)
        self.kernel.failed[answer] = self.kernel.failed.pop(answer)  # most recent last
        return self.kernel.failures[key]

    def stop(self, line: str) -> None:
        self.stopped = True
        self.not_done = self.not_done or line.startswith(NOT_DONE_MARK)
        if self.hidden is not None:
            self.hidden.append(line.splitlines()[0].lstrip(f"{NOT_DONE_MARK}{FAIL_MARK} "))
            return
        card.say(without_addresses(line))

    def note(self, line: str) -> None:
        """A line about how the check runs (it starts with NOTE_MARK): silent in a hidden test."""
        if self.hidden is None:
            card.say(line)
