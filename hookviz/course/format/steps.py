"""The notebook steps that both building an exercise and grading a submission run.

Each is one small named transform or check of a notebook, as in nbgrader's preprocessors:
``step(notebook, context)``. `hookviz build` (authoring/build.py) chains them into an exercise;
the grader (grading/core/merge.py) runs the same ones on the instructor's notebook, so that what
it grades is what students were handed.
"""

from __future__ import annotations

import ast
import copy
import itertools
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..conventions import (
    CHECK_MARKS,
    PASS_MARK,
    ends_with_sentinel,
    outputs_text,
    sentinel_grade_id,
    sentinel_line,
)
from ..wording import words
from . import regions
from .notebooks import (
    OUTPUTS_SOURCE_KEY,
    NotebookError,
    describe_cell,
    grade_id,
    is_answer,
    is_check,
    is_graded_or_locked,
    is_manual,
    is_solution,
    nbgrader,
    source_sha256,
)

if TYPE_CHECKING:
    from ..authoring.stamp import CourseConfig


@dataclass
class Context:
    """What a step may need: where the notebook lives and where it is going."""

    config: CourseConfig
    source: str  # path of the notebook read, relative to the course root
    target: str  # path of the notebook written, relative to the course root
    warnings: list[str] = field(default_factory=list)  # what builds, but deserves a look


Step = Callable[[Any, Context], None]


def validate_grading_metadata(notebook: Any, context: Context) -> None:
    """Every graded cell has a unique grade_id; check cells have points; markers sit where they belong.

    Every cell is checked: the error names each cell that breaks a rule, not only the first.
    """
    seen: dict[str, int] = {}
    problems = []
    for index in range(len(notebook.cells)):
        try:
            _validate_cell(notebook, context, index, seen)
        except NotebookError as error:
            problems.append(str(error))
    if problems:
        raise NotebookError("\n".join(problems))


def _validate_cell(notebook: Any, context: Context, index: int, seen: dict[str, int]) -> None:
    cell = notebook.cells[index]
    where = describe_cell(context.source, notebook.cells, index)
    meta = nbgrader(cell)
    source = cell.get("source", "")
    try:
        found = regions.find_regions(source)
    except regions.RegionError as error:
        raise NotebookError(f"{where}: {error}") from error
    kinds = {r.kind for r in found}
    autotest = autotest_line(cell)
    if autotest is not None:
        raise NotebookError(
            f"{where}: line {autotest} is nbgrader's ### AUTOTEST directive, which hookviz "
            "does not expand (run as a comment, it would pass every answer). Write its tests "
            "out as asserts, or paste the cell as `nbgrader generate_assignment` expands it "
            "(the test cell in its release/ copy)."
        )
    if "solution" in kinds and not is_solution(cell):
        raise NotebookError(
            f"{where}: has a solution region but is not an answer cell. Give it metadata "
            'nbgrader {"solution": true, "grade": false, "locked": false, "grade_id": "..."}.'
        )
    if "hidden" in kinds and not is_check(cell):
        raise NotebookError(
            f"{where}: has a hidden-test region but is not a check cell "
            '(metadata nbgrader {"grade": true, "points": N, ...}).'
        )
    if not is_graded_or_locked(cell):
        return
    gid = grade_id(cell)
    if gid is None:
        raise NotebookError(
            f"{where}: a graded or locked cell without a grade_id. Add "
            '"grade_id": "a_unique_name" to its metadata.nbgrader.'
        )
    if gid in seen:
        other = describe_cell(context.source, notebook.cells, seen[gid])
        other = other.split(", ", 1)[1].split(" (")[0]  # "code cell 3"
        raise NotebookError(
            f"{where}: grade_id {gid!r} is also used by {other}; each grade_id must be unique."
        )
    seen[gid] = index
    if is_manual(cell):
        value = meta.get("points")
        if not _is_points(value):
            raise NotebookError(
                f"{where}: a question graded by hand needs points, a number >= 0, in "
                f'metadata.nbgrader (e.g. "points": 2); it has {value!r}.'
            )
        return  # its answer is cleared whole (or its regions are); no check runs it
    if is_answer(cell):
        # Both are nbgrader's way and build; the stub then raises when the student runs the
        # cell as handed out, instead of when a check calls their function.
        if "solution" not in kinds:
            context.warnings.append(
                f"{where}: an answer cell without a {regions.BEGIN_SOLUTION!r} ... "
                f"{regions.END_SOLUTION!r} region, so the whole cell is the answer and the "
                "student gets only the stub (as nbgrader does); mark what the student writes "
                "to hand out the rest."
            )
        try:
            regions.check_stubs_inside_functions(source)
        except regions.RegionError as error:
            context.warnings.append(f"{where}: {error}")
    if is_check(cell):
        value = meta.get("points")
        if not _is_points(value):
            raise NotebookError(
                f"{where}: a check cell needs points, a number >= 0, in metadata.nbgrader "
                f'(e.g. "points": 2); it has {value!r}.'
            )
        problem = sentinel_problem(source, gid)
        if problem:
            raise NotebookError(f"{where}: {problem}")


