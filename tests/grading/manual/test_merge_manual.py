"""Questions graded by hand, end to end: grade (the data file and helper module beside the
notebook copied in), read each question's page, fill in the CSV, merge it, and find the grades
in gradebook.csv, gradebook.json, the feedback and canvas.csv; bad CSVs merge nothing."""

from __future__ import annotations

import contextlib
import csv
import io
import json
import shutil
from pathlib import Path

import pytest

from hookviz.cli import main
from hookviz.course.format.notebooks import NotebookError
from hookviz.grading.grade.batch import grade_folder
from hookviz.grading.manual.merge_manual import merge_manual
from hookviz.grading.manual.sheets import MANUAL_CSV
from hookviz.grading.platforms.canvas import canvas_gradebook
from tests.grading_env import private_jupyter_dirs
from tests.handgraded_course import QUESTIONS, build, hand_in, write_csv
from tests.tiny_course import OPTIONS

pytestmark = [pytest.mark.notebook, pytest.mark.slow]


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """The fixture's course built and its three students graded (tests/handgraded_course.py)."""
    root = tmp_path_factory.mktemp("manual")
    assignment, exercise = build(root)
    students = root / "submissions"
    hand_in(exercise, students)
    out = root / "out"
    stream = io.StringIO()
    with private_jupyter_dirs(root / "jupyter"):
        grade_folder(students, assignment, out, OPTIONS, stream=stream)
    return {"out": out, "log": stream.getvalue(), "assignment": assignment, "root": root}


def gradebook(out: Path) -> dict[str, dict[str, str]]:
    with open(out / "gradebook.csv", encoding="utf-8") as handle:
        return {row["student"]: row for row in csv.DictReader(handle)}


def test_grading_copies_the_files_beside_the_notebook_and_waits_for_hand_grades(graded) -> None:
    out = graded["out"]
    book = gradebook(out)
    assert list(book["ada"])[:2] == ["student", "total"]
    assert all(q in book["ada"] for q in QUESTIONS)
    # words.txt and wordtools.py reached the grading folder: the check ran and passed.
    assert book["ada"]["check_count"] == "2" and book["ada"]["status"] == "ok"
    assert book["bob"]["check_count"] == "0"
    assert book["ada"]["total"] == "2"
    document = json.loads((out / "gradebook.json").read_text())
    assert document["max_total"] == 2 + 3 + 2 + 1
    assert document["manual"] == list(QUESTIONS)
    ada = next(s for s in document["students"] if s["student"] == "ada")
    assert {ada["outcomes"][q] for q in QUESTIONS} == {"needs-manual-grade"}
    feedback = (out / "feedback" / "ada.md").read_text()
    assert "## explain: 0 / 3 (needs a manual grade)" in feedback
    assert "grades this answer by hand" in feedback
    assert "merge-manual" in graded["log"]


def test_each_question_has_a_page_with_every_answer_escaped_and_offline(graded) -> None:
    folder = graded["out"] / "manual"
    page = (folder / "explain.html").read_text()
    assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in page
    assert "<script>" not in page
    assert "http://" not in page and "https://" not in page  # nothing fetched
    assert page.count("<section") == 3  # ada, bob, cy
    assert "(no answer)" in page  # bob left the stub
    assert "SECRET-WRITTEN-ANSWER" in page  # the model answer, for the grader
    task = (folder / "task_other_text.html").read_text()
    assert "I counted a poem:" in task and "print(len(" in task
    code = (folder / "sorted_words.html").read_text()
    assert "print(sorted(set(WORDS)))" in code
    with open(folder / MANUAL_CSV, encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert [(r["student"], r["question"], r["points"], r["max_points"]) for r in rows] == [
        (student, q, "", points)
        for student in ("ada", "bob")
        for q, points in zip(QUESTIONS, ("3", "2", "1"), strict=True)
    ]  # cy handed in nothing: no answer to grade


@pytest.mark.parametrize(
    "row, message",
    [
        (["dan", "explain", "1", ""], "no student 'dan'"),
        (["ada", "check_count", "1", ""], "'check_count' is not a question graded by hand"),
        (["ada", "explain", "4", ""], "points 4 is outside 0 to 3"),
        (["ada", "explain", "lots", ""], "points 'lots' is not a number"),
        (["cy", "explain", "1", ""], "was not graded (missing)"),
    ],
    ids=["unknown-student", "not-manual", "over-maximum", "not-a-number", "no-notebook"],
)
def test_a_bad_csv_names_the_row_and_merges_nothing(graded, tmp_path, row, message) -> None:
    out = graded["out"]
    before = (out / "gradebook.csv").read_text()
    bad = write_csv(tmp_path / "bad.csv", [["bob", "explain", "1", "fine", "3"], row + ["3"]])
    with pytest.raises(NotebookError) as caught:
        merge_manual(out, bad)
    assert message in str(caught.value) and "row 3" in str(caught.value)
    assert "nothing was merged" in str(caught.value)
    assert (out / "gradebook.csv").read_text() == before


def roster(path: Path) -> Path:
    rows = [
        ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "handgraded"],
        ["    Points Possible", "", "", "", "", "8"],
        ["Lovelace, Ada", "1", "s1", "ada", "A", ""],
        ["Builder, Bob", "2", "s2", "bob", "A", ""],
    ]
    with open(path, "w", newline="", encoding="utf-8") as handle:
        csv.writer(handle).writerows(rows)
    return path


