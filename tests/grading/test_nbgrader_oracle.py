"""nbgrader as the oracle: the same assignments graded by real nbgrader (its CLI) and by hookviz.

One nbgrader course folder is made per session: `nbgrader generate_assignment` releases
tests/fixtures/nbgrader/oracle (an nbgrader-style assignment: bare asserts, hidden tests, a data
file, an AUTOTEST cell, a written answer) and our five solutions; `nbgrader autograde` grades
the fixture's ten submissions (tests/fixtures/nbgrader/submissions.toml, each built from
nbgrader's release) and, for each of our assignments, the solution and the untouched release.
`hookviz grade` grades the same ten submissions. Where the two disagree on purpose, the
submissions file says which grader and why.
"""

from __future__ import annotations

import copy
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import nbformat
import pytest

from hookviz.course import checks
from hookviz.course.authoring.build import exercise_from_solution
from hookviz.course.diagnose import Hint
from hookviz.course.format.notebooks import NotebookError, grade_id, nbgrader_checksum
from hookviz.grading.core.bare_checks import partial_credit
from hookviz.grading.core.merge import load_assignment, merge
from hookviz.grading.grade.batch import GradeOptions, grade_folder
from hookviz.grading.run.limits import Limits
from tests.grading_env import private_jupyter_dirs
from tests.tiny_course import CONFIG

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib

REPO = Path(__file__).resolve().parents[2]
FIXTURE = REPO / "tests" / "fixtures" / "nbgrader"
ORACLE = FIXTURE / "oracle"
SUBMISSIONS = tomllib.loads((FIXTURE / "submissions.toml").read_text(encoding="utf-8"))
OURS = sorted((REPO / "solutions").glob("[0-9][0-9]-*.ipynb"))
NBGRADER = Path(sys.executable).parent / "nbgrader"  # the dev extra installs it beside us
AUTO_CHECKS = ("test_squares", "test_squares_hidden", "test_mean_value", "test_cube")
OPTIONS = GradeOptions(
    jobs=2, limits=Limits(cell_timeout=60, submission_timeout=240, memory_mb=3072)
)


@dataclass
class Course:
    """The nbgrader course folder of the session, graded."""

    root: Path
    scores: dict[tuple[str, str], dict[str, float | None]]  # (assignment, student) -> grade_id
    released: Path  # release/oracle/oracle.ipynb