def _is_points(value: object) -> bool:
    """A cell's points: a finite number >= 0 (not a bool)."""
    return (
        not isinstance(value, bool)
        and isinstance(value, (int, float))
        and math.isfinite(value)
        and value >= 0
    )


def sentinel_problem(source: str, gid: str) -> str | None:
    """What is wrong with the way a check cell ends (None when it ends with its own sentinel).

    The sentinel line, printed by ``checks.sentinel(grade_id)`` as the cell's last statement,
    is what proves that everything above it ran: without it, or with another cell's grade_id,
    a check that stopped half-way could still match.
    """
    if bare_check(source):
        return None  # the grader appends the sentinel itself
    fix = (
        f"end the cell with checks.sentinel({gid!r})"
        if _USES_HOOKVIZ.search(source)
        else f"end the cell with print({sentinel_line(gid)!r})"
    )
    try:
        tree = ast.parse(regions.python_source(source))
    except SyntaxError as error:
        return f"a check cell that is not valid Python (line {error.lineno}: {error.msg})."
    named = []
    for node in ast.walk(tree):
        found = _sentinel_call(node)
        if found is not None:
            named.append(found)
    if not named:
        return (
            f"a check cell without its sentinel line: {fix}, which prints '{sentinel_line(gid)}'."
        )
    for found in named:
        if found is _NOT_LITERAL:
            return f"checks.sentinel needs the grade_id as a string literal: {fix}."
        if found != gid:
            return (
                f"its sentinel names grade_id {found!r}, another cell's; this cell's grade_id is "
                f"{gid!r}: {fix}."
            )
    if not tree.body or _sentinel_call(tree.body[-1]) is None:
        return (
            "the sentinel must be the cell's last statement, at the top level (not inside an if, "
            f"a loop or a function), so that it prints only when everything above it ran: {fix}."
        )
    return None


_NOT_LITERAL = object()


_USES_HOOKVIZ = re.compile(r"\bchecks\s*\.|\b(?:import|from)\s+hookviz\b")


def bare_check(source: str) -> bool:
    """A check cell written nbgrader's way: plain asserts, no hookviz checks, no sentinel.

    The grader appends the sentinel line itself and scores the cell by whether it ran to its
    end (nbgrader's "raised or not"). A cell that uses hookviz's checks or prints its own ✓/✗
    is graded by its output and must end with its sentinel, since a ✗ prints, never raises.
    """
    if _USES_HOOKVIZ.search(source) or any(mark in source for mark in CHECK_MARKS):
        return False
    try:
        tree = ast.parse(regions.python_source(source))
    except SyntaxError:
        return False  # sentinel_problem says where
    return not any(_sentinel_call(node) is not None for node in ast.walk(tree))


