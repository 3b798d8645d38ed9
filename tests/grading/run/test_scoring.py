"""Scoring a grading child's records."""

from __future__ import annotations

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
