"""How the grader runs and scores an nbgrader test cell of bare asserts (nbgrader's own verdicts on
the same cells are in tests/grading/test_nbgrader_oracle.py)."""

from __future__ import annotations

import ast

import pytest

from hookviz.course.conventions import sentinel_line
from hookviz.course.format.steps import with_sentinel
from hookviz.grading.core.bare_checks import run_to_end_source, score_test_cell

SENTINEL = {"type": "stream", "name": "stdout", "text": sentinel_line("t") + "\n"}


def result(text: str) -> dict:
    return {"type": "execute_result", "text": text, "mimetypes": ["text/plain"]}


def run(source: str) -> tuple[list[str], object]:
    """What the cell, as the grader runs it, prints, and the result IPython shows (its last
    statement's value when that is an expression)."""
    printed: list[str] = []
    namespace = {"print": printed.append}
    *body, last = ast.parse(run_to_end_source(source, "t")).body
    exec(compile(ast.Module(body, []), "<cell>", "exec"), namespace)
    if not isinstance(last, ast.Expr):
        exec(compile(ast.Module([last], []), "<cell>", "exec"), namespace)
        return printed, None
    return printed, eval(compile(ast.Expression(last.value), "<cell>", "eval"), namespace)


@pytest.mark.parametrize(
    "source, value",
    [
        ("x = 1\nx / 4", 0.25),
        ("score = (0.5 +  # a comment inside\n    0.25)\nscore  # and after", 0.75),
        ("score = 0.5\n(score)", 0.5),
    ],
)
def test_the_last_expression_stays_the_result_and_the_sentinel_prints_first(source, value) -> None:
    printed, shown = run(source)
    assert printed == [sentinel_line("t")] and shown == value


@pytest.mark.parametrize(
    "source",
    ["0.5;", "x = 0.5\nx;  # quiet", "assert True", "if True:\n    0.5", "%time 0.5", ""],
)
def test_a_cell_that_shows_no_result_only_gets_the_sentinel(source) -> None:
    assert run_to_end_source(source, "t") == with_sentinel(source, "t")


def test_same_line_statements_before_the_last_expression_are_kept() -> None:
    code = run_to_end_source("s = 'é'; s", "t")
    assert code.startswith("s = 'é'; (s\n") and code.endswith(f"print({sentinel_line('t')!r}))[0]")


def test_stderr_scores_zero_whichever_stream_came_first() -> None:
    """A warning's stream can reach IOPub after the result it was raised before: the cell still
    ran to its end, and the feedback says it wrote to stderr."""
    note = {"type": "stream", "name": "stderr", "text": "UserWarning: half is old\n  warn()\n"}
    for outputs in (
        [note, SENTINEL],
        [SENTINEL, note],
        [SENTINEL, note, result("1")],
        [SENTINEL, result("1"), note],
    ):
        scored = score_test_cell(outputs, "t", 2)
        assert scored.points == 0 and "wrote to stderr (UserWarning: half is old)" in scored.detail


def test_the_number_shown_after_the_sentinel_is_the_points() -> None:
    assert score_test_cell([SENTINEL, result("0.5")], "t", 2).points == 0.5
    assert score_test_cell([SENTINEL, result("'0.5'")], "t", 2).points == 2
    assert score_test_cell([SENTINEL, result("-1")], "t", 2).points == 2
    above = score_test_cell([SENTINEL, result("3")], "t", 2)
    assert (above.points, above.above_points) == (
        0,
        True,
    ) and "more than its points" in above.detail


def test_a_result_shown_before_the_sentinel_counts_for_nothing() -> None:
    # the student's answer called sys.displayhook(0) while the test cell ran
    assert score_test_cell([result("0"), SENTINEL], "t", 2).points == 2


def test_a_cell_that_did_not_print_its_sentinel_scores_zero() -> None:
    for outputs in (
        [],
        [result("1")],
        [SENTINEL, {"type": "stream", "name": "stdout", "text": "x\n"}],
    ):
        scored = score_test_cell(outputs, "t", 2)
        assert (scored.points, scored.ran_to_end) == (0, False)
