"""Finding students' submissions and reading them, however broken they are."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...course.conventions import Status
from ...course.format.notebooks import NotebookError, parse_notebook

MAX_SUBMISSION_BYTES = 20 * 2**20


@dataclass(frozen=True)
class Submission:
    """One student's notebook (``path`` is None when their folder holds none)."""

    student: str
    path: Path | None
    note: str = ""


class SubmissionError(ValueError):
    """A submission that cannot be graded; ``status`` names the kind for the gradebook."""

    def __init__(self, status: Status, message: str):
        super().__init__(message)
        self.status = status


def _visible(path: Path, root: Path) -> bool:
    return not any(part.startswith(".") for part in path.relative_to(root).parts)


def find_submissions(root: Path, name: str) -> list[Submission]:
    """Submissions under ``root``: ``<student>/<name>.ipynb`` (nbgrader's layout, also one folder
    deeper, as in ``submitted/<student>/<assignment>/``) or flat ``<student>.ipynb``."""
    root = Path(root)
    if not root.is_dir():
        raise NotebookError(f"the submissions folder {root} does not exist (or is not a folder).")
    wanted = f"{name}.ipynb"
    found: dict[str, Submission] = {}
    for entry in sorted(root.iterdir()):
        if entry.name.startswith("."):
            continue
        if entry.is_file() and entry.suffix == ".ipynb":
            student = entry.stem
            if student in found:
                raise NotebookError(
                    f"{root}: student {student!r} has both a folder and {entry.name}; keep one."
                )
            found[student] = Submission(student, entry)
        elif entry.is_dir():
            student = entry.name
            matches = [
                p
                for p in sorted(entry.rglob(wanted))
                if len(p.relative_to(entry).parts) <= 2 and _visible(p, entry)
            ]
            notebooks = [
                p
                for p in sorted(entry.rglob("*.ipynb"))
                if len(p.relative_to(entry).parts) <= 2 and _visible(p, entry)
            ]
            if student in found:
                raise NotebookError(
                    f"{root}: student {student!r} has both a folder and {student}.ipynb; keep one."
                )
            if len(matches) == 1:
                found[student] = Submission(student, matches[0])
            elif len(matches) > 1:
                listed = ", ".join(str(p.relative_to(root)) for p in matches)
                found[student] = Submission(student, None, f"several {wanted} files ({listed})")
            elif len(notebooks) == 1:
                found[student] = Submission(
                    student,
                    notebooks[0],
                    f"graded {notebooks[0].name}, the only notebook (expected {wanted})",
                )
            else:
                found[student] = Submission(student, None, f"no {wanted} in {entry.name}/")
    return list(found.values())


def read_submission(path: Path) -> tuple[Any, str]:
    """The notebook (nbformat v4) and the file's sha256; SubmissionError for what cannot be graded."""
    try:
        size = path.stat().st_size
        if size > MAX_SUBMISSION_BYTES:
            raise SubmissionError(
                Status.INVALID,
                f"the file is {size / 2**20:.0f} MB; notebooks over {MAX_SUBMISSION_BYTES // 2**20} MB are not graded",
            )
        data = path.read_bytes()
    except OSError as error:
        raise SubmissionError(Status.INVALID, f"cannot read the file ({error})") from error
    digest = hashlib.sha256(data).hexdigest()
    if not data.strip():
        raise SubmissionError(Status.EMPTY, "the file is empty")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise SubmissionError(Status.INVALID, f"not UTF-8 text ({error})") from error
    try:
        notebook = parse_notebook(text, path.name)
    except NotebookError as error:
        raise SubmissionError(Status.INVALID, str(error)) from error
    return notebook, digest


def file_sha256(path: Path) -> str:
    """The file's sha256 (to tell a resubmission from a submission already graded)."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()
