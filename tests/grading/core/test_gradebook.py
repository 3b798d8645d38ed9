"""The out folder: the gradebook, safe for spreadsheets and files, one assignment, concurrent saves."""

from __future__ import annotations

import csv
import json
import threading
from pathlib import Path

import pytest

from hookviz.course.format.notebooks import NotebookError
from hookviz.grading.core.feedback import feedback_markdown
from hookviz.grading.core.gradebook import OutFolder, safe_name
from hookviz.grading.core.results import CheckResult, SubmissionResult


def result_for(student: str, assignment, total: float = 5.0) -> SubmissionResult:
    return SubmissionResult(
        student=student,
        assignment=assignment.name,
        assignment_sha256=assignment.sha256,
        submission="",
        submission_sha256="",
        status="ok",
        detail="",
        total=total,
        max_total=assignment.max_points,
        checks=[
            CheckResult(c.grade_id, c.points, points=c.points, outcome="passed")
            for c in assignment.checks
        ],
        flags=["grader (double)"] if student.startswith("=") else [],
    )


def test_gradebook_rows_are_safe_for_spreadsheets_and_names_for_files(
    tmp_path: Path, assignment
) -> None:
    out = OutFolder(tmp_path)
    for name in ("ann", "=HYPERLINK(evil)", "../../etc/passwd"):
        out.save(result_for(name, assignment))
    with out.locked():
        out.rebuild(assignment)
    rows = list(csv.reader((tmp_path / "gradebook.csv").open()))
    assert rows[0] == [
        "student",
        "total",
        "check_double",
        "check_shout",
        "check_triple",
        "status",
        "flags",
    ]
    assert sorted(r[0] for r in rows[1:]) == ["'=HYPERLINK(evil)", "../../etc/passwd", "ann"]
    assert all(p.parent == tmp_path / "results" for p in (tmp_path / "results").iterdir())
    assert safe_name("ann") == "ann" and "/" not in safe_name("../../etc/passwd")


def test_an_out_folder_belongs_to_one_assignment(tmp_path: Path, assignment) -> None:
    (tmp_path / "assignment.json").write_text(json.dumps({"name": "other"}))
    with pytest.raises(NotebookError, match="holds grades for 'other'"):
        OutFolder(tmp_path).check_assignment(assignment)


def test_concurrent_saves_and_rebuilds_lose_nothing(tmp_path: Path, assignment) -> None:
    out = OutFolder(tmp_path)

    def work(prefix: str) -> None:
        for n in range(25):
            out.save(result_for(f"{prefix}{n}", assignment))
            with out.locked():
                out.rebuild(assignment)

    threads = [threading.Thread(target=work, args=(p,)) for p in "ab"]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    rows = list(csv.DictReader((tmp_path / "gradebook.csv").open()))
    assert (
        len(rows) == 50
        and len(json.loads((tmp_path / "gradebook.json").read_text())["students"]) == 50
    )


def test_feedback_fences_survive_backticks_and_long_outputs(assignment) -> None:
    result = result_for("ann", assignment)
    result.checks[0] = CheckResult(
        "check_double",
        2,
        outcome="mismatch",
        expected="ok\n",
        actual="```\n" + "x" * 50_000 + "\nHint: multiply by 2\n",
    )
    text = feedback_markdown(result)
    assert "````text" in text and "characters left out" in text and "- Hint: multiply by 2" in text
