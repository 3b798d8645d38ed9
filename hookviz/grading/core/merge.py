"""Building the notebook that is graded: the instructor's copy with only the student's answers in it.

Everything except the source of answer cells comes from the instructor: every check cell
(hidden tests included), every expected output, all metadata. A student's outputs, metadata
and edited, deleted, duplicated or reordered check cells count for nothing; feedback says so.
"""

from __future__ import annotations

import ast
import copy
import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...course.conventions import Flag, ends_with_sentinel, outputs_text, sentinel_line
from ...course.format import regions
from ...course.format.notebooks import (
    STAMPED_FIRST_LINES,
    NotebookError,
    describe_cell,
    grade_id,
    is_answer,
    is_check,
    is_manual,
    nbgrader,
    points,
    read_notebook,
    unchanged_since_release,
)
from ...course.format.steps import (
    STUDENT_CHECK_STEPS,
    Context,
    bare_check,
    guard_check_cells,
    notebook_language,
    remove_hidden_tests,
    run_steps,
    validate_grading_metadata,
    validate_stored_outputs,
)
from ...course.wording import words
from .bare_checks import run_to_end_source

_NBVAL_OFF = re.compile(
    r"^\s*#\s*(NBVAL_SKIP|NBVAL_IGNORE_OUTPUT|PYTEST_VALIDATE_IGNORE_OUTPUT)\s*$", re.M
)
_NBVAL_OFF_TAGS = {"nbval-skip", "nbval-ignore-output", "raises-exception"}


@dataclass(frozen=True)
class CheckCell:
    """One graded check: where it is, what it is worth, what it must print."""

    grade_id: str
    index: int  # among code cells, as nbval numbers them
    points: float
    expected: str
    exercise_source: str  # what students see (hidden tests removed)
    hidden_lines: frozenset[int] = frozenset()  # 1-based lines of the source inside hidden regions
    ran_to_end: bool = False  # a bare check: scored by reaching the sentinel the grader appends
    released_sources: frozenset[str] = frozenset()  # as nbgrader or `hookviz build` hand it out


@dataclass(frozen=True)
class AnswerCell:
    """One answer the student writes."""

    grade_id: str
    index: int
    position: int  # among all cells
    functions: tuple[str, ...]
    stub: str


@dataclass(frozen=True)
class ManualQuestion:
    """A question graded by hand: a written answer, a manually graded code cell, or a task."""

    grade_id: str
    position: int  # among all cells
    kind: str  # "markdown" or "code" for an answer cell; "task" for a task cell
    points: float
    prompt: str  # the markdown just above it (a task cell is its own prompt)
    model_answer: str  # the instructor's answer ("" for a task)


@dataclass
class Assignment:
    """The instructor's notebook, validated for grading."""

    path: Path
    name: str
    notebook: Any
    sha256: str  # the notebook's, and the files' beside it when there are any
    checks: list[CheckCell]
    answers: list[AnswerCell]
    manual: list[ManualQuestion] = field(default_factory=list)
    files: list[Path] = field(default_factory=list)  # beside the notebook: see assignment_files
    notebook_sha256: str = ""  # the notebook file's alone

    @property
    def auto_points(self) -> float:
        """What the checks are worth (the grader scores these by itself)."""
        return sum(c.points for c in self.checks)

    @property
    def max_points(self) -> float:
        """The most a submission can score: the checks and the questions graded by hand."""
        return self.auto_points + sum(q.points for q in self.manual)


# A folder beside the notebook holding one of these is no file of the assignment: another
# assignment (a notebook), or an out folder of `hookviz grade`.
_NOT_ASSIGNMENT_FILES = ("*.ipynb", "assignment.json", "assignment-folder.json")


