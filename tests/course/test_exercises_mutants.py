"""Every exercise, tested like code: its catalogue of answers runs through the real check cell.

For each assignment one kernel starts (sharing it keeps the suite fast). For each answer in
tests/answers/, the kernel forgets everything (``%reset``), then runs the solution notebook's
code cells in order up to the exercise's check cell, as a student's top-to-bottom run would:
the answer cell of that exercise holds the catalogue's answer, the other answer cells hold the
solutions, and the check cell is the instructor's (visible checks and hidden tests). What the
check cell prints, and whether it raised, is then judged by the answer's kind:

- wrong: a ✗ with the fragments the catalogue expects (the hint for that mistake), no error,
  the sentinel last, no line of the solution at this first failure;
- correct: exactly the instructor's stored output: full marks from the grader;
- cheat: every visible check passes and a hidden test fails.

And for every answer, the fairness rule: an answer that passes every visible check passes
the hidden tests too, unless it is a cheat. ``make test-colab`` runs this file again pinned
like Colab.
"""

from __future__ import annotations

import ast
import importlib
import queue
import re
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
import pytest

from hookviz.course.checks import FAILED, NOT_DONE, PASSED
from hookviz.course.conventions import HIDDEN_TEST_FAILED, outputs_text
from hookviz.course.format import regions
from hookviz.course.i18n.english import english_phrases
from tests.answers import Answer
from tests.helpers import notebook_runner

REPO = Path(__file__).resolve().parents[2]
SOLUTIONS = sorted((REPO / "solutions").glob("*.ipynb"))
CATALOGUES = {
    "01-apply": "tests.answers.a01_apply",
    "02-forward-hooks": "tests.answers.a02_forward_hooks",
    "03-backward-hooks": "tests.answers.a03_backward_hooks",
    "04-hook-hygiene": "tests.answers.a04_hook_hygiene",
    "05-activation-stats": "tests.answers.a05_activation_stats",
    "06-hooks-in-real-libraries": "tests.answers.a06_hooks_in_real_libraries",
    "07-grad-modes": "tests.answers.a07_grad_modes",
}
MIN_WRONG, MIN_CORRECT = 6, 2
# Run between answers: the kernel forgets the last answer's names, hint levels and any hook
# it left on torch's global hook dicts (the checks' own state is module-level), and how its
# earlier checks ended (no correct answer stands in for a function this run did not check).
RESET = """\
%reset -f
import gc as _gc
import torch.nn.modules.module as _torch_module
from hookviz.course import checks as _checks
_checks._KERNEL.failures.clear()
_checks._KERNEL.failed.clear()
_checks._KERNEL.verdicts.clear()
_left = [name for name in dir(_torch_module) if name.startswith("_global_") and name.endswith("hooks") and getattr(_torch_module, name)]
assert not _left, f"an earlier answer left global hooks: {_left}"
del _gc, _torch_module, _checks, _left
"""

pytestmark = pytest.mark.notebook


def grading(cell) -> dict:
    return cell.get("metadata", {}).get("nbgrader", {})


def catalogue(name: str) -> list[Answer]:
    return importlib.import_module(CATALOGUES[name]).ANSWERS


@dataclass
class Outcome:
    """What one cell printed and whether it raised."""

    stdout: str = ""
    stderr: str = ""
    error: str = ""  # "Name: message" of an exception the cell raised
    traceback: list[str] = field(default_factory=list)


class Kernel:
    """One IPython kernel driven cell by cell (jupyter_client), outputs collected per cell."""

    def __init__(self, cwd: Path, env: dict[str, str]):
        from jupyter_client.manager import start_new_kernel

        self.manager, self.client = start_new_kernel(kernel_name="python3", cwd=str(cwd), env=env)

    def run(self, source: str, timeout: float = 120) -> Outcome:
        outcome = Outcome()

        def collect(message):
            kind, content = message["msg_type"], message["content"]
            if kind == "stream":
                if content["name"] == "stdout":
                    outcome.stdout += content["text"]
                else:
                    outcome.stderr += content["text"]
            elif kind in ("display_data", "execute_result"):
                # a check's feedback is a card: its text/plain is what nbval and the grader read
                text = content.get("data", {}).get("text/plain", "")
                outcome.stdout += text if text.endswith("\n") else text + "\n"
            elif kind == "error":
                outcome.error = f"{content['ename']}: {content['evalue']}"
                outcome.traceback = content["traceback"]

        try:
            self.client.execute_interactive(
                source, output_hook=collect, timeout=timeout, store_history=False
            )
        except (TimeoutError, queue.Empty):
            outcome.error = f"Timeout: the cell ran longer than {timeout} s"
        return outcome

    def stop(self) -> None:
        self.client.stop_channels()
        self.manager.shutdown_kernel(now=True)


