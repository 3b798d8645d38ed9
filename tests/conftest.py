"""Suite-wide rules: in CI and `make test`, a skipped or xfailed test is a failure, not a pass."""

from __future__ import annotations

import os

import pytest

# Files whose tests also run in the environment pinned like Google Colab (`make test-colab`).
COLAB_FILES = ("test_notebooks", "test_exercises", "test_widgets")


def pytest_collection_modifyitems(config, items):
    for item in items:
        if item.path.name.startswith(COLAB_FILES):
            item.add_marker(pytest.mark.colab)


def pytest_configure(config):
    config.addinivalue_line("markers", "colab: also runs pinned like Google Colab (make test-colab)")


def pytest_runtest_logreport(report):
    if report.skipped:  # a skip, or an xfail/xpass: either way the test did not pass here
        reason = getattr(report, "wasxfail", None) or str(report.longrepr)[-200:]
        _not_run.append(f"{report.nodeid}: {reason}")


_not_run: list[str] = []


def pytest_sessionfinish(session, exitstatus):
    if os.environ.get("HOOKVIZ_FORBID_SKIPS") == "1" and _not_run:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter):
    if os.environ.get("HOOKVIZ_FORBID_SKIPS") == "1" and _not_run:
        terminalreporter.section("tests that did not run (HOOKVIZ_FORBID_SKIPS=1 makes this a failure)")
        for line in _not_run:
            terminalreporter.line(line)
