"""Assignment 07: a ✗ of capture_gradients that comes from a wrong gradient_hook points back to it.

capture_gradients is meant to call the student's gradient_hook (part 1). When that hook is
wrong, part 2's check fails too, and its own hints (a guard, a frozen layer...) would send the
student looking in the wrong function. So the check cell recognises the knock-on: every ✗ then
carries the [capture_gradients.part-1] hint, which names part 1. An answer to part 2 with a
hook of its own is judged on its own, whatever part 1 holds.

This is the case where part 1's check has not run on the hook the notebook holds (the student
changed it since, or never checked it): once it has, and failed, a correct gradient_hook stands
in for theirs and part 2 is graded on its own (tests/course/test_exercises_upstream.py).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from hookviz.course.checks import FAILED
from tests.answers import a07_grad_modes
from tests.course.test_exercises_mutants import Kernel, load, run_answer
from tests.helpers import notebook_runner

pytestmark = pytest.mark.notebook

ASSIGNMENT = load(Path(__file__).resolve().parents[2] / "solutions" / "07-grad-modes.ipynb")
BACK_TO_PART_1 = "Hint: capture_gradients calls your gradient_hook"
SENTINEL = "[hookviz] check_capture_gradients: finished"


def answers(exercise: str, kind: str) -> dict:
    return {a.label: a for a in a07_grad_modes.ANSWERS if a.exercise == exercise and a.kind == kind}


WRONG_HOOKS = answers("gradient_hook", "wrong")
WRONG_CAPTURES = answers("capture_gradients", "wrong")
SOLUTION = dataclasses.replace(
    next(iter(answers("capture_gradients", "correct").values())),
    source=ASSIGNMENT.answers["capture_gradients"],
)


@pytest.fixture(scope="module")
def kernel(tmp_path_factory):
    env = notebook_runner().isolated_env(tmp_path_factory.mktemp("knock-on-settings"))
    started = Kernel(tmp_path_factory.mktemp("student-07"), env)
    yield started
    started.stop()


def check_part_2(kernel: Kernel, hook_source: str, capture) -> str:
    """What part 2's check prints when part 1 holds hook_source; it must not raise."""
    answers = dict(ASSIGNMENT.answers, gradient_hook=hook_source)
    outcome = run_answer(kernel, dataclasses.replace(ASSIGNMENT, answers=answers), capture)
    assert not outcome.error and not outcome.stderr, outcome
    assert outcome.stdout.rstrip("\n").splitlines()[-1] == SENTINEL, outcome.stdout
    return outcome.stdout


@pytest.mark.parametrize(
    "label",
    [
        "no guard: register_hook under no_grad",
        "guarded by torch.is_grad_enabled()",
        "a new list on every call",
        "keeps the norm as a tensor",
    ],
)
def test_a_wrong_gradient_hook_is_named_by_part_2s_first_failure(kernel, label):
    printed = check_part_2(kernel, WRONG_HOOKS[label].source, SOLUTION)
    failures = [line for line in printed.splitlines() if line.startswith(FAILED)]
    assert failures, printed
    assert BACK_TO_PART_1 in printed, printed
    hints = [line for line in printed.splitlines() if line.strip().startswith("Hint:")]
    assert all(BACK_TO_PART_1 in line or line.strip() == "Hint: as above." for line in hints), (
        printed
    )


def test_a_right_gradient_hook_gets_no_pointer_back(kernel):
    printed = check_part_2(
        kernel, ASSIGNMENT.answers["gradient_hook"], WRONG_CAPTURES["named_children()"]
    )
    assert "children() and named_children() stop one level down" in printed, printed
    assert BACK_TO_PART_1 not in printed, printed


def test_a_capture_with_its_own_hook_is_judged_on_its_own(kernel):
    printed = check_part_2(
        kernel,
        WRONG_HOOKS["no guard: register_hook under no_grad"].source,
        WRONG_CAPTURES["its own hook, one entry per module"],
    )
    assert "block runs twice in every forward" in printed, printed
    assert BACK_TO_PART_1 not in printed, printed