@dataclass
class Assignment:
    """The solution notebook cut into what the runner needs."""

    name: str
    cells: list  # code cells, in order
    answers: dict[str, str]  # grade_id -> the solution's answer cell
    checks: dict[str, int]  # answer grade_id -> index (in cells) of the check cell testing it
    stored: dict[int, str]  # check cell index -> the instructor's stored stdout
    solution_lines: dict[str, list[str]]  # answer grade_id -> its meaningful solution lines


def load(path: Path) -> Assignment:
    nb = nbformat.read(path, as_version=4)
    cells = [
        c for c in nb.cells if c.cell_type == "code" and 'find_spec("hookviz")' not in c.source
    ]
    answers, checks, stored, lines = {}, {}, {}, {}
    pending: list[str] = []
    for index, cell in enumerate(cells):
        meta = grading(cell)
        if meta.get("solution"):
            answers[meta["grade_id"]] = cell.source
            pending.append(meta["grade_id"])
            lines[meta["grade_id"]] = solution_lines(cell.source)
        elif meta.get("grade"):
            for grade_id in pending:
                checks[grade_id] = index
            pending = []
            stored[index] = outputs_text(
                [o for o in cell.outputs if not (o.output_type == "stream" and o.name == "stderr")]
            )
    assert not pending, f"{path.name}: answer cells {pending} have no check cell after them"
    return Assignment(path.stem, cells, answers, checks, stored, lines)


def solution_lines(source: str) -> list[str]:
    """The lines inside the solution region that carry the answer (not comments, not `return x`)."""
    inside, found = False, []
    for line in source.splitlines():
        stripped = line.strip()
        if stripped == regions.BEGIN_SOLUTION:
            inside = True
        elif stripped == regions.END_SOLUTION:
            inside = False
        elif inside and stripped and not stripped.startswith("#") and len(stripped) > 12:
            found.append(stripped)
    return found


@pytest.fixture(scope="module")
def kernels(tmp_path_factory):
    """One kernel per assignment, started on first use and stopped at the end, whatever happens."""
    env = notebook_runner().isolated_env(tmp_path_factory.mktemp("mutant-settings"))
    started: dict[str, Kernel] = {}

    def get(name: str) -> Kernel:
        if name not in started:
            started[name] = Kernel(tmp_path_factory.mktemp(f"student-{name}"), env)
        return started[name]

    yield get
    for kernel in started.values():
        kernel.stop()


def run_answer(kernel: Kernel, assignment: Assignment, answer: Answer) -> Outcome:
    """Reset the kernel, run the notebook up to the exercise's check cell, return that cell's outcome."""
    reset = kernel.run(RESET)
    assert not reset.error, reset.error
    target = assignment.checks[answer.exercise]
    for index, cell in enumerate(assignment.cells[: target + 1]):
        meta = grading(cell)
        if meta.get("grade") and index != target:
            continue  # other exercises' checks: they define nothing the later cells use
        source = cell.source
        if meta.get("solution"):
            source = (
                answer.source
                if meta["grade_id"] == answer.exercise
                else assignment.answers[meta["grade_id"]]
            )
        outcome = kernel.run(source)
        if index == target:
            return outcome
        assert not outcome.error, f"cell {index} before the check raised {outcome.error}"
    raise AssertionError("unreachable")


def visible_verdict(stdout: str) -> bool:
    """True when the visible checks all passed: no ✗ and no ○ line."""
    return not any(line.startswith((FAILED, NOT_DONE)) for line in stdout.splitlines())


ASSIGNMENTS = {path.stem: load(path) for path in SOLUTIONS}
CASES = [(name, answer) for name in ASSIGNMENTS for answer in catalogue(name)]