def assignment_files(notebook: Path) -> list[Path]:
    """The files shipped beside ``notebook`` (data, helper modules), copied into every grading
    folder; hidden files, notebooks, caches, other assignments' folders (a subfolder holding a
    notebook) and out folders of `hookviz grade` are left out."""
    folder = Path(notebook).parent

    def foreign(directory: Path) -> bool:
        return any(next(directory.glob(pattern), None) for pattern in _NOT_ASSIGNMENT_FILES)

    found = []
    for path in sorted(folder.rglob("*")):
        parts = path.relative_to(folder).parts
        if any(part.startswith(".") or part == "__pycache__" for part in parts):
            continue
        if any(foreign(folder.joinpath(*parts[:i])) for i in range(1, len(parts))):
            continue
        if path.is_file() and path.suffix != ".ipynb":
            found.append(path)
    return found


def defined_functions(source: str) -> tuple[str, ...]:
    """Names of the functions and classes a cell defines at its top level."""
    try:
        tree = ast.parse(regions.python_source(regions.strip_solution_markers(source)))
    except SyntaxError:
        return tuple(re.findall(r"^(?:async\s+)?(?:def|class)\s+(\w+)", source, re.M))
    return tuple(
        node.name
        for node in tree.body
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
    )


def load_assignment(path: Path) -> Assignment:
    """Read and validate the instructor's notebook; NotebookError says what to fix."""
    path = Path(path)
    if not path.is_file():
        raise NotebookError(
            f"the assignment {path} does not exist; pass --assignment solutions/NAME.ipynb."
        )
    notebook = read_notebook(path)
    context = Context(config=None, source=str(path), target=str(path))
    validate_grading_metadata(notebook, context)
    released = _released_check_sources(notebook, context)
    checks, answers = [], []
    manual = manual_questions(notebook)
    code_index = -1
    for position, cell in enumerate(notebook.cells):
        if cell.cell_type != "code":
            continue
        code_index += 1
        where = describe_cell(path, notebook.cells, position)
        gid = grade_id(cell)
        if is_check(cell):
            bare = bare_check(cell.source)
            expected = sentinel_line(gid) + "\n" if bare else outputs_text(cell.outputs)
            if not bare and (cell.execution_count is None or not ends_with_sentinel(expected, gid)):
                raise NotebookError(
                    f"{where}: a check cell's stored output must end with its sentinel line "
                    f"{sentinel_line(gid)!r}. "
                    "End the cell with checks.sentinel(grade_id), run the notebook and save it."
                )
            tags = set(cell.metadata.get("tags", []))
            if _NBVAL_OFF.search(cell.source) or tags & _NBVAL_OFF_TAGS:
                raise NotebookError(
                    f"{where}: a check cell must have its output compared; remove its NBVAL_SKIP / "
                    "NBVAL_IGNORE_OUTPUT / raises-exception marker."
                )
            checks.append(
                CheckCell(
                    gid,
                    code_index,
                    points(cell),
                    expected,
                    regions.remove_hidden_tests(cell.source),
                    frozenset(
                        line
                        for region in regions.find_regions(cell.source)
                        if region.kind == "hidden"
                        for line in range(region.begin + 2, region.end + 1)
                    ),
                    ran_to_end=bare,
                    released_sources=released.get(gid, frozenset()),
                )
            )
        elif is_answer(cell):
            answers.append(
                AnswerCell(
                    gid,
                    code_index,
                    position,
                    defined_functions(cell.source),
                    regions.replace_solutions(cell.source),
                )
            )
    if not checks and not manual:
        raise NotebookError(
            f"{path}: no check cells (metadata.nbgrader.grade true) and no question graded by "
            "hand; nothing to grade."
        )
    validate_stored_outputs(notebook, context)
    assignment = Assignment(
        path=path,
        name=path.stem,
        notebook=notebook,
        sha256=hashlib.sha256(path.read_bytes()).hexdigest(),
        checks=checks,
        answers=answers,
        manual=manual,
        files=assignment_files(path),
    )
    assignment.notebook_sha256 = assignment.sha256
    if assignment.files:  # a changed data file changes the assignment: grade again
        digest = hashlib.sha256(assignment.sha256.encode())
        for file in assignment.files:
            digest.update(file.relative_to(path.parent).as_posix().encode() + b"\0")
            digest.update(hashlib.sha256(file.read_bytes()).digest())
        assignment.sha256 = digest.hexdigest()
    return assignment


