"""Integrity against monkeypatching: a submission that rebinds a function the checks rely on
(torch, ``nn.Module``'s methods, builtins, hookviz's own) never scores the check it fools.

The instructor's notebook is tests/fixtures/grading/guarded.ipynb (scale: 2 points, count: 2,
order: 1). Each hostile student's patch really does fool the printed check (nbval alone says
passed); the grader's identity snapshot, taken before the first student cell, catches it.
"""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import nbformat
import pytest

from hookviz.course.authoring.build import exercise_from_solution
from hookviz.course.format import regions
from hookviz.course.format.notebooks import grade_id
from hookviz.grading.grade.batch import GradeOptions, grade_folder
from hookviz.grading.run.limits import Limits
from tests.grading_env import private_jupyter_dirs
from tests.tiny_course import CONFIG, FIXTURES

pytestmark = [pytest.mark.notebook, pytest.mark.slow]

GUARDED = FIXTURES / "guarded.ipynb"
OPTIONS = GradeOptions(
    jobs=2, limits=Limits(cell_timeout=30, submission_timeout=120, memory_mb=3072)
)

WRONG_SCALE = "def scale(x):\n    return 2 * x\n"
PREORDER_NAMES = "def visit_names(model):\n    return [type(m).__name__ for m in model.modules()]\n"
CASES = {
    "correct": {},
    # Another genuine torch function: no code from the notebook anywhere.
    "torch_rebound": {"scale": "torch.equal = torch.is_same_size\n\n" + WRONG_SCALE},
    # Code compiled by eval has the file name "<string>", as library-made functions do.
    "eval_made": {"scale": "torch.equal = eval('lambda a, b: True')\n\n" + WRONG_SCALE},
    # Patched while the check runs, by the answer the check calls.
    "during_check": {
        "scale": "def scale(x):\n    torch.equal = torch.is_same_size\n    return 2 * x\n"
    },
    "module_method_rebound": {
        "count_modules": "nn.Module.modules = nn.Module.children\n\n"
        "def count_modules(model):\n    return len(list(model.children()))\n"
    },
    "builtin_rebound": {
        "visit_names": "import builtins\n\nbuiltins.all = bool\n\n" + PREORDER_NAMES
    },
    "hookviz_rebound": {"visit_names": "hv.postorder = hv.preorder\n\n" + PREORDER_NAMES},
    # Emptying the grader's snapshot in the kernel: the grader keeps its own fingerprint of it.
    "snapshot_emptied": {
        "scale": "import sys\n\nsys._hookviz_integrity = ()\ntorch.equal = torch.is_same_size\n\n"
        + WRONG_SCALE
    },
    # A name the locked setup cell binds, bound again by an answer: the check would compare
    # with this fake torch's full(), which agrees with the wrong answer.
    "locked_name_rebound": {
        "scale": "import types\n\nimport torch as _torch\n\n"
        "torch = types.SimpleNamespace(ones=_torch.ones, full=lambda size, value: 2 * _torch.ones(size))\n\n"
        + WRONG_SCALE
    },
    # The same, done by the answer's function while the check runs: tampering.
    "locked_name_during_check": {
        "scale": "import types\n\nimport torch as _torch\n\n\ndef scale(x):\n    global torch\n"
        "    torch = types.SimpleNamespace(ones=_torch.ones, full=lambda size, value: 2 * _torch.ones(size))\n"
        "    return 2 * x\n"
    },
    # The same names imported again: the same objects, nothing to put back or say.
    "imports_again": {
        "scale": "import torch\nfrom torch import nn\n\ndef scale(x):\n    return 3 * x\n"
    },
}
# student -> (the check the patch fools, what the grader names, points per check, answer flagged)
EXPECTED = {
    "torch_rebound": ("check_scale", "torch.equal was rebound", (0, 0, 0), "scale"),
    "eval_made": ("check_scale", "torch.equal was rebound", (0, 0, 0), "scale"),
    "during_check": ("check_scale", "torch.equal was rebound", (0, 0, 0), "scale"),
    "module_method_rebound": (
        "check_count",
        "torch.nn.modules.module.Module.modules was rebound",
        (2, 0, 0),
        "count_modules",
    ),
    "builtin_rebound": ("check_order", "builtins.all was rebound", (2, 2, 0), "visit_names"),
    "hookviz_rebound": ("check_order", "hookviz.postorder was rebound", (2, 2, 0), "visit_names"),
    "snapshot_emptied": (
        "check_scale",
        "snapshot of the genuine functions was changed",
        (0, 0, 0),
        "scale",
    ),
}


