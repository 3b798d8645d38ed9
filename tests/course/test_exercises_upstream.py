"""A check grades its own cell: one mistake costs one cell's points, for every mistake we know.

02's linear_transformation check runs the student's add_bias, weight_initialization and hook;
07's capture_gradients calls their gradient_hook. For every wrong answer (and cheat) to one of
those earlier exercises in the catalogues, the notebook runs as the grader runs it, the
earlier answer's own check included: that check fails, and the later check, with the solution
in its cell, prints exactly the instructor's stored output plus a note naming the correct
answer that stood in (course/upstream.py); the grader compares outputs without notes. And a
later answer that is wrong itself still gets its ✗, whatever stood in for the earlier one.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hookviz.course.checks import FAILED, NOT_DONE
from hookviz.course.conventions import HIDDEN_TEST_FAILED, notes, without_notes
from tests.answers import a02_forward_hooks, a07_grad_modes
from tests.course.test_exercises_mutants import Assignment, Kernel, Outcome, grading, load
from tests.helpers import notebook_runner

pytestmark = pytest.mark.notebook

REPO = Path(__file__).resolve().parents[2]
LATER = {"02-forward-hooks": "linear_transformation", "07-grad-modes": "capture_gradients"}
EARLIER = {
    "02-forward-hooks": ("add_bias", "weight_initialization", "hook"),
    "07-grad-modes": ("gradient_hook",),
}
CATALOGUES = {"02-forward-hooks": a02_forward_hooks, "07-grad-modes": a07_grad_modes}
ENGLISH = {name: load(REPO / "solutions" / f"{name}.ipynb") for name in LATER}
KOREAN = {name: load(REPO / "ko" / "solutions" / f"{name}.ipynb") for name in LATER}
CASES = [
    (name, answer)
    for name, module in CATALOGUES.items()
    for answer in module.ANSWERS
    if answer.exercise in EARLIER[name] and answer.kind in ("wrong", "cheat")
]
WHY = {
    "wrong": "since yours has a ✗ above",
    "cheat": "since yours fails a hidden test of its check",
}


@pytest.fixture(scope="module")
def kernels(tmp_path_factory):
    env = notebook_runner().isolated_env(tmp_path_factory.mktemp("upstream-settings"))
    started: dict[str, Kernel] = {}

    def get(name: str) -> Kernel:
        if name not in started:
            started[name] = Kernel(tmp_path_factory.mktemp(f"upstream-{name}"), env)
        return started[name]

    yield get
    for kernel in started.values():
        kernel.stop()


def run_in_order(kernel: Kernel, assignment: Assignment, answers: dict[str, str], checked: set):
    """The notebook from the top, ``answers`` in their cells (the solution in the others), the
    check cells of ``checked`` and of the later answer run too: {exercise: its check's outcome}."""
    reset = kernel.run(
        "%reset -f\nfrom hookviz.course import checks as _c\n_c._KERNEL.failures.clear(); _c._KERNEL.failed.clear(); _c._KERNEL.verdicts.clear()\ndel _c"
    )
    assert not reset.error, reset.error
    later = LATER[assignment.name]
    last = assignment.checks[later]
    wanted = {assignment.checks[exercise]: exercise for exercise in checked | {later}}
    outcomes: dict[str, Outcome] = {}
    for index, cell in enumerate(assignment.cells[: last + 1]):
        meta = grading(cell)
        if meta.get("grade") and index not in wanted:
            continue
        source = cell.source
        if meta.get("solution"):
            source = answers.get(meta["grade_id"], assignment.answers[meta["grade_id"]])
        outcome = kernel.run(source)
        if index in wanted:
            outcomes[wanted[index]] = outcome
        else:
            assert not outcome.error, f"cell {index} raised {outcome.error}"
    return outcomes


@pytest.mark.parametrize(
    ("name", "answer"), CASES, ids=[f"{name}: {answer.id}" for name, answer in CASES]
)
def test_a_mistake_in_an_earlier_answer_costs_only_its_own_cell(kernels, name, answer):
    assignment = ENGLISH[name]
    outcomes = run_in_order(
        kernels(name), assignment, {answer.exercise: answer.source}, {answer.exercise}
    )
    own, later = outcomes[answer.exercise], outcomes[LATER[name]]
    if answer.kind == "wrong":
        assert any(line.startswith(FAILED) for line in own.stdout.splitlines()), own.stdout
    else:
        assert own.error.startswith(HIDDEN_TEST_FAILED), own
    stored = assignment.stored[assignment.checks[LATER[name]]]
    where = f"\n--- its own check:\n{own.stdout}{own.error}\n--- the later check:\n{later.stdout}"
    assert not later.error and not later.stderr, where
    assert without_notes(later.stdout) == stored, where  # full marks from the grader
    assert notes(later.stdout) == [
        f"checked with a correct {answer.exercise}, {WHY[answer.kind]}"
    ], where


@pytest.mark.parametrize("name", sorted(LATER))
def test_an_earlier_answer_not_written_yet_is_stood_in_for(kernels, name):
    assignment = ENGLISH[name]
    earlier = EARLIER[name][-1]
    stub = f"def {earlier}(*args):\n    # YOUR CODE HERE\n    raise NotImplementedError()\n"
    outcomes = run_in_order(kernels(name), assignment, {earlier: stub}, {earlier})
    assert outcomes[earlier].stdout.startswith(f"{NOT_DONE} "), outcomes[earlier].stdout
    later = outcomes[LATER[name]]
    stored = assignment.stored[assignment.checks[LATER[name]]]
    assert without_notes(later.stdout) == stored, later.stdout
    assert notes(later.stdout) == [f"checked with a correct {earlier}, since yours is not done yet"]


def first_wrong(name: str, exercise: str, label: str = ""):
    return next(
        a
        for a in CATALOGUES[name].ANSWERS
        if a.exercise == exercise and a.kind == "wrong" and label in a.label
    )


@pytest.mark.parametrize("name", sorted(LATER))
def test_a_wrong_later_answer_is_still_wrong(kernels, name):
    """The correct earlier answer does not make a wrong later one pass: its own ✗ and hint."""
    earlier = first_wrong(name, EARLIER[name][-1])
    later = first_wrong(name, LATER[name], "its own hook" if name == "07-grad-modes" else "leaf")
    outcomes = run_in_order(
        kernels(name),
        ENGLISH[name],
        {earlier.exercise: earlier.source, later.exercise: later.source},
        {earlier.exercise},
    )
    printed = outcomes[LATER[name]].stdout
    assert notes(printed) == [
        f"checked with a correct {earlier.exercise}, since yours has a ✗ above"
    ]
    for fragment in later.expect:
        assert fragment in printed, printed


@pytest.mark.parametrize("name", sorted(LATER))
def test_in_korean_the_note_is_korean_and_the_marks_full(kernels, name):
    assignment = KOREAN[name]
    earlier = first_wrong(name, EARLIER[name][-1])
    outcomes = run_in_order(
        kernels(f"{name}.ko"), assignment, {earlier.exercise: earlier.source}, {earlier.exercise}
    )
    later = outcomes[LATER[name]].stdout
    assert without_notes(later) == assignment.stored[assignment.checks[LATER[name]]], later
    assert notes(later) == [
        f"여러분의 함수가 위 검사에서 ✗를 받았으므로, 올바른 {earlier.exercise} 함수로 검사했습니다"
    ], later


def test_each_correct_earlier_answer_is_the_solutions():
    """A check cell's correct_<name> is the solution's <name>: one source for each answer."""
    import ast

    def body(source: str, name: str) -> str:
        node = next(
            n
            for n in ast.walk(ast.parse(source))
            if isinstance(n, ast.FunctionDef) and n.name == name
        )
        statements = node.body
        if (
            statements
            and isinstance(statements[0], ast.Expr)
            and isinstance(statements[0].value, ast.Constant)
        ):
            statements = statements[1:]  # the docstring
        return ast.dump(ast.Module(body=statements, type_ignores=[]))

    for name, assignment in ENGLISH.items():
        check = assignment.cells[assignment.checks[LATER[name]]].source
        for earlier in EARLIER[name]:
            assert f"{earlier}=correct_{earlier}" in check.replace(" ", ""), (name, earlier)
            assert body(check, f"correct_{earlier}") == body(
                assignment.answers[earlier], earlier
            ), f"{name}: correct_{earlier} is not the solution's {earlier}"