def with_sentinel(source: str, gid: str) -> str:
    """A bare check cell as the grader runs it: its source, then the line printing its sentinel."""
    return f"{source.rstrip()}\nprint({sentinel_line(gid)!r})"


def autotest_line(cell: Any) -> int | None:
    """The first line (1-based) of a code cell that nbgrader reads as an AUTOTEST directive.

    nbgrader's InstantiateTests expands a line that starts with a comment and contains
    ``AUTOTEST`` (``### AUTOTEST f(2)``, ``### HASHED AUTOTEST f(2)``), in any code cell.
    """
    if cell.get("cell_type") != "code":
        return None
    for number, line in enumerate(cell.get("source", "").split("\n"), 1):
        if "AUTOTEST" in line and line.strip().startswith("#"):
            return number
    return None


def _sentinel_call(node: ast.AST) -> object:
    """The grade_id a statement's sentinel names (``checks.sentinel("x")`` or
    ``print("[hookviz] x: finished")``), _NOT_LITERAL when not a literal, None for other code."""
    if isinstance(node, ast.Expr):
        node = node.value
    if not isinstance(node, ast.Call):
        return None
    name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
    first = node.args[0] if node.args else None
    literal = (
        first.value if isinstance(first, ast.Constant) and isinstance(first.value, str) else None
    )
    if name == "sentinel":
        return literal if literal is not None else _NOT_LITERAL
    if name == "print" and literal is not None:
        return sentinel_grade_id(literal)
    return None


def validate_stored_outputs(notebook: Any, context: Context) -> None:
    """Each check cell's stored output ends with its sentinel and came from its current source.

    The stored output is what every student must print: if the cell was edited after the
    notebook last ran, every student would fail it, so the build stops instead.
    """
    for index, cell in enumerate(notebook.cells):
        if not is_check(cell) or bare_check(cell.source):
            continue  # a bare check is scored by running to its end, not by its output
        where = describe_cell(context.source, notebook.cells, index)
        gid = grade_id(cell)
        rerun = f"run `hookviz run {context.source}`, then build again"
        recorded = cell.metadata.get("hookviz", {}).get(OUTPUTS_SOURCE_KEY)
        if cell.execution_count is None or not cell.get("outputs"):
            raise NotebookError(
                f"{where}: a check cell without a stored output (what a correct answer prints); {rerun}."
            )
        if recorded is None:
            raise NotebookError(
                f"{where}: its stored output carries no record of the source it came from, so it "
                f"may be stale (outputs saved from Jupyter, or before hookviz recorded them); {rerun}."
            )
        if recorded != source_sha256(cell.source):
            raise NotebookError(
                f"{where}: the check cell was edited after its output was stored, so students "
                f"would be graded against a stale output; {rerun}."
            )
        if not ends_with_sentinel(outputs_text(cell.outputs), gid):
            raise NotebookError(
                f"{where}: its stored output does not end with its sentinel line {sentinel_line(gid)!r} "
                f"(the cell raised, or printed after it); fix the cell, then {rerun}."
            )


def remove_hidden_tests(notebook: Any, context: Context) -> None:
    """Hidden-test regions go, markers and all."""
    for cell in notebook.cells:
        if is_check(cell):
            cell.source = regions.remove_hidden_tests(cell.source)


SETUP_IMPORT = "from hookviz.course import checks"


def setup_guard(lang: str = "en") -> str:
    """The guard's first line: the import, and why it is there in the notebook's language."""
    return f"{SETUP_IMPORT}  # {words('steps.guard_note', lang)}"


SETUP_GUARD = setup_guard()


_ASSIGNMENT_CALL = re.compile(r"""checks\.assignment\(\s*["']([^"']+)["']\s*\)""")


