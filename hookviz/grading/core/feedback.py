"""Feedback as markdown: feedback/<student>.md for the student, in the language their notebook
was handed out in (the result's ``lang``; the words are course/wording's), and
review/<student>.md for you, in English."""

from __future__ import annotations

from dataclasses import replace

from ...course.conventions import (
    HIDDEN_TEST_FAILED,
    NOTE_MARK,
    PASS_MARK,
    Outcome,
    Status,
    in_words,
    notes,
    shorten_middle,
)
from ...course.wording import every_language, has, words
from ...course.wording import table as wording_table
from .results import SubmissionResult, points_text

FEEDBACK_OUTPUT_LIMIT = 4_000


def _advice(outcome: str, lang: str) -> str:
    """The word of advice that comes with an outcome (wording's feedback.advice.*), or ''."""
    key = f"feedback.advice.{outcome}"
    return words(key, lang) if has(key, lang) else ""


def outcome_words(outcome: str, lang: str) -> str:
    """What an outcome (or a status) means, in words, in ``lang``."""
    key = f"outcome.{outcome}"
    return words(key, lang) if has(key, lang) else in_words(outcome)


def _clip(text: str) -> str:
    """A long output's start and end, cut between lines or words, never inside one."""
    return shorten_middle(text, FEEDBACK_OUTPUT_LIMIT)


def _fence(text: str) -> str:
    fence = "```"
    while fence in text:
        fence += "`"
    return f"{fence}text\n{_clip(text).rstrip()}\n{fence}"


def _header(result: SubmissionResult, title: str) -> list[str]:
    lang = result.lang
    score = words(
        "feedback.score",
        lang,
        points=points_text(result.total),
        max_points=points_text(result.max_total),
    )
    lines = [f"# {title}", "", f"**{score}**"]
    if result.status != Status.OK:
        status = words("feedback.status", lang, status=f"**{result.status}**")
        detail = detail_words(result.detail, lang)
        lines += ["", status + (f": {detail}" if detail else ".")]
    if result.notes:
        lines += ["", f"## {words('feedback.notes', lang)}", ""]
        lines += [f"- {note}" for note in result.notes]
    return lines


def detail_words(detail: str, lang: str, outcome: object = None) -> str:
    """The grader's reason (English, as the instructor reads it) in the student's language:
    through the wording's ``detail.*`` and ``status.*`` templates. An error's own text stays
    as Python wrote it; the integrity probe's findings, which only an instructor can act on,
    are not repeated to a student in another language (the outcome says what happened)."""
    if lang == "en" or not detail:
        return detail
    from ...course.i18n.catalogue import translate

    english, translated = wording_table("en"), wording_table(lang)
    templates = {
        english[key]: translated[key]
        for key in english
        if key.startswith(("detail.", "status.")) and key in translated
    }
    said = translate(detail, templates)
    if said == detail and outcome == Outcome.TAMPERED:
        return ""
    return said


def _check_heading(check, lang: str) -> str:
    if check.outcome in (Outcome.NEEDS_MANUAL_GRADE, Outcome.GRADED_BY_HAND):
        mark = outcome_words(check.outcome, lang)
    elif check.outcome == Outcome.PASSED and check.points == check.max_points:
        mark = words("feedback.passed", lang)
    else:
        mark = words("feedback.not_passed", lang)
    return f"## {check.grade_id}: {points_text(check.points)} / {points_text(check.max_points)} ({mark})"


def _what_happened(check, lang: str) -> list[str]:
    """The outcome in words, and what the grader knows of why (the error the cell raised)."""
    raised = check.error if check.outcome == Outcome.ERROR else ""
    if raised.startswith(HIDDEN_TEST_FAILED):
        raised = ""  # the feedback explains a hidden test below
    why = detail_words(check.detail, lang, check.outcome) or raised
    what = outcome_words(check.outcome, lang)
    if why:
        return ["", words("feedback.what_happened", lang, what=what, why=why.rstrip("."))]
    if _advice(check.outcome, lang):
        return ["", words("feedback.what_happened_only", lang, what=what)]
    return []


def _partial_credit(check, lang: str) -> list[str]:
    """Why a check that ran through earned less than its points (an nbgrader test cell's number)."""
    if check.points < check.max_points and check.detail:
        why = detail_words(check.detail, lang).rstrip(".")
        return ["", words("feedback.partial_credit", lang, why=why)]
    return []


