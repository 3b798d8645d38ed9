"""`hookviz report OUT`: an item analysis of a graded batch, for the instructor.

Writes ``report.html`` and, beside it in ``report-figures/``, its figures as PNGs (matplotlib):
the score distribution, the pass rate of every check, the most common failure messages, time
per submission and the flags. The page is one self-contained file: the same PNGs are inlined
as data URIs, and its Content-Security-Policy allows no script and no request, so it opens
anywhere, offline, and nothing a student wrote can run in it. It also lists answer cells that
are near-identical across the batch (see similarity.py). The report reads the out folder, and
the submissions for the answers' source; it never changes a score.
"""

from __future__ import annotations

import base64
import html
import io
import json
import re
import statistics
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from ..course.notebooks import NotebookError, atomic_write_text, is_answer
from .engine import CheckResult, SubmissionResult
from .gradebook import GRADEBOOK_JSON
from .merge import load_assignment, merge
from .similarity import ENGINES, SimilarGroup, near_identical
from .submissions import SubmissionError, find_submissions, read_submission

REPORT_HTML = "report.html"
FIGURES = "report-figures"
NOT_SUBMITTED = (
    "missing",
    "invalid",
    "empty",
)  # no notebook to grade: left out of the item analysis
TOP_MESSAGES = 5
MESSAGE_LIMIT = 160
_ERROR_LINE = re.compile(r"^[A-Za-z_][\w.]*(Error|Exception|Exit|Interrupt|Failed)\b")
CSP = "default-src 'none'; img-src data:; style-src 'unsafe-inline'"


@dataclass
class CheckStats:
    """One check across the batch."""

    grade_id: str
    max_points: float
    attempted: int = 0
    passed: int = 0
    discrimination: float | None = None  # corrected item-total correlation
    failures: Counter = field(default_factory=Counter)
    examples: dict[str, list[str]] = field(default_factory=dict)  # message -> a few students

    @property
    def pass_rate(self) -> float | None:
        """The share of attempted submissions that scored the check's full points."""
        return self.passed / self.attempted if self.attempted else None


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


def failure_message(check: CheckResult) -> str | None:
    """What went wrong in one check, in a line that groups alike failures (None when it passed)."""
    if check.outcome == "passed" and check.points >= check.max_points:
        return None
    if check.hidden_failure:
        return _clip("hidden test failed: " + check.hidden_failure.strip().splitlines()[0])
    what = check.outcome.replace("-", " ") + (f": {check.detail}" if check.detail else "")
    if check.outcome not in ("mismatch", "error"):  # a timeout, a crash...: the grader's words
        return _clip(what)
    lines = check.actual.splitlines()
    for line in lines:
        if line.startswith(("✗", "○")):  # the check's own verdict: the claim that failed
            return _clip(line)
    if check.detail:
        return _clip(what)
    errors = [line.rstrip(": ") for line in lines if _ERROR_LINE.match(line)]
    return _clip(errors[-1] if errors else what)


