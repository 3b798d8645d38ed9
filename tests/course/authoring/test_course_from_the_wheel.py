"""hookviz as an instructor gets it: the wheel, in a fresh virtual environment, far from here.

The wheel is built from this checkout and installed (not editable) into a new venv, whose
``hookviz`` then makes and runs two courses in empty folders outside the repository: a course of
its own (``hookviz init``, a second assignment with its hints and a prediction, run, build,
three submissions graded, the site built and a student's page opened in Chromium with the
network cut) and nbgrader's documentation course as an nbgrader instructor has it.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import nbformat
import pytest

from tests.grading_env import private_jupyter_dirs

pytestmark = [pytest.mark.notebook, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def venv(tmp_path_factory) -> Path:
    """A new venv (from the Python this one was made from) with hookviz's wheel installed."""
    base = tmp_path_factory.mktemp("wheel")
    dist, env = base / "dist", base / "venv"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
         "-w", str(dist), str(REPO)],
        check=True, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    (wheel,) = dist.glob("hookviz-*.whl")
    python = getattr(sys, "_base_executable", sys.executable)
    subprocess.run([python, "-m", "venv", str(env)], check=True, timeout=300)
    done = subprocess.run(
        [str(env / "bin" / "python"), "-m", "pip", "install", "--disable-pip-version-check",
         "-q", "-c", str(REPO / "constraints" / "torch-cpu.txt"), f"{wheel}[grade,site]"],
        capture_output=True, text=True, timeout=1800,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    where = subprocess.run(
        [str(env / "bin" / "python"), "-c", "import hookviz; print(hookviz.__file__)"],
        capture_output=True, text=True, cwd=base, check=True,
    ).stdout.strip()  # fmt: skip
    assert where.startswith(str(env)) and str(REPO) not in where  # the wheel's, not this checkout
    return env


def hookviz(env: Path, cwd: Path, *args: str, timeout: float = 900) -> str:
    done = subprocess.run(
        [str(env / "bin" / "hookviz"), *args], cwd=cwd, capture_output=True, text=True,
        timeout=timeout,
    )  # fmt: skip
    assert done.returncode == 0, (
        f"hookviz {' '.join(args)}:\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}"
    )
    return done.stdout + done.stderr


SECOND = "02-count-layers"
ANSWER = '''\
def count_layers(model):
    """How many nn.Linear layers model holds."""
    ### BEGIN SOLUTION
    return sum(isinstance(m, nn.Linear) for m in model.modules())
    ### END SOLUTION'''
CHECK = """\
check = checks.Check("count_layers")


def verify(model, name):
    got = check.run(count_layers, model)
    expected = sum(isinstance(m, nn.Linear) for m in model.modules())
    check.equal(got, expected, f"count_layers counts the Linear layers of {name}", hint="modules")


verify(nn.Sequential(nn.Linear(2, 2), nn.ReLU(), nn.Linear(2, 1)), "an MLP")
verify(nn.Sequential(nn.Sequential(nn.Linear(1, 1)), nn.Linear(1, 1)), "nested Sequentials")
### BEGIN HIDDEN TESTS
check.hidden(verify, nn.Sequential(nn.Linear(3, 3), nn.Sequential(nn.Linear(3, 3))), "hidden")
### END HIDDEN TESTS
checks.sentinel("check_count_layers")"""
HINTS = """
[count_layers.modules]
nudge = "model.children() stops at the first level: a Linear inside a Sequential is missed."
more = "model.modules() walks the whole tree, the model included."
code = "return sum(isinstance(m, nn.Linear) for m in model.modules())"
"""
PREDICTION = """
[layers-in-a-sequential]
question = "How many modules does `model.modules()` yield for `nn.Sequential(nn.Linear(2, 2))`?"
choices = ["1", "2", "3"]
answer = 1
why = "`modules()` yields the model itself, then every module inside it."
"""


def author_second_assignment(env: Path, course: Path) -> None:
    """`hookviz new`, then the exercise, its hint and a prediction, as an instructor writes them."""
    hookviz(env, course, "new", SECOND)
    path = course / "solutions" / f"{SECOND}.ipynb"
    notebook = nbformat.read(path, as_version=4)
    cells = [
        c for c in notebook.cells if c.get("metadata", {}).get("hookviz", {}).get("stamp") is None
    ]
    answer = next(c for c in cells if c.metadata.get("nbgrader", {}).get("solution"))
    check = next(c for c in cells if c.metadata.get("nbgrader", {}).get("grade"))
    answer.source, answer.metadata["nbgrader"]["grade_id"] = ANSWER, "count_layers"
    check.source, check.metadata["nbgrader"]["grade_id"] = CHECK, "check_count_layers"
    predict = nbformat.v4.new_code_cell(
        'from hookviz.course.predictions import predict\npredict("layers-in-a-sequential")'
    )
    predict.id = "predict-layers"
    notebook.cells.insert(notebook.cells.index(answer), predict)
    nbformat.write(notebook, path)
    (course / "hints" / f"{SECOND}.toml").write_text(HINTS)
    with (course / "predictions" / "00-start-here.toml").open("a") as f:
        f.write(PREDICTION)
    hookviz(env, course, "run", f"solutions/{SECOND}.ipynb")
    hookviz(env, course, "build")


def submission(course: Path, body: str) -> nbformat.NotebookNode:
    """The student copy with ``body`` as the answer's function body."""
    notebook = nbformat.read(course / "exercises" / f"{SECOND}.ipynb", as_version=4)
    answer = next(c for c in notebook.cells if c.metadata.get("nbgrader", {}).get("solution"))
    answer.source = (
        'def count_layers(model):\n    """How many nn.Linear layers model holds."""\n'
        + textwrap.indent(body, "    ")
    )
    return notebook


def test_an_instructor_makes_grades_and_publishes_a_course_of_their_own(venv, tmp_path):
    course = tmp_path / "my-course"
    with private_jupyter_dirs(tmp_path / "jupyter"):
        said = hookviz(venv, tmp_path, "init", "my-course")
        assert (
            "wrote course.toml" in said
            and (course / "exercises" / "01-first-steps.ipynb").is_file()
        )
        author_second_assignment(venv, course)
        assert "up to date" in hookviz(venv, course, "build", "--check")

        submitted = course / "submitted"
        students = {
            "right": "return sum(isinstance(m, nn.Linear) for m in model.modules())",
            "wrong": "return sum(isinstance(m, nn.Linear) for m in model.children())",
            # hostile: prints the grader's sentinel itself and leaves before the check runs
            "hostile": 'print("[hookviz] check_count_layers: finished")\nimport os\nos._exit(0)',
        }
        for student, body in students.items():
            folder = submitted / student
            folder.mkdir(parents=True)
            nbformat.write(submission(course, body), folder / f"{SECOND}.ipynb")
        hookviz(
            venv, course, "grade", "submitted", "--assignment", f"solutions/{SECOND}.ipynb",
            "--out", "out", "--timeout", "60",
        )  # fmt: skip
        book = json.loads((course / "out" / "gradebook.json").read_text())
        totals = {s["student"]: s["total"] for s in book["students"]}
        assert (
            totals == {"right": book["max_total"], "wrong": 0, "hostile": 0} and totals["right"] > 0
        )
        feedback = (course / "out" / "feedback" / "wrong.md").read_text()
        assert "model.children() stops at the first level" in feedback  # the course's own hint

        hookviz(venv, course, "site", timeout=1200)
    page = course / "site" / "walkthrough" / "00-start-here.html"
    assert page.is_file() and (course / "site" / "assignments" / f"{SECOND}.html").is_file()
    answered, outside = open_prediction_offline(page)
    assert outside == [] and "Answer" in answered


def open_prediction_offline(page: Path) -> tuple[str, list[str]]:
    """Open ``page`` from file:// with every other request refused; answer its prediction."""
    from tests.browser.jupyter_ui import launch_chromium
    from tests.site.browsing import playwright_driver

    refused: list[str] = []

    def route(request_route):
        url = request_route.request.url
        if url.startswith(("file:", "blob:", "data:")):
            request_route.continue_()
        else:
            refused.append(url)
            request_route.abort()

    with playwright_driver() as playwright:
        browser = launch_chromium(playwright)
        try:
            context = browser.new_context()
            context.route("**/*", route)
            tab = context.new_page()
            tab.goto(page.as_uri())
            widget = tab.locator(".hv-root.hv-prediction").first
            widget.wait_for(timeout=15_000)
            widget.locator('.hv-choice[data-index="1"]').click()
            tab.wait_for_selector('.hv-prediction[data-state="answered"]', timeout=10_000)
            return widget.inner_text(), refused
        finally:
            browser.close()


def test_an_nbgrader_course_comes_in_as_it_is(venv, tmp_path):
    import nbgrader

    docs = Path(nbgrader.__file__).parent / "docs" / "source" / "user_guide"
    course = tmp_path / "nbgrader-course"
    shutil.copytree(docs / "source" / "ps1", course / "source" / "ps1")
    shutil.copytree(docs / "submitted", course / "submitted")
    with private_jupyter_dirs(tmp_path / "jupyter"):
        said = hookviz(venv, course, "import-nbgrader", "source/ps1")
        assert said.count("note: no course.toml in") == 1
        hookviz(venv, course, "build")
        graded = hookviz(
            venv, course, "grade", "submitted", "--assignment", "solutions/ps1", "--out", "out/ps1"
        )
        hookviz(venv, course, "site", timeout=1200)
    assert "bitdiddle  1.5/10" in graded and "hacker     3/10" in graded
    assert (course / "site" / "assignments" / "ps1-problem1.html").is_file()
