"""`hookviz build`: exercises from solutions, Colab stamps, --check, and clear errors."""

from __future__ import annotations

import contextlib
import io
import json
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hookviz.cli import main
from hookviz.course.authoring.build import build_course
from hookviz.course.authoring.stamp import install_source, load_course_config
from hookviz.course.format import regions
from hookviz.course.format.notebooks import (
    NotebookError,
    cell_checksum,
    grade_id,
    is_check,
    nbgrader_checksum,
    read_notebook,
    record_outputs_source,
)
from tests.tiny_course import REPO, TINY

COURSE_TOML = (
    '[course]\nrepository = "https://github.com/someone/some-course"\nbranch = "dev"\n'
    "[colab]\nenabled = true\n"
)


@pytest.fixture
def course(tmp_path: Path) -> Path:
    """A course folder: course.toml, one solution, one walkthrough notebook with outputs."""
    (tmp_path / "course.toml").write_text(COURSE_TOML)
    (tmp_path / "solutions").mkdir()
    shutil.copy(TINY, tmp_path / "solutions" / "01-tiny.ipynb")
    walk = nbformat.v4.new_notebook()
    walk.cells = [
        nbformat.v4.new_markdown_cell("# Walkthrough"),
        nbformat.v4.new_code_cell("print(1)"),
    ]
    walk.cells[1].outputs = [nbformat.v4.new_output("stream", name="stdout", text="1\n")]
    walk.cells[1].execution_count = 7
    (tmp_path / "notebooks").mkdir()
    nbformat.write(walk, tmp_path / "notebooks" / "01-walk.ipynb")
    return tmp_path


def cells_by_id(notebook) -> dict:
    return {grade_id(c): c for c in notebook.cells if grade_id(c)}


def write_solution(course: Path, mutate) -> Path:
    """Change the course's solution notebook with ``mutate(notebook)``."""
    path = course / "solutions" / "01-tiny.ipynb"
    notebook = nbformat.read(path, as_version=4)
    mutate(notebook)
    nbformat.write(notebook, path)
    return path


def run_cli(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(args))
    return code, out.getvalue(), err.getvalue()


# -- what an exercise looks like ------------------------------------------------------------


def test_build_generates_exercise_with_stubs_no_hidden_tests_and_no_outputs(course: Path) -> None:
    build_course(course)
    exercise = read_notebook(course / "exercises" / "01-tiny.ipynb")
    solution = read_notebook(course / "solutions" / "01-tiny.ipynb")
    cells = cells_by_id(exercise)

    assert cells["double"].source == (
        'def double(x):\n    """Twice x."""\n    # YOUR CODE HERE\n    raise NotImplementedError()'
    )
    text = nbformat.writes(exercise)
    for leaked in ("return 2 * x", "text.upper()", "FACTOR * x", "double(-3)", "BEGIN", "END "):
        assert leaked not in text, leaked
    assert cells["check_double"].source.endswith('print("[hookviz] check_double: finished")')
    for cell in exercise.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None
    # nbgrader metadata survives, with a checksum of the student version of each graded cell.
    check = cells["check_double"]
    assert check.metadata.nbgrader["points"] == 2
    assert check.metadata.nbgrader["checksum"] == nbgrader_checksum(check)  # nbgrader's md5
    assert check.metadata.hookviz["checksum"] == cell_checksum(check)
    assert check.metadata.editable is False and check.metadata.deletable is False
    assert "editable" not in cells["double"].metadata
    assert exercise.metadata.hookviz == {"generated_from": "solutions/01-tiny.ipynb"}
    # The solution itself keeps its answers, hidden tests and outputs.
    assert "return 2 * x" in cells_by_id(solution)["double"].source
    assert cells_by_id(solution)["check_double"].outputs[0].text.startswith("✓ double(2) is 4")


def test_every_notebook_gets_its_own_badge_and_a_first_code_cell_that_installs(
    course: Path,
) -> None:
    build_course(course)
    expected = {
        "notebooks/01-walk.ipynb": "notebooks/01-walk.ipynb",
        "solutions/01-tiny.ipynb": "solutions/01-tiny.ipynb",
        "exercises/01-tiny.ipynb": "exercises/01-tiny.ipynb",
    }
    for relative, badge_path in expected.items():
        notebook = read_notebook(course / relative)
        badge = notebook.cells[0]
        assert badge.cell_type == "markdown"
        assert badge.metadata.hookviz.stamp == "colab-badge"
        assert (
            f"https://colab.research.google.com/github/someone/some-course/blob/dev/{badge_path})"
            in badge.source
        )
        first_code = next(c for c in notebook.cells if c.cell_type == "code")
        assert first_code.metadata.hookviz.stamp == "install"
        # It installs hookviz, not the course repository under hookviz's name.
        assert '"pip", "install", "-q", "hookviz"]' in first_code.source
        assert "some-course" not in first_code.source
    walk = read_notebook(course / "notebooks" / "01-walk.ipynb")
    assert [c.cell_type for c in walk.cells] == ["markdown", "markdown", "code", "code"]
    assert walk.cells[3].execution_count == 7  # other cells keep outputs and counts


