"""Feedback as markdown: feedback/<student>.md for the student, review/<student>.md for you."""

from __future__ import annotations

from ...course.conventions import HIDDEN_TEST_FAILED, PASS_MARK, Outcome, Status, in_words
from ...course.wording import every_language
from .results import SubmissionResult, points_text

FEEDBACK_OUTPUT_LIMIT = 4_000


ADVICE = {
    Outcome.MISMATCH: "Compare your output with what the check looks for, above.",
    Outcome.ERROR: "The check stopped with an error (shown above); your answer raised it or made the check fail.",
    Outcome.TIMEOUT: "This check ran out of time: look for a loop that never ends, or work that is far too slow.",
    Outcome.KERNEL_DIED: "Python stopped while this check ran (os._exit, a crash, or too much memory).",
    Outcome.NOT_RUN: "This check did not run, because of what happened earlier in the notebook.",
    Outcome.TAMPERED: "The grader's tools were changed while this check ran; the check counts for nothing.",
    Outcome.GRADER_ERROR: "The grader could not run this check; ask your instructor.",
    Outcome.SKIPPED: "This check was skipped.",
}


def _clip(text: str) -> str:
    if len(text) <= FEEDBACK_OUTPUT_LIMIT:
        return text
    half = FEEDBACK_OUTPUT_LIMIT // 2
    return f"{text[:half]}\n... ({len(text) - 2 * half} characters left out) ...\n{text[-half:]}"


def _fence(text: str) -> str:
    fence = "```"
    while fence in text:
        fence += "`"
    return f"{fence}text\n{_clip(text).rstrip()}\n{fence}"


def _header(result: SubmissionResult, title: str) -> list[str]:
    lines = [
        f"# {result.assignment}: {title} for {result.student}",
        "",
        f"**Score: {points_text(result.total)} / {points_text(result.max_total)}**",
    ]
    if result.status != Status.OK:
        lines += [
            "",
            f"Status: **{result.status}**" + (f": {result.detail}" if result.detail else "."),
        ]
    if result.notes:
        lines += ["", "## Notes", ""] + [f"- {note}" for note in result.notes]
    return lines


def _check_heading(check) -> str:
    if check.outcome in (Outcome.NEEDS_MANUAL_GRADE, Outcome.GRADED_BY_HAND):
        mark = in_words(check.outcome)
    elif check.outcome == Outcome.PASSED and check.points == check.max_points:
        mark = "passed"
    else:
        mark = "not passed"
    return f"## {check.grade_id}: {points_text(check.points)} / {points_text(check.max_points)} ({mark})"


def _what_happened(check) -> list[str]:
    """The outcome in words, and what the grader knows of why (the error the cell raised)."""
    raised = check.error if check.outcome == Outcome.ERROR else ""
    if raised.startswith(HIDDEN_TEST_FAILED):
        raised = ""  # the feedback explains a hidden test below
    why = check.detail or raised
    if why:
        return ["", f"What happened: {in_words(check.outcome)}: {why.rstrip('.')}."]
    if check.outcome in ADVICE:
        return ["", f"What happened: {in_words(check.outcome)}."]
    return []


def _partial_credit(check) -> list[str]:
    """Why a check that ran through earned less than its points (an nbgrader test cell's number)."""
    if check.points < check.max_points and check.detail:
        return ["", f"Partial credit: {check.detail.rstrip('.')}."]
    return []


def _hidden_failure(actual: str) -> str | None:
    """The message of a failed hidden test in a check's output, if one failed."""
    for line in actual.splitlines():
        if line.startswith(f"{HIDDEN_TEST_FAILED}: "):
            return line[len(HIDDEN_TEST_FAILED) + 2 :]
    return None


def feedback_markdown(result: SubmissionResult) -> str:
    """The student's feedback: each check, passed or not, what the check looks for, their output, the hints.

    It never shows the instructor's expected output as such: under a passed check it may hold
    an explanation ("Why: ...") that gives a prediction's answer away.
    """
    lines = _header(result, "feedback")
    for check in result.checks:
        lines += ["", _check_heading(check)]
        if check.manual:
            lines += _manual_feedback(check)
            continue
        if check.outcome == Outcome.PASSED:
            lines += _partial_credit(check)
            continue
        lines += _what_happened(check)
        claims = [
            line[2:] for line in check.expected.splitlines() if line.startswith(f"{PASS_MARK} ")
        ]
        if claims:
            lines += ["", "What the check looks for:", ""] + [f"- {claim}" for claim in claims]
        lines += ["", "Your output:", "", _fence(check.actual or "(nothing)")]
        hidden = check.hidden_failure or _hidden_failure(check.actual)
        if hidden and hidden.startswith("hidden test failed"):
            lines += [
                "",
                "Your answer passed the checks you could run, but a hidden test failed: the grader "
                "ran one of this cell's checks again, on a model you had not seen, and your answer "
                f"did not pass it ({hidden}). An answer that works for any model passes; look for "
                "what yours assumes about the models the visible checks use (a size, a name, a "
                "number of layers).",
            ]
        elif hidden:
            lines += [
                "",
                "Your answer passed the checks you could run, but a hidden test failed: the grader "
                f"tried your answer on a case you had not seen, and it did not pass ({hidden}). An "
                "answer that works for any input passes; look for what yours assumes about the "
                "inputs the visible checks use.",
            ]
        hints = _hint_lines(check.actual)
        advice = ADVICE.get(check.outcome)
        not_done = every_language("checks.not_done_yet")
        if "not written yet" in check.detail or any(words in check.actual for words in not_done):
            advice = "An answer this check needs is not written yet: write it where it says YOUR CODE HERE."
        if hidden:
            advice = None
        if hints or advice:
            lines += (
                ["", "Hints:", ""]
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


def _manual_feedback(check) -> list[str]:
    """A question graded by hand: that it waits for a grade, or the grader's comment."""
    if check.outcome == Outcome.NEEDS_MANUAL_GRADE:
        return ["", "Your instructor grades this answer by hand; the points come later."]
    if check.outcome == Outcome.GRADED_BY_HAND:
        return ["", f"Comment: {check.comment}"] if check.comment else []
    return _what_happened(check)


def review_markdown(result: SubmissionResult) -> str:
    """The instructor's view of one submission: every check that did not pass, expected against actual."""
    lines = _header(result, "review")
    if result.flags:
        lines += ["", "Flags: " + "; ".join(result.flags)]
    for check in result.checks:
        lines += ["", _check_heading(check)]
        if check.manual:
            lines += _manual_feedback(check) + ["", "Answer:", "", _fence(check.actual or "")]
            continue
        if check.outcome == Outcome.PASSED:
            lines += _partial_credit(check)
            continue
        lines += _what_happened(check)
        lines += ["", "Expected output:", "", _fence(check.expected)]
        lines += ["", "Actual output:", "", _fence(check.actual or "(nothing)")]
    return "\n".join(lines) + "\n"
