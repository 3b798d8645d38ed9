"""`hookviz report OUT`: the item analysis of tests/tiny_course.py's graded batch (graded once per run).

Each figure and table is checked against the gradebook it summarises; the page must be one
self-contained file that runs nothing; near-identical answers are found in the batch's real
submissions (several students share the solution's answers, two share a wrong one), and the
report must leave the out folder exactly as it was.
"""

from __future__ import annotations

import base64
import csv
import json
import re
import struct
from pathlib import Path

import pytest

from hookviz.cli import main
from hookviz.grading.core.gradebook import OutFolder
from hookviz.grading.core.merge import load_assignment
from hookviz.grading.core.results import CheckResult, SubmissionResult
from hookviz.grading.report.analysis import NOT_SUBMITTED
from hookviz.grading.report.similarity import near_identical
from hookviz.grading.report.write import write_report
from tests.tiny_course import TINY

pytestmark = [pytest.mark.notebook, pytest.mark.slow]

FIGURES = {"scores", "checks", "failures", "time", "flags"}


def snapshot(folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()
    }


@pytest.fixture(scope="module")
def report(graded_batch, tmp_path_factory):
    out = graded_batch.out
    before = snapshot(out)
    written = write_report(out, destination=tmp_path_factory.mktemp("report") / "report.html")
    return out, written, before


def gradebook_rows(out: Path) -> list[dict]:
    with open(out / "gradebook.csv", newline="") as handle:
        return list(csv.DictReader(handle))


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", data[16:24])


def test_the_report_changes_nothing_in_the_out_folder(report) -> None:
    out, _, before = report
    assert snapshot(out) == before


def test_the_page_is_one_file_that_runs_and_fetches_nothing(report) -> None:
    _, written, _ = report
    page = written.html.read_text()
    assert (
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; img-src data:;'
        in page
    )
    assert "<script" not in page.lower()
    assert not re.search(r"""(src|href)=["'](?!data:)""", page)  # no file or address to fetch
    inlined = re.findall(r'<img src="data:image/png;base64,([^"]+)" alt="([^"]+)">', page)
    assert set(written.figures) == FIGURES
    beside = {path.read_bytes() for path in written.figures.values()}
    assert {base64.b64decode(data) for data, _ in inlined} == beside  # the same PNGs, inlined
    for path in written.figures.values():
        assert path.parent == written.html.parent / "report-figures"
        width, height = png_size(path.read_bytes())
        assert width >= 500 and height >= 200


def test_pass_rates_and_discrimination_match_the_gradebook(report) -> None:
    out, written, _ = report
    document = json.loads((out / "gradebook.json").read_text())
    rows = [r for r in gradebook_rows(out) if r["status"] not in NOT_SUBMITTED]
    for stats in written.checks:
        full = document["max_points"][stats.grade_id]
        passed = sum(1 for r in rows if float(r[stats.grade_id]) == full)
        assert (stats.passed, stats.attempted) == (passed, len(rows)), stats.grade_id
        assert f"{passed} / {len(rows)}" in written.html.read_text()
        assert -1 <= stats.discrimination <= 1
    assert [s.grade_id for s in written.checks] == list(document["max_points"])


def test_failure_messages_group_alike_failures_per_check(report) -> None:
    out, written, _ = report
    checks = {s.grade_id: s for s in written.checks}
    double = checks["check_double"].failures
    # Two students wrote double(x) = 2 + x: right on the visible check, wrong on the hidden one.
    wrong = [
        r["student"]
        for r in gradebook_rows(out)
        if r["student"] in ("partly_wrong", "edited_checks")
    ]
    assert double["hidden test failed: double(-3) should be -6"] >= len(wrong) == 2
    assert (
        "partly_wrong"
        in checks["check_double"].examples["hidden test failed: double(-3) should be -6"]
    )
    assert double["timeout: the check ran longer than 10 s"] >= 1  # infinite_loop
    assert checks["check_shout"].failures["ValueError: boom"] == 1  # raises
    assert (
        sum(checks["check_shout"].failures.values())
        == checks["check_shout"].attempted - checks["check_shout"].passed
    )
    page = written.html.read_text()
    assert "<code>hidden test failed: double(-3) should be -6</code>" in page


def test_time_and_flags_sections(report) -> None:
    out, written, _ = report
    page = written.html.read_text()
    slowest = max(
        (r for r in written.results if r.status not in NOT_SUBMITTED), key=lambda r: r.seconds
    )
    assert f"<tr><td>{slowest.student}</td><td>{slowest.seconds:.1f}</td>" in page
    flagged = {r["student"]: r["flags"] for r in gradebook_rows(out) if r["flags"]}
    assert flagged  # the batch's hostile students
    for student, flags in flagged.items():
        assert f"<tr><td>{student}</td>" in page and flags.replace("'", "&#x27;") in page