def _clip(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= MESSAGE_LIMIT else text[: MESSAGE_LIMIT - 1] + "…"


def load_results(out: Path) -> tuple[dict, list[SubmissionResult]]:
    """gradebook.json and every student's result in ``out``; NotebookError when it is no out folder."""
    out = Path(out)
    try:
        document = json.loads((out / GRADEBOOK_JSON).read_text(encoding="utf-8"))
    except OSError as error:
        raise NotebookError(
            f"{out / GRADEBOOK_JSON} cannot be read ({error.strerror}); pass the out folder of "
            "`hookviz grade` (gradebook-out/NAME by default)."
        ) from error
    results = []
    for path in sorted((out / "results").glob("*.json")):
        try:
            result = SubmissionResult.from_json(json.loads(path.read_text(encoding="utf-8")))
        except (OSError, ValueError, TypeError):
            continue
        if result.assignment == document["assignment"]:
            results.append(result)
    if not results:
        raise NotebookError(f"{out} holds no graded submission of {document['assignment']}.")
    return document, sorted(results, key=lambda r: r.student)


def item_analysis(document: dict, results: list[SubmissionResult]) -> list[CheckStats]:
    """Pass rate, discrimination and failure messages of every check."""
    import numpy as np

    stats = {gid: CheckStats(gid, float(points)) for gid, points in document["max_points"].items()}
    attempted = [r for r in results if r.status not in NOT_SUBMITTED]
    for result in attempted:
        for check in result.checks:
            item = stats.get(check.grade_id)
            if item is None:
                continue
            item.attempted += 1
            message = failure_message(check)
            if message is None:
                item.passed += 1
            else:
                item.failures[message] += 1
                examples = item.examples.setdefault(message, [])
                if len(examples) < 3:
                    examples.append(result.student)
    totals = np.array([r.total for r in attempted], dtype=float)
    passes = [{c.grade_id: failure_message(c) is None for c in r.checks} for r in attempted]
    for gid, item in stats.items():
        passed = np.array([1.0 if row.get(gid) else 0.0 for row in passes])
        rest = totals - passed * item.max_points  # the score on the other checks
        if len(attempted) > 2 and passed.std() > 0 and rest.std() > 0:
            item.discrimination = float(np.corrcoef(passed, rest)[0, 1])
    return list(stats.values())


def _answers(
    results: list[SubmissionResult],
    assignment_path: Path | None,
    submissions: Path | None,
    notes: list[str],
):
    """(student -> grade_id -> source, stubs, solutions), or None with a note saying why."""
    if assignment_path is None:
        notes.append("The assignment notebook is unknown: pass --assignment to compare answers.")
        return None
    try:
        assignment = load_assignment(assignment_path)
    except NotebookError as error:
        notes.append(f"Answers were not compared: {error}")
        return None
    paths = {r.student: Path(r.submission) for r in results if r.submission}
    if submissions is not None:
        try:
            found = find_submissions(Path(submissions), assignment.name)
        except NotebookError as error:
            notes.append(f"Answers were not compared: {error}")
            return None
        paths = {s.student: s.path for s in found if s.path is not None}
    answers, changed, unreadable = {}, [], []
    for result in results:
        path = paths.get(result.student)
        if result.status in NOT_SUBMITTED or path is None:
            continue
        try:
            notebook, sha = read_submission(path)
        except SubmissionError:
            unreadable.append(result.student)
            continue
        if sha != result.submission_sha256:
            changed.append(result.student)
            continue
        merged = merge(assignment, notebook)
        answers[result.student] = {
            gid: source
            for gid, source in merged.answers.items()
            if merged.matched_by.get(gid) != "missing"
        }
    if changed:
        notes.append(
            f"Left out of the comparison, their file changed since it was graded: {', '.join(changed)}."
        )
    if unreadable:
        notes.append(
            f"Left out of the comparison, their file could not be read: {', '.join(unreadable)} "
            "(moved? pass --submissions)."
        )
    stubs = {a.grade_id: a.stub for a in assignment.answers}
    solutions = {
        cell.metadata["nbgrader"]["grade_id"]: cell.source
        for cell in assignment.notebook.cells
        if cell.cell_type == "code" and is_answer(cell)
    }
    return answers, stubs, solutions


# -- figures ------------------------------------------------------------------------------------


def _figure(width: float, height: float):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=(width, height), dpi=100, layout="constrained")
    FigureCanvasAgg(figure)
    return figure


def _png(figure) -> bytes:
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", metadata={"Software": None})  # no version: same bytes
    return buffer.getvalue()


def score_figure(results: list[SubmissionResult], max_total: float) -> bytes:
    """A histogram of the totals, mean and median marked."""
    import numpy as np

    totals = [r.total for r in results]
    figure = _figure(7, 3.2)
    axes = figure.subplots()
    if all(float(t).is_integer() for t in [*totals, max_total]):
        bins = np.arange(-0.5, max_total + 1.5, 1.0)
    else:
        bins = np.linspace(0, max_total, 21)
    axes.hist(totals, bins=bins, color="#4c72b0", edgecolor="white")
    mean, median = statistics.fmean(totals), statistics.median(totals)
    axes.axvline(mean, color="#dd8452", linestyle="--", label=f"mean {mean:.2f}")
    axes.axvline(median, color="#55a868", linestyle=":", label=f"median {median:g}")
    axes.set(
        xlabel=f"score (out of {max_total:g})",
        ylabel="submissions",
        title=f"Scores of {len(totals)} submissions",
    )
    axes.set_xlim(-0.5 if bins[0] < 0 else 0, max_total + 0.5)
    axes.yaxis.get_major_locator().set_params(integer=True)
    axes.legend(frameon=False)
    return _png(figure)


