"""The report's page: one self-contained HTML file, no script, nothing fetched.

Each section of the page is one function of the ``Page`` it shows; every text a student wrote
(names, messages, code) is escaped (``markup.escape``).
"""

from __future__ import annotations

import base64
import statistics
from collections import Counter
from dataclasses import dataclass

from ...markup import escape, table
from ..core.results import SubmissionResult
from .analysis import NOT_SUBMITTED, CheckStats
from .similarity import SimilarGroup

TOP_MESSAGES = 5  # failure messages listed per check
SLOWEST = 5  # submissions listed by time
CSP = "default-src 'none'; img-src data:; style-src 'unsafe-inline'"
STYLE = """
body { font: 15px/1.5 system-ui, sans-serif; max-width: 960px; margin: 2em auto; padding: 0 1em; color: #222; }
h1 { font-size: 1.6em; } h2 { border-bottom: 1px solid #ddd; margin-top: 2em; }
img { max-width: 100%; height: auto; display: block; margin: 1em 0; }
table { border-collapse: collapse; margin: 0.5em 0 1em; }
th, td { border: 1px solid #ddd; padding: 0.25em 0.6em; text-align: left; vertical-align: top; }
caption { text-align: left; font-weight: 600; }
code, pre { font: 13px/1.4 ui-monospace, monospace; }
pre { background: #f6f8fa; padding: 0.8em; overflow-x: auto; }
.note { color: #555; }
"""


@dataclass(frozen=True)
class Comparison:
    """How answers were compared for near-identical code (engine "off": they were not)."""

    engine: str
    threshold: float
    min_tokens: int
    groups: list[SimilarGroup]


@dataclass(frozen=True)
class Page:
    """Everything the page shows."""

    document: dict  # gradebook.json
    results: list[SubmissionResult]
    checks: list[CheckStats]
    comparison: Comparison
    pictures: dict[str, bytes | None]  # figures.NAMES -> PNG (None: nothing to show)
    notes: list[str]

    @property
    def name(self) -> str:
        """The assignment's name."""
        return self.document["assignment"]

    @property
    def max_total(self) -> float:
        """The most a submission can score."""
        return float(self.document["max_total"])

    @property
    def attempted(self) -> list[SubmissionResult]:
        """The submissions that had a notebook to grade."""
        return [r for r in self.results if r.status not in NOT_SUBMITTED]


