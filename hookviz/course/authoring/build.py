"""`hookviz build`: stamp every notebook, and generate exercises/ from solutions/.

Each transform is one small named step, as in nbgrader's preprocessors. An exercise is::

    validate_grading_metadata -> replace_solutions -> remove_hidden_tests -> clear_outputs
    -> lock_cells -> add_checksums -> stamp (badge pointing at the exercise)

A solution is checked first (``validate_grading_metadata``, ``validate_stored_outputs``): a
check cell without its sentinel, or whose stored output is stale, stops the build.
``build_course(root, check=True)`` writes nothing and lists what is out of date.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..format import regions
from ..format.notebooks import (
    CHECKSUM_KEY,
    OUTPUTS_SOURCE_KEY,
    SCHEMA_VERSION,
    NotebookError,
    atomic_write_text,
    cell_checksum,
    is_check,
    is_graded_or_locked,
    is_solution,
    nbgrader,
    nbgrader_checksum,
    notebook_text,
    read_notebook,
    same_content,
)
from ..format.steps import (
    STUDENT_CHECK_STEPS,
    Context,
    Step,
    run_steps,
    specify_in,
    validate_grading_metadata,
    validate_stored_outputs,
)
from .stamp import CourseConfig, load_course_config, relative_posix, stamp_notebook

SOLUTIONS, EXERCISES, WALKTHROUGH = "solutions", "exercises", "notebooks"


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
    *STUDENT_CHECK_STEPS,
    clear_outputs,
    lock_cells,
    add_checksums,
    stamp,
    mark_generated,
)
SOLUTION_STEPS: tuple[Step, ...] = (validate_grading_metadata, validate_stored_outputs, stamp)
WALKTHROUGH_STEPS: tuple[Step, ...] = (stamp,)


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
    untranslated: list[str] = field(default_factory=list)  # a language's units not up to date

    @property
    def stale(self) -> list[str]:
        """Every path that is (or was) out of date, and each language not up to date."""
        return [path for path, _ in self.changed] + self.removed + self.untranslated


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
            planned[path] = (
                stamped,
                "a cell it stamps (Colab badge, install, content) is missing or out of date",
            )
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

    for lang in config.languages:
        orphans += _plan_language(root, config, lang, planned, report)

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

    folders = [EXERCISES] + [
        f"{lang}/{f}" for lang in config.languages for f in (SOLUTIONS, EXERCISES)
    ]
    for source in assignment_files(root):  # data and helper modules ship with the exercise
        for folder in folders:
            target = root / folder / source.relative_to(root / SOLUTIONS)
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


def _plan_language(root: Path, config: CourseConfig, lang: str, planned: dict, report) -> list:
    """Add the ``lang`` version of every English notebook planned to ``planned``; return the
    translated notebooks whose English is gone, and note what is not translated yet."""
    from ..i18n.status import course_status
    from .translate import translated_notebook, translated_orphans

    exercises = []
    for path, (wanted, _) in list(planned.items()):
        target, notebook = translated_notebook(root, config, path, wanted, lang)
        if relative_posix(path, root).startswith(f"{EXERCISES}/"):
            exercises.append((path, notebook))
        planned[target] = (
            notebook,
            f"it differs from what {relative_posix(path, root)} and translations/{lang}/ give",
        )
    for path, notebook in exercises:
        # a check cell lists the claims the translated solution prints, as in English
        rest = relative_posix(path, root).partition("/")[2]
        solution = planned.get(Path(root) / lang / SOLUTIONS / rest)
        if solution is not None:
            specify_in(notebook, solution[0], lang)
        add_checksums(notebook, None)  # a translated locked cell has a checksum of its own
    states: dict[str, int] = {}
    for unit in course_status(root, lang):
        if unit.pending:  # prose in code left for later ([i18n] later) is listed, not stale
            states[unit.state] = states.get(unit.state, 0) + 1
    if states:
        counts = ", ".join(f"{n} {state}" for state, n in sorted(states.items()))
        report.untranslated.append(
            f"translations/{lang}: {counts} (`hookviz i18n status --lang {lang}` lists them)"
        )
    return translated_orphans(root, lang, set(planned))


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