def checks_figure(checks: list[CheckStats]) -> bytes:
    """The pass rate of every check, as horizontal bars."""
    figure = _figure(7, 0.5 * len(checks) + 1.2)
    axes = figure.subplots()
    labels = [f"{c.grade_id} ({c.max_points:g} pt)" for c in checks][::-1]
    rates = [100 * (c.pass_rate or 0.0) for c in checks][::-1]
    bars = axes.barh(labels, rates, color=[_rate_colour(r) for r in rates])
    for bar, check in zip(bars, checks[::-1], strict=True):
        axes.text(
            min(bar.get_width() + 1, 88),
            bar.get_y() + bar.get_height() / 2,
            f"{bar.get_width():.0f}% ({check.passed}/{check.attempted})",
            va="center",
        )
    axes.set(xlim=(0, 100), xlabel="submissions that passed (%)", title="Pass rate of every check")
    return _png(figure)


def _rate_colour(rate: float) -> str:
    return "#c44e52" if rate < 50 else "#dd8452" if rate < 80 else "#55a868"


def failures_figure(checks: list[CheckStats]) -> bytes | None:
    """The most common failure messages, across checks (None when nothing failed)."""
    rows = sorted(
        (
            (count, f"{c.grade_id}: {message}")
            for c in checks
            for message, count in c.failures.items()
        ),
        key=lambda row: (-row[0], row[1]),
    )[:12]
    if not rows:
        return None
    figure = _figure(9, 0.42 * len(rows) + 1.2)
    axes = figure.subplots()
    labels = [_short(label, 70) for _, label in rows][::-1]
    axes.barh(range(len(rows)), [count for count, _ in rows][::-1], color="#c44e52")
    axes.set_yticks(range(len(rows)), labels, fontsize=8)
    axes.set(xlabel="submissions", title="Most common failure messages")
    axes.xaxis.get_major_locator().set_params(integer=True)
    return _png(figure)


