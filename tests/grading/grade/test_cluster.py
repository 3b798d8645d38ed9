"""`hookviz grade --scheduler`: a real `dask scheduler` and two `dask worker` processes on
127.0.0.1, no mocks. The hostile batch of tests/tiny_course.py graded on the cluster gives the
gradebook a local `-j 2` run gives; `kill -9` of a worker mid-batch still grades every student
exactly once; killing the grader mid-batch and running again resumes.

The processes are started once for the module and stopped for sure at its end (also when a
test fails): each in a session of its own, killed as a group.
"""

from __future__ import annotations

import csv
import io
import json
import os
import pty
import select
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import dask
import nbformat
import pytest

import hookviz
from hookviz.course.format.notebooks import NotebookError
from hookviz.grading.grade.batch import GradeOptions, Progress, grade_folder
from hookviz.grading.grade.cluster import Scheduler
from tests import handgraded_course as handgraded
from tests.dask_processes import BIN, DaskProcesses, free_port
from tests.grading_env import grading_processes
from tests.tiny_course import CASES, OPTIONS, TINY

pytestmark = [pytest.mark.notebook, pytest.mark.slow]

ROWS_COMPARED = ("total", "check_double", "check_shout", "check_triple", "status", "flags")


@pytest.fixture(scope="module")
def dask_cluster(tmp_path_factory):
    processes = DaskProcesses(tmp_path_factory.mktemp("dask"))
    try:
        processes.ensure_workers(2)
        yield processes
    finally:
        processes.stop()


@pytest.fixture()
def cluster(dask_cluster):
    """The module's cluster, with two live workers again (a test may have killed one)."""
    dask_cluster.ensure_workers(2)
    return dask_cluster


def on_cluster(address: str, **changes) -> GradeOptions:
    return GradeOptions(**{**OPTIONS.__dict__, "jobs": None, "scheduler": address, **changes})


def gradebook(out: Path) -> dict[str, dict]:
    with open(out / "gradebook.csv", newline="") as handle:
        return {row["student"]: row for row in csv.DictReader(handle)}


# -- the hostile batch, on the cluster and here ------------------------------------------------


@pytest.fixture(scope="module")
def hostile(graded_batch, tmp_path_factory, dask_cluster):
    """The hostile batch graded with -j 2 here (once per session, tests/conftest.py), and a copy
    of it graded on the two-worker cluster."""
    local_root = graded_batch.root
    root = tmp_path_factory.mktemp("hostile")
    shutil.copytree(local_root / "submitted", root / "submitted")
    shutil.copy(local_root / "tiny.ipynb", root / "tiny.ipynb")
    dask_cluster.ensure_workers(2)
    log = io.StringIO()
    remote = grade_folder(
        root / "submitted",
        root / "tiny.ipynb",
        root / "out",
        on_cluster(dask_cluster.address),
        stream=log,
    )
    return local_root, root, remote, log.getvalue()


def test_the_cluster_grades_the_hostile_batch_as_a_local_run_does(hostile) -> None:
    local_root, root, remote, log = hostile
    assert "on 2 Dask workers" in log and "sandbox: bwrap" in log
    here, there = gradebook(local_root / "out"), gradebook(root / "out")
    assert sorted(there) == sorted(CASES)
    differences = {
        (student, column): (here[student][column], there[student][column])
        for student in CASES
        for column in ROWS_COMPARED
        if here[student][column] != there[student][column]
    }
    assert differences == {}
    assert sorted(remote.graded) == sorted(CASES)
    for name in CASES:  # the same files, for the same submissions
        result = json.loads((root / "out" / "results" / f"{name}.json").read_text())
        mine = json.loads((local_root / "out" / "results" / f"{name}.json").read_text())
        # The client's path (its next run compares it), never the copy a worker graded.
        assert result["submission"] == mine["submission"].replace(str(local_root), str(root))
        assert result["submission_sha256"] == mine["submission_sha256"]
        assert [c["outcome"] for c in result["checks"]] == [c["outcome"] for c in mine["checks"]]
        assert result["sandbox"] == mine["sandbox"]
        feedback = (root / "out" / "feedback" / f"{name}.md").read_text()
        assert feedback.startswith(f"# tiny: feedback for {name}")
        assert (root / "out" / "review" / f"{name}.md").is_file()


