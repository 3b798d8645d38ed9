"""Grading a submission in the language it was written in.

A course built in several languages (course.toml's ``[i18n]``) has the instructor's notebook in
each: ``ko/solutions/NAME.ipynb`` beside ``solutions/NAME.ipynb``, the same code cells, the
check outputs stored in that language. A submission made from ``ko/exercises/`` is graded
against the Korean copy, so that its feedback is Korean; the checks that run are the same code,
so the score, the flags and the ✓/✗ sequence are the same as in English.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import Any

from ...course.format.notebooks import CONTENT, stamp_role
from ...course.format.steps import spoken_guard

ENGLISH = "en"
_SAID = re.compile(r"""hookviz\.course\.content\.load\([^)]*\blang\s*=\s*["']([a-z]{2})["']""")


def submission_language(notebook: Any) -> str:
    """The language a notebook was handed out in: what its stamped content cell says (the
    metadata can be lost on the way), else its metadata, else English."""
    for cell in notebook.cells:
        if cell.get("cell_type") == "code" and stamp_role(cell) == CONTENT:
            found = _SAID.search(cell.get("source", ""))
            if found:
                return found.group(1)
    for cell in notebook.cells:  # a content cell whose metadata was lost
        found = _SAID.search(cell.get("source", "")) if cell.get("cell_type") == "code" else None
        if found:
            return found.group(1)
    lang = notebook.metadata.get("hookviz", {}).get("lang") if notebook.metadata else None
    return lang if isinstance(lang, str) else ENGLISH


def translated_path(assignment_path: Path, lang: str) -> Path | None:
    """The instructor's notebook in ``lang`` (``<course>/<lang>/solutions/NAME.ipynb`` for
    ``<course>/solutions/NAME.ipynb``), or None when the course has none."""
    path = Path(assignment_path).resolve()
    if lang == ENGLISH or path.parent.parent.name == lang:
        return None
    candidate = path.parent.parent / lang / path.parent.name / path.name
    return candidate if candidate.is_file() else None


_loaded: dict[tuple[str, float], Any] = {}


def assignment_in(assignment: Any, lang: str) -> Any:
    """``assignment`` as handed out in ``lang`` (itself when there is no such copy)."""
    path = translated_path(assignment.path, lang)
    if path is None:
        return assignment
    from .merge import load_assignment

    key = (str(path), path.stat().st_mtime)
    if key not in _loaded:
        _loaded[key] = load_assignment(path)
    translated = _loaded[key]
    same = [(c.grade_id, c.points) for c in translated.checks] == [
        (c.grade_id, c.points) for c in assignment.checks
    ]
    if not same:
        return assignment  # a stale copy never grades differently
    # The translated exercise's check cells are the English ones (code is never translated; the
    # guard names the language), and their specification lists the English solution's claims.
    checks = [
        dataclasses.replace(
            ours,
            released_sources=ours.released_sources
            | {spoken_guard(source, lang) for source in theirs.released_sources},
        )
        for ours, theirs in zip(translated.checks, assignment.checks, strict=True)
    ]
    return dataclasses.replace(translated, checks=checks)