def test_every_exercise_has_a_full_catalogue():
    """At least six real mistakes and two correct answers in other styles, for every exercise."""
    assert sorted(CATALOGUES) == sorted(ASSIGNMENTS)
    for name, assignment in ASSIGNMENTS.items():
        answers = catalogue(name)
        assert {a.exercise for a in answers} == set(assignment.answers), name
        for exercise in assignment.answers:
            kinds = [a.kind for a in answers if a.exercise == exercise]
            assert kinds.count("wrong") >= MIN_WRONG, (
                f"{name} {exercise}: {kinds.count('wrong')} wrong answers"
            )
            assert kinds.count("correct") >= MIN_CORRECT, (
                f"{name} {exercise}: {kinds.count('correct')} correct answers"
            )
        ids = [a.id for a in answers]
        assert len(ids) == len(set(ids)), f"{name}: two answers share a label"


@pytest.mark.parametrize(("name", "answer"), CASES, ids=[f"{n}: {a.id}" for n, a in CASES])
def test_answer_meets_its_check(kernels, request, name: str, answer: Answer):
    """The check cell's verdict on this answer is the one its kind calls for."""
    assignment = ASSIGNMENTS[name]
    pinned = request.config.getoption("markexpr") == "colab"  # Korean: in the main run only
    outcome = (
        run_answer(kernels(name), assignment, answer)
        if pinned
        else both_languages(kernels, name, answer)[0]
    )
    printed = outcome.stdout
    sentinel = f"[hookviz] check_{answer.exercise}: finished"
    where = f"\n--- the check printed:\n{printed}\n--- raised: {outcome.error or 'nothing'}"
    passed_visible = visible_verdict(printed)
    # The fairness rule: nothing that passes every visible check fails a hidden test, but a cheat.
    if passed_visible and answer.kind != "cheat":
        assert not outcome.error, f"passed every visible check, then failed: {outcome.error}{where}"
    assert re.search(r"0x[0-9a-fA-F]{6,}", printed) is None, f"a memory address{where}"
    assert not outcome.stderr, f"stderr: {outcome.stderr}{where}"
    if answer.kind == "correct":
        check_index = assignment.checks[answer.exercise]
        assert not outcome.error, where
        assert printed == assignment.stored[check_index], f"not the instructor's output{where}"
    elif answer.kind == "cheat":
        assert passed_visible, f"a cheat must pass the visible checks{where}"
        assert outcome.error.startswith(HIDDEN_TEST_FAILED), f"a hidden test must catch it{where}"
        assert sentinel not in printed, where
    else:
        assert not outcome.error, f"a wrong answer made the check cell raise{where}"
        assert not passed_visible, f"no visible ✗ for a wrong answer{where}"
        assert printed.rstrip("\n").splitlines()[-1] == sentinel, where
        for fragment in answer.expect:
            assert fragment in printed, f"missing {fragment!r}{where}"
        assert "    Code:" not in printed, f"code at the first failure{where}"
        # The first-level hint never hands out the answer: no line of the solution in it.
        for line in assignment.solution_lines[answer.exercise]:
            assert line not in printed, f"the solution's line {line!r} in a first-level hint{where}"


FIRST_WRONG = {}
for _name, _answer in CASES:
    if _answer.kind == "wrong":
        FIRST_WRONG.setdefault((_name, _answer.exercise), _answer)


@pytest.mark.parametrize(
    ("name", "exercise"), sorted(FIRST_WRONG), ids=[f"{n}: {e}" for n, e in sorted(FIRST_WRONG)]
)
def test_hints_come_in_levels(kernels, name: str, exercise: str):
    """The same failing check, run again and again: a nudge, then more, then code from the third run."""
    assignment, answer = ASSIGNMENTS[name], FIRST_WRONG[(name, exercise)]
    kernel = kernels(name)
    first = run_answer(kernel, assignment, answer).stdout
    check_source = assignment.cells[assignment.checks[exercise]].source
    function, _ = hint_keys_used(check_source)  # the function the check names, e.g. init_with
    second = kernel.run(check_source).stdout
    third = kernel.run(check_source).stdout
    assert "Hint: " in first and "More: " not in first and "Code:" not in first, first
    assert "Code:" not in second, second
    if "Stuck? " in first:  # a check with a code-level hint offers it
        assert f'checks.hint("{function}")' in first, first
        assert "\n    Code:\n" in third, third
    on_request = kernel.run(f'checks.hint("{function}")').stdout
    assert on_request.startswith(f"Hints for {function}, all levels"), on_request
    assert "Hint: " in on_request, on_request