def test_the_files_beside_the_notebook_reach_the_workers(cluster, tmp_path) -> None:
    """An assignment whose setup cell reads a data file through a helper module beside the
    notebook: graded on the cluster, the right count passes, so both reached a worker's
    grading folder; the questions graded by hand wait for their grades there too."""
    assignment, exercise = handgraded.build(tmp_path)
    students = tmp_path / "submissions"
    handgraded.hand_in(exercise, students)
    out = tmp_path / "out"
    log = io.StringIO()
    grade_folder(students, assignment, out, on_cluster(cluster.address), stream=log)
    assert "Dask workers" in log.getvalue()
    book = gradebook(out)
    assert (book["ada"]["check_count"], book["ada"]["status"]) == ("2", "ok")
    assert (book["bob"]["check_count"], book["cy"]["status"]) == ("0", "missing")
    document = json.loads((out / "gradebook.json").read_text())
    ada = next(s for s in document["students"] if s["student"] == "ada")
    assert {ada["outcomes"][q] for q in handgraded.QUESTIONS} == {"needs-manual-grade"}


def test_a_second_cluster_run_skips_everyone_already_graded(hostile, cluster) -> None:
    root = hostile[1]
    before = {p.name: p.read_bytes() for p in (root / "out" / "results").iterdir()}
    log = io.StringIO()
    summary = grade_folder(
        root / "submitted",
        root / "tiny.ipynb",
        root / "out",
        on_cluster(cluster.address),
        stream=log,
    )
    assert sorted(summary.skipped) == sorted(CASES) and summary.graded == []
    assert log.getvalue().count("already graded") == len(CASES)
    assert {p.name: p.read_bytes() for p in (root / "out" / "results").iterdir()} == before


# -- losing a worker, losing the grader --------------------------------------------------------


def small_batch(folder: Path, count: int) -> dict[str, str]:
    """``count`` students, every third with a wrong double; their expected totals."""
    folder.mkdir()
    expected = {}
    for n in range(count):
        name = f"student{n:02d}"
        wrong = n % 3 == 2
        nbformat.write(CASES["partly_wrong" if wrong else "correct"], folder / f"{name}.ipynb")
        expected[name] = "3" if wrong else "5"
    return expected


def wait_for(condition, what: str, timeout: float = 180.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.1)


def test_kill_9_of_a_worker_mid_batch_still_grades_every_submission_once(tmp_path, cluster) -> None:
    expected = small_batch(tmp_path / "subs", 6)
    out = tmp_path / "out"
    log, outcome = io.StringIO(), {}

    def run() -> None:
        try:
            outcome["summary"] = grade_folder(
                tmp_path / "subs", TINY, out, on_cluster(cluster.address), stream=log
            )
        except BaseException as error:  # reported by the assertion below
            outcome["error"] = error

    grader = threading.Thread(target=run)
    grader.start()
    try:
        with cluster.client() as observer:
            # Mid-batch: a student graded already, and the victim busy grading another.
            wait_for(lambda: any((out / "results").glob("*.json")), "a first result")

            def busy_worker() -> str | None:
                for worker, keys in observer.processing().items():
                    if any(str(key).startswith("hookviz-grade-") for key in keys):
                        return worker
                return None

            wait_for(lambda: busy_worker() is not None, "a worker grading a submission")
            victim = busy_worker()
            pid = cluster.worker_pids()[victim]
            os.kill(pid, signal.SIGKILL)
            graded_before = len(list((out / "results").glob("*.json")))
            wait_for(lambda: victim not in observer.nthreads(), "the scheduler to drop the worker")
    finally:
        grader.join(timeout=300)
    assert not grader.is_alive()
    assert "error" not in outcome, outcome.get("error")
    summary = outcome["summary"]
    assert graded_before < len(expected)  # it died mid-batch, with students left to grade
    assert sorted(summary.graded) == sorted(expected)  # each student once, in one run
    assert len(list((out / "results").glob("*.json"))) == len(expected)
    rows = gradebook(out)
    assert {s: (r["total"], r["status"]) for s, r in rows.items()} == {
        s: (total, "ok") for s, total in expected.items()
    }
    assert log.getvalue().count(": 5/5 ok") + log.getvalue().count(": 3/5 ok") == len(expected)
    # The kernel the dead worker was running went with it (bubblewrap's --die-with-parent).
    wait_for(lambda: grading_processes(cluster.folder) == [], "no grading process left", 30)


