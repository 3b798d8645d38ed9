"""What grading says about a submission: a result per check, and one per student.

Every command reads and writes these: the engine fills them, the out folder stores them as
results/<student>.json, the gradebook, feedback, manual grading, platforms and report read them.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone

from ...course.conventions import Outcome, Status
from .merge import NO_ANSWER, Assignment
from .submissions import Submission


@dataclass
class CheckResult:
    """One check cell's result."""

    grade_id: str
    max_points: float
    points: float = 0.0
    outcome: str = Outcome.NOT_RUN  # an Outcome, or the Status of a submission that never ran
    detail: str = ""
    expected: str = ""
    actual: str = ""
    seconds: float = 0.0
    tamper: list[str] = field(default_factory=list)
    nbval_outcome: str = ""  # what the output comparison alone said, before integrity checks
    hidden_failure: str = ""  # the message of a failed hidden test, when one failed
    error: str = ""  # the exception the cell raised, as ``Name: message``, when it raised
    manual: bool = False  # a question graded by hand: ``actual`` is the answer, as markdown
    comment: str = ""  # the grader's comment on a question graded by hand


@dataclass
class SubmissionResult:
    """Everything the gradebook and the feedback file need about one student."""

    student: str
    assignment: str
    assignment_sha256: str
    submission: str
    submission_sha256: str
    status: str
    detail: str
    total: float
    max_total: float
    checks: list[CheckResult]
    notes: list[str] = field(default_factory=list)
    flags: list[str] = field(default_factory=list)  # each Flag's text form, sorted
    matched_by: dict[str, str] = field(default_factory=dict)
    seconds: float = 0.0
    sandbox: str = ""
    graded_at: str = ""
    lang: str = "en"  # the language the notebook was handed out in: its feedback's language

    def to_json(self) -> dict:
        """A plain dict for results/<student>.json."""
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict) -> SubmissionResult:
        """Read back what ``to_json`` wrote."""
        data = dict(data)
        data["checks"] = [CheckResult(**c) for c in data.get("checks", [])]
        return cls(**data)


def empty_result(
    submission: Submission, assignment: Assignment, status: Status, detail: str, sha: str = ""
) -> SubmissionResult:
    """A row for a submission that was not run: every check scores 0 with the reason."""
    checks = [
        CheckResult(c.grade_id, c.points, outcome=status, detail=detail, expected=c.expected)
        for c in assignment.checks
    ] + [
        CheckResult(q.grade_id, q.points, outcome=status, detail=detail, manual=True)
        for q in assignment.manual
    ]
    return SubmissionResult(
        student=submission.student,
        assignment=assignment.name,
        assignment_sha256=assignment.sha256,
        submission=str(submission.path or ""),
        submission_sha256=sha,
        status=status,
        detail=detail,
        total=0.0,
        max_total=assignment.max_points,
        checks=checks,
        graded_at=now_utc(),
    )


def manual_checks(assignment: Assignment, answers: dict[str, str]) -> list[CheckResult]:
    """The questions graded by hand, each waiting for its grade, with the student's answer."""
    return [
        CheckResult(
            q.grade_id,
            q.points,
            outcome=Outcome.NEEDS_MANUAL_GRADE,
            expected=q.model_answer,
            actual=answers.get(q.grade_id, NO_ANSWER),
            manual=True,
        )
        for q in assignment.manual
    ]


def now_utc() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def points_text(value: float) -> str:
    """Points as the gradebook and feedback write them: 2, 0.5, 1.25."""
    return f"{value:g}"
