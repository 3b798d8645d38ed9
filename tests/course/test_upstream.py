"""hookviz.course.upstream: a check grades its own cell, whatever the earlier answers it runs hold.

A later check (``Check("later")``) runs the earlier answer ``earlier`` inside ``with
check.upstream(earlier=correct_earlier)``: when the earlier answer's own check did not pass,
for the very object the notebook holds, its correct version runs instead, a note says why, and
the student's own is bound back afterwards.
"""

from __future__ import annotations

import pytest
import torch
from torch import nn

from hookviz.course import checks
from hookviz.course.checks import FAILED, NOT_DONE, PASSED, Check, Hint
from hookviz.course.conventions import NOTE_MARK, notes, without_notes

HINT = Hint("look again", code="return 2 * x", key="k")


def earlier(x):
    return 3 * x  # wrong: the task asks for 2 * x


def correct_earlier(x):
    return 2 * x


def later(x):
    return earlier(x) + 1  # right, given a right earlier()


def stub(x):
    # YOUR CODE HERE
    raise NotImplementedError()


@pytest.fixture
def fresh_kernel(monkeypatch):
    monkeypatch.setattr(checks, "_KERNEL", checks._Kernel())
    return checks._KERNEL


def check_earlier(value_of=None) -> None:
    """The earlier answer's own check cell: ✓ when earlier(1) is 2."""
    check = Check("earlier")
    check.equal(check.run(value_of or earlier, 1), 2, "earlier(1) is 2", hint=HINT)
    checks.sentinel("check_earlier")


def check_later() -> None:
    """The later answer's check cell, run with a correct earlier() when theirs has a ✗."""
    check = Check("later")
    with check.upstream(earlier=correct_earlier):
        check.equal(check.run(later, 1), 3, "later(1) is 3", hint=HINT)
    checks.sentinel("check_later")


def test_a_wrong_earlier_answer_costs_only_its_own_cell(fresh_kernel, capsys):
    check_earlier()
    assert f"{FAILED} earlier(1) is 2" in capsys.readouterr().out
    check_later()
    printed = capsys.readouterr().out
    assert notes(printed) == ["checked with a correct earlier, since yours has a ✗ above"]
    assert without_notes(printed) == (
        f"{PASSED} later(1) is 3\n[hookviz] check_later: finished\n"
    )  # what a correct answer prints with a correct earlier(): full marks
    assert earlier(1) == 3  # the student's own is back


def test_a_passing_earlier_answer_is_the_students_own(fresh_kernel, capsys, monkeypatch):
    monkeypatch.setitem(globals(), "earlier", correct_earlier)
    check_earlier()
    check_later()
    printed = capsys.readouterr().out
    assert NOTE_MARK not in printed and f"{PASSED} later(1) is 3" in printed


def test_an_answer_changed_since_its_check_is_the_students_own(fresh_kernel, capsys, monkeypatch):
    check_earlier()  # a ✗ for the wrong earlier()
    monkeypatch.setitem(globals(), "earlier", lambda x: 5 * x)  # redefined, not checked again
    check_later()
    printed = capsys.readouterr().out
    assert NOTE_MARK not in printed
    assert f"{FAILED} later(1) is 3" in printed  # judged with what the student has now


def test_an_earlier_answer_not_written_yet_is_replaced(fresh_kernel, capsys, monkeypatch):
    monkeypatch.setitem(globals(), "earlier", stub)
    check_earlier()
    assert f"{NOT_DONE} stub: not done yet" in capsys.readouterr().out
    check_later()
    printed = capsys.readouterr().out
    assert notes(printed) == ["checked with a correct earlier, since yours is not done yet"]
    assert f"{PASSED} later(1) is 3" in printed
    assert earlier is stub


def test_an_earlier_answer_not_defined_is_lent_and_taken_back(fresh_kernel, capsys, monkeypatch):
    monkeypatch.delitem(globals(), "earlier")
    check_later()
    printed = capsys.readouterr().out
    assert notes(printed) == ["checked with a correct earlier, since yours is not done yet"]
    assert "earlier" not in globals()