def _hidden_failure(actual: str) -> str | None:
    """The message of a failed hidden test in a check's output, if one failed."""
    for line in actual.splitlines():
        if line.startswith(f"{HIDDEN_TEST_FAILED}: "):
            return line[len(HIDDEN_TEST_FAILED) + 2 :]
    return None


def feedback_markdown(result: SubmissionResult) -> str:
    """The student's feedback, in the language their notebook was handed out in: each check,
    passed or not, what the check looks for, their output, the hints.

    It never shows the instructor's expected output as such: under a passed check it may hold
    an explanation ("Why: ...") that gives a prediction's answer away.
    """
    lang = result.lang
    title = words("feedback.title", lang, assignment=result.assignment, student=result.student)
    lines = _header(result, title)
    for check in result.checks:
        lines += ["", _check_heading(check, lang)]
        if check.manual:
            lines += _manual_feedback(check, lang)
            continue
        if check.outcome == Outcome.PASSED:
            lines += _partial_credit(check, lang)
            said = notes(check.actual)  # a correct earlier answer stood in for the student's
            lines += ["", *(f"{NOTE_MARK} {note}" for note in said)] if said else []
            continue
        lines += _what_happened(check, lang)
        claims = [
            line[2:] for line in check.expected.splitlines() if line.startswith(f"{PASS_MARK} ")
        ]
        if claims:
            lines += ["", words("feedback.looks_for", lang), ""] + [f"- {c}" for c in claims]
        nothing = words("feedback.nothing", lang)
        lines += ["", words("feedback.your_output", lang), "", _fence(check.actual or nothing)]
        hidden = check.hidden_failure or _hidden_failure(check.actual)
        if hidden and hidden.startswith("hidden test failed"):
            lines += ["", words("feedback.hidden_model", lang, hidden=hidden)]
        elif hidden:
            lines += ["", words("feedback.hidden_input", lang, hidden=hidden)]
        hints = _hint_lines(check.actual)
        advice = _advice(check.outcome, lang)
        not_done = every_language("checks.not_done_yet")
        if "not written yet" in check.detail or any(said in check.actual for said in not_done):
            advice = words("feedback.not_written", lang)
        if hidden:
            advice = ""
        if hints or advice:
            lines += (
                ["", words("feedback.hints", lang), ""]
                + [f"- {hint}" for hint in hints]
                + ([f"- {advice}"] if advice else [])
            )
    return "\n".join(lines) + "\n"


def _hint_lines(actual: str) -> list[str]:
    """The hints a check's output showed, in whichever language it spoke ("Hint:", "힌트:")."""
    labels = every_language("label.hint")
    same = {f"{label} {above}" for label in labels for above in every_language("label.as_above")}
    lines = [line.strip() for line in actual.splitlines()]
    return [line for line in lines if line.startswith(labels) and line not in same]


def _manual_feedback(check, lang: str) -> list[str]:
    """A question graded by hand: that it waits for a grade, or the grader's comment."""
    if check.outcome == Outcome.NEEDS_MANUAL_GRADE:
        return ["", words("feedback.by_hand", lang)]
    if check.outcome == Outcome.GRADED_BY_HAND:
        return ["", words("feedback.comment", lang, comment=check.comment)] if check.comment else []
    return _what_happened(check, lang)


def review_markdown(result: SubmissionResult) -> str:
    """The instructor's view of one submission, in English: every check that did not pass,
    expected against actual."""
    result = replace(result, lang="en")
    lines = _header(result, f"{result.assignment}: review for {result.student}")
    if result.flags:
        lines += ["", "Flags: " + "; ".join(result.flags)]
    for check in result.checks:
        lines += ["", _check_heading(check, "en")]
        if check.manual:
            lines += _manual_feedback(check, "en") + ["", "Answer:", "", _fence(check.actual or "")]
            continue
        if check.outcome == Outcome.PASSED:
            lines += _partial_credit(check, "en")
            continue
        lines += _what_happened(check, "en")
        lines += ["", "Expected output:", "", _fence(check.expected)]
        lines += ["", "Actual output:", "", _fence(check.actual or "(nothing)")]
    return "\n".join(lines) + "\n"
