"""Before grading anyone, grade the instructor's own notebook: it must score full marks.

A check cell edited without re-running the notebook, a hints file changed since, a check that
prints something different on every run: each would make every student fail that check. So
`hookviz grade` first grades the assignment itself, as one more submission under the same
sandbox and limits, and stops with the checks that failed and how to fix them unless it
scores full marks. The verdict is kept in the out folder (``solution-check.json``) for the
same assignment and check helpers, so a resumed run does not pay for it again.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

import hookviz

from ...course.conventions import Status, shorten
from ...course.format.notebooks import NotebookError, atomic_write_text
from ..core.gradebook import OutFolder
from ..core.merge import Assignment
from ..core.results import CheckResult, SubmissionResult
from ..core.submissions import Submission
from .engine import grade_submission
from .nbval_child import GradeSettings
from .sandbox import ChildRunner

VERDICT_FILE = "solution-check.json"
SOLUTION_STUDENT = "(your solution)"
COURSE_DIR = Path(hookviz.__file__).resolve().parent / "course"


def helpers_sha256() -> str:
    """A fingerprint of what the checks print with: hookviz/course's code and hints files."""
    digest = hashlib.sha256()
    for path in sorted(COURSE_DIR.rglob("*")):
        if path.suffix in (".py", ".toml") and "__pycache__" not in path.parts:
            digest.update(path.relative_to(COURSE_DIR).as_posix().encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()


def verify_solution(
    assignment: Assignment,
    sandbox: ChildRunner | None,
    settings: GradeSettings,
    out: OutFolder,
    stream: TextIO,
    *,
    grade: Callable[[Submission], SubmissionResult] | None = None,
) -> None:
    """Grade the assignment notebook itself; NotebookError unless it scores full marks.

    ``grade``, when given, grades it the batch's way (on a Dask cluster, say), not in ``sandbox``.
    """
    key = {"assignment_sha256": assignment.sha256, "helpers_sha256": helpers_sha256()}
    verdict_path = out.path / VERDICT_FILE
    with out.locked():  # a second run on this out folder waits, then finds the verdict
        try:
            if json.loads(verdict_path.read_text(encoding="utf-8")) == {**key, "full_marks": True}:
                return
        except (OSError, ValueError):
            pass
        print(
            f"hookviz grade: grading your own {assignment.path.name} first (it must score full marks)",
            file=stream,
        )
        scratch = Path(tempfile.mkdtemp(prefix="hookviz-solution-"))
        scratch.chmod(0o711)  # an unprivileged grading user must reach its own folder inside
        try:
            if grade is not None:
                result = grade(Submission(SOLUTION_STUDENT, assignment.path))
            else:
                result = grade_submission(
                    Submission(SOLUTION_STUDENT, assignment.path),
                    assignment,
                    sandbox,
                    settings,
                    slot=0,
                    scratch=scratch,
                )
        except BaseException:  # Ctrl-C: stop the child now, not after its timeout
            if sandbox is not None:
                sandbox.kill_all()
            raise
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        # Questions graded by hand wait for you: only the checks must score full marks.
        failed = [c for c in result.checks if not c.manual and c.points < c.max_points]
        if not failed and result.status == Status.OK:
            atomic_write_text(verdict_path, json.dumps({**key, "full_marks": True}, indent=1))
            return
    lines = [
        f"{assignment.path}: your own notebook, graded as a submission, scores "
        f"{result.total:g} / {assignment.auto_points:g} (status {result.status}"
        + (f": {result.detail}" if result.detail else "")
        + "), so every student would be graded against output it does not print. Nothing was graded.",
        *(f"  - {_explain(check)}" for check in failed),
        "Run the notebook again and store its outputs "
        f"(hookviz run {assignment.path}), make sure each check prints "
        "the same on every run (seeded, no addresses or timings), then grade again.",
    ]
    raise NotebookError("\n".join(lines))


def _explain(check: CheckResult) -> str:
    """'check_x: mismatch: line 2 is '...', the stored output has '...''."""
    text = f"{check.grade_id}: {check.outcome}"
    if check.detail:
        text += f" ({check.detail})"
    got, want = check.actual.splitlines(), check.expected.splitlines()
    for number, (g, w) in enumerate(zip(got, want, strict=False), start=1):
        if g != w:
            return f"{text}: line {number} is {_clip(g)!r}, the stored output has {_clip(w)!r}"
    if len(got) != len(want):
        return f"{text}: it printed {len(got)} lines, the stored output has {len(want)}"
    return text


def _clip(line: str, limit: int = 120) -> str:
    return shorten(line, limit, "...")