def test_build_is_idempotent_and_check_passes_after_it(course: Path) -> None:
    code, _, err = run_cli("build", "--check", "--root", str(course))
    assert code == 1
    for name in ("exercises/01-tiny.ipynb", "solutions/01-tiny.ipynb", "notebooks/01-walk.ipynb"):
        assert name in err

    assert run_cli("build", "--root", str(course))[0] == 0
    files = sorted(course.rglob("*.ipynb"))
    before = {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in files}
    report = build_course(course)
    assert report.changed == [] and report.removed == []
    assert {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in files} == before
    code, out, _ = run_cli("build", "--check", "--root", str(course))
    assert code == 0 and "3 notebooks up to date" in out


def test_check_names_the_stale_exercise_after_a_solution_changes(course: Path) -> None:
    build_course(course)

    def reword(notebook):  # a visible change; a change inside the answer region alone is not one
        cells_by_id(notebook)["double"].source = cells_by_id(notebook)["double"].source.replace(
            "Twice x.", "Two times x."
        )

    write_solution(course, reword)
    code, _, err = run_cli("build", "--check", "--root", str(course))
    assert code == 1
    assert err.splitlines()[1:] == [
        "  exercises/01-tiny.ipynb: it differs from what solutions/01-tiny.ipynb gives"
    ]
    (course / "exercises" / "01-tiny.ipynb").unlink()
    assert (
        "exercises/01-tiny.ipynb: it is missing"
        in run_cli("build", "--check", "--root", str(course))[2]
    )


def test_changing_course_toml_repoints_every_badge(course: Path) -> None:
    build_course(course)
    (course / "course.toml").write_text(COURSE_TOML.replace("someone/some-course", "else/where"))
    report = build_course(course)
    assert len(report.changed) == 3
    for path in course.rglob("*.ipynb"):
        assert "github/else/where/blob/dev/" in read_notebook(path).cells[0].source


def test_colab_is_opt_in_and_turning_it_off_removes_the_stamps(course: Path) -> None:
    build_course(course)
    (course / "course.toml").write_text(COURSE_TOML.replace("[colab]\nenabled = true\n", ""))
    report = build_course(course)
    assert len(report.changed) == 3
    for path in course.rglob("*.ipynb"):
        notebook = read_notebook(path)
        assert not [c for c in notebook.cells if c.metadata.get("hookviz", {}).get("stamp")]
        assert "colab" not in json.dumps(notebook).lower()
    walk = read_notebook(course / "notebooks" / "01-walk.ipynb")
    assert [c.cell_type for c in walk.cells] == ["markdown", "code"]


def test_the_install_cell_installs_what_course_toml_names(course: Path) -> None:
    (course / "course.toml").write_text(COURSE_TOML + 'install = "hookviz==0.9"\n')
    build_course(course)
    exercise = read_notebook(course / "exercises" / "01-tiny.ipynb")
    install = next(c for c in exercise.cells if c.cell_type == "code")
    assert '"pip", "install", "-q", "hookviz==0.9"]' in install.source


def test_restamping_moves_no_cell_and_keeps_one_stamp_of_each(course: Path) -> None:
    build_course(course)
    path = course / "notebooks" / "01-walk.ipynb"
    notebook = nbformat.read(path, as_version=4)
    copied = nbformat.from_dict({**notebook.cells[0], "id": "pasted"})
    notebook.cells.append(copied)  # a copied badge must not multiply
    nbformat.write(notebook, path)
    build_course(course)
    roles = [c.metadata.get("hookviz", {}).get("stamp") for c in read_notebook(path).cells]
    assert roles == ["colab-badge", None, "install", None]