def test_hidden_tests_only_rerun_visible_checks():
    """The fairness rule in the source: each hidden test calls a visible check function on another instance."""
    for assignment in ASSIGNMENTS.values():
        for index in assignment.stored:
            source = assignment.cells[index].source
            found = regions.find_regions(source)
            hidden = [r for r in found if r.kind == "hidden"]
            lines = source.splitlines()
            visible = "\n".join(
                line
                for number, line in enumerate(lines)
                if not any(r.begin <= number <= r.end for r in hidden)
            )
            visible_tree = ast.parse(visible)
            defined = {n.name for n in visible_tree.body if isinstance(n, ast.FunctionDef)}
            called = {
                n.func.id
                for n in ast.walk(visible_tree)
                if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
            }
            for region in hidden:
                body = ast.parse(
                    "\n".join(line.strip() for line in lines[region.begin + 1 : region.end])
                )
                for statement in body.body:
                    call = statement.value if isinstance(statement, ast.Expr) else None
                    if call is not None and ast.unparse(call.func) == "torch.manual_seed":
                        continue  # seeding the unseen instance is allowed
                    assert (
                        isinstance(call, ast.Call)
                        and isinstance(call.func, ast.Attribute)
                        and call.func.attr == "hidden"
                        and call.args
                        and isinstance(call.args[0], ast.Name)
                    ), (
                        f"{assignment.name} cell {index}: a hidden test must be check.hidden(verify, ...): {ast.unparse(statement)}"
                    )
                    verify = call.args[0].id
                    assert verify in defined and verify in called, (
                        f"{assignment.name} cell {index}: {verify} must be a function the visible checks define and call"
                    )


def hint_keys_used(source: str) -> tuple[str, set[str]]:
    """The answer a check cell checks, and every hint key its ``hint=...`` arguments can name."""
    tree = ast.parse(source)
    answer = next(
        node.args[0].value
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and ast.unparse(node.func) == "checks.Check"
    )

    def names(node) -> set[str]:  # "key", or either branch of `"a" if ... else "b"`
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return {node.value}
        if isinstance(node, ast.IfExp):
            return names(node.body) | names(node.orelse)
        return set()

    keys = {
        key
        for node in ast.walk(tree)
        if isinstance(node, ast.keyword) and node.arg in ("hint", "why")
        for key in names(node.value)
    }
    return answer, keys


def test_every_hint_a_check_names_exists_and_every_hint_is_used():
    """The course's hints/<assignment>.toml holds exactly the hints the check cells name."""
    from hookviz.course import checks

    for assignment in ASSIGNMENTS.values():
        hints = checks.load_hints(assignment.name)
        used: dict[str, set[str]] = {}
        for index in assignment.stored:
            source = assignment.cells[index].source
            answer, keys = hint_keys_used(source)
            # A key may also reach hint= through a variable (a loop over (column, hint) pairs, say).
            constants = {
                n.value
                for n in ast.walk(ast.parse(source))
                if isinstance(n, ast.Constant) and isinstance(n.value, str)
            }
            used.setdefault(answer, set()).update(keys | constants)
            missing = keys - set(hints.get(answer, {}))
            assert not missing, (
                f"{assignment.name} cell {index}: no hint for {answer}: {sorted(missing)}"
            )
        unused = {
            (answer, key)
            for answer, table in hints.items()
            for key in table
            if key not in used.get(answer, set())
        }
        assert not unused, f"{assignment.name}: hints no check names: {sorted(unused)}"


def test_no_first_level_hint_contains_a_line_of_the_solution():
    """A nudge names the concept and the doc to read; the code comes later, never at level 1."""
    from hookviz.course import checks, diagnose

    all_lines = {
        line for a in ASSIGNMENTS.values() for lines in a.solution_lines.values() for line in lines
    }
    for assignment in ASSIGNMENTS.values():
        lines = {line for found in assignment.solution_lines.values() for line in found}
        for answer, table in checks.load_hints(assignment.name).items():
            for key, found in table.items():
                leaked = [line for line in lines if line in found.nudge]
                assert not leaked, f"{assignment.name} [{answer}.{key}] nudge holds {leaked}"
    for name, value in vars(diagnose).items():
        if isinstance(value, diagnose.Hint):
            leaked = [line for line in all_lines if line in value.nudge]
            assert not leaked, f"diagnose.{name} nudge holds {leaked}"


