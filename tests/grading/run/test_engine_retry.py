"""A failure of the grader's own (not the submission's) is graded once more, and flagged; a
failure that happens again is the row's error, with its traceback."""

from __future__ import annotations

import tempfile
from pathlib import Path

import nbformat
import pytest

from hookviz.grading.core.merge import load_assignment
from hookviz.grading.core.submissions import Submission
from hookviz.grading.run.engine import grade_submission
from hookviz.grading.run.limits import Limits
from hookviz.grading.run.nbval_child import GradeSettings
from hookviz.grading.run.sandbox import detect_sandbox
from tests.grading_env import private_jupyter_dirs
from tests.tiny_course import CELL_TIMEOUT, TINY, student

pytestmark = [pytest.mark.notebook, pytest.mark.slow]


def graded_with_failures(root: Path, failures: int):
    """One honest submission, graded through a sandbox whose first ``failures`` runs raise."""
    sandbox = detect_sandbox("none", [])
    run, calls = sandbox.run, []

    def flaky(program, child):
        calls.append(child.workdir.name)
        if len(calls) <= failures:
            raise RuntimeError(f"the scratch folder went away (run {len(calls)})")
        return run(program, child)

    sandbox.run = flaky
    nbformat.write(student(), root / "ann.ipynb")
    settings = GradeSettings(Limits(cell_timeout=CELL_TIMEOUT, submission_timeout=90))
    with private_jupyter_dirs(root / "jupyter"):
        scratch = Path(tempfile.mkdtemp(dir=root))
        result = grade_submission(
            Submission("ann", root / "ann.ipynb"),
            load_assignment(TINY),
            sandbox,
            settings,
            slot=0,
            scratch=scratch,
        )
    return result, calls


def test_a_failure_once_is_graded_again_and_flagged(tmp_path) -> None:
    result, calls = graded_with_failures(tmp_path, failures=1)
    assert len(calls) == 2 and result.status == "ok" and result.total == result.max_total
    assert result.flags == ["graded-twice (RuntimeError: the scratch folder went away (run 1))"]


def test_a_failure_twice_is_the_rows_error_with_the_first_traceback(tmp_path) -> None:
    result, calls = graded_with_failures(tmp_path, failures=2)
    assert len(calls) == 2 and result.status == "error" and result.total == 0
    assert result.detail.startswith("the grader failed: Traceback")
    assert result.detail.rstrip().endswith("the scratch folder went away (run 1)")
    assert all(c.outcome == "error" for c in result.checks)
