"""What runs on Gradescope for every submission: grade the notebook, write results.json.

Gradescope extracts the autograder zip (`hookviz export gradescope`, gradescope_export.py) into
``/autograder/source`` and runs ``run_autograder``, which runs
``python -m hookviz.grading.platforms.gradescope_autograder``: it grades the notebook found in
``/autograder/submission/`` with hookviz's own grader (the merge, nbval in a sandbox, the same
limits and integrity checks as ``hookviz grade``) and writes ``/autograder/results/results.json``.

``HOOKVIZ_AUTOGRADER_ROOT`` moves ``/autograder`` (to try the autograder in a folder laid out
the same way) and ``HOOKVIZ_PYTHON`` picks the Python that runs it.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import sys
import tempfile
import time
import traceback
from pathlib import Path

from ... import __version__
from ...course.conventions import Outcome, Status
from ...course.format.notebooks import NotebookError, atomic_write_text
from ...course.wording import words
from ..core.feedback import detail_words, feedback_markdown
from ..core.gradebook import apply_manual_grades
from ..core.merge import Assignment, load_assignment
from ..core.results import CheckResult, SubmissionResult
from ..core.submissions import Submission
from ..run.engine import grade_submission
from ..run.limits import Limits
from ..run.nbval_child import GradeSettings
from ..run.sandbox import SandboxError, detect_sandbox

DEFAULT_ROOT = Path("/autograder")
ROOT_VARIABLE = "HOOKVIZ_AUTOGRADER_ROOT"
PYTHON_VARIABLE = "HOOKVIZ_PYTHON"
CONFIG_FILE = "hookviz-autograder.json"  # the export's settings, in source/
VISIBILITIES = ("visible", "after_due_date", "after_published", "hidden")
STUDENT = "submission"

_WHEN_SHOWN = ("after_due_date", "after_published", "hidden")  # wording's feedback.when.*


def find_notebook(folder: Path, name: str) -> Submission:
    """The notebook to grade in Gradescope's submission folder (uploaded as is, or in folders)."""
    wanted = f"{name}.ipynb"
    notebooks = sorted(
        path
        for path in Path(folder).rglob("*.ipynb")
        if len(path.relative_to(folder).parts) <= 3
        and not any(p.startswith(".") or p == "__MACOSX" for p in path.relative_to(folder).parts)
    )
    exact = [path for path in notebooks if path.name == wanted]
    listed = ", ".join(str(path.relative_to(folder)) for path in notebooks)
    if len(exact) == 1:
        return Submission(STUDENT, exact[0])
    if len(exact) > 1:
        return Submission(
            STUDENT, None, f"several {wanted} files were uploaded ({listed}): upload one"
        )
    if len(notebooks) == 1:
        return Submission(
            STUDENT,
            notebooks[0],
            f"graded {notebooks[0].name}, the only notebook (expected {wanted})",
        )
    if notebooks:
        return Submission(STUDENT, None, f"none of the notebooks uploaded ({listed}) is {wanted}")
    return Submission(STUDENT, None, f"no notebook was uploaded: upload {wanted}")


def check_output(result: SubmissionResult, check: CheckResult) -> str:
    """The student's feedback for one check: its section of the feedback file, without its heading."""
    base = dataclasses.replace(result, checks=[], notes=[], status=Status.OK, detail="")
    prefix = feedback_markdown(base).rstrip("\n")
    whole = feedback_markdown(dataclasses.replace(base, checks=[check]))
    section = whole[len(prefix) :] if whole.startswith(prefix) else whole
    lines = section.strip("\n").splitlines()
    if lines and lines[0].startswith("## "):
        lines = lines[1:]
    text = "\n".join(lines).strip()
    passed = check.points >= check.max_points
    return text or words(
        "feedback.passed_sentence" if passed else "feedback.not_passed_sentence", result.lang
    )


def overall_output(result: SubmissionResult, delayed: list[str], visibility: str) -> str:
    """What concerns the whole submission: its status and the grader's notes; never the score."""
    lang, lines = result.lang, []
    if result.status != Status.OK:
        status = words("feedback.status", lang, status=result.status)
        detail = detail_words(result.detail, lang)
        lines.append(f"**{status}**" + (f": {detail}." if detail else "."))
    if result.notes:
        lines += ["", words("feedback.notes", lang) + ":", ""]
        lines += [f"- {note}" for note in result.notes]
    if delayed and visibility in _WHEN_SHOWN:
        when = words(f"feedback.when.{visibility}", lang)
        lines += ["", words("feedback.hidden_later", lang, names=", ".join(delayed), when=when)]
    return "\n".join(lines).strip()


MANUAL_GRADES_FILE = "hookviz-manual-grades.json"
METADATA_FILE = "submission_metadata.json"  # Gradescope's, beside submission/


def results_json(
    result: SubmissionResult, assignment: Assignment, visibility: str, seconds: float
) -> dict:
    """Gradescope's results.json for one graded submission."""
    with_hidden = {check.grade_id for check in assignment.checks if check.hidden_lines}
    tests = []
    for number, check in enumerate(result.checks, start=1):
        tests.append(
            {
                "name": check.grade_id,
                "number": str(number),
                "score": check.points,
                "max_score": check.max_points,
                "status": _status(check),
                "output": check_output(result, check),
                "output_format": "md",
                "visibility": visibility if check.grade_id in with_hidden else "visible",
                "extra_data": {"outcome": check.outcome},
            }
        )
    tests = [{k: v for k, v in test.items() if v is not None} for test in tests]
    delayed = [
        c.grade_id for c in result.checks if c.grade_id in with_hidden and visibility != "visible"
    ]
    document = {
        "score": result.total,
        "execution_time": round(seconds),
        "output": overall_output(result, delayed, visibility),
        "output_format": "md",
        "stdout_visibility": "hidden",  # the grader's log shows expected outputs
        "tests": tests,
        "extra_data": {
            "hookviz": __version__,
            "status": result.status,
            "flags": result.flags,
            "sandbox": result.sandbox,
            "notebook": result.submission,
        },
    }
    if not document["output"]:
        del document["output"], document["output_format"]
    return document