def test_orphan_exercises_are_removed_only_when_generated(course: Path) -> None:
    build_course(course)
    shutil.copy(course / "exercises" / "01-tiny.ipynb", course / "exercises" / "02-old.ipynb")
    assert "exercises/02-old.ipynb" in run_cli("build", "--check", "--root", str(course))[2]
    assert build_course(course).removed == ["exercises/02-old.ipynb"]
    assert not (course / "exercises" / "02-old.ipynb").exists()
    nbformat.write(nbformat.v4.new_notebook(), course / "exercises" / "03-hand.ipynb")
    code, _, err = run_cli("build", "--root", str(course))
    assert code == 2 and "exercises/03-hand.ipynb has no solution" in err


# -- stubs keep indentation and stay inside functions -------------------------------------------


def test_stub_keeps_the_indentation_of_its_marker() -> None:
    source = (
        "class Net:\n"
        "    def forward(self, x):\n"
        "        if x:\n"
        "            ### BEGIN SOLUTION\n"
        "            return x\n"
        "            ### END SOLUTION\n"
        "        return 0\n"
    )
    assert regions.replace_solutions(source) == (
        "class Net:\n"
        "    def forward(self, x):\n"
        "        if x:\n"
        "            # YOUR CODE HERE\n"
        "            raise NotImplementedError()\n"
        "        return 0\n"
    )
    regions.check_stubs_inside_functions(source)


def test_magics_in_an_answer_cell_do_not_break_the_function_body_check() -> None:
    regions.check_stubs_inside_functions(
        "%matplotlib inline\ndef f():\n    ### BEGIN SOLUTION\n    return 1\n    ### END SOLUTION\n"
    )


@given(
    before=st.lists(st.sampled_from(["x = 1", "# note", "", "y = x"]), max_size=4),
    answer=st.lists(st.text(alphabet="abc =+1", min_size=1, max_size=8), min_size=1, max_size=5),
    after=st.lists(st.sampled_from(["return 0", "pass", ""]), max_size=3),
    indent=st.sampled_from(["    ", "        ", "\t"]),
)
@settings(max_examples=60, deadline=None)
def test_replacing_solutions_keeps_everything_outside_and_nothing_inside(
    before, answer, after, indent
) -> None:
    marked = [f"{indent}SECRET{line}" for line in answer]
    lines = [*before, f"{indent}### BEGIN SOLUTION", *marked, f"{indent}### END SOLUTION", *after]
    result = regions.replace_solutions("\n".join(lines))
    assert "SECRET" not in result
    assert result == "\n".join(
        [*before, f"{indent}# YOUR CODE HERE", f"{indent}raise NotImplementedError()", *after]
    )


# -- errors name the problem and the fix ------------------------------------------------------


def set_source(gid: str, source: str):
    def mutate(notebook):
        cells_by_id(notebook)[gid].source = source

    return mutate


@pytest.mark.parametrize(
    "mutate, message",
    [
        (
            set_source("double", "def double(x):\n    ### BEGIN SOLUTION\n    return 2 * x"),
            "never ends; add '### END SOLUTION'",
        ),
        (
            set_source("double", "def double(x):\n    return 2 * x\n    ### END SOLUTION"),
            "has no matching BEGIN marker",
        ),
        (
            set_source(
                "double",
                "def double(x):\n    ### BEGIN SOLUTION\n    ### BEGIN SOLUTION\n"
                "    return 2\n    ### END SOLUTION\n    ### END SOLUTION",
            ),
            "inside the one opened on line 2",
        ),
        (
            set_source(
                "double",
                "def double(x):\n    # BEGIN SOLUTION\n    return 2 * x\n    # END SOLUTION",
            ),
            "looks like a marker but is spelled '# BEGIN SOLUTION'",
        ),
        (
            set_source(
                "double",
                "def double(x):\n    ### BEGIN SOLUTIONS\n    return 2 * x\n    ### END SOLUTION",
            ),
            "line 2 looks like a marker but is spelled '### BEGIN SOLUTIONS'",
        ),
        (
            set_source("check_shout", "### AUTOTEST shout('a'); shout('b')"),
            "line 1 is nbgrader's ### AUTOTEST directive, which hookviz does not expand",
        ),
        (
            set_source("check_shout", "### BEGIN SOLUTION\nx = 1\n### END SOLUTION"),
            "has a solution region but is not an answer cell",
        ),
        (
            set_source(
                "shout",
                "def shout(t):\n    ### BEGIN SOLUTION\n    return t\n    ### END SOLUTION\n"
                "### BEGIN HIDDEN TESTS\nassert 1\n### END HIDDEN TESTS",
            ),
            "has a hidden-test region but is not a check cell",
        ),
    ],
    ids=[
        "unclosed",
        "unopened",
        "nested",
        "lookalike",
        "misspelled-begin",
        "autotest",
        "region-in-check",
        "hidden-in-answer",
    ],
)
def test_bad_markers_fail_the_build_naming_notebook_cell_and_fix(course, mutate, message) -> None:
    write_solution(course, mutate)
    with pytest.raises(NotebookError, match="solutions/01-tiny.ipynb, code cell") as caught:
        build_course(course)
    assert message in str(caught.value)
    assert not (course / "exercises").exists()  # nothing half-built


