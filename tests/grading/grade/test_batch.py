"""`hookviz grade` end to end: one batch of honest and hostile submissions, graded in parallel.

Every case of issue 5 is a student in one batch (-j 2, short timeouts), so kernels start once
per student and the file stays within a few minutes on two cores. Each test then reads that
student's row, result and feedback. The batch and its assignment are tests/tiny_course.py's.
"""

from __future__ import annotations

import csv
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

import nbformat
import pytest

from hookviz.course.authoring.build import exercise_from_solution
from hookviz.course.conventions import Flag
from hookviz.grading.grade.batch import GradeOptions, grade_folder
from hookviz.grading.run.limits import Limits
from tests.grading_env import grading_processes_left, private_jupyter_dirs
from tests.tiny_course import CASES, CELL_TIMEOUT, CONFIG, OPTIONS, REPO, TINY, student

pytestmark = [pytest.mark.notebook, pytest.mark.slow]


@pytest.fixture(scope="module", autouse=True)
def jupyter_home(tmp_path_factory):
    with private_jupyter_dirs(tmp_path_factory.mktemp("jupyter-home")):
        yield


# A process that leaves the kernel's session, to outlive the grading run if it can.
DAEMON_START = (
    "import subprocess, sys\n"
    "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(300)'], start_new_session=True)\n\n"
)
DAEMON = student({"shout": DAEMON_START + "def shout(text):\n    return text.upper() + '!'\n"})


@pytest.fixture(scope="module")
def batch(graded_batch):
    """The batch, graded once per run (tests/conftest.py): the Canvas and report tests read it too."""
    return graded_batch


def row(batch, name: str) -> dict:
    with open(batch.out / "gradebook.csv", newline="") as handle:
        rows = {r["student"]: r for r in csv.DictReader(handle)}
    return rows[name]


def result(batch, name: str) -> dict:
    return json.loads((batch.out / "results" / f"{name}.json").read_text())


def check(batch, name: str, gid: str) -> dict:
    return next(c for c in result(batch, name)["checks"] if c["grade_id"] == gid)


def feedback(batch, name: str) -> str:
    return (batch.out / "feedback" / f"{name}.md").read_text()


def points(batch, name: str) -> tuple:
    r = row(batch, name)
    return (r["total"], r["check_double"], r["check_shout"], r["check_triple"], r["status"])


# -- the batch as a whole ----------------------------------------------------------------------