def _released_check_sources(notebook: Any, context: Context) -> dict[str, frozenset[str]]:
    """Each check cell's source as a student got it, normalised: from `nbgrader
    generate_assignment` (hidden tests removed), from `hookviz build` (the same steps it runs:
    guarded, then packed into a specification and one ``checks.run_check`` line), or from a
    build before check cells were packed (guarded only: the same check, shown in full)."""
    guarded = run_steps(notebook, (remove_hidden_tests, guard_check_cells), context)
    built = run_steps(notebook, STUDENT_CHECK_STEPS, context)
    return {
        grade_id(ours): frozenset(
            _normalized(source)
            for source in (regions.remove_hidden_tests(ours.source), old.source, new.source)
        )
        for ours, old, new in zip(notebook.cells, guarded.cells, built.cells, strict=True)
        if is_check(ours)
    }


def manual_questions(notebook: Any) -> list[ManualQuestion]:
    """The questions of ``notebook`` graded by hand, in order."""
    found = []
    for position, cell in enumerate(notebook.cells):
        if not is_manual(cell):
            continue
        task = nbgrader(cell).get("task") is True
        prompt = cell.source if task else ""
        if not task:
            for before in reversed(notebook.cells[:position]):
                if before.cell_type == "markdown" and not is_manual(before):
                    prompt = before.source
                    break
                if before.cell_type == "code" or is_manual(before):
                    break
        found.append(
            ManualQuestion(
                grade_id=grade_id(cell),
                position=position,
                kind="task" if task else cell.cell_type,
                points=points(cell),
                prompt=prompt,
                model_answer="" if task else cell.source,
            )
        )
    return found


@dataclass
class Merged:
    """The notebook to grade, and what the merge had to decide on the student's behalf."""

    notebook: Any
    answers: dict[str, str]  # grade_id -> the student's source that went in
    matched_by: dict[str, str]  # grade_id -> "grade_id" | "functions" | "position" | "missing"
    notes: list[str] = field(default_factory=list)
    flags: list[Flag] = field(default_factory=list)  # the notes, short, for the flags column
    renamed: list[Renamed] = field(default_factory=list)
    manual: dict[str, str] = field(default_factory=dict)  # grade_id -> the answer, as markdown

    @property
    def present(self) -> dict[str, str]:
        """The answers the student's notebook holds: ``answers`` without those found missing."""
        return {
            gid: src for gid, src in self.answers.items() if self.matched_by.get(gid) != "missing"
        }


@dataclass(frozen=True)
class Renamed:
    """An answer cell that defines other functions than the ones its checks look for."""

    grade_id: str
    missing: tuple[str, ...]  # the names the checks look for, not defined in the cell
    defined: tuple[str, ...]  # what the cell defines instead

    def explain(self, lang: str = "en") -> str:
        """Which names the checks look for, and which the cell defines instead."""
        return words("merge.renamed_detail", lang, **self._values())

    def note(self, lang: str = "en") -> str:
        """The note for the student: graded as written, and the names to use."""
        return words("merge.renamed", lang, **self._values())

    def _values(self) -> dict[str, str]:
        return {
            "grade_id": self.grade_id,
            "missing": _names(self.missing),
            "defined": _names(self.defined),
        }


def _names(names: tuple[str, ...]) -> str:
    return ", ".join(names)


def _normalized(source: str) -> str:
    return "\n".join(line.rstrip() for line in source.strip().splitlines())


