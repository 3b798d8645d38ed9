"""exercises/ is up to date with solutions/, and its check cells behave for every kind of answer.

- A fresh exercise runs top to bottom: every check says "not done yet", nothing else fails.
- A copy solved with the answers from solutions/ prints exactly the instructor's check output.
- A copy with the blog posts' mistakes (and other likely ones) gets a ✗ in every check cell.

``make test-colab`` runs this file again in the Colab-pinned environment.
"""

from __future__ import annotations

import contextlib
import importlib
import io
import json
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from hookviz.cli import main as hookviz_main
from hookviz.course.checks import FAILED, NOT_DONE, PASSED
from hookviz.course.content import unpack_text
from hookviz.course.conventions import NOTE_MARK, outputs_text
from tests.course.test_exercises_mutants import CATALOGUES
from tests.helpers import notebook_runner

REPO = Path(__file__).resolve().parents[2]
SOLUTIONS = sorted((REPO / "solutions").glob("*.ipynb"))
MARKERS = (
    "### BEGIN SOLUTION",
    "### END SOLUTION",
    "### BEGIN HIDDEN TESTS",
    "### END HIDDEN TESTS",
)


RUNNER = notebook_runner()


@pytest.fixture(scope="module")
def settings(tmp_path_factory) -> Path:
    """One folder of Jupyter/IPython/matplotlib settings for every kernel started here."""
    return tmp_path_factory.mktemp("exercise-settings")


def grading(cell) -> dict:
    return cell.get("metadata", {}).get("nbgrader", {})


def stdout_of(cell) -> str:
    """What a cell said, as nbval and the grader read it: stdout, and the text of its card."""
    return outputs_text(
        [
            o
            for o in cell.get("outputs", [])
            if not (o.output_type == "stream" and o.name != "stdout")
        ]
    )


def check_cells(nb) -> list:
    return [cell for cell in nb.cells if grading(cell).get("grade")]


def execute_copy(
    exercise: Path,
    tmp_path: Path,
    settings: Path,
    answers: dict[str, str] | None = None,
    *,
    allow_errors: bool = False,
):
    """Run a copy of ``exercise`` alone in a fresh folder (as a student's would), with some answers replaced."""
    nb = nbformat.read(exercise, as_version=4)
    for cell in nb.cells:
        grade_id = grading(cell).get("grade_id")
        if answers and grade_id in answers:
            cell.source = answers[grade_id]
    folder = tmp_path / "student"
    folder.mkdir()
    nbformat.write(nb, folder / exercise.name)
    return RUNNER.execute(nb, folder, settings=settings, allow_errors=allow_errors)


def ids(path: Path) -> str:
    return path.stem


# -- the files ----------------------------------------------------------------------------


