"""`hookviz report OUT`: an item analysis of a graded batch, for the instructor.

Writes ``report.html`` and, beside it in ``report-figures/``, its figures as PNGs (matplotlib):
the score distribution, the pass rate of every check, the most common failure messages, time
per submission and the flags. The page is one self-contained file: the same PNGs are inlined
as data URIs, and its Content-Security-Policy allows no script and no request, so it opens
anywhere, offline, and nothing a student wrote can run in it. It also lists answer cells that
are near-identical across the batch (see similarity.py). The report reads the out folder, and
the submissions for the answers' source; it never changes a score.

This module is the command; the analysis is analysis.py, the figures figures.py
and the page page.py.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from ...course.format.notebooks import NotebookError, atomic_write_text
from ..core.results import SubmissionResult
from . import figures as report_figures
from .analysis import CheckStats, answers_to_compare, item_analysis, load_results
from .page import Comparison, Page, render
from .similarity import ENGINES, SimilarGroup, near_identical

REPORT_HTML = "report.html"
FIGURES = "report-figures"


@dataclass
class Report:
    """What `write_report` found and wrote."""

    html: Path
    figures: dict[str, Path]
    results: list[SubmissionResult]
    checks: list[CheckStats]
    groups: list[SimilarGroup]
    engine: str
    notes: list[str] = field(default_factory=list)


def write_report(
    out: Path,
    *,
    destination: Path | None = None,
    assignment: Path | None = None,
    submissions: Path | None = None,
    similarity: str = "auto",
    threshold: float = 0.9,
    min_tokens: int = 30,
) -> Report:
    """Write the report of the out folder ``out`` (to ``out``/report.html unless ``destination``)."""
    if similarity not in (*ENGINES, "off"):
        raise NotebookError(
            f"--similarity must be one of {', '.join(ENGINES)}, off; not {similarity!r}."
        )
    if not 0 < threshold <= 1:
        raise NotebookError(f"--threshold must be more than 0 and at most 1, not {threshold:g}.")
    out = Path(out)
    document, results = load_results(out)
    destination = Path(destination) if destination else out / REPORT_HTML
    notes: list[str] = []
    if assignment is None:
        try:
            recorded = json.loads((out / "assignment.json").read_text(encoding="utf-8")).get("path")
        except (OSError, ValueError):
            recorded = None
        assignment = Path(recorded) if recorded else None
    checks = item_analysis(document, results)
    groups, engine = [], "off"
    if similarity != "off":
        found = answers_to_compare(results, assignment, submissions, notes)
        if found is not None:
            answers, stubs, solutions = found
            groups, engine = near_identical(
                answers,
                stubs,
                solutions,
                engine=similarity,
                threshold=threshold,
                min_tokens=min_tokens,
            )
    pictures = report_figures.draw_all(document, results, checks)
    figures = report_figures.save_all(pictures, destination.parent / FIGURES)
    stale = [r.student for r in results if r.assignment_sha256 != document["assignment_sha256"]]
    if stale:
        notes.append(
            f"Graded against another version of the assignment: {', '.join(stale)} (run hookviz grade again)."
        )
    comparison = Comparison(engine, threshold, min_tokens, groups)
    page = Page(document, results, checks, comparison, pictures, notes)
    atomic_write_text(destination, render(page))
    return Report(destination, figures, results, checks, groups, engine, notes)
