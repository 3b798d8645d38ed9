"""Finding and reading submissions, in both folder layouts."""

from __future__ import annotations

from pathlib import Path

import pytest

from hookviz.course.format.notebooks import NotebookError
from hookviz.grading.core.submissions import SubmissionError, find_submissions, read_submission


def test_submissions_are_found_in_both_layouts(tmp_path: Path) -> None:
    (tmp_path / "ann").mkdir()
    (tmp_path / "ann" / "tiny.ipynb").write_text("{}")
    (tmp_path / "bo" / "tiny").mkdir(parents=True)
    (tmp_path / "bo" / "tiny" / "tiny.ipynb").write_text("{}")
    (tmp_path / "cy.ipynb").write_text("{}")
    (tmp_path / "di").mkdir()
    (tmp_path / "di" / "Untitled.ipynb").write_text("{}")
    (tmp_path / "ed").mkdir()
    (tmp_path / "ed" / ".ipynb_checkpoints").mkdir()
    (tmp_path / "ed" / ".ipynb_checkpoints" / "tiny.ipynb").write_text("{}")
    (tmp_path / ".hidden.ipynb").write_text("{}")
    found = {s.student: s for s in find_submissions(tmp_path, "tiny")}
    assert sorted(found) == ["ann", "bo", "cy", "di", "ed"]
    assert found["bo"].path == tmp_path / "bo" / "tiny" / "tiny.ipynb"
    assert found["di"].path.name == "Untitled.ipynb" and "the only notebook" in found["di"].note
    assert found["ed"].path is None and "no tiny.ipynb" in found["ed"].note


def test_a_student_with_a_folder_and_a_file_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "ann").mkdir()
    (tmp_path / "ann.ipynb").write_text("{}")
    with pytest.raises(NotebookError, match="both a folder and"):
        find_submissions(tmp_path, "tiny")


@pytest.mark.parametrize(
    "content, status, words",
    [
        (b"", "empty", "empty"),
        (b"   \n", "empty", "empty"),
        (b"\xff\xfe", "invalid", "not UTF-8"),
        (b"[1, 2]", "invalid", "not a notebook"),
        (b'{"nbformat": 4, "cells": "no"}', "invalid", "notebook"),
        (b"[" * 100_000, "invalid", "not valid JSON"),
    ],
)
def test_unreadable_submissions_say_why(
    tmp_path: Path, content: bytes, status: str, words: str
) -> None:
    path = tmp_path / "x.ipynb"
    path.write_bytes(content)
    with pytest.raises(SubmissionError) as caught:
        read_submission(path)
    assert caught.value.status == status and words in str(caught.value)