def test_exercises_are_up_to_date():
    """`hookviz build --check` finds nothing to rebuild (exercises/, badges, install cells)."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        code = hookviz_main(["build", "--check", "--root", str(REPO)])
    assert code == 0, out.getvalue()
    assert sorted(p.name for p in (REPO / "exercises").glob("*.ipynb")) == [
        p.name for p in SOLUTIONS
    ]


@pytest.mark.parametrize("solution", SOLUTIONS, ids=ids)
def test_check_cells_follow_the_contract(solution: Path):
    """Unique grade ids, points, hidden tests, the sentinel last; the stored instructor output is all ✓."""
    nb = nbformat.read(solution, as_version=4)
    grade_ids = [grading(c)["grade_id"] for c in nb.cells if grading(c).get("grade_id")]
    assert len(grade_ids) == len(set(grade_ids)), f"duplicate grade ids: {grade_ids}"
    checks = check_cells(nb)
    assert checks, "an assignment without a check cell"
    for cell in checks:
        grade_id = grading(cell)["grade_id"]
        points = grading(cell).get("points")
        assert type(points) is int and points > 0, (
            f"{grade_id}: points must be a positive int, got {points!r}"
        )
        lines = [line for line in cell.source.splitlines() if line.strip()]
        assert lines[-1] == f'checks.sentinel("{grade_id}")', (
            f"{grade_id}: the sentinel must be the last line"
        )
        if "### BEGIN HIDDEN TESTS" in cell.source:  # optional: a prediction has none to hide
            assert cell.source.index("### BEGIN HIDDEN TESTS") < cell.source.index(
                "### END HIDDEN TESTS"
            ), grade_id
        printed = stdout_of(cell).splitlines()
        assert printed[-1] == f"[hookviz] {grade_id}: finished", (
            f"{grade_id}: stored output lacks the sentinel"
        )
        assert printed[0].startswith(PASSED + " ") and all(
            line.startswith((PASSED + " ", "    Why: ")) for line in printed[:-1]
        ), f"{grade_id}: the instructor's stored output must be only ✓ lines:\n{stdout_of(cell)}"
    answers = [c for c in nb.cells if grading(c).get("solution")]
    assert answers and all("### BEGIN SOLUTION" in c.source for c in answers)


RUN_CHECK_LINE = re.compile(r'^checks\.run_check\("([A-Za-z0-9+/=]+)"\)$')
GUARD_LINES = ("from hookviz.course import checks  #", "checks.setup_ran(")


def without_hidden_tests(source: str) -> str:
    """The source without its hidden-test regions, markers and their lines' indentation included
    (a region may sit inside a block: ``with check.upstream(...):``)."""
    return re.sub(
        r"^[ \t]*### BEGIN HIDDEN TESTS.*?### END HIDDEN TESTS\n?", "", source, flags=re.S | re.M
    )


@pytest.mark.parametrize("solution", SOLUTIONS, ids=ids)
def test_exercise_check_cells_read_as_a_specification(solution: Path):
    """A student's check cell: comments saying what is checked on which models, the guard, one
    packed line. No line of the check's code (helpers, reference answers) is readable in it, and
    the packed line runs exactly the solution's check, hidden tests left out."""
    exercise = nbformat.read(REPO / "exercises" / solution.name, as_version=4)
    instructor = {
        grading(c)["grade_id"]: c for c in check_cells(nbformat.read(solution, as_version=4))
    }
    packed = [
        c
        for c in check_cells(exercise)
        if "checks.sentinel(" in instructor[grading(c)["grade_id"]].source
    ]
    assert packed, "no hookviz check cell in the exercise"
    for cell in packed:
        grade_id = grading(cell)["grade_id"]
        lines = [line for line in cell.source.splitlines() if line.strip()]
        *visible, last = lines
        found = RUN_CHECK_LINE.match(last)
        assert found, f"{grade_id}: the last line must be checks.run_check(...):\n{cell.source}"
        assert all(line.startswith(("#", *GUARD_LINES)) for line in visible), (
            f"{grade_id}: only comments and the guard may be readable:\n{cell.source}"
        )
        solution_cell = instructor[grade_id]
        code = without_hidden_tests(solution_cell.source).strip("\n").split("\n")
        while code and code[0].startswith("#"):
            code.pop(0)
        payload = unpack_text(found.group(1))
        assert payload == "\n".join(code).strip("\n"), (
            f"{grade_id}: the packed code is not the solution's check"
        )
        assert "HIDDEN TESTS" not in payload and "check.hidden(" not in payload, grade_id
        # the specification: every claim of the instructor's ✓ lines, once, in the comments
        comments = "\n".join(line for line in visible if line.startswith("#"))
        assert "# What it checks" in comments, f"{grade_id}:\n{cell.source}"
        for line in stdout_of(solution_cell).splitlines():
            if line.startswith(PASSED + " "):
                claim = re.sub(r" \([^()]*(?:\([^()]*\)[^()]*)*\)$", "", line[2:])
                assert f"#  - {claim}" in comments, (
                    f"{grade_id}: {claim!r} not in the spec:\n{comments}"
                )


@pytest.mark.parametrize("solution", SOLUTIONS, ids=ids)
def test_exercise_has_no_answers_hidden_tests_or_outputs(solution: Path):
    """What a student gets: stubs, visible checks only, no stored outputs."""
    exercise = nbformat.read(REPO / "exercises" / solution.name, as_version=4)
    for cell in exercise.cells:
        assert not any(marker in cell.source for marker in MARKERS), cell.source[:200]
        assert not cell.get("outputs"), f"stored output in {solution.name}: {cell.source[:80]!r}"
    stubs = [c for c in exercise.cells if grading(c).get("solution")]
    assert stubs and all("raise NotImplementedError()" in c.source for c in stubs)


# -- running them -------------------------------------------------------------------------


@pytest.mark.notebook
@pytest.mark.parametrize("solution", SOLUTIONS, ids=ids)
def test_fresh_exercise_says_not_done_yet_everywhere(
    solution: Path, tmp_path: Path, settings: Path
):
    """Top to bottom with no answer: no cell raises, and each check reports "not done yet" and finishes."""
    nb = execute_copy(
        REPO / "exercises" / solution.name, tmp_path, settings
    )  # raises if any cell errors
    for cell in nb.cells:
        assert not any(
            o.output_type == "stream" and o.name == "stderr" for o in cell.get("outputs", [])
        ), cell.source
        assert FAILED not in stdout_of(cell), f"{cell.source[:120]!r} printed:\n{stdout_of(cell)}"
    for cell in check_cells(nb):
        grade_id = grading(cell)["grade_id"]
        printed = stdout_of(cell).splitlines()
        assert printed[-1] == f"[hookviz] {grade_id}: finished", stdout_of(cell)
        said = [line for line in printed if not line.startswith(NOTE_MARK)]
        stood_in = [line for line in printed if line.startswith(NOTE_MARK)]  # earlier answers
        assert all(line.endswith("since yours is not done yet") for line in stood_in), stood_in
        assert said[0].startswith(NOT_DONE + " ") and "not done yet" in said[0], stdout_of(cell)
        assert not any(line.startswith(PASSED) for line in printed), stdout_of(cell)


def solution_answers(solution: Path) -> dict[str, str]:
    nb = nbformat.read(solution, as_version=4)
    return {grading(c)["grade_id"]: c.source for c in nb.cells if grading(c).get("solution")}