def guard_check_cells(notebook: Any, context: Context) -> None:
    """Each check cell first makes sure the cells it needs ran, and says so in one line when not.

    A check cell run first (or after a kernel restart) would otherwise stop at
    ``NameError: name 'checks' is not defined``. The guard imports ``checks`` itself and calls
    ``checks.setup_ran`` with the assignment the setup cell loads (for a setup cell that loads
    none, the names it imports), and the names the check uses from the notebook's given cells
    (``is_function``, ``make_mlp``).
    """
    setup = next(
        (cell for cell in notebook.cells if nbgrader(cell).get("grade_id") == "setup"), None
    )
    if setup is None or "hookviz.course import checks" not in setup.source:
        return
    found = _ASSIGNMENT_CALL.search(setup.source)
    given: set[str] = set()
    for cell in notebook.cells:
        meta = nbgrader(cell)
        if cell.cell_type == "code" and meta.get("grade_id") not in (None, "setup"):
            if not is_check(cell) and not is_solution(cell):
                given |= _defined_names(cell.source)
    for cell in notebook.cells:
        if not (is_check(cell) and "checks." in cell.source):
            continue
        needs = sorted(_used_names(cell.source) & given)
        if not found:
            needs = sorted(_defined_names(setup.source) - {"checks"}) + needs
        arguments = [f'"{found.group(1)}"'] if found else []
        if needs:
            arguments.append("needs=(" + "".join(f'"{name}", ' for name in needs).rstrip() + ")")
        lines = cell.source.split("\n")
        at = next((i for i, line in enumerate(lines) if not line.startswith("#")), len(lines))
        # after the cell's opening comment, all of it: the student reads it above the spec
        guard = [setup_guard(), f"checks.setup_ran({', '.join(arguments)})"]
        cell.source = "\n".join(lines[:at] + guard + lines[at:])
    speak_guards(notebook, notebook_language(notebook))


def notebook_language(notebook: Any) -> str:
    """The language a built notebook was made in (its metadata says so; English if it does not)."""
    lang = (notebook.metadata.get("hookviz") or {}).get("lang")
    return lang if isinstance(lang, str) else "en"


_GUARD_CALL = re.compile(r"^checks\.setup_ran\((?P<arguments>.*?)(?:, )?(?:lang=\"\w+\")?\)$")


def speak_guards(notebook: Any, lang: str) -> None:
    """Each guard names the notebook's language when it is not English: in a fresh kernel the
    cell that sets the language has not run, and the guard's note should still be in it."""
    for cell in notebook.cells:
        if is_check(cell):
            cell.source = spoken_guard(cell.source, lang)


def spoken_guard(source: str, lang: str) -> str:
    """``source`` with its ``checks.setup_ran(...)`` line naming ``lang`` (none for English)
    and its import's comment in ``lang``."""
    lines = source.split("\n")
    for number, line in enumerate(lines):
        if line.startswith(f"{SETUP_IMPORT}  # "):
            lines[number] = setup_guard(lang)
        call = _GUARD_CALL.match(line)
        if call:
            arguments = [a for a in [call.group("arguments")] if a]
            arguments += [f'lang="{lang}"'] if lang != "en" else []
            lines[number] = f"checks.setup_ran({', '.join(arguments)})"
    return "\n".join(lines)


