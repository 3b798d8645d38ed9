"""Scoring a grading child's records."""

from __future__ import annotations

import copy

from hookviz.grading.run.limits import Limits


def test_a_run_that_ran_no_cell_is_an_error_not_ok(assignment) -> None:
    """pytest could not collect the notebook: it finished, but no cell ran; the row says so."""
    from hookviz.grading.run.sandbox import ChildResult
    from hookviz.grading.run.scoring import score

    child = ChildResult(
        returncode=4,
        timed_out=False,
        seconds=1.0,
        records=[{"event": "done"}],
        output_tail="ERROR: file or directory not found: ...",
    )
    result = score(assignment, child, Limits())
    assert result.status == "error" and "no cell of the notebook ran" in result.detail
    assert result.total == 0 and all(c.outcome == "not-run" for c in result.checks)
    assert any("file or directory not found" in note for note in result.notes)


def test_a_name_put_back_before_a_check_is_said_once_in_the_students_language(assignment):
    """The plugin's record of a locked cell's name that answers bound again: one note naming the
    first check that ran with the instructor's object, one flag, in English or Korean."""
    from hookviz.grading.run.sandbox import ChildResult
    from hookviz.grading.run.scoring import score

    checks = list(assignment.checks)
    restored = [{"name": "torch", "cell": "setup"}]
    records = [
        {"event": "cell", "index": check.index, "outcome": "passed", "restored": restored}
        for check in checks
    ] + [{"event": "done"}]
    child = ChildResult(returncode=0, timed_out=False, seconds=1.0, records=records, output_tail="")
    result = score(assignment, child, Limits())
    assert [str(flag) for flag in result.flags] == ["locked-name-rebound (torch)"]
    assert result.notes == [
        "Your answer cells define torch again, which the locked cell setup defines; the checks "
        f"from {checks[0].grade_id} on ran with the locked cell's torch, as they were written "
        "for it. Give yours another name."
    ]
    in_korean = copy.deepcopy(assignment)  # the fixture is the module's
    in_korean.notebook.metadata["hookviz"] = {"lang": "ko"}
    korean = score(in_korean, child, Limits()).notes
    assert len(korean) == 1 and "잠긴 셀 setup" in korean[0] and checks[0].grade_id in korean[0]
