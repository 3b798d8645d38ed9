"""Fixtures the grading tests share (the graded batch of tests/tiny_course.py is tests/conftest.py's)."""

from __future__ import annotations

import pytest

from hookviz.grading.core.merge import load_assignment
from tests.tiny_course import TINY


@pytest.fixture(scope="module")
def assignment():
    """tests/fixtures/grading/tiny.ipynb, read as an assignment."""
    return load_assignment(TINY)