def nbgrader(course: Path, *args: str, timeout: float = 1500) -> subprocess.CompletedProcess:
    """Run nbgrader's CLI in ``course``; its output, after a clear failure if it failed."""
    env = {**os.environ, "PATH": f"{NBGRADER.parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    done = subprocess.run(
        [str(NBGRADER), *args],
        cwd=course,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    return done


def submission(released, student: str):
    """The released notebook with the cells the submission names replaced by its sources."""
    notebook = copy.deepcopy(released)
    for cell in notebook.cells:
        source = SUBMISSIONS[student].get(grade_id(cell) or "")
        if isinstance(source, str):
            cell.source = source.strip("\n")
    return notebook


def expected(student: str, grader: str) -> dict[str, float]:
    """What a grader should give each check of a submission: the shared points, then its own."""
    spec = SUBMISSIONS[student]
    own = {k: v for k, v in spec.get(grader, {}).items() if k != "because"}
    return {**spec["expected"], **own}


@pytest.fixture(scope="session")
def course(tmp_path_factory) -> Course:
    """One nbgrader course: every assignment released, every submission autograded."""
    root = tmp_path_factory.mktemp("nbgrader-course")
    with private_jupyter_dirs(root / "jupyter"):
        (root / "nbgrader_config.py").write_text(
            'c = get_config()\nc.CourseDirectory.course_id = "oracle"\n'
            "c.ExecutePreprocessor.timeout = 120\n",
            encoding="utf-8",
        )
        shutil.copytree(ORACLE, root / "source" / "oracle")
        for path in OURS:
            (root / "source" / path.stem).mkdir(parents=True)
            shutil.copy(path, root / "source" / path.stem / path.name)
        done = nbgrader(root, "generate_assignment", "*", "--force")
        assert done.returncode == 0, done.stderr[-3000:]

        released = nbformat.read(root / "release" / "oracle" / "oracle.ipynb", as_version=4)
        for student in SUBMISSIONS:
            folder = root / "submitted" / student / "oracle"
            folder.mkdir(parents=True)
            nbformat.write(submission(released, student), folder / "oracle.ipynb")
            shutil.copy(ORACLE / "measurements.csv", folder)
        for path in OURS:
            for student, source in (("solution", path), ("stub", None)):
                folder = root / "submitted" / student / path.stem
                folder.mkdir(parents=True)
                shutil.copy(source or root / "release" / path.stem / path.name, folder)
        done = nbgrader(root, "autograde", "*", "--create", "--force")
        assert done.returncode == 0, done.stderr[-3000:]

        from nbgrader.api import Gradebook  # read the scores nbgrader stored

        scores = {}
        with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gradebook:
            for assignment in gradebook.assignments:
                for notebook in assignment.notebooks:
                    for graded in notebook.submissions:
                        scores[(assignment.name, graded.student.id)] = {
                            grade.name: grade.auto_score for grade in graded.grades
                        }
    return Course(root, scores, root / "release" / "oracle" / "oracle.ipynb")


@pytest.fixture(scope="session")
def hookviz_grades(course, tmp_path_factory) -> dict:
    """hookviz grade on the same ten submissions: student -> grade_id -> (points, outcome)."""
    root = tmp_path_factory.mktemp("hookviz-oracle")
    # hookviz refuses ### AUTOTEST (test_the_autotest_cell_is_refused_naming_it); the instructor
    # pastes the cell as nbgrader's release expands it, as the refusal says.
    released = {grade_id(c): c for c in nbformat.read(course.released, as_version=4).cells}
    source = nbformat.read(ORACLE / "oracle.ipynb", as_version=4)
    for cell in source.cells:
        if grade_id(cell) == "test_cube":
            cell.source = released["test_cube"].source
    (root / "oracle").mkdir()
    nbformat.write(source, root / "oracle" / "oracle.ipynb")
    shutil.copy(ORACLE / "measurements.csv", root / "oracle")
    for student in SUBMISSIONS:  # nbgrader's layout, without our assignments' submissions
        shutil.copytree(
            course.root / "submitted" / student / "oracle", root / "submitted" / student
        )
    with private_jupyter_dirs(root / "jupyter"):
        summary = grade_folder(
            root / "submitted", root / "oracle" / "oracle.ipynb", root / "out", OPTIONS
        )
    return {
        result.student: {
            "checks": {c.grade_id: (c.points, c.outcome) for c in result.checks},
            "flags": result.flags,
        }
        for result in summary.results
    }


# -- the oracle ------------------------------------------------------------------------------


@pytest.mark.slow
def test_nbgrader_and_hookviz_agree_check_by_check_except_where_said(
    course, hookviz_grades
) -> None:
    assert sorted(hookviz_grades) == sorted(SUBMISSIONS)
    for student in SUBMISSIONS:
        by_nbgrader = course.scores[("oracle", student)]
        by_hookviz = {gid: points for gid, (points, _) in hookviz_grades[student]["checks"].items()}
        for gid in AUTO_CHECKS:
            assert by_nbgrader[gid] == expected(student, "nbgrader")[gid], (
                student,
                gid,
                "nbgrader",
            )
            assert by_hookviz[gid] == expected(student, "hookviz")[gid], (student, gid, "hookviz")
            if "nbgrader" not in SUBMISSIONS[student] and "hookviz" not in SUBMISSIONS[student]:
                assert by_nbgrader[gid] == by_hookviz[gid], (student, gid)
    # Where they differ on purpose, hookviz says why in the outcome.
    forged = hookviz_grades["s07_forged"]["checks"]
    assert forged["test_squares"][1] != "passed" and forged["test_squares_hidden"][1] != "passed"
    silenced = hookviz_grades["s10_silenced"]["checks"]
    assert silenced["test_mean_value"][1] == silenced["test_cube"][1] == "tampered"


@pytest.mark.slow
def test_a_notebook_released_by_nbgrader_is_flagged_only_for_what_its_student_did(
    hookviz_grades,
) -> None:
    for student, graded in hookviz_grades.items():
        about_checks = [f for f in graded["flags"] if f.startswith("check-")]
        if student == "s08_edited_test":  # emptied its test cell
            assert about_checks == ["check-edited (test_squares)"]
        else:
            assert about_checks == [], student


@pytest.mark.slow
def test_the_written_answer_is_left_to_a_person_by_both(course, hookviz_grades) -> None:
    # nbgrader: no auto score for an answered question, 0 for one left as released.
    assert course.scores[("oracle", "s01_correct")]["explain_squares"] is None
    assert course.scores[("oracle", "s03_off_by_one")]["explain_squares"] == 0
    assert hookviz_grades["s01_correct"]["checks"]["explain_squares"][1] == "needs-manual-grade"
    release = course.released.read_text(encoding="utf-8")
    assert "MODEL ANSWER" not in release and "YOUR ANSWER HERE" in release


@pytest.mark.slow
@pytest.mark.parametrize("path", OURS, ids=[p.stem for p in OURS])
def test_our_assignments_score_full_for_the_solution_and_zero_for_the_stubs(course, path) -> None:
    solution = course.scores[(path.stem, "solution")]
    stub = course.scores[(path.stem, "stub")]
    notebook = nbformat.read(path, as_version=4)
    points = {
        grade_id(c): float(c.metadata.nbgrader["points"])
        for c in notebook.cells
        if c.metadata.get("nbgrader", {}).get("grade") is True
    }
    assert points and solution == points, "nbgrader does not give our solution full marks"
    assert stub == dict.fromkeys(points, 0.0), "nbgrader gives our untouched stubs points"


@pytest.mark.slow
def test_nbgrader_validate_accepts_our_exercises_and_fails_their_stubs(course) -> None:
    exercises = sorted((REPO / "exercises").glob("[0-9][0-9]-*.ipynb"))
    with private_jupyter_dirs(course.root / "jupyter"):
        done = nbgrader(course.root, "validate", *map(str, exercises))
    output = done.stdout + done.stderr
    assert "may be corrupted" not in output, output[-3000:]  # our metadata is nbgrader's
    assert "Success!" not in done.stdout, done.stdout[-3000:]  # no stub passes
    failed = re.findall(r"VALIDATION FAILED ON \d+ CELL", done.stdout)
    assert len(failed) == len(exercises), done.stdout[-3000:]


# -- what needs no nbgrader run ------------------------------------------------------------------


def test_the_autotest_cell_is_refused_naming_it() -> None:
    with pytest.raises(NotebookError) as caught:
        load_assignment(ORACLE / "oracle.ipynb")
    message = str(caught.value)
    assert "(grade_id test_cube)" in message and "### AUTOTEST" in message
    assert "nbgrader generate_assignment" in message  # and what to do about it


@pytest.mark.parametrize(
    "meta, cell_type",
    [
        ({"grade": True, "solution": False, "locked": True, "points": 2}, "code"),
        ({"grade": True, "solution": False, "locked": False, "points": 0.5}, "code"),
        ({"grade": False, "solution": True, "locked": False}, "code"),
        ({"grade": True, "solution": True, "locked": False, "points": 3}, "markdown"),
        ({"grade": False, "solution": False, "locked": True}, "code"),
        ({"locked": True}, "markdown"),
    ],
)
def test_our_checksum_is_nbgraders(meta, cell_type) -> None:
    from nbgrader.utils import compute_checksum

    make = nbformat.v4.new_code_cell if cell_type == "code" else nbformat.v4.new_markdown_cell
    cell = make("x = 1\nassert x == 1", metadata={"nbgrader": {"grade_id": "q1", **meta}})
    assert nbgrader_checksum(cell) == compute_checksum(cell)


def test_a_built_exercise_with_guarded_checks_is_not_flagged(tmp_path) -> None:
    """`hookviz build` adds a guard line to each check; a student who edited nothing is not told
    that the check changed, whether nbgrader rewrote the checksums or not."""
    solution = REPO / "solutions" / "01-apply.ipynb"
    assignment = load_assignment(solution)
    handed_out = exercise_from_solution(
        nbformat.read(solution, as_version=4), CONFIG, "s.ipynb", "e.ipynb"
    )
    assert merge(assignment, handed_out).flags == []
    for cell in handed_out.cells:  # as if re-released by nbgrader: its checksums, ours gone
        if cell.metadata.get("nbgrader", {}).get("checksum"):
            cell.metadata.pop("hookviz", None)
            cell.metadata.nbgrader["checksum"] = nbgrader_checksum(cell)
    assert merge(assignment, handed_out).flags == []


def wrong_double(x):
    return x + 2  # a wrong answer for the checks below


HINT = Hint("Multiply, do not add.")


def test_under_nbgrader_a_check_that_did_not_pass_raises_at_its_sentinel(
    monkeypatch, capsys
) -> None:
    line = "[hookviz] check_wrong_double: finished\n"
    check = checks.Check("wrong_double")
    check.equal(wrong_double(3), 6, "wrong_double(3) is 6", hint=HINT)
    checks.sentinel("check_wrong_double")  # hookviz grade: the sentinel prints, the ✗ costs
    assert capsys.readouterr().out.endswith(line)

    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")
    check = checks.Check("wrong_double")
    check.equal(wrong_double(3), 6, "wrong_double(3) is 6", hint=HINT)
    with pytest.raises(AssertionError, match="check_wrong_double: the checks of wrong_double"):
        checks.sentinel("check_wrong_double")
    assert "finished" not in capsys.readouterr().out
    check = checks.Check("wrong_double")  # a check that passes still prints its sentinel
    check.equal(wrong_double(0), 2, "wrong_double(0) is 2", hint=HINT)
    checks.sentinel("check_wrong_double")
    assert capsys.readouterr().out.endswith(line)
    checks.Check("not_written_yet")  # ○: the answer is missing, so it does not pass either
    with pytest.raises(AssertionError, match="the checks of not_written_yet"):
        checks.sentinel("check_not_written_yet")


# -- nbgrader's two other rules for a test cell: stderr, and the number it ends in -------------
#
# nbgrader.utils.determine_grade scores a test cell 0 when it writes to stderr, and the number
# its last expression shows when it shows one (get_partial_grade). A small course of its own,
# graded by both: `half` is the answer; each test cell is one case of the rules.


def _test_cell(gid: str, source: str, points: float = 1):
    meta = {"grade": True, "solution": False, "locked": True, "grade_id": gid, "points": points}
    return nbformat.v4.new_code_cell(source, metadata={"nbgrader": {**meta, "schema_version": 3}})


_HALF = nbformat.v4.new_code_cell(
    "def half(x):\n    ### BEGIN SOLUTION\n    return x / 2\n    ### END SOLUTION",
    metadata={
        "nbgrader": {
            "grade": False,
            "solution": True,
            "locked": False,
            "grade_id": "half",
            "schema_version": 3,
        }
    },
)
_PARTIAL = "score = 0.0\nif half(2) == 1:\n    score += 0.5\nif half(3) == 1.5:\n    score += 0.5\n"
# The instructor's own answer must score full marks (hookviz grade checks that first), so each
# cell costs points only for a wrong answer ("floor") or one that warns ("warns").
RULES = {
    "rules": [
        _test_cell(
            "t_stderr",
            "import sys\n\nif half(3) != 1.5:\n    print('half(3) is', half(3), file=sys.stderr)",
        ),
        _test_cell("t_asserts", "assert half(4) == 2"),  # stderr only when the answer warns
        _test_cell("t_partial", _PARTIAL + "score"),
        _test_cell("t_partial_of_2", _PARTIAL + "score * 2  # worth 2: the number is points", 2),
        _test_cell(
            "t_printed_then_number", "print('half of 3 is', half(3))\n1 if half(3) == 1.5 else 0.25"
        ),
        _test_cell("t_zero", "1 if half(3) == 1.5 else 0"),
        _test_cell("t_negative", "-half(2)"),
        _test_cell("t_not_a_number", "'half works'"),
        _test_cell("t_false", "half(3) == 1"),
        _test_cell("t_semicolon", "half(3) * 0;"),
        _test_cell("t_number_then_assert", "0.5\nassert half(2) == 1"),
    ],
    # a number above the cell's points: nbgrader stops autograding the notebook there
    "above": [
        _test_cell("t_before", "assert half(4) == 2"),
        _test_cell("t_above", "1 if half(3) == 1.5 else 4"),
        _test_cell("t_after", "assert half(2) == 1"),
    ],
}
# For nbgrader only: a second notebook of "above", after above.ipynb in name order (nbgrader
# autogrades an assignment's notebooks in that order, and stops a student's at an error).
LATER = [_test_cell("t_later", "assert half(2) == 1")]
RULE_ANSWERS = {
    "right": "def half(x):\n    return x / 2",
    "floor": "def half(x):\n    return x // 2",  # half(3) == 1: half the partial credit
    "warns": "def half(x):\n    import warnings\n\n    warnings.warn('half is old')\n    return x / 2",
    # floor, with floats shown at no decimal place: 0.5 shows as 0 and is read as shown
    "precise": "def half(x):\n    return x // 2\n\n\nget_ipython().run_line_magic('precision', '0')",
    # floor, and a float shown as text: nbgrader reads that as full points
    "forger": "def half(x):\n    return x // 2\n\n\n"
    "get_ipython().display_formatter.formatters['text/plain'].for_type(\n"
    "    float, lambda value, printer, cycle: printer.text('passed')\n)",
}


@pytest.fixture(scope="session")
def rules_graded(tmp_path_factory) -> dict:
    """RULES graded by nbgrader and by hookviz: (grader, assignment, student) -> grade_id -> ..."""
    root = tmp_path_factory.mktemp("nbgrader-rules")
    course, ours = root / "course", root / "hookviz"
    (course / "source").mkdir(parents=True)
    (course / "nbgrader_config.py").write_text(
        'c = get_config()\nc.CourseDirectory.course_id = "rules"\n', encoding="utf-8"
    )
    graded: dict = {}
    with private_jupyter_dirs(root / "jupyter"):
        for name, cells in RULES.items():
            notebook = nbformat.v4.new_notebook(cells=[copy.deepcopy(_HALF), *cells])
            notebook.metadata["kernelspec"] = {
                "name": "python3",
                "display_name": "Python 3",
                "language": "python",
            }
            (course / "source" / name).mkdir()
            nbformat.write(notebook, course / "source" / name / f"{name}.ipynb")
            (ours / name).mkdir(parents=True)
            nbformat.write(notebook, ours / name / f"{name}.ipynb")
        later = nbformat.v4.new_notebook(cells=[copy.deepcopy(_HALF), *LATER])
        later.metadata["kernelspec"] = notebook.metadata["kernelspec"]
        nbformat.write(later, course / "source" / "above" / "later.ipynb")
        done = nbgrader(course, "generate_assignment", "*", "--force")
        assert done.returncode == 0, done.stderr[-3000:]
        for name in RULES:
            released = nbformat.read(course / "release" / name / f"{name}.ipynb", as_version=4)
            for student, source in RULE_ANSWERS.items():
                handed_in = copy.deepcopy(released)
                handed_in.cells[0].source = source
                for folder in (
                    course / "submitted" / student / name,
                    ours / "submitted" / name / student,
                ):
                    folder.mkdir(parents=True)
                    nbformat.write(handed_in, folder / f"{name}.ipynb")
        released = nbformat.read(course / "release" / "above" / "later.ipynb", as_version=4)
        for student, source in RULE_ANSWERS.items():
            released.cells[0].source = source
            nbformat.write(released, course / "submitted" / student / "above" / "later.ipynb")
        done = nbgrader(course, "autograde", "*", "--create", "--force")
        graded["nbgrader log"] = done.stdout + done.stderr
        graded["nbgrader exit"] = done.returncode
        graded["nbgrader autograded above"] = {
            student: (course / "autograded" / student / "above").exists()
            for student in RULE_ANSWERS
        }
        from nbgrader.api import Gradebook

        with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
            for assignment in gradebook.assignments:
                for notebook in assignment.notebooks:
                    for handed_in in notebook.submissions:
                        graded.setdefault(
                            ("nbgrader", assignment.name, handed_in.student.id), {}
                        ).update({grade.name: grade.auto_score for grade in handed_in.grades})
        for name in RULES:
            summary = grade_folder(
                ours / "submitted" / name,
                ours / name / f"{name}.ipynb",
                ours / "out" / name,
                OPTIONS,
            )
            for result in summary.results:
                graded[("hookviz", name, result.student)] = {
                    c.grade_id: (c.points, c.outcome, c.detail) for c in result.checks
                }
    return graded


@pytest.mark.slow
def test_a_test_cell_that_writes_to_stderr_scores_zero_under_both(rules_graded) -> None:
    by_nbgrader = rules_graded[("nbgrader", "rules", "floor")]
    by_hookviz = rules_graded[("hookviz", "rules", "floor")]
    assert by_nbgrader["t_stderr"] == by_hookviz["t_stderr"][0] == 0
    assert by_hookviz["t_stderr"][1] == "mismatch"
    assert "wrote to stderr (half(3) is 1)" in by_hookviz["t_stderr"][2]
    assert rules_graded[("nbgrader", "rules", "right")]["t_stderr"] == 1
    # the answer's warning goes to stderr in every test cell that calls it
    warns_nbgrader = rules_graded[("nbgrader", "rules", "warns")]
    warns_hookviz = rules_graded[("hookviz", "rules", "warns")]
    assert warns_nbgrader["t_asserts"] == warns_hookviz["t_asserts"][0] == 0
    assert "half is old" in warns_hookviz["t_asserts"][2]
    assert rules_graded[("nbgrader", "rules", "right")]["t_asserts"] == 1


@pytest.mark.slow
def test_a_test_cell_ending_in_a_number_scores_that_number_under_both(rules_graded) -> None:
    right = rules_graded[("nbgrader", "rules", "right")]
    floor = rules_graded[("nbgrader", "rules", "floor")]
    # what nbgrader does, so that the comparison below compares something
    assert (floor["t_partial"], floor["t_partial_of_2"], right["t_partial_of_2"]) == (0.5, 1, 2)
    assert (floor["t_printed_then_number"], floor["t_zero"]) == (0.25, 0)
    assert floor["t_negative"] == floor["t_not_a_number"] == floor["t_false"] == 1
    assert floor["t_semicolon"] == floor["t_number_then_assert"] == 1
    assert right == {
        c.metadata.nbgrader["grade_id"]: c.metadata.nbgrader["points"] for c in RULES["rules"]
    }
    precise = rules_graded[("nbgrader", "rules", "precise")]
    assert (precise["t_partial"], precise["t_printed_then_number"]) == (0, 0)  # "0", not 0.5
    for student in ("right", "floor", "warns", "precise"):
        by_nbgrader = rules_graded[("nbgrader", "rules", student)]
        by_hookviz = {
            gid: points
            for gid, (points, _, _) in rules_graded[("hookviz", "rules", student)].items()
        }
        assert by_hookviz == by_nbgrader, student
    partial = rules_graded[("hookviz", "rules", "floor")]["t_partial"]
    assert partial[1] == "passed" and "shows 0.5" in partial[2]


@pytest.mark.slow
def test_a_number_above_the_points_stops_nbgrader_and_is_a_grader_error_here(
    rules_graded,
) -> None:
    by_nbgrader = rules_graded[("nbgrader", "above", "floor")]
    # nbgrader raises in get_partial_grade: no score for that cell, any after it, or the
    # assignment's later notebook; the student's autograded copy is removed, the run fails
    assert by_nbgrader == {"t_before": 1, "t_above": None, "t_after": None, "t_later": None}
    autograded = rules_graded["nbgrader autograded above"]
    assert autograded["floor"] is False and autograded["right"] is autograded["warns"] is True
    assert rules_graded["nbgrader exit"] != 0
    assert (
        "There was an error processing assignment 'above' for student 'floor'"
        in (rules_graded["nbgrader log"])
    )
    by_hookviz = rules_graded[("hookviz", "above", "floor")]
    assert by_hookviz["t_above"][:2] == (0, "grader-error")
    assert "shows 4, more than its points" in by_hookviz["t_above"][2]
    assert by_hookviz["t_before"][0] == by_hookviz["t_after"][0] == 1
    assert rules_graded[("nbgrader", "above", "right")] == dict.fromkeys(
        ("t_before", "t_above", "t_after", "t_later"), 1
    )
    assert "partial credit cannot be greater than maximum points" in rules_graded["nbgrader log"]
    assert rules_graded[("nbgrader", "above", "warns")] == dict.fromkeys(
        ("t_before", "t_above", "t_after", "t_later"), 0
    )


@pytest.mark.parametrize(
    "text",
    [
        "0.5",
        "2",
        "0",
        " 1.5\n",
        "1e-1",
        "2.5",
        "-1",
        "nan",
        "inf",
        "True",
        "'0.5'",
        "[0.5]",
        "tensor(0.5000)",
        "np.float64(0.5)",
        "np.int64(1)",
    ],
)
def test_partial_credit_reads_a_result_as_nbgrader_does(text) -> None:
    from nbgrader.utils import get_partial_grade

    output = nbformat.v4.new_output("execute_result", data={"text/plain": text})
    try:
        theirs = get_partial_grade(output, 2.0)
    except ValueError:  # "partial credit cannot be greater than maximum points for cell"
        theirs = None
    assert partial_credit(text, 2.0) == theirs


@pytest.mark.slow
def test_a_result_printed_as_text_by_the_students_code_fools_nbgrader_not_hookviz(
    rules_graded,
) -> None:
    by_nbgrader = rules_graded[("nbgrader", "rules", "forger")]
    assert by_nbgrader["t_partial"] == 1 and by_nbgrader["t_partial_of_2"] == 2  # floor's: 0.5, 1
    by_hookviz = rules_graded[("hookviz", "rules", "forger")]
    assert by_hookviz["t_partial"][:2] == (0, "tampered")
    assert "text/plain printer" in by_hookviz["t_partial"][2]


def test_a_numpy_scalar_shows_as_no_number_and_gets_full_points_under_both() -> None:
    import numpy as np
    from nbgrader.utils import get_partial_grade

    shown = repr(np.float64(0.5))  # what IPython shows as the result, NumPy 2
    assert shown == "np.float64(0.5)"
    output = nbformat.v4.new_output("execute_result", data={"text/plain": shown})
    assert get_partial_grade(output, 2.0) == partial_credit(shown, 2.0) == 2.0


def test_stderr_after_the_result_scores_under_nbgrader_and_zero_under_hookviz() -> None:
    """nbgrader reads a test cell's outputs in order and stops at the first result; hookviz
    grade scores any stderr 0, since which of the two reaches the notebook first is a race."""
    from nbgrader.utils import determine_grade

    from hookviz.course.conventions import sentinel_line
    from hookviz.grading.core.bare_checks import score_test_cell

    warning = nbformat.v4.new_output("stream", name="stderr", text="UserWarning: half is old\n")
    result = nbformat.v4.new_output("execute_result", data={"text/plain": "0.5"}, execution_count=1)
    cell = _test_cell("t", "score", points=2)
    cell.outputs = [result, warning]
    assert determine_grade(cell) == (0.5, 2.0)
    cell.outputs = [warning, result]
    assert determine_grade(cell) == (0, 2.0)
    ran = {"type": "stream", "name": "stdout", "text": sentinel_line("t") + "\n"}
    ours = {"type": "execute_result", "text": "0.5", "mimetypes": ["text/plain"]}
    note = {"type": "stream", "name": "stderr", "text": "UserWarning: half is old\n"}
    assert score_test_cell([ran, ours, note], "t", 2).points == 0
    assert score_test_cell([ran, note, ours], "t", 2).points == 0