# -- the same answers in Korean -----------------------------------------------------------------
# ko/solutions/ has the same code cells, its outputs stored in Korean; its content cell makes
# its kernel Korean. Each language has its own kernel, so hint levels never carry over.
KOREAN = {path.stem: load(path) for path in sorted((REPO / "ko" / "solutions").glob("*.ipynb"))}
_RUNS: dict[tuple[str, str], tuple[Outcome, Outcome]] = {}  # (English, Korean) per answer


def both_languages(kernels, name: str, answer: Answer) -> tuple[Outcome, Outcome]:
    """The answer run in its English and its Korean kernel at once (one core each)."""
    if (name, answer.id) not in _RUNS:
        english, korean = kernels(name), kernels(f"{name}.ko")  # started here, not in threads
        with ThreadPoolExecutor(2) as pool:
            runs = pool.map(
                lambda job: run_answer(*job, answer),
                [(english, ASSIGNMENTS[name]), (korean, KOREAN[name])],
            )
            _RUNS[(name, answer.id)] = tuple(runs)
    return _RUNS[(name, answer.id)]


def marks(printed: str) -> list[str]:
    """The ✓, ✗ and ○ of each line that has one, in order: what the grader goes by."""
    return [line[0] for line in printed.splitlines() if line[:1] in (PASSED, FAILED, NOT_DONE)]


def hints_shown(printed: str, hints: dict) -> set[str]:
    """The keys of the hints whose nudge ``printed`` shows."""
    return {key for key, found in hints.items() if found.nudge and found.nudge in printed}


def test_the_korean_edition_has_every_assignment():
    """The Korean code cells are the English ones, their comments and docstrings set aside
    (those are translated); the prose of the answer cells and helpers a student reads is Korean."""
    from hookviz.course.i18n.code import code_only, prose
    from hookviz.course.i18n.english import has_hangul

    assert sorted(KOREAN) == sorted(ASSIGNMENTS)
    for name, assignment in KOREAN.items():
        english = ASSIGNMENTS[name]
        assert [
            code_only(c.source)
            for c in assignment.cells
            if "hookviz.course.content" not in c.source
        ] == [
            code_only(c.source) for c in english.cells if "hookviz.course.content" not in c.source
        ], f"{name}: the Korean code cells must be the English ones"
        for cell in assignment.cells:
            opening = bool(grading(cell).get("grade"))  # a check cell: what it opens with
            for unit in prose(cell.source, opening_only=opening):  # names alone are code
                english = not has_hangul(unit.text) and english_phrases(unit.text)
                assert not english, f"{name}: English prose in code: {unit.text!r}"


@pytest.mark.parametrize(("name", "answer"), CASES, ids=[f"{n}: {a.id}" for n, a in CASES])
def test_answer_gets_the_same_verdict_in_korean(kernels, name: str, answer: Answer):
    """Same marks, same error, same hint (in Korean), and a correct answer's output is the
    Korean solution's stored one: the language changes what a student reads, not the grade."""
    from hookviz.course import checks

    english, korean = both_languages(kernels, name, answer)
    where = f"\n--- English:\n{english.stdout}\n--- Korean:\n{korean.stdout}"
    assert marks(korean.stdout) == marks(english.stdout), where
    assert korean.error.split(":")[0] == english.error.split(":")[0], where
    assert not korean.stderr, korean.stderr
    if answer.kind == "correct":
        assert korean.stdout == KOREAN[name].stored[KOREAN[name].checks[answer.exercise]], where
    function, _ = hint_keys_used(
        ASSIGNMENTS[name].cells[ASSIGNMENTS[name].checks[answer.exercise]].source
    )
    en_hints = checks.load_hints(name, "en").get(function, {})
    ko_hints = checks.load_hints(name, "ko").get(function, {})
    shown = hints_shown(english.stdout, en_hints)
    assert hints_shown(korean.stdout, ko_hints) == shown, where
    for key in shown:  # the Korean card shows the Korean hint, not the English one
        if ko_hints[key].nudge != en_hints[key].nudge:
            assert en_hints[key].nudge not in korean.stdout, where
    english_left = english_phrases(card_lines(korean.stdout))
    assert not english_left, f"English in the Korean card: {english_left}{where}"


def card_lines(printed: str) -> str:
    """What a check's card says: its ✓ ✗ ○ lines and the lines under them (what the student's
    own code printed while the check ran is theirs, in any language)."""
    marks = (f"{PASSED} ", f"{FAILED} ", f"{NOT_DONE} ", "    ")
    return "\n".join(line for line in printed.splitlines() if line.startswith(marks))