def edit_check(gid: str, old: str, new: str):
    """Change a check cell's source, leaving its stored output (and its record) as they were."""

    def mutate(notebook):
        cell = cells_by_id(notebook)[gid]
        assert old in cell.source
        cell.source = cell.source.replace(old, new)

    return mutate


@pytest.mark.parametrize(
    "mutate, message",
    [
        (
            edit_check("check_shout", 'print("[hookviz] check_shout: finished")', "pass"),
            "a check cell without its sentinel line: end the cell with "
            "print('[hookviz] check_shout: finished')",
        ),
        (
            edit_check(
                "check_shout", "[hookviz] check_shout: finished", "[hookviz] check_double: finished"
            ),
            "its sentinel names grade_id 'check_double', another cell's; this cell's grade_id is 'check_shout'",
        ),
        (
            edit_check("check_triple", 'checks.sentinel("check_triple")', "checks.sentinel(NAME)"),
            "checks.sentinel needs the grade_id as a string literal",
        ),
        (
            edit_check(
                "check_triple",
                'checks.sentinel("check_triple")',
                'if problem is None:\n    checks.sentinel("check_triple")',
            ),
            "the sentinel must be the cell's last statement, at the top level",
        ),
    ],
    ids=["no-sentinel", "another-cells-sentinel", "not-a-literal", "not-last"],
)
def test_a_check_cell_must_end_with_its_own_sentinel(course, mutate, message) -> None:
    write_solution(course, mutate)
    code, _, err = run_cli("build", "--root", str(course))
    assert code == 2 and message in err, err
    assert "code cell" in err and not (course / "exercises").exists()


def test_stale_stored_outputs_stop_build_and_check_with_the_cell_and_the_fix(course: Path) -> None:
    # The instructor edits what a check prints, and forgets to run the notebook again.
    write_solution(course, edit_check("check_shout", "✓ shout works", "✓ shout() works"))
    for args in (["build", "--check"], ["build"]):
        code, _, err = run_cli(*args, "--root", str(course))
        assert code == 2, err
        assert "solutions/01-tiny.ipynb, code cell 5 (grade_id check_shout)" in err
        assert "was edited after its output was stored" in err
        assert "hookviz run solutions/01-tiny.ipynb" in err
    assert not (course / "exercises").exists()

    def rerun(notebook):  # what `hookviz run` does after running the notebook
        cell = cells_by_id(notebook)["check_shout"]
        cell.outputs[0].text = cell.outputs[0].text.replace("✓ shout works", "✓ shout() works")
        record_outputs_source(notebook)

    write_solution(course, rerun)
    assert run_cli("build", "--root", str(course))[0] == 0

    def saved_from_jupyter(notebook):  # outputs with no record of the source they came from
        del cells_by_id(notebook)["check_double"].metadata["hookviz"]

    write_solution(course, saved_from_jupyter)
    code, _, err = run_cli("build", "--check", "--root", str(course))
    assert code == 2 and "code cell 3 (grade_id check_double)" in err
    assert "carries no record of the source it came from" in err


def test_exercises_do_not_carry_the_record_of_the_solution_source(course: Path) -> None:
    build_course(course)
    for cell in read_notebook(course / "exercises" / "01-tiny.ipynb").cells:
        assert set(cell.metadata.get("hookviz", {})) <= {"stamp", "checksum"}


def test_errors_name_a_cell_without_grade_id_by_its_kind_number_id_and_first_line(
    course: Path,
) -> None:
    def mutate(notebook):
        notebook.cells[0].source += "\n### BEGIN HIDDEN TESTS\n### END HIDDEN TESTS"

    write_solution(course, mutate)
    code, _, err = run_cli("build", "--root", str(course))
    assert code == 2
    assert err.startswith(
        "hookviz build: solutions/01-tiny.ipynb, markdown cell 1 (id tiny-0, '# A tiny assignment'): "
        "has a hidden-test region but is not a check cell"
    ), err


