"""hookviz.course.checks: friendly, type-strict checks that never leak a traceback for a missing answer."""

from __future__ import annotations

import re
import warnings

import pytest
import torch
from torch import nn

import hookviz as hv
from hookviz.course import checks
from hookviz.course.checks import FAILED, NOT_DONE, PASSED, STOPPED, Check, difference


def stub(*args):
    # YOUR CODE HERE
    raise NotImplementedError()


def answer_42(*args):
    return 42


def shouty_answer(*args):
    print("debugging output the student forgot")
    warnings.warn("a warning the student caused", UserWarning, stacklevel=1)
    return 42


def not_a_function():
    pass


not_a_function = 3  # noqa: F811  (a student who assigned a value to the name)


# -- type-strict comparison ------------------------------------------------------------


class AlwaysEqual(int):
    def __eq__(self, other):
        return True

    __hash__ = int.__hash__


class FakeTensor:
    shape = (2,)
    dtype = torch.float32

    def __eq__(self, other):
        return True


@pytest.mark.parametrize(
    ("actual", "expected"),
    [
        (AlwaysEqual(1), 42),
        (42.0, 42),
        (True, 1),
        ([1, 2], (1, 2)),
        (FakeTensor(), torch.zeros(2)),
        (nn.Parameter(torch.zeros(2)), torch.zeros(2)),
        (torch.zeros(2, dtype=torch.float64), torch.zeros(2)),
        (torch.zeros(1, 2), torch.zeros(2)),
        ({AlwaysEqual(1): 1.0}, {1: 1.0}),
        ({"a": 1}, {"a": 1, "b": 2}),
        ({"x", AlwaysEqual(1)}, {"x", 1}),
        ("Function_A()\n---", "Function_A()\n--"),
        (None, 0),
    ],
    ids=repr,
)
def test_difference_is_type_strict(actual, expected):
    assert difference(actual, expected) is not None


@pytest.mark.parametrize(
    "value",
    [
        42,
        4.5,
        "text",
        None,
        True,
        [1, "a", (2.0, None)],
        {"a": torch.ones(2)},
        {"x", "y"},
        torch.arange(20.0),
    ],
    ids=repr,
)
def test_difference_accepts_equal_values(value):
    copy = {k: v.clone() for k, v in value.items()} if isinstance(value, dict) else value
    assert difference(value, copy) is None


def test_difference_describes_the_first_mismatch():
    assert difference([1, 2, 3], [1, 5, 3]) == "item[1] is 2, expected 5"
    assert difference((2, 1), (2,)) == "the result is (2, 1), expected (2,)"
    assert (
        difference(torch.ones(2, 2), torch.ones(2)) == "the result has shape (2, 2), expected (2,)"
    )
    assert "line 2" in difference("a\nb\nc", "a\nx\nc")
    assert (
        difference({"b": 1.0}, {"a": 1.0})
        == "the result has missing keys [a] and unexpected keys [b]"
    )


def test_close_allows_rounding_but_not_other_types():
    assert difference(torch.tensor([1.0]), torch.tensor([1.0 + 1e-7]), rtol=1e-5) is None
    assert difference(torch.tensor([1.0]), torch.tensor([1.1]), rtol=1e-5) is not None
    assert difference(0.30000000000000004, 0.3, rtol=1e-9) is None
    assert difference(torch.tensor(0.3), 0.3, rtol=1e-5) is not None


def test_difference_refuses_what_it_cannot_compare():
    with pytest.raises(TypeError, match="compares tensors, numbers"):
        difference(object(), object())


# -- running the student's answer -------------------------------------------------------


def test_a_stub_is_not_done_yet(capsys):
    check = Check("stub")
    assert check.run(stub) is STOPPED
    check.equal(check.run(answer_42), 42, "never printed: the check has stopped", hint="-")
    out = capsys.readouterr().out
    assert out.startswith(f"{NOT_DONE} stub: not done yet.")
    assert out.count("\n") == 1 and PASSED not in out and FAILED not in out
    assert not check.ok


def test_a_stub_inside_apply_is_not_done_yet(capsys):
    check = Check("stub")
    check.run(
        hv.trace_apply, hv.examples.model(), stub, echo=False
    )  # raises ApplyFnError from the stub
    assert "stub: not done yet" in capsys.readouterr().out


