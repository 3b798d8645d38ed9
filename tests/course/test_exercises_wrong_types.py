"""No locked check cell raises a traceback of its own, whatever the answer returns.

Every answer cell of solutions/ is replaced by one whose functions (and methods) return a value
of the wrong type or shape, raise, or return their first argument; the instructor's check cell
then runs as in tests/course/test_exercises_mutants.py. None of these answers is right, so the check prints a ✗
with a hint, raises nothing, and ends with its sentinel.
"""

from __future__ import annotations

import ast

import pytest

from tests.answers import Answer
from tests.course.test_exercises_mutants import ASSIGNMENTS, kernels, run_answer  # noqa: F401

pytestmark = pytest.mark.notebook

RETURNS = {
    "None": "None",
    "a list": "[1, 2]",
    "a generator": "(i for i in range(3))",
    "a float64 tensor": "torch.ones(2, dtype=torch.float64)",
    "an integer tensor": "torch.ones(2, 2, dtype=torch.int64)",
    "a tensor of the wrong shape": "torch.ones(7, 3, 5)",
    "raises": None,  # the body raises
    "its first argument": "FIRST",
}


def body(kind: str, first: str) -> str:
    if kind == "raises":
        return 'raise ValueError("an answer that fails")'
    value = RETURNS[kind]
    return f"return {first if value == 'FIRST' else value}"


def bad_source(solution: str, kind: str) -> str:
    """The answer cell with every function and method body replaced by the bad one."""
    tree = ast.parse(solution)
    out = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            args = ast.unparse(node.args)
            first = node.args.args[0].arg if node.args.args else "None"
            out.append(f"def {node.name}({args}):\n    {body(kind, first)}\n")
        elif isinstance(node, ast.ClassDef):
            methods = []
            for item in node.body:
                if isinstance(item, ast.FunctionDef):
                    args = ast.unparse(item.args)
                    first = item.args.args[0].arg if item.args.args else "None"
                    text = body(kind, first)
                    if item.name == "__init__":
                        text = text if kind == "raises" else "pass"
                    methods.append(f"    def {item.name}({args}):\n        {text}\n")
            out.append(f"class {node.name}:\n" + "\n".join(methods or ["    pass\n"]))
    return "\n\n".join(out)


CASES = [
    (name, exercise, kind)
    for name, assignment in ASSIGNMENTS.items()
    for exercise in assignment.answers
    for kind in RETURNS
]


@pytest.mark.parametrize(
    ("name", "exercise", "kind"), CASES, ids=[f"{n}: {e}: {k}" for n, e, k in CASES]
)
def test_a_check_never_raises_a_traceback_of_its_own(kernels, name, exercise, kind):  # noqa: F811
    assignment = ASSIGNMENTS[name]
    source = bad_source(assignment.answers[exercise], kind)
    answer = Answer(exercise, "wrong", kind, source, ("✗",), "wrong type")
    outcome = run_answer(kernels(name), assignment, answer)
    printed = outcome.stdout
    where = f"\n--- the answer:\n{source}\n--- the check printed:\n{printed}\n--- raised: {outcome.error or 'nothing'}"
    sentinel = f"[hookviz] check_{exercise}: finished"
    assert any(line.startswith("✗") for line in printed.splitlines()), f"no ✗{where}"
    assert not outcome.error, f"the check cell raised{where}"
    assert "    Hint: " in printed, f"a ✗ without a hint{where}"
    assert printed.rstrip("\n").splitlines()[-1] == sentinel, f"the sentinel is not last{where}"