def _short(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def time_figure(results: list[SubmissionResult]) -> bytes:
    """Seconds per submission, the ones that timed out apart."""
    ran = [r for r in results if r.status not in NOT_SUBMITTED]
    figure = _figure(7, 3.2)
    axes = figure.subplots()
    in_time = [r.seconds for r in ran if r.status != "timeout"]
    late = [r.seconds for r in ran if r.status == "timeout"]
    axes.hist(
        [in_time, late],
        bins=20,
        stacked=True,
        color=["#4c72b0", "#c44e52"],
        label=["finished", "timed out"],
    )
    if ran:
        axes.axvline(
            statistics.median(r.seconds for r in ran), color="black", linestyle=":", label="median"
        )
    axes.set(xlabel="seconds", ylabel="submissions", title="Time per submission")
    axes.yaxis.get_major_locator().set_params(integer=True)
    axes.legend(frameon=False)
    return _png(figure)


def flag_kinds(results: list[SubmissionResult]) -> Counter:
    """How many submissions carry each kind of flag ("grader", "tampered", ...)."""
    counts: Counter = Counter()
    for result in results:
        counts.update({flag.split(" (")[0] for flag in result.flags})
    return counts


def flags_figure(results: list[SubmissionResult]) -> bytes | None:
    """Submissions per kind of flag (None when nobody was flagged)."""
    counts = flag_kinds(results)
    if not counts:
        return None
    kinds = sorted(counts, key=lambda k: (-counts[k], k))
    figure = _figure(7, 0.42 * len(kinds) + 1.2)
    axes = figure.subplots()
    axes.barh(kinds[::-1], [counts[k] for k in kinds][::-1], color="#8172b3")
    axes.set(xlabel="submissions", title="Flags (for you to look at; no flag changes a score)")
    axes.xaxis.get_major_locator().set_params(integer=True)
    return _png(figure)


# -- the page -------------------------------------------------------------------------------------


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
        found = _answers(results, assignment, submissions, notes)
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
    pictures = {
        "scores": score_figure(results, float(document["max_total"])),
        "checks": checks_figure(checks),
        "failures": failures_figure(checks),
        "time": time_figure(results),
        "flags": flags_figure(results),
    }
    folder = destination.parent / FIGURES
    folder.mkdir(parents=True, exist_ok=True)
    figures = {}
    for name, data in pictures.items():
        path = folder / f"{name}.png"
        if data is None:
            path.unlink(missing_ok=True)
            continue
        temporary = path.with_name(f".{path.name}.tmp")
        temporary.write_bytes(data)
        temporary.replace(path)
        figures[name] = path
    stale = [r.student for r in results if r.assignment_sha256 != document["assignment_sha256"]]
    if stale:
        notes.append(
            f"Graded against another version of the assignment: {', '.join(stale)} (run hookviz grade again)."
        )
    page = _page(document, results, checks, groups, engine, threshold, min_tokens, pictures, notes)
    atomic_write_text(destination, page)
    return Report(destination, figures, results, checks, groups, engine, notes)


def _img(data: bytes | None, alt: str) -> str:
    if data is None:
        return ""
    encoded = base64.b64encode(data).decode()
    return f'<img src="data:image/png;base64,{encoded}" alt="{html.escape(alt)}">'


def _table(head: list[str], rows: list[list[str]], caption: str = "") -> str:
    """A table; cells are HTML already escaped by the caller."""
    parts = ["<table>"]
    if caption:
        parts.append(f"<caption>{caption}</caption>")
    parts.append(
        "<thead><tr>" + "".join(f'<th scope="col">{h}</th>' for h in head) + "</tr></thead><tbody>"
    )
    parts += ["<tr>" + "".join(f"<td>{cell}</td>" for cell in row) + "</tr>" for row in rows]
    parts.append("</tbody></table>")
    return "\n".join(parts)


def _e(value) -> str:
    return html.escape(str(value))


def _page(document, results, checks, groups, engine, threshold, min_tokens, pictures, notes) -> str:
    name, max_total = document["assignment"], float(document["max_total"])
    attempted = [r for r in results if r.status not in NOT_SUBMITTED]
    totals = [r.total for r in results]
    statuses = Counter(r.status for r in results)
    summary = [
        f"<strong>{len(results)}</strong> students, {len(attempted)} with a notebook graded",
        f"mean {statistics.fmean(totals):.2f} / {max_total:g}, median {statistics.median(totals):g}",
        f"full marks: {sum(1 for t in totals if t >= max_total)}",
        "statuses: " + ", ".join(f"{_e(k)} {v}" for k, v in sorted(statuses.items())),
    ]
    sections = [
        f"<h1>{_e(name)}: item analysis</h1>",
        "<p>" + " · ".join(summary) + "</p>",
        '<p class="note">For you, not for students: it names students and shows their code. '
        "Nothing in it changes a score: a flag or a similar pair is something to look at, not a verdict.</p>",
    ]
    if notes:
        sections.append('<ul class="note">' + "".join(f"<li>{_e(n)}</li>" for n in notes) + "</ul>")
    sections += [
        '<h2 id="scores">Scores</h2>',
        _img(
            pictures["scores"],
            f"Histogram of the scores of {len(results)} submissions out of {max_total:g}",
        ),
        '<h2 id="checks">Checks</h2>',
        _img(pictures["checks"], "Pass rate of every check"),
        "<p>Pass rate over the submissions that had a notebook to grade. Discrimination: how well passing "
        "the check goes with scoring well on the others (the correlation of the two; near 0 or below, "
        "the check measures something else than the rest, or is too easy or too hard to tell).</p>",
        _table(
            ["check", "points", "passed", "pass rate", "discrimination"],
            [
                [
                    f"<code>{_e(c.grade_id)}</code>",
                    f"{c.max_points:g}",
                    f"{c.passed} / {c.attempted}",
                    "–" if c.pass_rate is None else f"{100 * c.pass_rate:.0f}%",
                    "–" if c.discrimination is None else f"{c.discrimination:+.2f}",
                ]
                for c in checks
            ],
        ),
        '<h2 id="failures">Most common failure messages</h2>',
        _img(pictures["failures"], "The most common failure messages across checks"),
    ]
    for check in checks:
        if not check.failures:
            sections.append(f"<h3><code>{_e(check.grade_id)}</code></h3><p>No failure.</p>")
            continue
        rows = [
            [
                str(count),
                f"<code>{_e(message)}</code>",
                _e(
                    ", ".join(check.examples[message])
                    + (", …" if count > len(check.examples[message]) else "")
                ),
            ]
            for message, count in sorted(check.failures.items(), key=lambda kv: (-kv[1], kv[0]))[
                :TOP_MESSAGES
            ]
        ]
        sections.append(f"<h3><code>{_e(check.grade_id)}</code></h3>")
        sections.append(_table(["submissions", "message", "for example"], rows))
    slowest = sorted(attempted, key=lambda r: -r.seconds)[:5]
    sections += [
        '<h2 id="time">Time per submission</h2>',
        _img(pictures["time"], "Histogram of the seconds each submission took to grade"),
        _table(
            ["student", "seconds", "status"],
            [[_e(r.student), f"{r.seconds:.1f}", _e(r.status)] for r in slowest],
            caption="The slowest",
        ),
        '<h2 id="flags">Flags</h2>',
    ]
    flagged = [r for r in results if r.flags]
    if flagged:
        sections.append(_img(pictures["flags"], "Submissions per kind of flag"))
        sections.append(
            _table(
                ["student", "score", "flags"],
                [[_e(r.student), f"{r.total:g}", _e("; ".join(r.flags))] for r in flagged],
            )
        )
    else:
        sections.append("<p>No submission was flagged.</p>")
    sections.append('<h2 id="similar">Near-identical answers</h2>')
    if engine == "off":
        sections.append("<p>Answers were not compared.</p>")
    else:
        sections.append(
            f"<p>Answer cells of at least {min_tokens} tokens whose normalised code (names renamed, "
            f"docstrings, comments and strings left out, the handed-out stub discounted) is at least "
            f"{100 * threshold:.0f}% alike, compared by <code>{_e(engine)}</code>. Short correct answers look "
            "alike by nature, and so do answers close to your solution: look at the code before you conclude.</p>"
        )
        if not groups:
            sections.append("<p>None found.</p>")
        for group in groups:
            also = " Near-identical to your solution too." if group.same_as_solution else ""
            sections.append(
                f"<h3><code>{_e(group.answer)}</code>: {_e(', '.join(group.students))}</h3>"
                f"<p>{len(group.students)} students, similarity {100 * group.similarity:.0f}% or more, "
                f"{group.tokens} tokens or more.{also}</p>"
                f"<details><summary>{_e(group.students[0])}'s answer</summary>"
                f"<pre>{_e(group.source)}</pre></details>"
            )
    body = "\n".join(part for part in sections if part)
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{CSP}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{_e(name)}: item analysis</title>
<style>
body {{ font: 15px/1.5 system-ui, sans-serif; max-width: 960px; margin: 2em auto; padding: 0 1em; color: #222; }}
h1 {{ font-size: 1.6em; }} h2 {{ border-bottom: 1px solid #ddd; margin-top: 2em; }}
img {{ max-width: 100%; height: auto; display: block; margin: 1em 0; }}
table {{ border-collapse: collapse; margin: 0.5em 0 1em; }}
th, td {{ border: 1px solid #ddd; padding: 0.25em 0.6em; text-align: left; vertical-align: top; }}
caption {{ text-align: left; font-weight: 600; }}
code, pre {{ font: 13px/1.4 ui-monospace, monospace; }}
pre {{ background: #f6f8fa; padding: 0.8em; overflow-x: auto; }}
.note {{ color: #555; }}
</style>
</head>
<body>
<main>
{body}
</main>
</body>
</html>
"""
