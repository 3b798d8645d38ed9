"""`hookviz build`: stamp every notebook, and generate exercises/ from solutions/.

Each transform is one small named step, as in nbgrader's preprocessors. An exercise is::

    validate_grading_metadata -> replace_solutions -> remove_hidden_tests -> clear_outputs
    -> lock_cells -> add_checksums -> stamp (badge pointing at the exercise)

A solution is checked first (``validate_grading_metadata``, ``validate_stored_outputs``): a
check cell without its sentinel, or whose stored output is stale, stops the build.
``build_course(root, check=True)`` writes nothing and lists what is out of date.
"""

from __future__ import annotations

import ast
import copy
import math
import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import regions
from .conventions import (
    CHECK_MARKS,
    ends_with_sentinel,
    outputs_text,
    sentinel_grade_id,
    sentinel_line,
)
from .notebooks import (
    CHECKSUM_KEY,
    OUTPUTS_SOURCE_KEY,
    SCHEMA_VERSION,
    NotebookError,
    atomic_write_text,
    cell_checksum,
    describe_cell,
    grade_id,
    is_answer,
    is_check,
    is_graded_or_locked,
    is_manual,
    is_solution,
    nbgrader,
    nbgrader_checksum,
    notebook_text,
    read_notebook,
    same_content,
    source_sha256,
)
from .stamp import CourseConfig, load_course_config, relative_posix, stamp_notebook

SOLUTIONS, EXERCISES, WALKTHROUGH = "solutions", "exercises", "notebooks"


@dataclass
class Context:
    """What a step may need: where the notebook lives and where it is going."""

    config: CourseConfig
    source: str  # path of the notebook read, relative to the course root
    target: str  # path of the notebook written, relative to the course root
    warnings: list[str] = field(default_factory=list)  # what builds, but deserves a look


Step = Callable[[Any, Context], None]


# -- the steps -----------------------------------------------------------------------------


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


def replace_solutions(notebook: Any, context: Context) -> None:
    """What the student writes is cleared, as nbgrader's ClearSolutions clears it.

    In a code cell each solution region becomes ``# YOUR CODE HERE`` + ``raise
    NotImplementedError()``, in a markdown cell ``YOUR ANSWER HERE``; a solution cell without
    regions (a written answer, a manually graded code cell) becomes that stub whole.
    """
    for cell in notebook.cells:
        if not is_solution(cell):
            continue
        stub = regions.STUB_LINES if cell.cell_type == "code" else regions.TEXT_STUB_LINES
        if any(r.kind == "solution" for r in regions.find_regions(cell.source)):
            cell.source = regions.replace_solutions(cell.source, stub)
        else:
            cell.source = "\n".join(stub)
        cell.pop("attachments", None)  # images pasted into a written answer are answers too


def remove_hidden_tests(notebook: Any, context: Context) -> None:
    """Hidden-test regions go, markers and all."""
    for cell in notebook.cells:
        if is_check(cell):
            cell.source = regions.remove_hidden_tests(cell.source)


SETUP_GUARD = "from hookviz.course import checks  # a fresh kernel gets a note, not a NameError"
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
        at = 1 if lines and lines[0].startswith("#") else 0  # after the cell's first comment
        guard = [SETUP_GUARD, f"checks.setup_ran({', '.join(arguments)})"]
        cell.source = "\n".join(lines[:at] + guard + lines[at:])


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


def clear_outputs(notebook: Any, context: Context) -> None:
    """No outputs, no execution counts, no saved widget state: the student runs it fresh."""
    for cell in notebook.cells:
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
        for key in ("collapsed", "scrolled", "execution", "ExecuteTime"):
            cell.metadata.pop(key, None)
        own = cell.metadata.get("hookviz")
        if isinstance(own, dict) and OUTPUTS_SOURCE_KEY in own:
            own.pop(OUTPUTS_SOURCE_KEY)  # about the solution's source: hidden tests included
            if not own:
                cell.metadata.pop("hookviz")
    notebook.metadata.pop("widgets", None)


def lock_cells(notebook: Any, context: Context) -> None:
    """Check and locked cells cannot be edited or deleted in Jupyter (as nbgrader does)."""
    for cell in notebook.cells:
        meta = nbgrader(cell)
        if is_check(cell) or (meta.get("locked") is True and not is_solution(cell)):
            cell.metadata["editable"] = False
            cell.metadata["deletable"] = False


def add_checksums(notebook: Any, context: Context) -> None:
    """Each graded or locked cell records checksums of its student version, and the schema.

    ``metadata.nbgrader`` gets nbgrader's own (md5, what ``nbgrader validate`` and ``autograde``
    expect), ``metadata.hookviz`` hookviz's sha256.
    """
    for cell in notebook.cells:
        if is_graded_or_locked(cell):
            cell.metadata["nbgrader"]["schema_version"] = SCHEMA_VERSION
            cell.metadata["nbgrader"]["checksum"] = nbgrader_checksum(cell)
            cell.metadata.setdefault("hookviz", {})[CHECKSUM_KEY] = cell_checksum(cell)


def stamp(notebook: Any, context: Context) -> None:
    """Open-in-Colab badge for the target path and the install-when-missing cell."""
    stamp_notebook(notebook, context.config, context.target)


def mark_generated(notebook: Any, context: Context) -> None:
    """Note where the exercise came from, so a build can tell its own files from hand-made ones."""
    notebook.metadata["hookviz"] = {"generated_from": context.source}