def test_filled_in_csv_merges_into_gradebook_feedback_and_canvas(graded, tmp_path) -> None:
    out = tmp_path / "out"  # a copy: the other tests read the batch as graded
    shutil.copytree(graded["out"], out)
    canvas_gradebook(out, roster(tmp_path / "roster.csv"), out / "canvas.csv")
    filled = write_csv(
        tmp_path / "filled.csv",
        [
            ["ada", "explain", "2.5", "Clear, but say why reading once matters.", "3"],
            ["ada", "sorted_words", "2", "", "2"],
            ["ada", "task_other_text", "1", "", "1"],
            ["bob", "explain", "0", "No answer.", "3"],
            ["bob", "sorted_words", "", "", "2"],  # not graded yet: it waits
        ],
    )
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        assert main(["merge-manual", str(out), str(filled)]) == 0
    assert "merged 4 grades" in printed.getvalue() and "canvas.csv" in printed.getvalue()
    assert "2 answers still wait" in printed.getvalue()
    book = gradebook(out)
    assert book["ada"]["explain"] == "2.5" and book["ada"]["total"] == "7.5"
    assert book["bob"]["total"] == "0" and book["bob"]["sorted_words"] == "0"
    document = json.loads((out / "gradebook.json").read_text())
    bob = next(s for s in document["students"] if s["student"] == "bob")
    assert bob["outcomes"]["explain"] == "graded-by-hand"
    assert bob["outcomes"]["sorted_words"] == "needs-manual-grade"
    feedback = (out / "feedback" / "ada.md").read_text()
    assert "**Score: 7.5 / 8**" in feedback
    assert "## explain: 2.5 / 3 (graded by hand)" in feedback
    assert "Comment: Clear, but say why reading once matters." in feedback
    with open(out / "canvas.csv", encoding="utf-8") as handle:
        rows = {row[3]: row for row in csv.reader(handle)}
    assert rows["ada"][-1] == "7.5" and rows["bob"][-1] == "0"
    # The CSV written again keeps what was merged, and what still waits stays empty.
    with open(out / "manual" / MANUAL_CSV, encoding="utf-8") as handle:
        again = {(r["student"], r["question"]): r["points"] for r in csv.DictReader(handle)}
    assert again[("ada", "explain")] == "2.5" and again[("bob", "sorted_words")] == ""

    # Grading again keeps each grade whose answer did not change.
    with private_jupyter_dirs(graded["root"] / "jupyter"):
        grade_folder(
            graded["root"] / "submissions",
            graded["assignment"],
            out,
            OPTIONS.__class__(**{**OPTIONS.__dict__, "force": True}),
            stream=io.StringIO(),
        )
    assert gradebook(out)["ada"]["total"] == "7.5"


def test_gradescope_autograder_applies_the_grades_the_export_shipped(graded, tmp_path) -> None:
    """`hookviz export gradescope --manual-grades OUT` ships OUT's merged grades; on Gradescope
    the autograder finds the submitter in submission_metadata.json and scores them."""
    from hookviz.grading.core.gradebook import OutFolder
    from hookviz.grading.core.merge import load_assignment
    from hookviz.grading.platforms.gradescope_autograder import apply_shipped_grades, results_json

    out = tmp_path / "out"
    shutil.copytree(graded["out"], out)
    filled = write_csv(tmp_path / "f.csv", [["ada", "explain", "2.5", "Clear.", "3"]])
    merge_manual(out, filled)
    metadata = tmp_path / "submission_metadata.json"
    metadata.write_text(json.dumps({"users": [{"email": "Ada@uni.example", "sid": "7"}]}))
    result = OutFolder(graded["out"]).load("ada")  # as the autograder grades it: no hand grade
    assert result.total == 2
    apply_shipped_grades(result, out / "manual" / "grades.json", metadata)
    assert result.total == 4.5
    tests = {
        t["name"]: t
        for t in results_json(result, load_assignment(graded["assignment"]), "visible", 1.0)[
            "tests"
        ]
    }
    assert tests["explain"]["score"] == 2.5 and tests["explain"]["max_score"] == 3
    assert "Comment: Clear." in tests["explain"]["output"]
    assert "status" not in tests["sorted_words"]  # still waiting: neither passed nor failed
    bob = OutFolder(graded["out"]).load("bob")
    apply_shipped_grades(bob, out / "manual" / "grades.json", metadata)  # Ada's metadata
    assert bob.total == 0  # no grade of hers reaches anyone else