@dataclass
class AnswerMatch:
    """Which of the student's code cells answers each question, how it was found, and what the
    grader had to say about it (notes for the student, flags for the gradebook)."""

    code_cells: list[Any]
    chosen: dict[str, Any] = field(default_factory=dict)  # grade_id -> the student's cell
    matched_by: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    flags: list[Flag] = field(default_factory=list)
    used: set[int] = field(default_factory=set)  # id() of the cells already taken
    lang: str = "en"  # the language of the notes: the instructor's notebook's

    def take(self, gid: str, cell: Any, how: str) -> None:
        """``cell`` answers ``gid``, found by ``how``."""
        self.chosen[gid] = cell
        self.used.add(id(cell))
        self.matched_by[gid] = how


def merge(assignment: Assignment, student: Any) -> Merged:
    """The instructor's notebook with the student's answer sources put in.

    Each answer is found by its grade_id, else by the functions it defines, else by its
    position among the cells the instructor did not write; then the merge notes renamed
    functions and edited checks, and builds the notebook to grade.
    """
    match = AnswerMatch(
        [c for c in student.cells if c.get("cell_type") == "code"],
        lang=notebook_language(assignment.notebook),
    )
    by_id: dict[str, list[Any]] = {}
    for cell in match.code_cells:
        if grade_id(cell):
            by_id.setdefault(grade_id(cell), []).append(cell)
    _match_by_grade_id(assignment, by_id, match)
    instructor_sources = _instructor_sources(assignment)
    free = _free_cells(assignment, instructor_sources, match)
    _match_by_functions(assignment, free, match)
    _match_by_position(assignment, instructor_sources, free, match)
    renamed = _renamed(assignment, match.chosen)
    for found in renamed:
        match.flags.append(
            Flag(
                "answer-renamed",
                f"{found.grade_id}: defines {_names(found.defined)}, not {_names(found.missing)}",
            )
        )
        match.notes.append(found.note(match.lang))
    _note_check_changes(assignment, match.code_cells, by_id, match.notes, match.flags, match.lang)
    manual, manual_cells = manual_answers(assignment, student)
    notebook, sources = _notebook_to_grade(assignment, match.chosen, manual_cells)
    return Merged(notebook, sources, match.matched_by, match.notes, match.flags, renamed, manual)


def _match_by_grade_id(
    assignment: Assignment, by_id: dict[str, list[Any]], match: AnswerMatch
) -> None:
    """Answers whose cell kept its grade_id (the last, when there are several)."""
    for answer in assignment.answers:
        candidates = [
            c for c in by_id.get(answer.grade_id, []) if nbgrader(c).get("solution") is True
        ]
        if candidates:
            if len(candidates) > 1:
                match.notes.append(
                    words(
                        "merge.answer_duplicated",
                        match.lang,
                        count=len(candidates),
                        grade_id=answer.grade_id,
                    )
                )
                match.flags.append(Flag("answer-duplicated", answer.grade_id))
            match.take(answer.grade_id, candidates[-1], "grade_id")


def _instructor_sources(assignment: Assignment) -> set[str]:
    """Cells the instructor wrote (checks, setup, the install cell) are never a student's
    answer, even when their metadata was lost: recognise them by their source too."""
    return {
        _normalized(c.source)
        for c in assignment.notebook.cells
        if c.cell_type == "code" and not is_answer(c)
    } | {_normalized(c.exercise_source) for c in assignment.checks}


def _free_cells(
    assignment: Assignment, instructor_sources: set[str], match: AnswerMatch
) -> Callable[[Any], bool]:
    """Whether a student's cell may still be taken as an answer."""
    known_ids = {grade_id(c) for c in assignment.notebook.cells if grade_id(c)}
    answer_ids = {a.grade_id for a in assignment.answers}

    def free(cell: Any) -> bool:
        gid = grade_id(cell)
        if id(cell) in match.used or _normalized(cell.get("source", "")) in instructor_sources:
            return False
        return gid is None or gid not in known_ids or gid in answer_ids

    return free