def render(page: Page) -> str:
    """The whole page, as one HTML document."""
    sections = [
        *_summary(page),
        *_scores(page),
        *_checks(page),
        *_failures(page),
        *_times(page),
        *_flags(page),
        *_similar(page.comparison),
    ]
    body = "\n".join(part for part in sections if part)
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{CSP}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{escape(page.name)}: item analysis</title>
<style>{STYLE}</style>
</head>
<body>
<main>
{body}
</main>
</body>
</html>
"""


def _img(data: bytes | None, alt: str) -> str:
    """A PNG inlined as a data URI ("" when there is no figure)."""
    if data is None:
        return ""
    encoded = base64.b64encode(data).decode()
    return f'<img src="data:image/png;base64,{encoded}" alt="{escape(alt)}">'


def _summary(page: Page) -> list[str]:
    totals = [r.total for r in page.results]
    statuses = Counter(r.status for r in page.results)
    summary = [
        f"<strong>{len(page.results)}</strong> students, {len(page.attempted)} with a notebook graded",
        f"mean {statistics.fmean(totals):.2f} / {page.max_total:g}, median {statistics.median(totals):g}",
        f"full marks: {sum(1 for t in totals if t >= page.max_total)}",
        "statuses: " + ", ".join(f"{escape(k)} {v}" for k, v in sorted(statuses.items())),
    ]
    sections = [
        f"<h1>{escape(page.name)}: item analysis</h1>",
        "<p>" + " · ".join(summary) + "</p>",
        '<p class="note">For you, not for students: it names students and shows their code. '
        "Nothing in it changes a score: a flag or a similar pair is something to look at, not a verdict.</p>",
    ]
    if page.notes:
        notes = "".join(f"<li>{escape(n)}</li>" for n in page.notes)
        sections.append(f'<ul class="note">{notes}</ul>')
    return sections


def _scores(page: Page) -> list[str]:
    return [
        '<h2 id="scores">Scores</h2>',
        _img(
            page.pictures["scores"],
            f"Histogram of the scores of {len(page.results)} submissions out of {page.max_total:g}",
        ),
    ]


def _checks(page: Page) -> list[str]:
    rows = [
        [
            f"<code>{escape(c.grade_id)}</code>",
            f"{c.max_points:g}",
            f"{c.passed} / {c.attempted}",
            "–" if c.pass_rate is None else f"{100 * c.pass_rate:.0f}%",
            "–" if c.discrimination is None else f"{c.discrimination:+.2f}",
        ]
        for c in page.checks
    ]
    return [
        '<h2 id="checks">Checks</h2>',
        _img(page.pictures["checks"], "Pass rate of every check"),
        "<p>Pass rate over the submissions that had a notebook to grade. Discrimination: how well passing "
        "the check goes with scoring well on the others (the correlation of the two; near 0 or below, "
        "the check measures something else than the rest, or is too easy or too hard to tell).</p>",
        table(["check", "points", "passed", "pass rate", "discrimination"], rows, scope=True),
    ]


def _failures(page: Page) -> list[str]:
    sections = [
        '<h2 id="failures">Most common failure messages</h2>',
        _img(page.pictures["failures"], "The most common failure messages across checks"),
    ]
    for check in page.checks:
        heading = f"<h3><code>{escape(check.grade_id)}</code></h3>"
        if not check.failures:
            sections.append(f"{heading}<p>No failure.</p>")
            continue
        common = sorted(check.failures.items(), key=lambda kv: (-kv[1], kv[0]))[:TOP_MESSAGES]
        rows = [
            [
                str(count),
                f"<code>{escape(message)}</code>",
                escape(
                    ", ".join(check.examples[message])
                    + (", …" if count > len(check.examples[message]) else "")
                ),
            ]
            for message, count in common
        ]
        sections.append(heading)
        sections.append(table(["submissions", "message", "for example"], rows, scope=True))
    return sections


def _times(page: Page) -> list[str]:
    slowest = sorted(page.attempted, key=lambda r: -r.seconds)[:SLOWEST]
    rows = [[escape(r.student), f"{r.seconds:.1f}", escape(r.status)] for r in slowest]
    return [
        '<h2 id="time">Time per submission</h2>',
        _img(page.pictures["time"], "Histogram of the seconds each submission took to grade"),
        table(["student", "seconds", "status"], rows, caption="The slowest", scope=True),
    ]


def _flags(page: Page) -> list[str]:
    flagged = [r for r in page.results if r.flags]
    if not flagged:
        return ['<h2 id="flags">Flags</h2>', "<p>No submission was flagged.</p>"]
    rows = [[escape(r.student), f"{r.total:g}", escape("; ".join(r.flags))] for r in flagged]
    return [
        '<h2 id="flags">Flags</h2>',
        _img(page.pictures["flags"], "Submissions per kind of flag"),
        table(["student", "score", "flags"], rows, scope=True),
    ]


def _similar(comparison: Comparison) -> list[str]:
    sections = ['<h2 id="similar">Near-identical answers</h2>']
    if comparison.engine == "off":
        return [*sections, "<p>Answers were not compared.</p>"]
    sections.append(
        f"<p>Answer cells of at least {comparison.min_tokens} tokens whose normalised code (names "
        "renamed, docstrings, comments and strings left out, the handed-out stub discounted) is at "
        f"least {100 * comparison.threshold:.0f}% alike, compared by <code>{escape(comparison.engine)}"
        "</code>. Short correct answers look alike by nature, and so do answers close to your "
        "solution: look at the code before you conclude.</p>"
    )
    if not comparison.groups:
        sections.append("<p>None found.</p>")
    for group in comparison.groups:
        also = " Near-identical to your solution too." if group.same_as_solution else ""
        sections.append(
            f"<h3><code>{escape(group.answer)}</code>: {escape(', '.join(group.students))}</h3>"
            f"<p>{len(group.students)} students, similarity {100 * group.similarity:.0f}% or more, "
            f"{group.tokens} tokens or more.{also}</p>"
            f"<details><summary>{escape(group.students[0])}'s answer</summary>"
            f"<pre>{escape(group.source)}</pre></details>"
        )
    return sections