def drop_meta(gid: str, key: str, value=None):
    def mutate(notebook):
        meta = cells_by_id(notebook)[gid].metadata.nbgrader
        if value is None:
            del meta[key]
        else:
            meta[key] = value

    return mutate


@pytest.mark.parametrize(
    "mutate, message",
    [
        (drop_meta("check_shout", "grade_id"), "without a grade_id"),
        (
            drop_meta("check_shout", "grade_id", "check_double"),
            "grade_id 'check_double' is also used by code cell 3;",
        ),
        (drop_meta("check_shout", "points"), "a check cell needs points"),
        (drop_meta("check_shout", "points", "two"), "a check cell needs points"),
        (drop_meta("check_shout", "points", -1), "a check cell needs points"),
        (
            drop_meta("double", "grade", True),  # graded by hand, as nbgrader has it: points
            "a question graded by hand needs points",
        ),
    ],
    ids=[
        "no-grade-id",
        "duplicate-grade-id",
        "no-points",
        "text-points",
        "negative-points",
        "manual-without-points",
    ],
)
def test_bad_grading_metadata_fails_the_build(course, mutate, message) -> None:
    write_solution(course, mutate)
    with pytest.raises(NotebookError) as caught:
        build_course(course)
    assert message in str(caught.value)


def test_cli_reports_errors_with_exit_code_2(course: Path) -> None:
    write_solution(course, drop_meta("check_shout", "points"))
    code, _, err = run_cli("build", "--root", str(course))
    assert code == 2
    # Counted from 1 among the code cells the author wrote: the badge and install cell are not.
    assert err.startswith(
        "hookviz build: solutions/01-tiny.ipynb, code cell 5 (grade_id check_shout)"
    )


@pytest.mark.parametrize(
    "toml, message",
    [
        (
            '[course]\nrepository = "https://gitlab.com/a/b"\n[colab]\nenabled = true\n',
            "[colab] enabled needs [course] repository on GitHub",
        ),
        ("[course]\nbranch = 'main'\n[colab]\nenabled = true\n", "got none. Turn Colab off"),
        ("[course]\nrepository = 'x'\n", "must be the address of the course's repository"),
        ("[course]\nbranch = 'no spaces'\n", "must be a branch name"),
        ("course = 1\n", "[course] must be a table"),
        ("[content]\nhints = ''\n", "[content] hints must name a folder"),
        ("[course\n", "is not valid TOML"),
        (COURSE_TOML.replace("enabled = true", "enabled = 'yes'"), "enabled must be true or false"),
        (COURSE_TOML + 'install = ""\n', "install must be what the install cell gives pip"),
    ],
)
def test_bad_course_toml_is_explained(tmp_path: Path, toml: str, message: str) -> None:
    (tmp_path / "course.toml").write_text(toml)
    with pytest.raises(NotebookError, match=None) as caught:
        load_course_config(tmp_path)
    assert message in str(caught.value)


def test_a_course_needs_no_repository_and_links_where_its_host_shows_files(tmp_path: Path):
    (tmp_path / "course.toml").write_text("")
    bare = load_course_config(tmp_path)
    assert (bare.repository, bare.site_url, bare.files_url, bare.colab) == ("", "", "", False)
    (tmp_path / "course.toml").write_text('[course]\nrepository = "https://gitlab.com/u/c"\n')
    lab = load_course_config(tmp_path)
    assert lab.files_url == "https://gitlab.com/u/c/-/blob/main" and lab.site_url == ""
    (tmp_path / "course.toml").write_text('[course]\nrepository = "https://github.com/o/n"\n')
    hub = load_course_config(tmp_path)
    assert hub.files_url == "https://github.com/o/n/blob/main"
    assert hub.site_url == "https://o.github.io/n/"