def _match_by_functions(
    assignment: Assignment, free: Callable[[Any], bool], match: AnswerMatch
) -> None:
    """Answers whose cell lost its metadata: the last free cell that defines their functions."""
    for answer in assignment.answers:
        if answer.grade_id in match.chosen or not answer.functions:
            continue
        same = [
            c
            for c in match.code_cells
            if free(c) and set(answer.functions) <= set(defined_functions(c.source))
        ]
        if same:
            match.take(answer.grade_id, same[-1], "functions")
            match.flags.append(Flag("answer-found-by-functions", answer.grade_id))
            match.notes.append(
                words(
                    "merge.found_by_functions",
                    match.lang,
                    grade_id=answer.grade_id,
                    functions=", ".join(answer.functions),
                )
            )


def _match_by_position(
    assignment: Assignment,
    instructor_sources: set[str],
    free: Callable[[Any], bool],
    match: AnswerMatch,
) -> None:
    """The k-th answer is the k-th of the student's cells the instructor did not write; an
    answer found by none of the ways is missing."""
    theirs = [
        c
        for c in match.code_cells
        if _normalized(c.get("source", "")) not in instructor_sources
        and not c.get("source", "").startswith(STAMPED_FIRST_LINES)
    ]
    for k, answer in enumerate(assignment.answers):
        if answer.grade_id in match.chosen:
            continue
        if k < len(theirs) and free(theirs[k]):
            match.take(answer.grade_id, theirs[k], "position")
            match.flags.append(Flag("answer-found-by-position", answer.grade_id))
            match.notes.append(
                words(
                    "merge.found_by_position",
                    match.lang,
                    grade_id=answer.grade_id,
                    number=match.code_cells.index(theirs[k]) + 1,
                )
            )
        else:
            match.matched_by[answer.grade_id] = "missing"
            match.flags.append(Flag("answer-missing", answer.grade_id))
            match.notes.append(words("merge.answer_missing", match.lang, grade_id=answer.grade_id))


def _notebook_to_grade(
    assignment: Assignment, chosen: dict[str, Any], manual_cells: dict[str, str]
) -> tuple[Any, dict[str, str]]:
    """A copy of the instructor's notebook with the answers in, and the answers' sources."""
    notebook = copy.deepcopy(assignment.notebook)
    check_ids = {c.grade_id for c in assignment.checks}
    answer_ids = {a.grade_id for a in assignment.answers}
    sources: dict[str, str] = {}
    for cell in notebook.cells:
        if cell.cell_type != "code":
            continue
        gid = grade_id(cell)
        if gid in check_ids:
            check = next(c for c in assignment.checks if c.grade_id == gid)
            if check.ran_to_end:  # hookviz owns the check cells: the sentinel is its line
                cell.source = run_to_end_source(cell.source, gid)
                cell.outputs = []
                cell.execution_count = None
            continue  # compared with its stored output (a bare one: scored by its sentinel)
        if gid in manual_cells:  # graded by hand, but it runs, as nbgrader runs it
            cell.source = manual_cells[gid]
        if gid in answer_ids:
            stub = next(a.stub for a in assignment.answers if a.grade_id == gid)
            cell.source = chosen[gid].get("source", "") if gid in chosen else stub
            sources[gid] = cell.source
        # Only check cells are compared: other outputs earn nothing, so they cannot cost anything.
        cell.outputs = []
        cell.execution_count = None
    return notebook, sources


NO_ANSWER = "(no answer)"
_STUBS = {"\n".join(regions.STUB_LINES), "\n".join(regions.TEXT_STUB_LINES)}