@pytest.mark.notebook
@pytest.mark.parametrize("solution", SOLUTIONS, ids=ids)
def test_solved_exercise_prints_the_instructors_check_output(
    solution: Path, tmp_path: Path, settings: Path
):
    """With the answers from solutions/, every check cell prints exactly what the instructor's copy stores."""
    nb = execute_copy(
        REPO / "exercises" / solution.name, tmp_path, settings, solution_answers(solution)
    )
    expected = {
        grading(c)["grade_id"]: stdout_of(c)
        for c in check_cells(nbformat.read(solution, as_version=4))
    }
    got = {grading(c)["grade_id"]: stdout_of(c) for c in check_cells(nb)}
    assert got == expected


def first_of_kind(solution: Path, kind: str) -> dict[str, str]:
    """For each exercise, the first answer of ``kind`` in its catalogue (tests/answers/)."""
    found: dict[str, str] = {}
    for answer in importlib.import_module(CATALOGUES[solution.stem]).ANSWERS:
        if answer.kind == kind:
            found.setdefault(answer.exercise, answer.source)
    return found


@pytest.mark.notebook
@pytest.mark.parametrize("solution", SOLUTIONS, ids=ids)
def test_wrong_answers_get_a_cross_in_every_check(solution: Path, tmp_path: Path, settings: Path):
    """One wrong answer in every answer cell at once: each check cell prints a ✗ with a hint, then its sentinel."""
    nb = execute_copy(
        REPO / "exercises" / solution.name,
        tmp_path,
        settings,
        first_of_kind(solution, "wrong"),
        allow_errors=True,
    )
    for cell in check_cells(nb):
        grade_id = grading(cell)["grade_id"]
        assert not any(o.output_type == "error" for o in cell.outputs), f"{grade_id} raised"
        printed = stdout_of(cell)
        assert re.search(rf"^{FAILED} .*\n(.*\n)?    Hint: ", printed, re.M), (
            f"{grade_id}:\n{printed}"
        )
        assert printed.splitlines()[-1] == f"[hookviz] {grade_id}: finished", printed
        assert re.search(r"0x[0-9a-f]{6,}", printed) is None, printed


def test_solutions_are_not_exercises():
    """Guard against a build that copied solutions over exercises: the two differ in every answer cell."""
    for solution in SOLUTIONS:
        answers = solution_answers(solution)
        exercise = nbformat.read(REPO / "exercises" / solution.name, as_version=4)
        stubs = {
            grading(c)["grade_id"]: c.source for c in exercise.cells if grading(c).get("solution")
        }
        assert stubs.keys() == answers.keys()
        assert all(stubs[key] != answers[key] for key in answers)


@pytest.mark.notebook
@pytest.mark.slow
@pytest.mark.parametrize("solution", SOLUTIONS, ids=ids)
def test_hookviz_grade_scores_every_kind_of_submission(
    solution: Path, tmp_path: Path, settings: Path
):
    """Full marks for the solution and for correct answers in other styles; none for the stub or
    wrong answers; a cheat loses the checks whose hidden tests catch it, and is told so."""
    exercise = nbformat.read(REPO / "exercises" / solution.name, as_version=4)
    cheats = first_of_kind(solution, "cheat")
    submissions = {
        "solved": solution_answers(solution),
        "other-style": first_of_kind(solution, "correct"),
        "stub": {},
        "wrong": first_of_kind(solution, "wrong"),
        "cheat": {**solution_answers(solution), **cheats},
    }
    for student, answers in submissions.items():
        nb = nbformat.from_dict(exercise)
        for cell in nb.cells:
            grade_id = grading(cell).get("grade_id")
            if grade_id in answers:
                cell.source = answers[grade_id]
        (tmp_path / "submissions" / student).mkdir(parents=True)
        nbformat.write(nb, tmp_path / "submissions" / student / solution.name)
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "hookviz.cli",
            "grade",
            str(tmp_path / "submissions"),
            "--assignment",
            str(solution),
            "--out",
            str(tmp_path / "out"),
            "--jobs",
            "2",
        ],
        cwd=tmp_path,
        env=RUNNER.isolated_env(settings),
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    book = json.loads((tmp_path / "out" / "gradebook.json").read_text())
    rows = {entry["student"]: entry for entry in book["students"]}
    points = sum(grading(c)["points"] for c in check_cells(nbformat.read(solution, as_version=4)))
    assert book["max_total"] == points
    totals = {student: row["total"] for student, row in rows.items()}
    assert totals["solved"] == totals["other-style"] == points, result.stdout
    assert totals["stub"] == totals["wrong"] == 0, result.stdout
    caught = {f"check_{exercise}" for exercise in cheats}
    assert caught and all(rows["cheat"]["points"][check] == 0 for check in caught), rows["cheat"]
    assert totals["cheat"] < points
    feedback = (tmp_path / "out" / "feedback" / "cheat.md").read_text()
    assert "hidden test" in feedback, feedback