def _defined_names(source: str) -> set[str]:
    """The names a cell binds at its top level: imports, defs, classes, assignments."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set()
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {(alias.asname or alias.name).split(".")[0] for alias in node.names}
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    return names


def _used_names(source: str) -> set[str]:
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set()
    used = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}
    own = {node.arg for node in ast.walk(tree) if isinstance(node, ast.arg)}  # verify's arguments
    return used - own - _defined_names(source)


def run_steps(notebook: Any, steps: tuple[Step, ...], context: Context) -> Any:
    """A transformed copy of ``notebook``; the input is left as it was."""
    result = copy.deepcopy(notebook)
    for step in steps:
        step(result, context)
    return result


# -- the student's view of a check cell ---------------------------------------------------------

RUN_CHECK = "checks.run_check("
_CLAIM_ON = re.compile(r"^(?P<claim>.*\S) \((?P<on>[^()]*(?:\([^()]*\)[^()]*)*)\)$")


def pack_check_cells(notebook: Any, context: Context) -> None:
    """Each hookviz check cell of the student copy says what it checks, and runs its code packed.

    A student reads the cell as a specification: its first comment, then the claims its ✓
    lines make for a correct answer (from the solution's stored output), grouped with the
    models they are checked on. The code (helpers, reference answers, the checks) is packed by
    ``content.pack_text`` into one ``checks.run_check(...)`` line after the guard; the grader
    runs the instructor's cell, never this one.
    """
    from ..content import pack_text

    for cell in notebook.cells:
        if not (is_check(cell) and "checks.sentinel(" in cell.source) or RUN_CHECK in cell.source:
            continue
        lines = cell.source.split("\n")
        comment = []
        while lines and lines[0].startswith("#"):
            comment.append(lines.pop(0))
        guard = []
        while lines and lines[0].startswith((SETUP_IMPORT, "checks.setup_ran(")):
            guard.append(lines.pop(0))
        spec = _specification(outputs_text(cell.get("outputs", [])), notebook_language(notebook))
        code = "\n".join(lines).strip("\n")
        cell.source = "\n".join([*comment, *spec, *guard, f'{RUN_CHECK}"{pack_text(code)}")'])


def specify_in(exercise: Any, solution: Any, lang: str) -> None:
    """The packed check cells of ``exercise`` (a translated copy of the English exercise) list
    the claims of ``solution``'s stored outputs, the instructor's notebook in ``lang``: the
    same cell ``pack_check_cells`` makes from that notebook. A check whose solution cell has no
    stored claims yet (`hookviz run` not run) keeps the English ones."""
    solved = {grade_id(c): c for c in solution.cells if is_check(c)}
    for cell in exercise.cells:
        theirs = solved.get(grade_id(cell)) if is_check(cell) else None
        if theirs is None or RUN_CHECK not in cell.source:
            continue
        spec = _specification(outputs_text(theirs.get("outputs", [])), lang)
        if not spec:
            continue
        comment = list(
            itertools.takewhile(lambda line: line.startswith("#"), theirs.source.split("\n"))
        )
        rest = [
            line
            for line in cell.source.split("\n")
            if line.startswith((SETUP_IMPORT, "checks.setup_ran(", RUN_CHECK))
        ]
        cell.source = "\n".join([*comment, *spec, *rest])


def _specification(output: str, lang: str = "en") -> list[str]:
    """Comment lines: what the ✓ lines of a correct answer claim, and on which models."""
    claims: dict[str, list[str]] = {}
    for line in output.splitlines():
        if not line.startswith(f"{PASS_MARK} "):
            continue
        text = line[2:].strip()
        match = _CLAIM_ON.match(text)
        claim, on = (match["claim"], match["on"]) if match else (text, "")
        found = claims.setdefault(claim, [])
        if on and on not in found:
            found.append(on)
    if not claims:
        return []
    models = list(dict.fromkeys(on for found in claims.values() for on in found))
    if len(models) <= 1:
        heading = words("spec.on", lang, models=models[0]) if models else words("spec.what", lang)
        return [f"# {heading}"] + [f"#  - {claim}" for claim in claims]
    listed = "; ".join(f"({i}) {m}" for i, m in enumerate(models, 1))
    out = [f"# {words('spec.on', lang, models=listed)}"]
    for claim, on in claims.items():
        where = (
            ""
            if len(on) in (0, len(models))
            else f"  [{', '.join(str(models.index(m) + 1) for m in on)}]"
        )
        out.append(f"#  - {claim}{where}")
    return out


# What `hookviz build` does to a check cell for the student's copy, in order: the merge derives
# the source a student got through the same steps, so a packed cell is recognised as unedited.
STUDENT_CHECK_STEPS: tuple[Step, ...] = (remove_hidden_tests, guard_check_cells, pack_check_cells)