def test_every_student_gets_one_row_and_a_feedback_file(batch) -> None:
    root, summary = batch.root, batch.summary
    with open(root / "out" / "gradebook.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert sorted(r["student"] for r in rows) == sorted(CASES)
    assert list(rows[0]) == [
        "student",
        "total",
        "check_double",
        "check_shout",
        "check_triple",
        "status",
        "flags",
    ]
    assert sorted(summary.graded) == sorted(CASES)
    document = json.loads((root / "out" / "gradebook.json").read_text())
    assert document["max_total"] == 5
    assert sorted(s["student"] for s in document["students"]) == sorted(CASES)
    for name in CASES:
        assert feedback(batch, name).startswith(f"# tiny: feedback for {name}")
    assert not list((root / "out").rglob("*.tmp"))  # atomic writes left no temporary files


def test_correct_submissions_score_full_marks_in_both_layouts(batch) -> None:
    assert points(batch, "correct") == ("5", "2", "1", "2", "ok")
    assert points(batch, "deep") == ("5", "2", "1", "2", "ok")
    assert row(batch, "correct")["flags"] == ""
    text = feedback(batch, "correct")
    assert "**Score: 5 / 5**" in text and "check_double: 2 / 2 (passed)" in text


def test_partly_wrong_loses_only_its_check_feedback_shows_claims_and_output_review_shows_expected(
    batch,
) -> None:
    assert points(batch, "partly_wrong") == ("3", "0", "1", "2", "ok")
    text = feedback(batch, "partly_wrong")
    section = text.split("## check_double")[1].split("## check_shout")[0]
    assert "What the check looks for:\n\n- double(2) is 4" in section
    assert "Your output:" in section and "AssertionError: double(-3) should be -6" in section
    assert "Expected output:" not in text  # the instructor's output can hold a prediction's why
    assert "double(-3) == -6" not in text  # hidden tests' source never reaches students
    review = (batch.out / "review" / "partly_wrong.md").read_text()
    section = review.split("## check_double")[1].split("## check_shout")[0]
    assert (
        "Expected output:" in section
        and "✓ double(2) is 4\n[hookviz] check_double: finished" in section
    )
    assert "Actual output:" in section and "AssertionError: double(-3) should be -6" in section


def test_a_failed_plain_assert_in_the_hidden_tests_is_called_a_failed_hidden_test(batch) -> None:
    assert (
        check(batch, "partly_wrong", "check_double")["hidden_failure"] == "double(-3) should be -6"
    )
    text = feedback(batch, "partly_wrong").split("## check_double")[1].split("## check_shout")[0]
    assert "but a hidden test failed" in text and "(double(-3) should be -6)" in text
    assert "The check stopped with an error" not in text  # the plain word replaces the advice


def test_an_answer_that_raises_scores_zero_for_its_check_only(batch) -> None:
    assert points(batch, "raises") == ("4", "2", "0", "2", "ok")
    assert "ValueError: boom" in check(batch, "raises", "check_shout")["actual"]


def test_an_infinite_loop_times_out_its_cell_and_later_checks_still_run(batch) -> None:
    assert points(batch, "infinite_loop") == ("3", "0", "1", "2", "timeout")
    assert check(batch, "infinite_loop", "check_double")["outcome"] == "timeout"
    assert f"longer than {CELL_TIMEOUT:g} s" in feedback(batch, "infinite_loop")


def test_a_loop_that_ignores_interrupts_costs_only_the_rest_of_its_notebook(batch) -> None:
    assert points(batch, "unstoppable_loop") == ("0", "0", "0", "0", "timeout")
    assert check(batch, "unstoppable_loop", "check_double")["outcome"] == "timeout"
    assert check(batch, "unstoppable_loop", "check_triple")["outcome"] == "not-run"
    assert "interpreter (double)" in row(batch, "unstoppable_loop")["flags"]


def test_os_exit_is_a_crash_named_in_the_feedback_and_stops_nothing_else(batch) -> None:
    assert points(batch, "os_exit") == ("2", "2", "0", "0", "crashed")
    assert check(batch, "os_exit", "check_shout")["outcome"] == "kernel-died"
    assert check(batch, "os_exit", "check_triple")["outcome"] == "not-run"
    # Noticed at once, not after the cell timeout.
    assert check(batch, "os_exit", "check_shout")["seconds"] < CELL_TIMEOUT
    assert "the kernel died in check_shout" in feedback(batch, "os_exit")


def test_a_memory_bomb_hits_the_memory_limit(batch) -> None:
    total, double, shout, triple, _ = points(batch, "memory_bomb")
    assert (total, double, shout, triple) == ("3", "2", "1", "0")
    assert check(batch, "memory_bomb", "check_triple")["outcome"] == "error"
    assert "MemoryError" in check(batch, "memory_bomb", "check_triple")["actual"]


def test_a_flood_of_output_is_cut_and_fails_only_its_check(batch) -> None:
    assert points(batch, "output_flood") == ("3", "0", "1", "2", "ok")
    actual = check(batch, "output_flood", "check_double")["actual"]
    assert len(actual) < 250_000 and "output cut after" in actual
    assert len(feedback(batch, "output_flood")) < 40_000


def test_a_fork_bomb_hits_the_process_limit(batch) -> None:
    total, double, shout, _, _ = points(batch, "fork_bomb")
    assert (double, shout) == ("2", "0")
    actual = check(batch, "fork_bomb", "check_shout")["actual"]
    assert "BlockingIOError" in actual, actual
    # The limit, not the machine, stopped it: fewer processes than the limit allows a submission.
    started = int(re.search(r"(\d+) processes started", actual).group(1))
    assert 0 < started < Limits().processes


def test_outputs_pasted_from_the_solution_count_for_nothing(batch) -> None:
    assert points(batch, "pasted_outputs") == ("1", "0", "1", "0", "ok")
    assert "not written yet" in check(batch, "pasted_outputs", "check_double")["detail"]
    assert "write it where it says YOUR CODE HERE" in feedback(batch, "pasted_outputs")


def test_edited_check_cells_are_replaced_by_the_originals(batch) -> None:
    assert points(batch, "edited_checks") == ("2", "0", "0", "2", "ok")
    notes = result(batch, "edited_checks")["notes"]
    assert "You edited the check cell check_double; the original was used." in notes


def test_deleted_duplicated_and_reordered_checks_change_nothing(batch) -> None:
    for name in ("deleted_checks", "duplicated_checks", "reordered_checks"):
        assert points(batch, name) == ("5", "2", "1", "2", "ok"), name
    assert (
        "The check cell check_double was missing from your notebook; the original was used."
        in result(batch, "deleted_checks")["notes"]
    )
    assert any("appears 2 times" in n for n in result(batch, "duplicated_checks")["notes"])
    assert any("another order" in n for n in result(batch, "reordered_checks")["notes"])


def test_notes_about_changed_cells_are_also_flags_in_the_gradebook(batch) -> None:
    expected = {
        "deleted_checks": "check-missing (check_double)",
        "duplicated_checks": "check-duplicated (check_double)",
        "reordered_checks": "checks-reordered",
        "edited_checks": "check-edited (check_double)",
        "changed_points": "points-changed (check_double)",
        "old_format": "answer-found-by-functions (double)",
        "no_answers": "answer-missing (double)",
    }
    for name, flag in expected.items():
        assert flag in row(batch, name)["flags"].split("; "), (name, row(batch, name)["flags"])
    assert row(batch, "correct")["flags"] == row(batch, "deep")["flags"] == ""


def test_every_status_and_flag_the_batch_gives_is_documented_for_instructors(batch) -> None:
    text = (REPO / "docs" / "CONVENTIONS.md").read_text()
    section = text.split("### Statuses and flags")[1].split("\n### ")[0]
    documented = set(re.findall(r"`([a-z.-]+)(?: \(check_x\))?`", section))
    results = [result(batch, name) for name in CASES]
    assert {r["status"] for r in results} <= documented
    flags = {Flag.parse(flag).kind for r in results for flag in r["flags"]}
    assert flags and flags <= documented, flags - documented
    codes = text.split("### Exit codes")[1]
    assert all(f"{code} " in codes for code in ("0", "1", "2"))


def test_changed_points_are_ignored(batch) -> None:
    assert points(batch, "changed_points") == ("5", "2", "1", "2", "ok")
    assert any("were changed to 100" in n for n in result(batch, "changed_points")["notes"])


def test_replacing_showtraceback_cannot_hide_a_failed_hidden_test(batch) -> None:
    hidden = check(batch, "showtraceback", "check_double")
    # The backbone: with the traceback hidden the sentinel never printed, so the output differs...
    assert hidden["nbval_outcome"] == "mismatch" and "finished" not in hidden["actual"]
    # ...and the probe saw the replacement. No later check can be trusted either: all score 0.
    assert hidden["outcome"] == "tampered"
    assert any("showtraceback" in t for t in hidden["tamper"])
    assert check(batch, "showtraceback", "check_shout")["nbval_outcome"] == "passed"
    assert points(batch, "showtraceback") == ("0", "0", "0", "0", "ok")
    flags = row(batch, "showtraceback")["flags"]
    assert "traceback-machinery (double)" in flags and "tampered (check_double)" in flags


def test_monkeypatching_the_checks_is_caught_and_flagged(batch) -> None:
    triple = check(batch, "checks_monkeypatched", "check_triple")
    assert triple["nbval_outcome"] == "passed"  # the patch fooled the printed check...
    assert triple["outcome"] == "tampered" and triple["points"] == 0  # ...not the grader
    assert any("checks.difference" in t for t in triple["tamper"])
    assert points(batch, "checks_monkeypatched") == ("3", "2", "1", "0", "ok")
    assert "grader (triple)" in row(batch, "checks_monkeypatched")["flags"]


def test_printing_the_sentinel_from_an_answer_does_not_pass_and_is_flagged(batch) -> None:
    assert points(batch, "sentinel_printed") == ("3", "0", "1", "2", "ok")
    assert "prints-sentinel (double)" in row(batch, "sentinel_printed")["flags"]


@pytest.mark.parametrize(
    "name, status, words",
    [
        ("invalid_json", "invalid", "not valid JSON"),
        ("empty_file", "empty", "the file is empty"),
        ("no_answers", "no-answers", "no answer cell was found"),
        ("blank", "no-answers", "every answer cell is still as it was handed out"),
        ("missing", "missing", "no tiny.ipynb in missing/"),
    ],
)
def test_unusable_files_get_a_zero_row_that_says_why(batch, name, status, words) -> None:
    assert points(batch, name) == ("0", "0", "0", "0", status)
    assert words in feedback(batch, name)


def test_an_old_format_notebook_is_converted_and_matched_by_its_functions(batch) -> None:
    assert points(batch, "old_format") == ("5", "2", "1", "2", "ok")
    assert result(batch, "old_format")["matched_by"] == {
        "double": "functions",
        "shout": "functions",
        "triple": "functions",
    }


def test_graders_run_in_parallel(batch) -> None:
    """Two submissions were graded at the same time: their runs overlap by more than the one
    second that ``graded_at`` (when each ended) may be off by."""
    results = [result(batch, name) for name in CASES]
    ends = [
        datetime.fromisoformat(r["graded_at"].replace("Z", "+00:00")).timestamp() for r in results
    ]
    runs = sorted((end - r["seconds"], end) for r, end in zip(results, ends, strict=True))
    overlaps = [
        min(a_end, b_end) - b_start
        for i, (_, a_end) in enumerate(runs)
        for b_start, b_end in runs[i + 1 :]
    ]
    assert max(overlaps) > 1.0, runs
    assert {r["sandbox"] for r in results} == {"bwrap"}


def test_a_second_run_skips_everyone_already_graded(batch) -> None:
    root = batch.root
    before = {p.name: p.read_bytes() for p in (root / "out" / "results").iterdir()}
    summary = grade_folder(root / "submitted", root / "tiny.ipynb", root / "out", OPTIONS)
    assert sorted(summary.skipped) == sorted(CASES) and summary.graded == []
    assert {p.name: p.read_bytes() for p in (root / "out" / "results").iterdir()} == before


# -- the sandbox -----------------------------------------------------------------------------


SNOOP = (
    "import os, socket\n\n"
    "def double(x):\n"
    "    seen = []\n"
    "    for path in {paths!r}:\n"
    "        shown = os.path.exists(path) and (not os.path.isdir(path) or bool(os.listdir(path)))\n"
    "        seen.append(f'{{path}}: {{shown}}')\n"
    "    try:\n"
    "        socket.create_connection(('1.1.1.1', 53), timeout=2)\n"
    "        seen.append('network: yes')\n"
    "    except OSError:\n"
    "        seen.append('network: no')\n"
    "    try:\n"
    "        open({venv_file!r}, 'a').close()\n"
    "        seen.append('venv: writable')\n"
    "    except OSError:\n"
    "        seen.append('venv: read-only')\n"
    "    try:  # the grader's pytest holds the results pipe: its descriptors stay out of reach\n"
    "        os.listdir(f'/proc/{{os.getppid()}}/fd')\n"
    "        seen.append('pytest fds: open')\n"
    "    except OSError:\n"
    "        seen.append('pytest fds: closed')\n"
    "    print('|'.join(seen))\n"
    "    return 2 * x\n"
)


def test_bwrap_hides_instructor_files_network_and_writes(tmp_path: Path) -> None:
    assert shutil.which("bwrap"), (
        "install bubblewrap (apt-get install bubblewrap): grading tests need it"
    )
    course = tmp_path / "course"
    (course / ".git").mkdir(parents=True)  # a repository: its history holds the solutions too
    (course / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (course / "solutions").mkdir()
    shutil.copy(TINY, course / "solutions" / "tiny.ipynb")
    (tmp_path / "subs").mkdir()
    nbformat.write(CASES["correct"], tmp_path / "subs" / "classmate.ipynb")
    venv_file = str(Path(sys.prefix) / "pyvenv.cfg")
    python = str(Path(sys.prefix) / "bin" / "python")
    paths = [
        str(course / "solutions"),
        str(course / ".git"),
        str(tmp_path / "subs"),
        str(tmp_path / "out"),
        python,
    ]
    nbformat.write(
        student({"double": SNOOP.format(paths=paths, venv_file=venv_file)}),
        tmp_path / "subs" / "eve.ipynb",
    )
    grade_folder(tmp_path / "subs", course / "solutions" / "tiny.ipynb", tmp_path / "out", OPTIONS)
    result = json.loads((tmp_path / "out" / "results" / "eve.json").read_text())
    seen = dict(
        item.split(": ") for item in result["checks"][0]["actual"].splitlines()[0].split("|")
    )
    assert seen == {
        str(course / "solutions"): "False",
        str(course / ".git"): "False",
        str(tmp_path / "subs"): "False",
        str(tmp_path / "out"): "False",
        python: "True",  # Python itself stays visible, read-only
        "network": "no",
        "venv": "read-only",
        "pytest fds": "closed",
    }
    assert result["sandbox"] == "bwrap"


def test_without_bwrap_the_limits_and_timeouts_still_hold(
    tmp_path: Path, capsys, monkeypatch
) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # work folders go here, to be found
    shutil.copy(TINY, tmp_path / "tiny.ipynb")
    (tmp_path / "subs").mkdir()
    nbformat.write(CASES["correct"], tmp_path / "subs" / "ann.ipynb")
    nbformat.write(CASES["os_exit"], tmp_path / "subs" / "bo.ipynb")
    nbformat.write(DAEMON, tmp_path / "subs" / "cy.ipynb")
    (tmp_path / "subs" / "di.ipynb").write_text("")
    options = GradeOptions(
        jobs=2,
        sandbox="none",
        limits=Limits(cell_timeout=CELL_TIMEOUT, submission_timeout=60, memory_mb=3072),
    )
    summary = grade_folder(tmp_path / "subs", tmp_path / "tiny.ipynb", tmp_path / "out", options)
    assert "submissions run with your user's rights" in capsys.readouterr().err
    by_student = {r.student: r for r in summary.results}
    assert (by_student["ann"].total, by_student["ann"].status) == (5, "ok")
    assert (by_student["bo"].total, by_student["bo"].status) == (2, "crashed")
    assert (by_student["cy"].total, by_student["cy"].status) == (5, "ok")
    assert {r.sandbox for r in summary.results} == {"none"}
    assert (
        grading_processes_left(tmp_path) == []
    )  # the kernels, in sessions of their own, were killed too

    assert by_student["di"].status == "empty"

    # A re-run grades only what changed (resubmissions); --force grades everyone again.
    nbformat.write(CASES["correct"], tmp_path / "subs" / "bo.ipynb")
    nbformat.write(CASES["correct"], tmp_path / "subs" / "di.ipynb")
    again = grade_folder(tmp_path / "subs", tmp_path / "tiny.ipynb", tmp_path / "out", options)
    assert (sorted(again.graded), sorted(again.skipped)) == (["bo", "di"], ["ann", "cy"])
    assert {r.student: r.total for r in again.results} == {"ann": 5, "bo": 5, "cy": 5, "di": 5}
    forced = GradeOptions(**{**options.__dict__, "force": True})
    regraded = grade_folder(tmp_path / "subs", tmp_path / "tiny.ipynb", tmp_path / "out", forced)
    assert sorted(regraded.graded) == ["ann", "bo", "cy", "di"]


def test_the_submission_wall_clock_stops_the_whole_run(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    shutil.copy(TINY, tmp_path / "tiny.ipynb")
    (tmp_path / "subs").mkdir()
    nbformat.write(
        student({"double": DAEMON_START + "def double(x):\n    while True:\n        pass\n"}),
        tmp_path / "subs" / "ann.ipynb",
    )
    # Not the instructor's notebook first: under an 8 s limit, on a busy machine, it could fail.
    options = GradeOptions(
        jobs=1,
        check_solution=False,
        limits=Limits(cell_timeout=120, submission_timeout=8, memory_mb=3072),
    )
    started = time.monotonic()
    summary = grade_folder(tmp_path / "subs", tmp_path / "tiny.ipynb", tmp_path / "out", options)
    assert time.monotonic() - started < 30
    (ann,) = summary.results
    assert (ann.total, ann.status) == (0, "timeout")
    assert "ran longer than 8 s" in ann.detail
    assert [c.outcome for c in ann.checks] == ["not-run"] * 3
    assert "ran out of time (8 s)" in ann.checks[0].detail
    assert grading_processes_left(tmp_path) == []


# -- two runs, one out folder ------------------------------------------------------------------


def test_two_runs_at_once_on_one_out_folder_lose_no_row(tmp_path: Path) -> None:
    shutil.copy(TINY, tmp_path / "tiny.ipynb")
    (tmp_path / "subs").mkdir()
    names = ["ann", "bo", "cy"]
    for name in names:
        nbformat.write(
            CASES["correct"] if name != "bo" else CASES["partly_wrong"],
            tmp_path / "subs" / f"{name}.ipynb",
        )
    command = [
        str(Path(sys.executable).parent / "hookviz"),
        "grade",
        "subs",
        "--assignment",
        "tiny.ipynb",
        "--out",
        "out",
        "-j",
        "1",
        "--timeout",
        str(CELL_TIMEOUT),
        "--memory-mb",
        "3072",
    ]
    runs = [
        subprocess.Popen(
            command, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        for _ in range(2)
    ]
    outputs = [run.communicate(timeout=240) for run in runs]
    assert [run.returncode for run in runs] == [0, 0], outputs
    with open(tmp_path / "out" / "gradebook.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert sorted(r["student"] for r in rows) == names
    assert {r["student"]: r["total"] for r in rows} == {"ann": "5", "bo": "3", "cy": "5"}
    # Each student was graded by exactly one of the runs; the other waited, then skipped.
    logs = "".join(err for _, err in outputs)
    assert logs.count("already graded") == len(names)
    assert json.loads((tmp_path / "out" / "gradebook.json").read_text())["max_total"] == 5


# -- a real assignment ---------------------------------------------------------------------------


def real_assignments() -> list[Path]:
    return sorted((REPO / "solutions").glob("*.ipynb"))


def test_a_real_assignment_grades_its_solution_full_and_its_exercise_zero(tmp_path: Path) -> None:
    assert real_assignments(), "solutions/ has no assignment"
    assignment = real_assignments()[0]
    notebook = nbformat.read(assignment, as_version=4)
    (tmp_path / "subs").mkdir()
    nbformat.write(notebook, tmp_path / "subs" / "solver.ipynb")
    stubbed = exercise_from_solution(notebook, CONFIG, "solutions/x.ipynb", "exercises/x.ipynb")
    nbformat.write(stubbed, tmp_path / "subs" / "starter.ipynb")
    options = GradeOptions(
        jobs=2, limits=Limits(cell_timeout=60, submission_timeout=200, memory_mb=4096)
    )
    summary = grade_folder(tmp_path / "subs", assignment, tmp_path / "out", options)
    by_student = {r.student: r for r in summary.results}
    solver, starter = by_student["solver"], by_student["starter"]
    assert solver.total == solver.max_total > 0 and solver.status == "ok", solver.checks
    assert starter.total == 0 and starter.status == "no-answers"
    assert starter.notes == [] and starter.flags == []  # the exercise as handed out
    assert all(c.outcome == "no-answers" for c in starter.checks)