@pytest.fixture(scope="module", autouse=True)
def jupyter_home(tmp_path_factory):
    with private_jupyter_dirs(tmp_path_factory.mktemp("jupyter-home")):
        yield


def student(answers: dict[str, str]) -> nbformat.NotebookNode:
    """The exercise with the solution's answers, some replaced by ``answers``."""
    solution = nbformat.read(GUARDED, as_version=4)
    sources = {
        grade_id(c): regions.strip_solution_markers(c.source)
        for c in solution.cells
        if c.metadata.get("nbgrader", {}).get("solution")
    }
    notebook = exercise_from_solution(solution, CONFIG, "s.ipynb", "e.ipynb")
    for cell in notebook.cells:
        if grade_id(cell) in sources:
            cell.source = {**sources, **answers}[grade_id(cell)]
    return notebook


@pytest.fixture(scope="module")
def batch(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("integrity")
    shutil.copy(GUARDED, root / "guarded.ipynb")
    (root / "submitted").mkdir()
    for name, answers in CASES.items():
        nbformat.write(student(answers), root / "submitted" / f"{name}.ipynb")
    grade_folder(root / "submitted", root / "guarded.ipynb", root / "out", OPTIONS)
    return root / "out"


def result(out: Path, name: str) -> dict:
    return json.loads((out / "results" / f"{name}.json").read_text())


@pytest.mark.parametrize("name", ["correct", "imports_again"])
def test_the_honest_submission_scores_full_marks_without_flags(batch: Path, name: str) -> None:
    correct = result(batch, name)
    assert (correct["total"], correct["status"], correct["flags"]) == (5, "ok", [])
    assert all(c["tamper"] == [] for c in correct["checks"])
    assert correct["notes"] == []


def test_a_locked_cells_name_bound_again_by_an_answer_is_put_back_before_the_checks(
    batch: Path,
) -> None:
    """nbval alone would pass check_scale: its expected value comes from the student's torch."""
    rebound = result(batch, "locked_name_rebound")
    checks = {c["grade_id"]: c for c in rebound["checks"]}
    assert checks["check_scale"]["outcome"] == "mismatch" and checks["check_scale"]["points"] == 0
    assert "scale(ones(2)) is 3s" in checks["check_scale"]["actual"]  # the genuine comparison
    assert (checks["check_count"]["points"], checks["check_order"]["points"]) == (2, 1)
    assert rebound["flags"] == ["locked-name-rebound (torch)"]  # not tampering: said, not scored
    assert rebound["notes"] == [
        "Your answer cells define torch again, which the locked cell setup defines; the checks "
        "from check_scale on ran with the locked cell's torch, as they were written for it. "
        "Give yours another name."
    ]
    feedback = (batch / "feedback" / "locked_name_rebound.md").read_text()
    assert "Your answer cells define torch again" in feedback


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_a_patch_that_fools_a_check_scores_nothing_for_it(batch: Path, name: str) -> None:
    fooled, named, points, answer = EXPECTED[name]
    checks = {c["grade_id"]: c for c in result(batch, name)["checks"]}
    # The patch really fooled the printed check: the output matched the instructor's...
    assert checks[fooled]["nbval_outcome"] == "passed", checks[fooled]["actual"]
    # ...and the grader gave it nothing, naming what was rebound.
    assert checks[fooled]["outcome"] == "tampered" and checks[fooled]["points"] == 0
    assert any(named in problem for problem in checks[fooled]["tamper"]), checks[fooled]["tamper"]
    assert (
        tuple(checks[g]["points"] for g in ("check_scale", "check_count", "check_order")) == points
    )
    with open(batch / "gradebook.csv", newline="") as handle:
        flags = {r["student"]: r["flags"] for r in csv.DictReader(handle)}[name]
    assert f"tampered ({fooled})" in flags and f"monkeypatch ({answer})" in flags
    feedback = (batch / "feedback" / f"{name}.md").read_text()
    assert "The grader's tools were changed while this check ran" in feedback


def test_a_locked_cells_name_bound_again_while_a_check_runs_is_tampering(batch: Path) -> None:
    """The answer's function binds the global torch when the check calls it: the check's
    expected value comes from the fake, so nbval passes it; the grader scores it 0."""
    during = result(batch, "locked_name_during_check")
    checks = {c["grade_id"]: c for c in during["checks"]}
    assert checks["check_scale"]["nbval_outcome"] == "passed", checks["check_scale"]["actual"]
    assert checks["check_scale"]["outcome"] == "tampered" and checks["check_scale"]["points"] == 0
    assert checks["check_scale"]["tamper"] == [
        "torch, which the locked cell setup binds, was bound again while the check ran"
    ]
    assert "tampered (check_scale)" in during["flags"]