def test_a_hidden_failure_above_counts_as_failed(fresh_kernel, capsys):
    check = Check("earlier")

    def verify(x):
        check.equal(check.run(earlier, x), 2 * x, f"earlier({x}) is {2 * x}", hint=HINT)

    verify(0)  # 3 * 0 == 2 * 0: the visible check passes
    with pytest.raises(checks.HiddenTestFailed):
        check.hidden(verify, 1)
    check_later()
    printed = capsys.readouterr().out
    assert notes(printed) == [
        "checked with a correct earlier, since yours fails a hidden test of its check"
    ]


def test_the_students_answer_is_bound_back_when_the_block_raises(fresh_kernel, capsys):
    check_earlier()
    check = Check("later")
    with pytest.raises(ZeroDivisionError), check.upstream(earlier=correct_earlier):
        assert earlier is correct_earlier
        1 / 0  # noqa: B018
    assert earlier(1) == 3


def test_a_hidden_test_inside_the_block_runs_with_the_correct_version_too(fresh_kernel, capsys):
    check_earlier()
    check = Check("later")

    def verify(x):
        check.equal(check.run(later, x), 2 * x + 1, f"later({x}) is {2 * x + 1}", hint=HINT)

    with check.upstream(earlier=correct_earlier):
        verify(1)
        check.hidden(verify, 7)  # raises HiddenTestFailed if the student's earlier() ran
    checks.sentinel("check_later")
    assert "[hookviz] check_later: finished" in capsys.readouterr().out


def test_the_note_speaks_the_notebooks_language(fresh_kernel, capsys, monkeypatch):
    monkeypatch.setenv("HOOKVIZ_LANG", "ko")
    check_earlier()
    check_later()
    (note,) = notes(capsys.readouterr().out)
    assert note.endswith("올바른 earlier 함수로 검사했습니다"), note


def test_upstream_needs_functions(fresh_kernel):
    with pytest.raises(TypeError, match="correct function for earlier"):
        Check("later").upstream(earlier=2)


# -- graph connectivity --------------------------------------------------------------------


def test_no_path_back_tells_values_from_a_graph(fresh_kernel, capsys):
    layer = nn.Linear(3, 3)
    x = torch.randn(2, 3, requires_grad=True)
    output = layer(x)
    check = Check("later")
    assert check.no_path_back(output.detach().clone(), {"x": x}, "values only", hint=HINT)
    assert check.no_path_back(torch.zeros(2), {"x": x}, "a new tensor", hint=HINT)
    assert not check.no_path_back(
        output.clone(), {"x": x, "the weight": layer.weight}, "a clone is still graph", hint=HINT
    )
    assert not check.no_path_back(x, {"x": x}, "the source itself", hint=HINT)
    printed = capsys.readouterr().out
    assert "autograd's graph leads from it back to x and the weight" in printed, printed
    assert "autograd's graph leads from it back to x:" in printed, printed


# -- the function at fault -----------------------------------------------------------------


def earlier_in_place(x):
    p = nn.Parameter(torch.ones(2))
    p.fill_(1.0)  # raises: an in-place change of a leaf that requires grad
    return x


def test_stuck_names_the_answer_whose_code_raised(fresh_kernel, capsys):
    fresh_kernel.hints = {"later": {}, "earlier_in_place": {}}
    check = Check("later")
    check.run(lambda: earlier_in_place(1))
    printed = capsys.readouterr().out
    assert "earlier_in_place raised RuntimeError" in printed, printed
    assert 'checks.hint("earlier_in_place")' in printed, printed
    assert "earlier_in_place" in fresh_kernel.failed  # what that checks.hint() then shows


def test_stuck_keeps_to_this_answer_when_the_raising_one_passed_its_check(fresh_kernel, capsys):
    """hook raising on a ReLU that linear_transformation hooked is linear_transformation's fault."""
    fresh_kernel.hints = {"later": {}, "earlier_in_place": {}}
    checks.sentinel("check_nothing")  # no check yet: nothing recorded
    fresh_kernel.verdicts["earlier_in_place"] = checks.upstream.Verdict(
        earlier_in_place, checks.upstream.PASSED
    )
    Check("later").run(lambda: earlier_in_place(1))
    printed = capsys.readouterr().out
    assert 'checks.hint("later")' in printed and "earlier_in_place" not in fresh_kernel.failed
