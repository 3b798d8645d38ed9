"""The helpers behind the course's check cells: ✓ or ✗ with a hint in levels, "not done yet" for a missing answer.

A check cell reads like this::

    check = checks.Check("print_module")

    def verify(model, name):
        printed = check.printed(lambda: model.apply(print_module))
        check.equal(printed, expected_printout(model), f"... of {name}", hint="order")

    verify(hv.examples.model(), "the blog's Model")
    ### BEGIN HIDDEN TESTS
    check.hidden(verify, hv.examples.mlp((3, 4, 2)), "an MLP")
    ### END HIDDEN TESTS
    checks.sentinel("check_print_module")

Five rules keep the grade honest and fair:
- Comparisons are type-strict (``type(a) is type(b)``, ``torch.equal``), so an object with a
  home-made ``__eq__`` cannot pass.
- A ✓ line never shows a value that could differ between two correct answers, and whatever
  your code prints while it is checked is captured: every correct answer gives the same output.
- A hidden test only re-runs a visible check (``verify`` above) on another instance, so an answer
  that passes every visible check fails a hidden one only if it is hard-coded to what it saw.
- ``sentinel`` prints the cell's last line. When anything in the cell raises, it never prints.
- A check grades its own cell: run inside ``with check.upstream(hook=correct_hook):``, an earlier
  answer whose own check did not pass is replaced by its correct version, and a note says so
  (``hookviz.course.upstream``); the grader does not compare notes.

Hints come in levels, counted per check in the running kernel: the first failed run shows a
nudge (the concept and the torch doc to read), the second a sharper one, and the code-level
hint appears only from the third, or on request with ``checks.hint("print_module")``. The
hints of an assignment live in the course, in ``hints/<assignment>.toml``, out of the check
cell students read (``hookviz.course.content`` says how a notebook finds them);
``checks.assignment("01-apply")`` in the setup cell picks them.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .. import language
from . import card, diagnose, upstream
from .answers import NotDefinedYet, missing_answer, not_done, not_done_line
from .conventions import FAIL_MARK, NOT_DONE_MARK, PASS_MARK, HiddenTestFailed, sentinel_line
from .diagnose import Hint
from .hint_files import CODE_LEVEL, hint_lines, load_hints
from .lines import STOPPED, Lines, Stopped
from .lines import KernelState as _Kernel
from .model_checks import ModelChecks
from .tracebacks import failing_function, is_stub, raised_text, root_cause, unknown_name
from .values import (
    article,
    describe,
    difference,
    listing,
    lists_held_by,
    multiset_difference,
    same_values,
    without_addresses,
)
from .wording import words

__all__ = [  # what check cells use: checks.Check, checks.difference, ...
    "CODE_LEVEL",
    "FAILED",
    "NOT_DONE",
    "PASSED",
    "RERUN_ADVICE",
    "STOPPED",
    "Captured",
    "Check",
    "HiddenTestFailed",
    "Hint",
    "NotDefinedYet",
    "SetupNotRun",
    "assignment",
    "capture",
    "describe",
    "diagnose",
    "difference",
    "hint",
    "lists_held_by",
    "load_hints",
    "multiset_difference",
    "same_values",
    "run_check",
    "sentinel",
    "setup_ran",
    "try_it",
]

PASSED, FAILED, NOT_DONE = PASS_MARK, FAIL_MARK, NOT_DONE_MARK
TODO_ADVICE = words("checks.todo_advice", "en")  # the English; a card says it in its language
RERUN_ADVICE = words("hint.rerun.nudge", "en")
_ERROR_HINT = diagnose.worded("rerun", key="an error")


@dataclass
class Captured:
    """What a call returned, printed and warned."""

    result: Any
    stdout: str
    warnings: list[str] = field(default_factory=list)


_KERNEL = _Kernel()


def assignment(name: str) -> None:
    """Use the hints of assignment ``name`` (the course's ``hints/<name>.toml``) in the checks
    that follow."""
    if type(name) is not str or not name:
        raise TypeError(f"assignment needs the assignment's name, e.g. '01-apply', got {name!r}.")
    _KERNEL.hints = load_hints(name)
    lang = language.current_language()
    if lang == language.ENGLISH:
        _KERNEL.messages = {}
    else:
        from .i18n.runtime import message_strings

        _KERNEL.messages = message_strings(name, lang)
    _KERNEL.assignment = name


def _own_messages() -> dict[str, str]:
    """The translations of the checks a translated walkthrough runs itself (no assignment)."""
    lang = language.current_language()
    if lang == language.ENGLISH:
        return {}
    from .i18n.runtime import message_strings

    return message_strings("", lang)


def hint(name: str | None = None, lang: str | None = None) -> None:
    """Print every level of help for answer ``name``: for the checks that failed, or all of them;
    in ``lang`` when given (``lang="en"`` shows a translated notebook's hints in English)."""
    if name is None:
        name = next(reversed(_KERNEL.failed), None) if _KERNEL.failed else None
        if name is None:
            print(words("checks.no_failure_yet", lang))
            return
    if type(name) is not str:
        raise TypeError(
            f"hint needs the name of the function you write, e.g. 'print_module', got {name!r}."
        )
    failed = _KERNEL.failed.get(name, {})
    hints = _KERNEL.hints
    if lang is not None and _KERNEL.assignment:
        hints = load_hints(_KERNEL.assignment, lang)
    entries = [(claim, hints.get(name, {}).get(h.key, h)) for claim, h in failed.values()]
    if not entries:
        entries = [(key, h) for key, h in hints.get(name, {}).items() if h.nudge]
    if not entries:
        known = sorted(_KERNEL.hints)
        if known:
            print(words("checks.no_hints_known", lang, name=repr(name), known=", ".join(known)))
        else:
            print(words("checks.no_hints", lang, name=repr(name)))
        return
    print(words("checks.hints_failed" if failed else "checks.hints_every", lang, name=name))
    for claim, h in entries:
        print(f"- {claim}")
        for line in hint_lines(h, CODE_LEVEL, lang):
            print(line)


class SetupNotRun(RuntimeError):
    """A check cell ran before its notebook's setup cell (or after a kernel restart)."""

    def _render_traceback_(self) -> list[str]:  # IPython shows these lines instead of a traceback
        return [str(self)]


def setup_ran(name: str = "", *, needs: tuple[str, ...] = (), lang: str | None = None) -> None:
    """Stop a check cell, with a short note instead of a traceback, when a cell it needs has not run.

    `hookviz build` puts this call at the top of every check cell of exercises/, after
    importing ``checks`` itself, so that it works in a fresh kernel: without it, a check cell
    run first stops at ``NameError: name 'checks' is not defined``. ``name`` is the assignment
    the setup cell loads (``checks.assignment(name)``); ``needs``, the names the check takes
    from the notebook's given cells (and, for a setup cell that loads no assignment, its imports).
    ``lang``, the notebook's language when it is not English: the cell that sets it may not
    have run yet.
    """
    names = sys._getframe(1).f_globals
    lang = language.check_language(lang) if lang else None
    if name and _KERNEL.assignment != name:
        raise SetupNotRun(f"{NOT_DONE} " + words("checks.setup_not_run", lang, name=name))
    missing = [n for n in needs if n not in names]
    if missing:
        key = "checks.needs_one" if len(missing) == 1 else "checks.needs_many"
        raise SetupNotRun(f"{NOT_DONE} " + words(key, lang, names=listing(missing)))


def capture(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Captured:
    """Call ``fn(*args, **kwargs)`` with its prints and warnings captured (errors pass through)."""
    out = io.StringIO()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
            result = fn(*args, **kwargs)
    return Captured(result, out.getvalue(), [f"{w.category.__name__}: {w.message}" for w in caught])


def run_check(packed: str) -> None:
    """Run a check cell's own code, which `hookviz build` packed into the student's copy (the
    cell shows what it checks; the machinery and the reference answers stay out of sight). It
    runs among the notebook's names, as the instructor's cell does."""
    from .content import unpack_text

    names = sys._getframe(1).f_globals
    exec(compile(unpack_text(packed), "<this check's code>", "exec"), names)  # noqa: S102


def sentinel(grade_id: str) -> None:
    """Print the check cell's last line, ``[hookviz] <grade_id>: finished``.

    Under nbgrader (``NBGRADER_EXECUTION`` set, as autograde and validate set it) a check of
    the cell that did not pass raises here instead: nbgrader scores a cell by raised or not.
    """
    line = sentinel_line(grade_id)
    made, _KERNEL.cell_checks[:] = list(_KERNEL.cell_checks), []
    for check in made:
        check._record(upstream.FAILED if check.failed or check.stopped else upstream.PASSED)
    if os.environ.get("NBGRADER_EXECUTION"):
        unfinished = [check.answer for check in made if check.failed or check.stopped]
        if unfinished:
            card.show()  # what the checks said, before nbgrader's traceback
            raise AssertionError(
                f"{grade_id}: the checks of {', '.join(unfinished)} did not all pass "
                "(the ✗ and ○ lines above say why)"
            )
    card.show(line)


def try_it(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Run your answer in the open (its prints show); returns None after saying why when it cannot."""
    try:
        return fn(*args, **kwargs)
    except Exception as error:
        root = root_cause(error)
        not_done = not_done_line(root, words("checks.your_answer"))
        if not_done is not None:
            card.say(not_done)
        elif type(root) is NameError and unknown_name(root):
            card.say(f"{NOT_DONE} " + words("checks.not_defined_cell", name=unknown_name(root)))
        else:
            function = failing_function(root, words("checks.your_answer"))
            raised = words("checks.raised", function=function, error=raised_text(error))
            card.say(without_addresses(f"{FAILED} {raised}"))
            found = diagnose.explain_error(root)
            if found is not None:
                nudge = diagnose.in_language(found.hint).nudge
                card.say(
                    without_addresses(f"    {found.problem}\n    {words('label.hint')} {nudge}")
                )
        return None


class Check(ModelChecks):
    """The checks of one answer cell: one line per check; stops at the first missing answer or error."""

    def __init__(self, *answers: str):
        if not answers or not all(type(a) is str for a in answers):
            raise TypeError(
                "Check needs the names of the functions it checks, e.g. Check('print_module')."
            )
        _KERNEL.cell_checks.append(self)  # sentinel() asks it how it went
        if not _KERNEL.assignment and not _KERNEL.messages:
            _KERNEL.messages = _own_messages()  # a walkthrough's own checks, in its language
        self.answer = answers[0]
        self.lines = Lines(self.answer, _KERNEL)  # what it prints, and the counts
        self.names = sys._getframe(1).f_globals  # the notebook's variables
        self.checked = {name: self.names.get(name) for name in answers}  # the objects checked
        missing = missing_answer(answers, self.names)
        if missing is not None:
            line, failed = missing
            self.lines.failed += failed
            self.lines.stop(line)
        self._record(upstream.FAILED)  # until its sentinel says otherwise

    def _record(self, ended: str) -> None:
        """Remember how this check ended for the objects it checked (``upstream.Verdict``)."""
        if self.lines.not_done:
            ended = upstream.NOT_DONE
        for name, checked in self.checked.items():
            _KERNEL.verdicts[name] = upstream.Verdict(checked, ended)

    def _suspect(self, function: str) -> bool:
        """Whether an error raised in ``function`` is that answer's fault: another answer of
        the assignment whose own check has not passed on what the notebook holds now."""
        verdict = _KERNEL.verdicts.get(function)
        passed = verdict is not None and verdict.ended == upstream.PASSED
        return function in _KERNEL.hints and not (
            passed and verdict.checked is self.names.get(function)
        )

    def upstream(self, **correct: Callable[..., Any]) -> upstream.Upstream:
        """For a with block around the checks: each earlier answer named here whose own check
        did not pass is replaced by the correct version given, and a note says so; the
        student's own comes back when the block ends (``hookviz.course.upstream``)."""
        return upstream.Upstream(self.names, correct, _KERNEL.verdicts, self.lines.note)

    @property
    def stopped(self) -> bool:
        """True once a missing answer or an error stopped the check."""
        return self.lines.stopped

    @property
    def passed(self) -> int:
        """How many ✓ this run of the cell printed."""
        return self.lines.passed

    @property
    def failed(self) -> int:
        """How many ✗ this run of the cell printed."""
        return self.lines.failed

    @property
    def ok(self) -> bool:
        """True until the check stops (a missing answer or an error); later checks need its values."""
        return not self.stopped

    # -- running the answer ------------------------------------------------------------------

    def capture(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Captured | Stopped:
        """Run the answer quietly; STOPPED (after a ○ or ✗ line) when it is missing or raises."""
        if self.stopped:
            return STOPPED
        try:
            return capture(fn, *args, **kwargs)
        except Exception as error:
            root = root_cause(error)
            stub = not_done_line(root, self.answer)
            if stub is not None:
                self.lines.stop(stub)
                return STOPPED
            found = diagnose.explain_error(root)
            function = failing_function(root, self.answer)
            claim = words("checks.raised", function=function, error=raised_text(root))
            at_fault = function if self._suspect(function) else None
            if found is None:
                self.lines.report("", claim, _ERROR_HINT, at_fault=at_fault)
            else:
                self.lines.report(found.problem, claim, found.hint, at_fault=at_fault)
            self.lines.stopped = True
            return STOPPED

    def run(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """The answer's result (its prints are captured), or STOPPED."""
        captured = self.capture(fn, *args, **kwargs)
        return STOPPED if captured is STOPPED else captured.result

    def printed(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> str | Stopped:
        """What the answer printed, or STOPPED."""
        captured = self.capture(fn, *args, **kwargs)
        return STOPPED if captured is STOPPED else captured.stdout

    def raises(
        self, error_type: type[BaseException], fn: Callable[..., Any], claim: str, hint: str | Hint
    ) -> bool:
        """✓ when ``fn()`` raises ``error_type`` (or a subclass), as the claim says it should."""
        if self.stopped:
            return False
        try:
            capture(fn)
        except Exception as error:
            root = root_cause(error)
            if (
                type(root) is NotImplementedError
                and is_stub(root)
                and error_type is not NotImplementedError
            ):
                self.lines.stop(f"{NOT_DONE} " + not_done(failing_function(root, self.answer)))
                return False
            return self.lines.report(
                None
                if isinstance(error, error_type)
                else words("checks.it_raised", error=raised_text(error)),
                claim,
                hint,
            )
        problem = words("checks.did_not_raise", error=error_type.__name__)
        return self.lines.report(problem, claim, hint)

    # -- expectations ----------------------------------------------------------------------

    def equal(
        self,
        actual: Any,
        expected: Any,
        claim: str,
        hint: str | Hint,
        *,
        why: str | Hint | None = None,
        reveal: bool = True,
        problem: str | None = None,
        stop: bool = False,
    ) -> bool:
        """✓ when ``actual`` equals ``expected`` exactly: same types, tensors by ``torch.equal``.

        ``why`` names the hints-file entry whose ``why`` is printed under the ✓ only: an
        explanation that would give the answer away, so it is kept out of the check cell.
        ``reveal=False`` keeps the expected value out of the ✗ line (a prediction's answer);
        ``problem`` then says what is wrong instead. ``stop`` stops the check on a ✗.
        """
        if self.stopped or actual is STOPPED:
            return False
        found = difference(actual, expected)
        if found is not None and (problem is not None or not reveal):
            found = problem or ""
        return self.lines.report(found, claim, hint, why, stop=stop)

    def close(
        self,
        actual: Any,
        expected: Any,
        claim: str,
        hint: str | Hint,
        *,
        rtol: float = 1e-5,
        atol: float = 1e-7,
        stop: bool = False,
    ) -> bool:
        """✓ when ``actual`` matches ``expected`` up to float rounding (types still exact)."""
        if self.stopped or actual is STOPPED:
            return False
        found = difference(actual, expected, rtol=rtol, atol=atol)
        return self.lines.report(found, claim, hint, stop=stop)

    def is_type(self, value: Any, expected_type: type, claim: str, hint: str | Hint) -> bool:
        """✓ when ``type(value) is expected_type`` (a subclass does not count); a ✗ stops the check."""
        if self.stopped or value is STOPPED:
            return False
        if type(value) is expected_type:
            return self.lines.report(None, claim, hint)
        return self.lines.report(
            words(
                "checks.is_type", value=describe(value), expected=article(expected_type.__name__)
            ),
            claim,
            hint,
            stop=True,  # the checks after this one need a value of the right type
        )

    def true(
        self,
        condition: bool,
        claim: str,
        hint: str | Hint,
        problem: str | None = None,
        *,
        stop: bool = False,
    ) -> bool:
        """✓ when ``condition`` (computed by the check cell) is exactly True."""
        if self.stopped:
            return False
        if type(condition) is not bool:
            raise TypeError(
                f"Check.true needs a bool computed by the check cell, got {describe(condition)}."
            )
        return self.lines.report(None if condition else (problem or ""), claim, hint, stop=stop)

    # -- hidden tests ------------------------------------------------------------------------

    def hidden(self, verify: Callable[..., Any], *args: Any, **kwargs: Any) -> None:
        """Re-run a visible check, ``verify(*args)``, silently on an instance the student never saw.

        Raises HiddenTestFailed naming the check when it fails, so the sentinel never prints.
        Nothing runs when a visible check already failed: the output shows that failure.
        """
        if self.stopped or self.failed:
            return
        self.lines.hidden, passed = [], self.passed
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                verify(*args, **kwargs)
        except Exception as error:
            self.lines.hidden.append(f"the check raised {raised_text(error)}")
        finally:
            failures, self.lines.hidden = self.lines.hidden, None
            self.lines.stopped, self.lines.not_done, self.lines.passed = False, False, passed
        if failures:
            self._record(upstream.HIDDEN)
            raise HiddenTestFailed(
                without_addresses(
                    f"hidden test failed (a visible check on another instance): {failures[0]}"
                )
            )
