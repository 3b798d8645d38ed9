"""Write docs/screenshots/grading-report.png: `hookviz report` on a demo class of assignment 01.

The class is made from the assignment's catalogue of answers (tests/answers/a01_apply.py):
each of 24 students answers every exercise with the solution or a correct answer in another
style, except none to four exercises answered with a real mistake or a cheat from the
catalogue (seeded, so the picture does not change from run to run); two students hand in one answer
with the names changed, and one forgets to upload. The class is graded with `hookviz grade
-j 2`, reported, and the top of the page is shot in headless Chromium.

    .venv/bin/python tools/report_screenshot.py            # about 3 minutes on 2 cores
"""

from __future__ import annotations

import random
import shutil
import sys
import tempfile
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from hookviz.course.authoring.build import exercise_from_solution  # noqa: E402
from hookviz.course.authoring.stamp import CourseConfig  # noqa: E402
from hookviz.course.format import regions  # noqa: E402
from hookviz.course.format.notebooks import grade_id, is_answer  # noqa: E402
from hookviz.grading.grade.batch import GradeOptions, grade_folder  # noqa: E402
from hookviz.grading.report.write import write_report  # noqa: E402
from hookviz.grading.run.limits import Limits  # noqa: E402
from tests.answers.a01_apply import ANSWERS  # noqa: E402

ASSIGNMENT = ROOT / "solutions" / "01-apply.ipynb"
SCREENSHOT = ROOT / "docs" / "screenshots" / "grading-report.png"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]  # fmt: skip
NAMES = [
    "ada", "ben", "cleo", "dev", "eli", "fay", "gus", "hana", "ivo", "jun", "kai", "lea",
    "max", "nia", "oto", "pia", "quin", "rae", "sam", "tia", "uma", "vic", "wes", "xia",
]  # fmt: skip
# How many exercises each student gets wrong: a class of stronger and weaker students.
MISTAKES = [0, 2, 0, 1, 3, 0, 1, 2, 0, 1, 0, 2, 1, 0, 3, 1, 0, 2, 1, 0, 1, 4, 0, 1]
SHARED = """\
def visit_order(model):
    {names} = []
    def {record}({module}):
        {names}.append(type({module}).__name__)
    model.apply({record})
    return {names}
"""


def class_of(solution) -> dict[str, dict[str, str] | None]:
    """Student -> answer grade_id -> source (None: nothing uploaded)."""
    rng = random.Random(7)
    right = {
        grade_id(c): regions.strip_solution_markers(c.source)
        for c in solution.cells
        if is_answer(c)
    }
    by_exercise: dict[str, dict[str, list]] = {}
    for answer in ANSWERS:
        by_exercise.setdefault(answer.exercise, {}).setdefault(answer.kind, []).append(answer)
    students: dict[str, dict[str, str] | None] = {}
    for name in NAMES:
        answers = {
            gid: rng.choice([source, *(a.source for a in by_exercise[gid].get("correct", []))])
            for gid, source in right.items()
        }
        for gid in rng.sample(sorted(right), MISTAKES[NAMES.index(name)]):
            kinds = by_exercise[gid]
            answers[gid] = rng.choice(kinds["wrong"] + kinds.get("cheat", [])).source
        students[name] = answers
    for name, names in (("oto", ("order", "visit", "m")), ("pia", ("seen", "log_it", "layer"))):
        shared = SHARED.format(names=names[0], record=names[1], module=names[2])
        students[name] = {**students[name], "visit_order": shared}
    students["xia"] = None
    return students


def main() -> int:
    from playwright.sync_api import sync_playwright

    solution = nbformat.read(ASSIGNMENT, as_version=4)
    config = CourseConfig("https://github.com/a/b", "main", "a", "b")
    work = Path(tempfile.mkdtemp(prefix="hookviz-report-demo-"))
    try:
        submitted = work / "submitted"
        for name, answers in class_of(solution).items():
            (submitted / name).mkdir(parents=True)
            if answers is None:
                continue
            notebook = exercise_from_solution(
                solution, config, "solutions/x.ipynb", "exercises/x.ipynb"
            )
            for cell in notebook.cells:
                if grade_id(cell) in answers:
                    cell.source = answers[grade_id(cell)]
            nbformat.write(notebook, submitted / name / ASSIGNMENT.name)
        options = GradeOptions(jobs=2, limits=Limits(cell_timeout=60, submission_timeout=240))
        grade_folder(submitted, ASSIGNMENT, work / "out", options)
        report = write_report(work / "out", destination=work / "page" / "report.html")
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            try:
                page = browser.new_page(viewport={"width": 1000, "height": 1500})
                page.goto(report.html.as_uri())
                SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
                page.screenshot(path=str(SCREENSHOT))
            finally:
                browser.close()
        for group in report.groups:
            print(f"near-identical {group.answer}: {', '.join(group.students)}")
        print(f"wrote {SCREENSHOT.relative_to(ROOT)}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