EXERCISE_STEPS: tuple[Step, ...] = (
    validate_grading_metadata,
    replace_solutions,
    remove_hidden_tests,
    guard_check_cells,
    clear_outputs,
    lock_cells,
    add_checksums,
    stamp,
    mark_generated,
)
SOLUTION_STEPS: tuple[Step, ...] = (validate_grading_metadata, validate_stored_outputs, stamp)
WALKTHROUGH_STEPS: tuple[Step, ...] = (stamp,)


def run_steps(notebook: Any, steps: tuple[Step, ...], context: Context) -> Any:
    """A transformed copy of ``notebook``; the input is left as it was."""
    result = copy.deepcopy(notebook)
    for step in steps:
        step(result, context)
    return result


def exercise_from_solution(solution: Any, config: CourseConfig, source: str, target: str) -> Any:
    """The student version of one solution notebook."""
    return run_steps(solution, EXERCISE_STEPS, Context(config, source, target))


# -- the whole course ------------------------------------------------------------------------


@dataclass
class BuildReport:
    """What a build wrote (or, with check=True, would write) and why."""

    changed: list[tuple[str, str]] = field(default_factory=list)  # (path, reason)
    removed: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)  # built, but worth a look

    @property
    def stale(self) -> list[str]:
        """Every path that is (or was) out of date."""
        return [path for path, _ in self.changed] + self.removed


def course_notebooks(root: Path, folder: str) -> list[Path]:
    """The notebooks under ``root/folder`` (checkpoints and hidden folders left out), sorted."""
    base = Path(root) / folder
    if not base.is_dir():
        return []
    found = []
    for path in sorted(base.rglob("*.ipynb")):
        parts = path.relative_to(base).parts
        if any(part.startswith(".") for part in parts):
            continue
        found.append(path)
    return found


def build_course(root: Path, *, check: bool = False) -> BuildReport:
    """Stamp notebooks/ and solutions/, and regenerate exercises/; with ``check``, write nothing."""
    root = Path(root).resolve()
    config = load_course_config(root)
    report = BuildReport()
    planned: dict[Path, tuple[Any, str]] = {}
    problems: list[str] = []  # every notebook is checked before any error stops the build

    for folder, steps in ((WALKTHROUGH, WALKTHROUGH_STEPS), (SOLUTIONS, SOLUTION_STEPS)):
        for path in course_notebooks(root, folder):
            relative = relative_posix(path, root)
            context = Context(config, relative, relative)
            try:
                stamped = run_steps(read_notebook(path), steps, context)
            except NotebookError as error:
                problems += str(error).splitlines()  # one line for each cell that breaks a rule
                continue
            report.warnings += context.warnings
            planned[path] = (stamped, "its Colab badge or install cell is missing or out of date")
            if folder == SOLUTIONS:
                target = root / EXERCISES / path.relative_to(root / SOLUTIONS)
                exercise = exercise_from_solution(
                    stamped, config, relative, relative_posix(target, root)
                )
                reason = (
                    "it is missing"
                    if not target.exists()
                    else f"it differs from what {relative} gives"
                )
                planned[target] = (exercise, reason)

    orphans = []
    for path in course_notebooks(root, EXERCISES):
        if path in planned:
            continue
        relative = relative_posix(path, root)
        try:
            generated = bool(read_notebook(path).metadata.get("hookviz", {}).get("generated_from"))
        except NotebookError:
            generated = False
        if not generated:
            problems.append(
                f"{relative} has no solution in {SOLUTIONS}/ and was not made by hookviz build. "
                f"exercises/ is generated: put the assignment in {SOLUTIONS}/ instead, or delete the file."
            )
        orphans.append(path)
    if problems:
        raise NotebookError(
            problems[0]
            if len(problems) == 1
            else f"{len(problems)} problems; nothing was written:\n" + "\n".join(problems)
        )

    for path, (wanted, reason) in planned.items():
        relative = relative_posix(path, root)
        if path.exists():
            try:
                current = read_notebook(path)
            except NotebookError:
                current = None
            if current is not None and same_content(current, wanted):
                report.unchanged.append(relative)
                continue
        report.changed.append((relative, reason))
        if not check:
            atomic_write_text(path, notebook_text(wanted))

    for source in assignment_files(root):  # data and helper modules ship with the exercise
        target = root / EXERCISES / source.relative_to(root / SOLUTIONS)
        relative = relative_posix(target, root)
        if target.is_file() and target.read_bytes() == source.read_bytes():
            report.unchanged.append(relative)
            continue
        report.changed.append((relative, f"{relative_posix(source, root)} changed"))
        if not check:
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, target)

    for path in orphans:
        report.removed.append(relative_posix(path, root))
        if not check:
            path.unlink()
    return report


def assignment_files(root: Path) -> list[Path]:
    """The files beside the notebooks in solutions/ (data, helper modules), notebooks, hidden
    files and caches left out: an assignment is its folder."""
    base = Path(root) / SOLUTIONS
    found = []
    for path in sorted(base.rglob("*")) if base.is_dir() else []:
        parts = path.relative_to(base).parts
        if any(part.startswith(".") or part == "__pycache__" for part in parts):
            continue
        if path.is_file() and path.suffix != ".ipynb":
            found.append(path)
    return found