def test_a_not_implemented_error_from_torch_is_an_error_not_a_stub(capsys):
    check = Check("answer_42")
    check.run(nn.Module(), torch.ones(1))  # torch raises NotImplementedError: no forward
    out = capsys.readouterr().out
    assert out.startswith(f"{FAILED} answer_42 raised NotImplementedError")
    assert "not done yet" not in out and "Hint: " in out


def test_an_error_becomes_one_friendly_line(capsys):
    def broken():
        raise ValueError(f"bad value in {broken!r}")  # a message with a memory address

    check = Check("answer_42")
    assert check.run(broken) is STOPPED
    out = capsys.readouterr().out
    assert out.startswith(f"{FAILED} broken raised ValueError: bad value in <function")
    assert re.search(r"0x[0-9a-f]+", out) is None
    assert "Traceback" not in out


def test_the_answers_prints_and_warnings_are_captured(capsys):
    check = Check("shouty_answer")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a warning escaping the check would raise here
        captured = check.capture(shouty_answer)
    assert captured.result == 42
    assert captured.stdout == "debugging output the student forgot\n"
    assert captured.warnings == ["UserWarning: a warning the student caused"]
    check.equal(captured.result, 42, "the answer is 42", hint="-")
    assert capsys.readouterr().out == f"{PASSED} the answer is 42\n"


def test_every_correct_answer_prints_the_same(capsys):
    outputs = []
    for answer in (answer_42, shouty_answer):
        check = Check("answer_42")
        check.equal(check.run(answer), 42, "the answer is 42", hint="-")
        checks.sentinel("check_answer")
        outputs.append(capsys.readouterr().out)
    assert (
        outputs[0] == outputs[1] == f"{PASSED} the answer is 42\n[hookviz] check_answer: finished\n"
    )


def test_a_missing_name_is_not_done_yet(capsys):
    check = Check("answer_42", "never_defined_anywhere")
    assert not check.ok
    assert capsys.readouterr().out.startswith(
        f"{NOT_DONE} never_defined_anywhere is not defined yet"
    )


def test_a_name_that_is_not_a_function_gets_a_hint(capsys):
    check = Check("not_a_function")
    assert not check.ok and check.failed == 1
    out = capsys.readouterr().out
    assert out.startswith(f"{FAILED} not_a_function should be a function, but it is an int.")
    assert "Hint: define it with `def not_a_function(...):`" in out


def test_a_wrong_type_stops_the_check(capsys):
    check = Check("answer_42")
    assert not check.is_type([1, 2], dict, "returns a dict", hint="return a dict")
    check.equal(1, 2, "never printed", hint="-")
    out = capsys.readouterr().out
    assert (
        out
        == f"{FAILED} returns a dict\n    it is a list of 2 items, expected a dict\n    Hint: return a dict\n"
    )


def test_raises(capsys):
    check = Check("answer_42")

    def fails():
        raise ValueError("no")

    assert check.raises(ValueError, fails, "fails loudly", hint="-")
    assert not check.raises(ValueError, answer_42, "fails loudly again", hint="let it raise")
    out = capsys.readouterr().out
    assert out.splitlines()[0] == f"{PASSED} fails loudly"
    assert "it did not raise (expected ValueError)" in out and "Hint: let it raise" in out


def test_why_is_printed_under_a_pass_only(capsys):
    Check("answer_42").equal(42, 42, "right", hint="think again", why="because")
    Check("answer_42").equal(41, 42, "right", hint="think again", why="because")
    out = capsys.readouterr().out
    assert out.count("Why: because") == 1 and out.startswith(f"{PASSED} right\n    Why: because\n")


def test_true_needs_a_bool_from_the_check_cell():
    with pytest.raises(TypeError, match="needs a bool"):
        Check("answer_42").true(torch.tensor(True), "claim", hint="-")


def test_sentinel(capsys):
    checks.sentinel("check_print_module")
    assert capsys.readouterr().out == "[hookviz] check_print_module: finished\n"
    with pytest.raises(TypeError, match="grade_id"):
        checks.sentinel("")


def test_try_it_runs_in_the_open_and_says_not_done(capsys):
    with pytest.warns(UserWarning, match="the student caused"):
        assert checks.try_it(shouty_answer) == 42
    assert checks.try_it(stub) is None
    out = capsys.readouterr().out
    assert out.startswith("debugging output the student forgot\n")
    assert f"{NOT_DONE} stub: not done yet" in out