def manual_answers(assignment: Assignment, student: Any) -> tuple[dict[str, str], dict[str, str]]:
    """Each question graded by hand, as the grader reads it (markdown: code in fences), and the
    student's source of each manually graded code cell (what runs in its place).

    An answer cell is found by its grade_id (the last copy when duplicated); a task's answer is
    the cells the student wrote below the task, up to the next cell the instructor wrote.
    """
    instructor = {_normalized(c.source) for c in assignment.notebook.cells}
    known = {grade_id(c) for c in assignment.notebook.cells if grade_id(c)}
    cells = list(student.cells)
    text: dict[str, str] = {}
    code: dict[str, str] = {}
    for question in assignment.manual:
        positions = [i for i, c in enumerate(cells) if grade_id(c) == question.grade_id]
        if not positions:
            text[question.grade_id] = NO_ANSWER
            continue
        at = positions[-1]
        if question.kind != "task":
            cell = cells[at]
            untouched = _normalized(cell.get("source", "")) in _STUBS
            text[question.grade_id] = NO_ANSWER if untouched else _as_markdown([cell]) or NO_ANSWER
            if question.kind == "code" and cell.get("cell_type") == "code":
                code[question.grade_id] = cell.get("source", "")
            continue
        written = []
        for cell in cells[at + 1 :]:
            if grade_id(cell) in known or _normalized(cell.get("source", "")) in instructor:
                break
            written.append(cell)
        text[question.grade_id] = _as_markdown(written) or NO_ANSWER
    return text, code


def _as_markdown(cells: list) -> str:
    """Cells as one markdown text: markdown as written, code in a fence."""
    parts = []
    for cell in cells:
        source = cell.get("source", "").strip("\n")
        if not source.strip():
            continue
        if cell.get("cell_type") == "code":
            fence = "```"
            while fence in source:
                fence += "`"
            parts.append(f"{fence}python\n{source}\n{fence}")
        else:
            parts.append(source)
    return "\n\n".join(parts)


def _renamed(assignment: Assignment, chosen: dict[str, Any]) -> list[Renamed]:
    """Answer cells that lack a function the solution defines, but define others."""
    found = []
    for answer in assignment.answers:
        if answer.grade_id not in chosen:
            continue
        defined = defined_functions(chosen[answer.grade_id].get("source", ""))
        missing = tuple(name for name in answer.functions if name not in defined)
        others = tuple(name for name in defined if name not in answer.functions)
        if missing and others:
            found.append(Renamed(answer.grade_id, missing, others))
    return found


def _note_check_changes(
    assignment: Assignment,
    code_cells: list,
    by_id: dict,
    notes: list[str],
    flags: list[Flag],
    lang: str,
) -> None:
    """Tell the student which check cells they changed (the originals were used regardless)."""
    order = []
    for check in assignment.checks:
        copies = by_id.get(check.grade_id, [])
        if not copies:
            notes.append(words("merge.check_missing", lang, grade_id=check.grade_id))
            flags.append(Flag("check-missing", check.grade_id))
            continue
        if len(copies) > 1:
            notes.append(
                words("merge.check_duplicated", lang, grade_id=check.grade_id, count=len(copies))
            )
            flags.append(Flag("check-duplicated", check.grade_id))
        theirs = copies[0]
        handed_out = check.released_sources or {_normalized(check.exercise_source)}
        if _normalized(theirs.get("source", "")) not in handed_out:
            if unchanged_since_release(theirs):
                # Unchanged since it was handed out: the assignment changed after that.
                notes.append(words("merge.check_outdated", lang, grade_id=check.grade_id))
                flags.append(Flag("check-outdated", check.grade_id))
            else:
                notes.append(words("merge.check_edited", lang, grade_id=check.grade_id))
                flags.append(Flag("check-edited", check.grade_id))
        claimed = nbgrader(theirs).get("points")
        if claimed is not None and claimed != check.points:
            notes.append(
                words(
                    "merge.points_changed",
                    lang,
                    grade_id=check.grade_id,
                    claimed=repr(claimed),
                    points=f"{check.points:g}",
                )
            )
            flags.append(Flag("points-changed", check.grade_id))
        order.append(next(i for i, cell in enumerate(code_cells) if cell is theirs))
    if order != sorted(order):
        notes.append(words("merge.checks_reordered", lang))
        flags.append(Flag("checks-reordered"))
