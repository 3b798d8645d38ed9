"""Suite-wide rules: in CI and `make test`, a skipped or xfailed test is a failure, not a pass."""

from __future__ import annotations

import os
import secrets
import signal
import time
from pathlib import Path

import pytest

from tests.processes import RUN_TAG, tagged

TESTS = Path(__file__).resolve().parent
# Test files (paths under tests/) whose tests also run pinned like Google Colab (`make test-colab`).
COLAB_FILES = ("test_notebooks.py", "course/test_exercises", "widgets/")
# Folders with none of them: not even their conftest.py is read when pinned like Colab.
NOT_COLAB = ("browser", "commands", "course/authoring", "grading", "site")


def _under_tests(path) -> str:
    return Path(path).resolve().relative_to(TESTS).as_posix()


def pytest_ignore_collect(collection_path, config):
    """`make test-colab` (-m colab) does not import the other test files: their dependencies
    (dask, for one) are not installed in the Colab-pinned environment."""
    if config.getoption("markexpr") != "colab":
        return None
    try:
        where = _under_tests(collection_path)
    except ValueError:
        return None
    if collection_path.is_dir():
        return True if where in NOT_COLAB else None
    name = collection_path.name
    if name.startswith("test_") and name.endswith(".py"):
        return True if not where.startswith(COLAB_FILES) else None
    return None


# Pinned like Colab, the catalogue runs its correct answers and cheats only: they compare whole
# outputs, so they catch what the pinned notebook machinery can change; the wrong answers' hints
# come from the same torch and the same check code in both environments (and cost half the suite).
# The Korean widgets are drawn in Chromium through the site's host, not the notebook stack.
MAIN_ONLY = (
    "test_exercises_wrong_types.py",
    "test_exercises_slipups.py",
    "test_korean_in_the_browser.py",
)


def runs_pinned_like_colab(item) -> bool:
    name = item.path.name
    if name in MAIN_ONLY:
        return False
    if name == "test_exercises_mutants.py":  # the Korean run is about language, not the stack
        return ": wrong: " not in item.nodeid and "in_korean" not in item.name
    return _under_tests(item.path).startswith(COLAB_FILES)


def pytest_collection_modifyitems(config, items):
    for item in items:
        if runs_pinned_like_colab(item):
            item.add_marker(pytest.mark.colab)


@pytest.fixture(scope="session")
def graded_batch(tmp_path_factory):
    """tests/tiny_course.py's honest and hostile batch, graded once per run for every file that
    reads it (the grading, Canvas, cluster and report tests): a GradedBatch."""
    from tests.grading_env import private_jupyter_dirs
    from tests.tiny_course import grade_batch

    root = tmp_path_factory.mktemp("grading")
    with private_jupyter_dirs(root / "jupyter"):
        return grade_batch(root)


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "colab: also runs pinned like Google Colab (make test-colab)"
    )
    # Every process the suite starts inherits this tag, even one that outlives its parent.
    os.environ.setdefault(RUN_TAG, secrets.token_hex(8))


def pytest_runtest_logreport(report):
    if report.skipped:  # a skip, or an xfail/xpass: either way the test did not pass here
        reason = getattr(report, "wasxfail", None) or str(report.longrepr)[-200:]
        _not_run.append(f"{report.nodeid}: {reason}")


_not_run: list[str] = []
_left_behind: list[tuple[int, str]] = []


def pytest_sessionfinish(session, exitstatus):
    if os.environ.get("HOOKVIZ_FORBID_SKIPS") == "1" and _not_run:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
    if hasattr(session.config, "workerinput"):
        return  # a pytest-xdist worker: its siblings carry the tag too; the controller checks last
    # Nothing the tests started may outlive them: a few seconds for kernels to finish exiting.
    deadline = time.monotonic() + 10
    left = tagged(os.environ[RUN_TAG])
    while left and time.monotonic() < deadline:
        time.sleep(0.2)
        left = tagged(os.environ[RUN_TAG])
    if left:
        _left_behind.extend(left)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
        for pid, _ in left:  # and then stop them, so one failure does not leak into the next run
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


def pytest_terminal_summary(terminalreporter):
    if _left_behind:
        terminalreporter.section("processes the tests left running (a failure; they were killed)")
        for pid, command in _left_behind:
            terminalreporter.line(f"{pid}: {command}")
    if os.environ.get("HOOKVIZ_FORBID_SKIPS") == "1" and _not_run:
        terminalreporter.section(
            "tests that did not run (HOOKVIZ_FORBID_SKIPS=1 makes this a failure)"
        )
        for line in _not_run:
            terminalreporter.line(line)