def test_short_answers_are_not_compared_by_default(report) -> None:
    _, written, _ = report
    assert written.groups == [] and written.engine in ("ast", "copydetect")
    assert "None found." in written.html.read_text()


@pytest.mark.parametrize("engine", ["ast", "copydetect"])
def test_near_identical_answers_in_the_batch(graded_batch, tmp_path: Path, engine: str) -> None:
    written = write_report(
        graded_batch.out, destination=tmp_path / "r.html", similarity=engine, min_tokens=5
    )
    assert written.engine == engine
    doubles = {tuple(g.students): g for g in written.groups if g.answer == "double"}
    solution = next(g for members, g in doubles.items() if "correct" in members)
    assert {"correct", "deep", "old_format"} <= set(solution.students)
    assert "partly_wrong" not in solution.students and solution.same_as_solution
    shared_mistake = next(g for members, g in doubles.items() if "partly_wrong" in members)
    assert "edited_checks" in shared_mistake.students and not shared_mistake.same_as_solution
    assert shared_mistake.source.strip() == "def double(x):\n    return 2 + x"
    page = written.html.read_text()
    assert "Near-identical to your solution too." in page and "return 2 + x" in page


LONG_ANSWER = '''\
def visit_names(model):
    """The class names of the modules apply visits, in order."""
    names = []

    def record(module):
        names.append(type(module).__name__)  # one name per visit

    model.apply(record)
    return names
'''
RENAMED = """\
def visit_names(net):
    seen = []
    def grab(m):
        seen.append(type(m).__name__)
    net.apply(grab)
    return seen
"""
OTHER_WAY = """\
def visit_names(model):
    order = list(model.modules())
    order.reverse()
    return [type(m).__name__ for m in order if m is not None]
"""
STUB = 'def visit_names(model):\n    """The class names."""\n    # YOUR CODE HERE\n    raise NotImplementedError()\n'


@pytest.mark.parametrize("engine", ["ast", "copydetect"])
def test_a_renamed_copy_is_found_and_another_approach_is_not(engine: str) -> None:
    answers = {
        "ann": {"visit": LONG_ANSWER},
        "bo": {"visit": RENAMED},
        "cy": {"visit": OTHER_WAY},
        "di": {"visit": STUB},  # handed in as handed out
        "ed": {"visit": "def visit_names(model):\n    return []\n"},  # too short to tell
        "fay": {"visit": "def visit_names(model:\n    return [(\n"},  # does not parse
    }
    groups, used = near_identical(
        answers, {"visit": STUB}, {"visit": OTHER_WAY}, engine=engine, min_tokens=12
    )
    assert used == engine
    assert [(g.answer, g.students, g.same_as_solution) for g in groups] == [
        ("visit", ["ann", "bo"], False)
    ]
    assert groups[0].similarity >= 0.9 and groups[0].tokens >= 12


def test_student_text_is_escaped_in_the_page(tmp_path: Path) -> None:
    assignment = load_assignment(TINY)
    out = OutFolder(tmp_path / "out")
    checks = [
        CheckResult(
            c.grade_id, c.points, outcome="mismatch", actual="✗ <script>alert(1)</script>\n"
        )
        for c in assignment.checks
    ]
    for name in ("<b>eve</b>", "al"):
        out.save(
            SubmissionResult(
                student=name, assignment="tiny", assignment_sha256=assignment.sha256, submission="",
                submission_sha256="", status="ok", detail="", total=0.0, max_total=5.0, checks=checks,
                flags=["grader (<i>double</i>)"], seconds=1.0,
            )
        )  # fmt: skip
    out.rebuild(assignment)
    page = write_report(tmp_path / "out", similarity="off").html.read_text()
    assert "<script" not in page and "<b>eve" not in page and "<i>double" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page and "&lt;b&gt;eve&lt;/b&gt;" in page


def test_the_command(graded_batch, tmp_path: Path, capsys) -> None:
    out = graded_batch.out
    assert main(["report", str(out), "-o", str(tmp_path / "page.html"), "--similarity", "off"]) == 0
    assert (tmp_path / "page.html").is_file() and (
        tmp_path / "report-figures" / "scores.png"
    ).is_file()
    assert "wrote" in capsys.readouterr().out
    assert main(["report", str(tmp_path)]) == 2
    assert "pass the out folder of `hookviz grade`" in capsys.readouterr().err
    assert main(["report", str(out), "-o", str(tmp_path / "x.html"), "--threshold", "2"]) == 2
