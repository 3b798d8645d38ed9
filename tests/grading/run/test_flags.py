"""Flags: what looks suspicious in an answer's source (grader names, monkeypatching)."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

from hookviz.course.conventions import Flag
from hookviz.course.format.notebooks import grade_id
from hookviz.grading.run.flags import imported_names, monkeypatches, scan_answers


@pytest.mark.parametrize(
    "source, flag",
    [
        ("get_ipython().showtraceback = print", "traceback-machinery"),
        ("from IPython.core.interactiveshell import InteractiveShell", "traceback-machinery"),
        ("import sys\nsys.modules['hookviz'] = None", "sys.modules"),
        ("import builtins\nbuiltins.print = len", "builtins"),
        ("__builtins__['len'] = max", "builtins"),
        ("from hookviz.course import checks", "grader"),
        ("import hookviz.course.checks as c", "grader"),
        ("print('[hookviz] check_x: finished')", "prints-sentinel"),
        ("print(f'{1}: finished')", "prints-sentinel"),
        ("import os\nos._exit(0)", "interpreter"),
        ("%time x = 1\nget_ipython().events.register('post_run_cell', f)", "traceback-machinery"),
        ("def f(:\n    sys.modules.clear()", "sys.modules"),  # does not parse: text search
    ],
)
def test_suspicious_answers_are_flagged(source: str, flag: str) -> None:
    assert Flag(flag, "answer") in scan_answers({"answer": source})


@pytest.mark.parametrize(
    "source, patched",
    [
        ("torch.equal = torch.is_same_size", "torch.equal"),  # torch imported by the setup cell
        ("def f(x):\n    nn.Module.modules = nn.Module.children", "nn.Module.modules"),
        ("import builtins as b\nb.all = bool", "b.all"),
        ("M = nn.Module\nM.apply = print", "M.apply"),
        ("setattr(hv, 'postorder', hv.preorder)", "setattr(hv, ...)"),
        ("vars(torch)['equal'] = print", "vars(torch)['equal']"),
        ("torch.Tensor.__dict__['abs'] = print", "torch.Tensor.__dict__['abs']"),
        ("type(model).forward = print", "type(model).forward"),
        ("del torch.nn.init.zeros_", "torch.nn.init.zeros_"),
    ],
)
def test_attribute_assignments_on_imported_modules_and_classes_are_flagged(source, patched) -> None:
    assert patched in monkeypatches(source, imported=["torch", "nn", "hv"])
    assert Flag("monkeypatch", "answer") in scan_answers(
        {"answer": source}, imported=["torch", "nn", "hv"]
    )


def test_attributes_of_objects_and_items_of_module_data_are_not_monkeypatching() -> None:
    source = (
        "import os, torch\n\n"
        "def f(module, model):\n"
        "    module.weight = torch.nn.Parameter(torch.ones(1))\n"
        "    model.ab.a.W = None\n"
        "    self.count = 1\n"
        "    os.environ['X'] = '1'\n"
        "    layer = torch.nn.Linear(2, 2)\n"
        "    layer.bias = None\n"
    )
    assert monkeypatches(source, imported=["torch", "nn", "hv"]) == []


def test_the_course_solutions_raise_no_flag() -> None:
    for path in sorted((Path(__file__).resolve().parents[3] / "solutions").glob("*.ipynb")):
        notebook = nbformat.read(path, as_version=4)
        imported = set().union(
            *(imported_names(c.source) for c in notebook.cells if c.cell_type == "code")
        )
        answers = {
            grade_id(c): c.source
            for c in notebook.cells
            if c.metadata.get("nbgrader", {}).get("solution")
        }
        assert scan_answers(answers, imported) == [], path.name


def test_ordinary_answers_raise_no_flag() -> None:
    source = (
        "import torch\nfrom torch import nn\n\n"
        "def hook(module, inputs, output):\n    print(type(module).__name__, output.shape)\n"
        "    checks = [1, 2]\n    return None\n"
    )
    assert scan_answers({"hook": source}) == []