def test_killing_the_grader_mid_batch_and_running_again_resumes(tmp_path, cluster) -> None:
    expected = small_batch(tmp_path / "subs", 8)
    out = tmp_path / "out"
    command = [
        str(BIN / "hookviz"), "grade", str(tmp_path / "subs"), "--assignment", str(TINY),
        "--out", str(out), "--scheduler", cluster.address, "--timeout", "10",
        "--memory-mb", "3072",
    ]  # fmt: skip
    with open(tmp_path / "first-run.log", "wb") as first_log:
        first = subprocess.Popen(
            command, stdout=first_log, stderr=subprocess.STDOUT, start_new_session=True
        )
    try:
        wait_for(
            lambda: len(list((out / "results").glob("*.json"))) >= 2 or first.poll() is not None,
            "two students graded",
        )
    finally:
        os.killpg(first.pid, signal.SIGKILL)
        first.wait()
    assert first.returncode == -signal.SIGKILL, (tmp_path / "first-run.log").read_text()
    graded_first = sorted(p.stem for p in (out / "results").glob("*.json"))
    assert 2 <= len(graded_first) < len(expected)
    for student in graded_first:  # a result is written last: its feedback is there
        assert (out / "feedback" / f"{student}.md").is_file()

    log = io.StringIO()
    summary = grade_folder(tmp_path / "subs", TINY, out, on_cluster(cluster.address), stream=log)
    assert sorted(summary.skipped) == graded_first
    assert sorted(summary.graded) == sorted(set(expected) - set(graded_first))
    rows = gradebook(out)
    assert {s: (r["total"], r["status"]) for s, r in rows.items()} == {
        s: (total, "ok") for s, total in expected.items()
    }
    assert "grading your own" not in log.getvalue()  # the first run's solution check is kept


def test_losing_the_scheduler_stops_the_run_with_the_fix_and_keeps_what_was_graded(
    tmp_path,
) -> None:
    expected = small_batch(tmp_path / "subs", 6)
    (tmp_path / "dask").mkdir()
    doomed = DaskProcesses(tmp_path / "dask")
    out = tmp_path / "out"
    try:
        doomed.ensure_workers(2)
        outcome = {}

        def run() -> None:
            try:
                grade_folder(
                    tmp_path / "subs", TINY, out, on_cluster(doomed.address), stream=io.StringIO()
                )
            except BaseException as error:
                outcome["error"] = error

        with dask.config.set({"distributed.comm.timeouts.connect": "3s"}):
            grader = threading.Thread(target=run)
            grader.start()
            try:
                wait_for(lambda: any((out / "results").glob("*.json")), "a first result")
                os.killpg(doomed.processes[0].pid, signal.SIGKILL)  # the scheduler
            finally:
                grader.join(timeout=180)
        assert not grader.is_alive()
    finally:
        doomed.stop()
    error = outcome.get("error")
    assert isinstance(error, NotebookError), error
    assert "lost the Dask scheduler" in str(error) and "Run the same command again" in str(error)
    graded = sorted(p.stem for p in (out / "results").glob("*.json"))
    assert 1 <= len(graded) < len(expected)
    assert all(
        json.loads((out / "results" / f"{s}.json").read_text())["status"] == "ok" for s in graded
    )


def test_a_run_waits_for_its_first_worker(tmp_path) -> None:
    expected = small_batch(tmp_path / "subs", 1)
    (tmp_path / "dask").mkdir()
    late = DaskProcesses(tmp_path / "dask")  # a scheduler, no worker yet (a batch queue's wait)
    log, outcome = io.StringIO(), {}

    def run() -> None:
        try:
            outcome["summary"] = grade_folder(
                tmp_path / "subs", TINY, tmp_path / "out", on_cluster(late.address), stream=log
            )
        except BaseException as error:
            outcome["error"] = error

    grader = threading.Thread(target=run)
    try:
        grader.start()
        wait_for(lambda: "waiting for a Dask worker" in log.getvalue(), "the waiting message")
        late.ensure_workers(1)
        grader.join(timeout=180)
    finally:
        late.stop()
    assert "error" not in outcome, outcome.get("error")
    assert {r.student: r.total for r in outcome["summary"].results} == {
        s: float(t) for s, t in expected.items()
    }


# -- local:N, addresses, imports -------------------------------------------------------------