def _status(check: CheckResult) -> str | None:
    """passed or failed; none for a question still waiting for its grade given by hand."""
    if check.manual and check.outcome == Outcome.NEEDS_MANUAL_GRADE:
        return None
    return "passed" if check.points >= check.max_points else "failed"


def _close(path: Path) -> None:
    """Keep graded code out of an instructor's folder (root's, mode 0700)."""
    if path.exists() and os.geteuid() == 0:
        path.chmod(0o700)


def run_autograder(root: Path, stream=None) -> int:
    """Grade the submission in ``root``/submission into ``root``/results/results.json.

    A fault of the set-up (a missing file, a sandbox that cannot start) writes no results and
    exits 1: Gradescope then reports an autograder failure, not a score of 0.
    """
    stream = stream or sys.stdout
    started = time.monotonic()
    root = Path(root)
    source, results = root / "source", root / "results"
    try:
        config = json.loads((source / CONFIG_FILE).read_text(encoding="utf-8"))
        assignment = load_assignment(source / config["notebook"])
        results.mkdir(parents=True, exist_ok=True)
        for folder in (source, results, root / "submission"):
            _close(folder)
        submission = find_notebook(root / "submission", assignment.name)
        settings = GradeSettings(
            Limits(
                cell_timeout=float(config["cell_timeout"]),
                submission_timeout=float(config["submission_timeout"]),
                memory_mb=int(config["memory_mb"]),
            )
        )
        sandbox = detect_sandbox(config["sandbox"], [source, root / "submission", results])
        if sandbox.warning:
            print(f"warning: {sandbox.warning}", file=stream)
        scratch = Path(tempfile.mkdtemp(prefix="hookviz-grade-"))
        scratch.chmod(0o755)  # pytest lists it; the one work folder inside is the grading user's
        try:
            result = grade_submission(
                submission, assignment, sandbox, settings, slot=0, scratch=scratch
            )
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
    except (NotebookError, SandboxError, OSError, KeyError, ValueError):
        print(
            "hookviz autograder: could not grade (a fault of the set-up, not of the submission):",
            file=stream,
        )
        traceback.print_exc(file=stream)
        return 1
    apply_shipped_grades(result, source / MANUAL_GRADES_FILE, root / METADATA_FILE)
    document = results_json(
        result, assignment, config["hidden_visibility"], time.monotonic() - started
    )
    atomic_write_text(results / "results.json", json.dumps(document, indent=1, ensure_ascii=False))
    _log(result, stream)
    return 0


def submitter_keys(metadata_path: Path) -> list[str]:
    """Who submitted, as Gradescope's submission_metadata.json names them: each user's email,
    the part of it before the @, SID and name, casefolded (how a batch names its students)."""
    try:
        users = json.loads(metadata_path.read_text(encoding="utf-8")).get("users", [])
    except (OSError, ValueError, AttributeError):
        return []
    keys = []
    for user in users if isinstance(users, list) else []:
        email = str(user.get("email") or "")
        for key in (email, email.split("@")[0], user.get("sid"), user.get("name")):
            if key and str(key).strip():
                keys.append(str(key).strip().casefold())
    return keys


def apply_shipped_grades(result: SubmissionResult, grades_path: Path, metadata: Path) -> None:
    """Put in the grades given by hand that the export shipped (`--manual-grades OUT`), for
    the student who submitted, where their answer is still the one graded."""
    try:
        grades = json.loads(grades_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return
    by_key = {str(student).strip().casefold(): mine for student, mine in grades.items()}
    for key in submitter_keys(metadata):
        if isinstance(by_key.get(key), dict):
            apply_manual_grades(result, by_key[key])
            return


def _log(result: SubmissionResult, stream) -> None:
    """The instructor's view, in Gradescope's stdout (never shown to students)."""
    print(
        f"hookviz {__version__}: {result.submission or 'no notebook'}: {result.total:g}/{result.max_total:g}, "
        f"status {result.status}, sandbox {result.sandbox}, {result.seconds:.1f} s",
        file=stream,
    )
    if result.detail:
        print(f"  {result.detail}", file=stream)
    for check in result.checks:
        print(
            f"  {check.grade_id}: {check.points:g}/{check.max_points:g} {check.outcome} {check.detail}".rstrip(),
            file=stream,
        )
    for flag in result.flags:
        print(f"  flag: {flag}", file=stream)
    for note in result.notes:
        print(f"  note: {note}", file=stream)


def main(argv: list[str] | None = None) -> int:
    """``python -m hookviz.grading.platforms.gradescope_autograder [ROOT]``: what run_autograder runs."""
    argv = sys.argv[1:] if argv is None else argv
    root = Path(argv[0]) if argv else Path(os.environ.get(ROOT_VARIABLE) or DEFAULT_ROOT)
    return run_autograder(root)


if __name__ == "__main__":
    sys.exit(main())