def test_build_outside_a_course_says_where_it_looked(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    code, _, err = run_cli("build")
    assert code == 2 and "no course.toml in" in err and "--root" in err


# -- the install cell ----------------------------------------------------------------------------


def test_install_cell_is_silent_when_hookviz_is_installed() -> None:
    config = load_course_config(REPO)
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        exec(compile(install_source(config), "<install cell>", "exec"), {})
    assert out.getvalue() == ""


def test_install_cell_pip_installs_from_the_course_repository_when_missing(tmp_path: Path) -> None:
    config = load_course_config(REPO)
    # Run the cell in a Python that cannot see hookviz, with pip replaced by a recorder.
    fake_bin = tmp_path / "python"
    record = tmp_path / "argv.txt"
    fake_bin.write_text(f'#!/bin/sh\necho "$@" > {record}\n')
    fake_bin.chmod(0o755)
    cell = install_source(config).replace("sys.executable", repr(str(fake_bin)))
    result = subprocess.run(
        [sys.executable, "-I", "-S", "-c", cell], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert record.read_text().split() == [
        "-m",
        "pip",
        "install",
        "-q",
        "hookviz",
        "@",
        f"git+https://github.com/{config.owner}/{config.name}@{config.branch}",
    ]


def test_console_script_runs_build_check(course: Path) -> None:
    script = Path(sys.executable).parent / "hookviz"
    build_course(course)
    result = subprocess.run(
        [str(script), "build", "--check"],
        cwd=course / "solutions",
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert "up to date" in result.stdout


# -- the real course ------------------------------------------------------------------------------


def test_the_repository_exercises_and_stamps_are_up_to_date() -> None:
    report = build_course(REPO, check=True)
    assert report.stale == [], (
        "run `hookviz build` and commit the result; out of date: " + ", ".join(report.stale)
    )
    for path in (REPO / "exercises").glob("*.ipynb"):
        for cell in read_notebook(path).cells:
            if is_check(cell):
                assert regions.BEGIN_HIDDEN not in cell.source


def test_students_submissions_are_never_committed() -> None:
    ignored = (REPO / ".gitignore").read_text().split()
    assert "submitted/" in ignored  # nbgrader's layout, the folder `hookviz grade` reads


def test_written_notebooks_are_readable_by_others_and_keep_their_mode(tmp_path):
    from hookviz.course.format.notebooks import atomic_write_text

    fresh = tmp_path / "fresh.ipynb"
    atomic_write_text(fresh, "{}")
    assert fresh.stat().st_mode & 0o777 == 0o666 & ~_current_umask()
    kept = tmp_path / "kept.ipynb"
    kept.write_text("{}")
    kept.chmod(0o640)
    atomic_write_text(kept, "{}\n")
    assert kept.stat().st_mode & 0o777 == 0o640


def _current_umask() -> int:
    import os

    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_nbgrader_style_cells_build_with_at_most_a_warning(course) -> None:
    """nbgrader allows a solution region at a cell's top level, an answer cell without markers
    and a test cell of bare asserts: each builds, the first two with a warning naming the cell."""
    write_solution(
        course,
        lambda notebook: (
            set_source(
                "double", "### BEGIN SOLUTION\ndef double(x):\n    return 2 * x\n### END SOLUTION"
            )(notebook),
            set_source("shout", "def shout(text):\n    return text.upper()")(notebook),
            set_source("check_shout", "assert shout('a') == 'A'")(notebook),
        ),
    )
    report = build_course(course)
    assert len(report.warnings) == 2, report.warnings
    top_level, no_markers = report.warnings
    assert "solutions/01-tiny.ipynb, code cell" in top_level and "(grade_id double)" in top_level
    assert "not inside a function body" in top_level
    assert "(grade_id shout)" in no_markers and "the whole cell is the answer" in no_markers
    exercise = cells_by_id(read_notebook(course / "exercises" / "01-tiny.ipynb"))
    stub = "# YOUR CODE HERE\nraise NotImplementedError()"
    assert exercise["double"].source == stub and exercise["shout"].source == stub
    # The student's copy of a bare check is nbgrader's: the grader adds the sentinel, not build.
    assert exercise["check_shout"].source == "assert shout('a') == 'A'"
    result = main(["build", "--root", str(course), "--check"])
    assert result == 0


def test_the_cli_prints_build_warnings(course, capsys) -> None:
    write_solution(course, set_source("shout", "def shout(text):\n    return text.upper()"))
    assert main(["build", "--root", str(course)]) == 0
    assert "hookviz build: warning: solutions/01-tiny.ipynb" in capsys.readouterr().err


def test_exercises_carry_the_checksum_nbgrader_computes(course) -> None:
    from nbgrader import utils as nbgrader_utils  # the dev extra installs nbgrader

    build_course(course)
    exercise = read_notebook(course / "exercises" / "01-tiny.ipynb")
    graded = [c for c in exercise.cells if c.metadata.get("nbgrader", {}).get("grade_id")]
    assert graded
    for cell in graded:
        checksum = cell.metadata.nbgrader["checksum"]
        assert checksum == nbgrader_utils.compute_checksum(cell) and len(checksum) == 32