def test_local_n_starts_its_own_workers_and_stops_them(tmp_path) -> None:
    expected = small_batch(tmp_path / "subs", 2)
    done = subprocess.run(
        [
            str(BIN / "hookviz"),
            "grade",
            "subs",
            "--assignment",
            str(TINY),
            "--out",
            "out",
            "--scheduler",
            "local:2",
            "--timeout",
            "10",
            "--memory-mb",
            "3072",
        ],  # fmt: skip
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert "on 2 Dask workers" in done.stderr
    assert {s: r["total"] for s, r in gradebook(tmp_path / "out").items()} == expected
    assert "Dask" not in done.stdout and done.stdout.startswith("gradebook: ")


@pytest.mark.parametrize(
    "text, words",
    [
        ("local:0", "how many worker processes"),
        ("local:many", "how many worker processes"),
        ("my-laptop", "is not a scheduler address"),
        ("http://host:8786", "is not a scheduler address"),
    ],
)
def test_a_wrong_scheduler_address_is_refused_with_the_fix(text, words) -> None:
    with pytest.raises(NotebookError, match=words):
        Scheduler.parse(text)


def test_addresses_that_dask_accepts() -> None:
    assert Scheduler.parse("tcp://10.0.0.5:8786").address == "tcp://10.0.0.5:8786"
    assert Scheduler.parse("10.0.0.5:8786").address == "tcp://10.0.0.5:8786"
    assert Scheduler.parse("local:3").local_workers == 3


def test_an_unreachable_scheduler_is_an_error_that_says_what_to_start(tmp_path) -> None:
    (tmp_path / "subs").mkdir()
    nbformat.write(CASES["correct"], tmp_path / "subs" / "ann.ipynb")
    address = f"tcp://127.0.0.1:{free_port()}"  # nothing listens there
    done = subprocess.run(
        [str(BIN / "hookviz"), "grade", "subs", "--assignment", str(TINY), "--scheduler", address],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT": "2s"},
    )
    assert done.returncode == 2
    assert f"cannot reach a Dask scheduler at {address}" in done.stderr
    assert "dask scheduler" in done.stderr and "local:N" in done.stderr


def test_a_worker_with_other_hookviz_code_is_refused_before_anything_is_graded(tmp_path) -> None:
    copy = tmp_path / "other" / "hookviz"
    shutil.copytree(
        Path(hookviz.__file__).parent, copy, ignore=shutil.ignore_patterns("__pycache__")
    )
    checks = copy / "course" / "checks.py"
    checks.write_text(checks.read_text() + "\n# a later commit\n")
    (tmp_path / "dask").mkdir()
    other = DaskProcesses(tmp_path / "dask")
    try:
        other.start_worker(PYTHONPATH=str(copy.parent))  # imports this copy, not the repository's
        other.ensure_workers(1)
        (tmp_path / "subs").mkdir()
        nbformat.write(CASES["correct"], tmp_path / "subs" / "ann.ipynb")
        with pytest.raises(NotebookError, match="has another version of hookviz") as error:
            grade_folder(
                tmp_path / "subs",
                TINY,
                tmp_path / "out",
                on_cluster(other.address),
                stream=io.StringIO(),
            )
        assert "Install the same commit" in str(error.value)
        assert not list((tmp_path / "out" / "results").glob("*.json"))
    finally:
        other.stop()


def test_dask_is_imported_only_when_a_scheduler_is_given() -> None:
    code = (
        "import sys, hookviz.cli, hookviz.grading.grade.batch\n"
        "print(','.join(m for m in ('dask', 'distributed') if m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == ""


# -- progress ----------------------------------------------------------------------------------


_END_OF_DRAWING = "<end of drawing>"


def _read_until(leader: int, end: str, timeout: float = 10.0) -> str:
    """What a pty's follower wrote, up to ``end``: the kernel hands it over in pieces, later."""
    drawn, deadline = b"", time.monotonic() + timeout
    while end.encode() not in drawn:  # bytes: a piece may end inside a character
        left = deadline - time.monotonic()
        assert left > 0, f"{end!r} never came through the terminal; so far: {drawn!r}"
        if select.select([leader], [], [], left)[0]:
            drawn += os.read(leader, 65536)
    return drawn.decode().split(end)[0]


def test_progress_is_a_tqdm_bar_in_a_terminal_and_one_line_per_student_in_a_log() -> None:
    log = io.StringIO()
    progress = Progress(2, log)
    progress.step("ann", "5/5 ok")
    progress.step("bo", "already graded (3/5 ok)")
    progress.close()
    lines = log.getvalue().splitlines()
    assert [line.split("s  ", 1)[1] for line in lines] == [
        "ann: 5/5 ok",
        "bo: already graded (3/5 ok)",
    ]
    assert [line.split()[0] for line in lines] == ["1/2", "2/2"]
    assert "\r" not in log.getvalue()  # a log gets lines, never a bar's redraws

    leader, follower = pty.openpty()
    try:
        with open(follower, "w", encoding="utf-8", closefd=False) as terminal:
            progress = Progress(2, terminal)
            progress.step("ann", "5/5 ok")
            progress.step("bo", "3/5 ok")
            progress.close()
            terminal.write(_END_OF_DRAWING)
            terminal.flush()
        drawn = _read_until(leader, _END_OF_DRAWING)
    finally:
        os.close(leader)
        os.close(follower)
    assert "\r" in drawn and "100%" in drawn and "2/2" in drawn  # tqdm's bar, redrawn in place
    assert "bo: 3/5 ok" in drawn  # the latest student beside it
