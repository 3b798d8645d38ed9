"""Course content (hints, predictions): found in the course, or carried by the notebook alone.

A notebook reads the course's files when it runs inside the course, and what `hookviz build`
packed into it everywhere else: opened alone in Colab, and in grading, where the grader sets
HOOKVIZ_COURSE=none and only the instructor's notebook counts.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from hookviz.course import content
from hookviz.course.format.notebooks import CONTENT, CONTENT_FIRST_LINE, stamp_role

REPO = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted(
    p for folder in ("notebooks", "solutions", "exercises") for p in (REPO / folder).glob("*.ipynb")
)  # every notebook of this course, which uses the layout every course uses


def content_cell(path: Path) -> str | None:
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    found = [c for c in cells if stamp_role(c) == CONTENT]
    assert len(found) <= 1
    return "".join(found[0]["source"]) if found else None


ALONE = """
import json, re, sys
from pathlib import Path
from hookviz.course import checks, content, predictions
found = {}
for cell_path, sources_path in zip(sys.argv[1::2], sys.argv[2::2]):
    content._loaded_hints.clear(); content._loaded_predictions.clear()
    exec(Path(cell_path).read_text())  # the content cell, as the notebook runs it
    text = Path(sources_path).read_text()
    read = []
    for name in re.findall(r'checks\\.assignment\\("([^"]+)"\\)', text):
        checks.assignment(name)
        read.append(f"hints {name}: {len(checks._KERNEL.hints)} answers")
    for key in re.findall(r'predict\\("([^"]+)"\\)', text):
        read.append(repr(predictions.predict(key)))
    found[cell_path] = read
print(json.dumps(found))
"""


def test_every_notebook_carries_the_hints_and_predictions_it_reads(tmp_path):
    """Run outside any course, with no file to read (HOOKVIZ_COURSE=none, as in grading): what
    each notebook uses loads from its content cell alone, as in Colab."""
    args, expected = [], {}
    for i, path in enumerate(NOTEBOOKS):
        text = path.read_text(encoding="utf-8")
        uses = "checks.assignment(" in text or "predict(" in text
        cell = content_cell(path)
        assert (cell is not None) == uses, f"{path.name}: a content cell iff it reads the course"
        if cell is None:
            continue
        assert cell.startswith(CONTENT_FIRST_LINE)
        cell_path, sources_path = tmp_path / f"cell{i}.py", tmp_path / f"sources{i}.py"
        cell_path.write_text(cell)
        code = [c for c in json.loads(text)["cells"] if c["cell_type"] == "code"]
        sources_path.write_text("\n".join("".join(c["source"]) for c in code))
        args += [str(cell_path), str(sources_path)]
        expected[str(cell_path)] = path
    assert len(expected) >= 15
    done = subprocess.run(
        [sys.executable, "-c", ALONE, *args],
        cwd=tmp_path,
        env={"HOOKVIZ_COURSE": "none", "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    found = json.loads(done.stdout.splitlines()[-1])
    for cell_path, path in expected.items():
        assert found[cell_path], f"{path.name} read nothing from its content cell"


@pytest.fixture
def course(tmp_path, monkeypatch):
    monkeypatch.delenv(content.COURSE_ENV, raising=False)
    root = tmp_path / "course"
    (root / "hints").mkdir(parents=True)
    (root / "predictions").mkdir()
    (root / "course.toml").write_text("")
    (root / "hints" / "01-x.toml").write_text('[answer.key]\nnudge = "from the file"\n')
    (root / "predictions" / "p.toml").write_text(
        '[k]\nquestion = "q?"\nchoices = ["a", "b"]\nanswer = 0\nwhy = "file"\n'
    )
    monkeypatch.setattr(content, "_loaded_hints", {})
    monkeypatch.setattr(content, "_loaded_predictions", {})
    return root


def packed(nudge: str, why: str) -> str:
    return content.pack(
        {"01-x": f'[answer.key]\nnudge = "{nudge}"\n'},
        {"k": {"question": "q?", "choices": ["a", "b"], "answer": 0, "why": why}},
    )


def test_inside_the_course_its_files_win_and_outside_what_the_notebook_carries(
    course, tmp_path, monkeypatch
):
    content.load(packed("packed", "packed"))
    monkeypatch.chdir(course / "hints")
    assert "from the file" in content.hints_text("01-x")[0]
    assert content.prediction_tables()["k"][0]["why"] == "file"
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    monkeypatch.chdir(outside)
    assert '"packed"' in content.hints_text("01-x")[0]
    assert content.prediction_tables()["k"][0]["why"] == "packed"
    monkeypatch.setenv(content.COURSE_ENV, str(course))
    assert "from the file" in content.hints_text("01-x")[0]  # pointed at the course from outside
    monkeypatch.chdir(course)
    monkeypatch.setenv(content.COURSE_ENV, content.NO_COURSE)
    assert '"packed"' in content.hints_text("01-x")[0]  # as the grader runs it: no file read


def test_nothing_to_read_says_how_to_get_it(course, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(content.ContentError, match="this notebook has no content cell"):
        content.hints_text("01-x")
    monkeypatch.setenv(content.COURSE_ENV, str(tmp_path))
    with pytest.raises(content.ContentError, match="is not a course folder: it has no course.toml"):
        content.hints_text("01-x")
    with pytest.raises(content.ContentError, match="content cell is damaged"):
        content.load("not base64 at all!")


def test_packing_is_deterministic_and_round_trips():
    one, two = packed("n", "w"), packed("n", "w")
    assert one == two and content.unpack(one)[0] == {"01-x": '[answer.key]\nnudge = "n"\n'}


def test_the_content_folders_come_from_course_toml(course):
    (course / "course.toml").write_text('[content]\nhints = "help"\npredictions = "qs"\n')
    found = content.content_of(course)
    assert (found.hints, found.predictions) == (course / "help", course / "qs")
