"""The grader's parts without kernels: merging, flags, finding submissions, gradebook, sandbox, probe."""

from __future__ import annotations

import copy
import csv
import json
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import nbformat
import pytest

from hookviz.course.authoring.build import exercise_from_solution
from hookviz.course.conventions import HIDDEN_TEST_FAILED, Flag
from hookviz.course.format import regions
from hookviz.course.format.notebooks import NotebookError, grade_id, is_check
from hookviz.grading.core.feedback import feedback_markdown
from hookviz.grading.core.gradebook import OutFolder, safe_name
from hookviz.grading.core.merge import load_assignment, merge
from hookviz.grading.core.results import CheckResult, SubmissionResult
from hookviz.grading.core.submissions import SubmissionError, find_submissions, read_submission
from hookviz.grading.run import probe
from hookviz.grading.run.flags import imported_names, monkeypatches, scan_answers
from hookviz.grading.run.limits import Limits
from hookviz.grading.run.sandbox import Sandbox, SandboxError, detect_sandbox, python_paths
from hookviz.grading.run.scoring import hidden_failure
from tests.tiny_course import CONFIG, TINY


@pytest.fixture(scope="module")
def assignment():
    return load_assignment(TINY)


def exercise():
    return exercise_from_solution(nbformat.read(TINY, as_version=4), CONFIG, "s.ipynb", "e.ipynb")


def cell(notebook, gid):
    return next(c for c in notebook.cells if grade_id(c) == gid)


# -- the instructor's notebook -------------------------------------------------------------------


def test_assignment_lists_checks_answers_and_points(assignment) -> None:
    assert [(c.grade_id, c.points, c.index) for c in assignment.checks] == [
        ("check_double", 2, 2),
        ("check_shout", 1, 4),
        ("check_triple", 2, 6),
    ]
    assert [(a.grade_id, a.functions) for a in assignment.answers] == [
        ("double", ("double",)),
        ("shout", ("shout",)),
        ("triple", ("triple",)),
    ]
    assert assignment.max_points == 5
    assert assignment.checks[0].expected == "✓ double(2) is 4\n[hookviz] check_double: finished\n"


@pytest.mark.parametrize(
    "mutate, message",
    [
        (lambda c: setattr(c, "outputs", []), "must end with its sentinel line"),
        (lambda c: setattr(c, "execution_count", None), "must end with its sentinel line"),
        (
            lambda c: setattr(c, "source", "# NBVAL_IGNORE_OUTPUT\n" + c.source),
            "must have its output compared",
        ),
        (
            lambda c: c.metadata.setdefault("tags", []).append("nbval-skip"),
            "must have its output compared",
        ),
        (lambda c: c.metadata.nbgrader.pop("points"), "a check cell needs points"),
        (  # edited after its output was stored: every student would fail it
            lambda c: setattr(c, "source", c.source.replace("shout works", "shout() works")),
            "was edited after its output was stored",
        ),
        (lambda c: c.metadata.pop("hookviz"), "carries no record of the source it came from"),
    ],
)
def test_an_assignment_that_cannot_be_graded_fairly_is_refused(tmp_path, mutate, message) -> None:
    notebook = nbformat.read(TINY, as_version=4)
    mutate(cell(notebook, "check_shout"))
    nbformat.write(notebook, tmp_path / "tiny.ipynb")
    with pytest.raises(NotebookError, match="check_shout") as caught:
        load_assignment(tmp_path / "tiny.ipynb")
    assert message in str(caught.value)


def test_a_hidden_test_failure_is_told_apart_from_a_visible_one(assignment) -> None:
    check_double = assignment.checks[0]  # its hidden region is line 4: a plain assert
    assert check_double.hidden_lines == {4}

    def outputs(printed: str, ename: str, line: int) -> list[dict]:
        return [
            {"type": "stream", "name": "stdout", "text": printed},
            {"type": "error", "ename": ename, "evalue": "double(-3) should be -6", "line": line},
        ]

    assert hidden_failure(outputs("✓ double(2) is 4\n", "AssertionError", 4), check_double) == (
        "double(-3) should be -6"
    )
    # A visible ✗ came first: it explains the failure. An assert elsewhere is not hidden.
    assert hidden_failure(outputs("✗ double(2) is 5\n", "AssertionError", 4), check_double) == ""
    assert hidden_failure(outputs("", "AssertionError", 1), check_double) == ""
    assert (
        hidden_failure(outputs("", HIDDEN_TEST_FAILED, 9), check_double)
        == "double(-3) should be -6"
    )


# -- merging ---------------------------------------------------------------------------------


def test_only_answer_sources_come_from_the_student(assignment) -> None:
    student = exercise()
    cell(student, "double").source = "def double(x):\n    return x * 2\n"
    cell(student, "check_double").source = "print('forged')"
    cell(student, "check_double").outputs = [
        nbformat.v4.new_output("stream", name="stdout", text="forged\n")
    ]
    cell(student, "setup").source = "FACTOR = 1000"
    merged = merge(assignment, student)
    graded = merged.notebook
    assert cell(graded, "double").source == "def double(x):\n    return x * 2\n"
    assert cell(graded, "check_double").source == cell(assignment.notebook, "check_double").source
    assert "BEGIN HIDDEN TESTS" in cell(graded, "check_double").source
    assert cell(graded, "check_double").outputs == cell(assignment.notebook, "check_double").outputs
    assert cell(graded, "setup").source == 'FACTOR = 3\nprint("ready")'
    assert cell(graded, "setup").execution_count is None  # only check cells are compared
    assert merged.matched_by == {"double": "grade_id", "shout": "grade_id", "triple": "grade_id"}
    assert merged.notes == ["You edited the check cell check_double; the original was used."]


def test_a_check_cell_from_an_older_exercise_is_not_called_edited(assignment) -> None:
    older = nbformat.read(TINY, as_version=4)  # the solution before its check changed
    cell(older, "check_shout").source = cell(older, "check_shout").source.replace(
        "shout works", "ok"
    )
    handed_out = exercise_from_solution(older, CONFIG, "s.ipynb", "e.ipynb")
    merged = merge(assignment, handed_out)
    assert merged.notes == [
        "Your copy of the check cell check_shout is an older version (the assignment changed "
        "after you got it); the current one was used."
    ]
    assert merged.flags == [Flag("check-outdated", "check_shout")]
    cell(handed_out, "check_shout").source += "\nprint('mine')"  # and now edited by the student
    assert merge(assignment, handed_out).flags == [Flag("check-edited", "check_shout")]


def test_answers_without_metadata_match_by_functions_then_position(assignment) -> None:
    student = exercise()
    cell(student, "shout").source = "def helper():\n    pass\n"  # defines no `shout`: position only
    for c in student.cells:
        c.metadata = {}  # lost, as when answers are pasted into a new notebook
    merged = merge(assignment, student)
    assert merged.matched_by == {"double": "functions", "shout": "position", "triple": "functions"}
    assert any("by its position" in note for note in merged.notes)


def test_a_missing_answer_is_graded_as_the_stub(assignment) -> None:
    student = exercise()
    student.cells = [c for c in student.cells if grade_id(c) != "triple"]
    for c in student.cells:
        if c.cell_type == "code" and grade_id(c) != "double":
            c.metadata = {}
            c.source = "x = 1"
    merged = merge(assignment, student)
    assert merged.matched_by["triple"] == "missing"
    assert cell(merged.notebook, "triple").source == regions.replace_solutions(
        cell(assignment.notebook, "triple").source
    )
    assert "No answer for triple was found; it was graded as not done." in merged.notes


def test_duplicated_answer_cells_grade_the_last_one(assignment) -> None:
    student = exercise()
    first = cell(student, "double")
    second = copy.deepcopy(first)
    second.id = "again"
    first.source, second.source = (
        "def double(x):\n    return 0\n",
        "def double(x):\n    return 2 * x\n",
    )
    student.cells.insert(student.cells.index(first) + 1, second)
    merged = merge(assignment, student)
    assert cell(merged.notebook, "double").source.endswith("return 2 * x\n")
    assert any("2 answer cells for double" in note for note in merged.notes)


# -- flags -----------------------------------------------------------------------------------------


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
    for path in sorted((Path(__file__).resolve().parent.parent / "solutions").glob("*.ipynb")):
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


# -- submissions -----------------------------------------------------------------------------------


def test_submissions_are_found_in_both_layouts(tmp_path: Path) -> None:
    (tmp_path / "ann").mkdir()
    (tmp_path / "ann" / "tiny.ipynb").write_text("{}")
    (tmp_path / "bo" / "tiny").mkdir(parents=True)
    (tmp_path / "bo" / "tiny" / "tiny.ipynb").write_text("{}")
    (tmp_path / "cy.ipynb").write_text("{}")
    (tmp_path / "di").mkdir()
    (tmp_path / "di" / "Untitled.ipynb").write_text("{}")
    (tmp_path / "ed").mkdir()
    (tmp_path / "ed" / ".ipynb_checkpoints").mkdir()
    (tmp_path / "ed" / ".ipynb_checkpoints" / "tiny.ipynb").write_text("{}")
    (tmp_path / ".hidden.ipynb").write_text("{}")
    found = {s.student: s for s in find_submissions(tmp_path, "tiny")}
    assert sorted(found) == ["ann", "bo", "cy", "di", "ed"]
    assert found["bo"].path == tmp_path / "bo" / "tiny" / "tiny.ipynb"
    assert found["di"].path.name == "Untitled.ipynb" and "the only notebook" in found["di"].note
    assert found["ed"].path is None and "no tiny.ipynb" in found["ed"].note


def test_a_student_with_a_folder_and_a_file_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "ann").mkdir()
    (tmp_path / "ann.ipynb").write_text("{}")
    with pytest.raises(NotebookError, match="both a folder and"):
        find_submissions(tmp_path, "tiny")


@pytest.mark.parametrize(
    "content, status, words",
    [
        (b"", "empty", "empty"),
        (b"   \n", "empty", "empty"),
        (b"\xff\xfe", "invalid", "not UTF-8"),
        (b"[1, 2]", "invalid", "not a notebook"),
        (b'{"nbformat": 4, "cells": "no"}', "invalid", "notebook"),
        (b"[" * 100_000, "invalid", "not valid JSON"),
    ],
)
def test_unreadable_submissions_say_why(
    tmp_path: Path, content: bytes, status: str, words: str
) -> None:
    path = tmp_path / "x.ipynb"
    path.write_bytes(content)
    with pytest.raises(SubmissionError) as caught:
        read_submission(path)
    assert caught.value.status == status and words in str(caught.value)


# -- gradebook ---------------------------------------------------------------------------------------


def result_for(student: str, assignment, total: float = 5.0) -> SubmissionResult:
    return SubmissionResult(
        student=student,
        assignment=assignment.name,
        assignment_sha256=assignment.sha256,
        submission="",
        submission_sha256="",
        status="ok",
        detail="",
        total=total,
        max_total=assignment.max_points,
        checks=[
            CheckResult(c.grade_id, c.points, points=c.points, outcome="passed")
            for c in assignment.checks
        ],
        flags=["grader (double)"] if student.startswith("=") else [],
    )


def test_gradebook_rows_are_safe_for_spreadsheets_and_names_for_files(
    tmp_path: Path, assignment
) -> None:
    out = OutFolder(tmp_path)
    for name in ("ann", "=HYPERLINK(evil)", "../../etc/passwd"):
        out.save(result_for(name, assignment))
    with out.locked():
        out.rebuild(assignment)
    rows = list(csv.reader((tmp_path / "gradebook.csv").open()))
    assert rows[0] == [
        "student",
        "total",
        "check_double",
        "check_shout",
        "check_triple",
        "status",
        "flags",
    ]
    assert sorted(r[0] for r in rows[1:]) == ["'=HYPERLINK(evil)", "../../etc/passwd", "ann"]
    assert all(p.parent == tmp_path / "results" for p in (tmp_path / "results").iterdir())
    assert safe_name("ann") == "ann" and "/" not in safe_name("../../etc/passwd")


def test_an_out_folder_belongs_to_one_assignment(tmp_path: Path, assignment) -> None:
    (tmp_path / "assignment.json").write_text(json.dumps({"name": "other"}))
    with pytest.raises(NotebookError, match="holds grades for 'other'"):
        OutFolder(tmp_path).check_assignment(assignment)


def test_concurrent_saves_and_rebuilds_lose_nothing(tmp_path: Path, assignment) -> None:
    out = OutFolder(tmp_path)

    def work(prefix: str) -> None:
        for n in range(25):
            out.save(result_for(f"{prefix}{n}", assignment))
            with out.locked():
                out.rebuild(assignment)

    threads = [threading.Thread(target=work, args=(p,)) for p in "ab"]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    rows = list(csv.DictReader((tmp_path / "gradebook.csv").open()))
    assert (
        len(rows) == 50
        and len(json.loads((tmp_path / "gradebook.json").read_text())["students"]) == 50
    )


def test_feedback_fences_survive_backticks_and_long_outputs(assignment) -> None:
    result = result_for("ann", assignment)
    result.checks[0] = CheckResult(
        "check_double",
        2,
        outcome="mismatch",
        expected="ok\n",
        actual="```\n" + "x" * 50_000 + "\nHint: multiply by 2\n",
    )
    text = feedback_markdown(result)
    assert "````text" in text and "characters left out" in text and "- Hint: multiply by 2" in text


# -- sandbox ------------------------------------------------------------------------------------------


def test_bwrap_options_hide_before_they_show(tmp_path: Path) -> None:
    shown = Path(sys.prefix)
    sandbox = Sandbox("bwrap", bwrap="/usr/bin/bwrap", hidden=(shown.parent,), shown=(shown,))
    argv = sandbox.command(["true"], tmp_path, Limits(), 0)
    hide, show = argv.index(str(shown.parent)), argv.index(str(shown))
    assert argv[hide - 1] == "--tmpfs" and argv[show - 1] == "--ro-bind" and hide < show
    assert "--unshare-net" in argv and "--die-with-parent" in argv
    assert argv[argv.index("--bind") + 1] == str(tmp_path)
    spec = json.loads(argv[argv.index("-c", argv.index("--")) + 3])  # -c LAUNCHER PLUGIN_DIR SPEC
    assert spec["limits"]["RLIMIT_AS"] == 4096 * 2**20 and spec["limits"]["RLIMIT_NPROC"] == 256


def test_the_sandbox_shows_site_folders_a_pth_added_and_no_other_entry_of_sys_path(
    tmp_path: Path, monkeypatch
) -> None:
    added = tmp_path / "home" / "course" / ".venv" / "lib" / "site-packages"  # by a .pth file
    checkout = tmp_path / "home" / "course"  # an editable install's entry: the solutions live here
    added.mkdir(parents=True)
    monkeypatch.setattr(sys, "path", [str(tmp_path), *sys.path, str(added), str(checkout)])
    shown = python_paths()
    assert added in shown
    assert checkout not in shown and tmp_path not in shown


def test_the_launcher_applies_limits_before_exec(tmp_path: Path) -> None:
    sandbox = Sandbox("none")
    limits = Limits(memory_mb=1024, file_mb=1, processes=100, submission_timeout=20)
    program = [sys.executable, "-I", "-S", "-c", (
        "import resource\n"
        "print(*(resource.getrlimit(getattr(resource, n))[0] for n in ('RLIMIT_AS', 'RLIMIT_FSIZE', "
        "'RLIMIT_CPU', 'RLIMIT_CORE')))\n"
        "try:\n"
        "    open('big', 'wb').write(bytes(2 * 2**20))\n"
        "except OSError as error:\n"
        "    print(type(error).__name__, error.errno)\n"
        "try:\n"
        "    bytearray(2 * 2**30)\n"
        "except MemoryError:\n"
        "    print('MemoryError')\n"
    )]  # fmt: skip
    done = subprocess.run(
        sandbox.command(program, tmp_path, limits, 0),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.stdout.splitlines() == [f"{2**30} {2**20} 50 0", "OSError 27", "MemoryError"], (
        done.stderr
    )
    assert (tmp_path / "big").stat().st_size == 2**20  # written up to the limit, not past it


def test_an_unknown_sandbox_mode_is_refused() -> None:
    with pytest.raises(Exception, match="auto, bwrap, none or user"):
        detect_sandbox("docker", [])


def test_without_bwrap_auto_warns_and_bwrap_mode_refuses(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # no bwrap on it
    sandbox = detect_sandbox("auto", [])
    assert sandbox.kind == "none" and "bubblewrap (bwrap) is not installed" in sandbox.warning
    with pytest.raises(SandboxError, match="apt-get install bubblewrap"):
        detect_sandbox("bwrap", [])


def test_a_bwrap_that_cannot_make_namespaces_is_an_error_with_a_way_out(
    tmp_path: Path, monkeypatch
) -> None:
    fake = tmp_path / "bwrap"
    fake.write_text(
        "#!/bin/sh\necho 'bwrap: No permissions to creating new namespace' >&2\nexit 1\n"
    )
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(SandboxError) as caught:
        detect_sandbox("auto", [])
    message = str(caught.value)
    assert "cannot create its namespaces" in message and "No permissions" in message
    assert "--sandbox none" in message


# -- the integrity probe, run in this process --------------------------------------------------


def printed_lines(script: str, timeout: float = 120) -> list[str]:
    """What ``script`` printed, run in a fresh Python (the probe's tests plant things there)."""
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=timeout
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def run_probe(code: str, tmp_path: Path) -> list[str]:
    """Run ``code`` as if typed in a notebook cell under tmp_path, then the probe, in a fresh Python."""
    script = (
        "import json, sys\n"
        f"sys.path.insert(0, {str(Path(probe.__file__).parent)!r})\n"
        "import probe\n"
        f"exec(compile({code!r}, {str(tmp_path / 'cell.py')!r}, 'exec'), {{}})\n"
        f"sys.stdout.write(probe.probe({{'workdir': {str(tmp_path)!r}, 'checks_path': None}}) + '\\n')\n"
    )
    lines = printed_lines(script, timeout=60)
    return [
        p
        for p in json.loads(lines[-1])["problems"]
        if "sys.stdout was replaced" not in p and "sys.stderr was replaced" not in p
    ]  # plain Python has no ipykernel streams


@pytest.mark.parametrize(
    "code, words",
    [
        ("", None),
        ("import builtins\nbuiltins.print = lambda *a, **k: None", "builtins.print"),
        (
            "import builtins\nbuiltins.isinstance = len",
            "builtins",
        ),  # breaks the probe itself: said so
        ("import math\nmath.isclose = lambda *a, **k: True", "math.isclose"),
        ("import sys\nsys.settrace(lambda *a: None)", "tracer"),
        (
            "import sys, types\nsys.modules['traceback'] = types.SimpleNamespace()",
            "sys.modules['traceback']",
        ),
    ],
)
def test_probe_finds_code_planted_in_the_interpreter(
    tmp_path: Path, code: str, words: str | None
) -> None:
    problems = run_probe(code, tmp_path)
    if words is None:
        assert problems == []
    else:
        assert any(words in p for p in problems), problems


def test_every_function_of_the_probe_runs_with_the_snapshots_builtins(monkeypatch) -> None:
    """A scan added to probe.py gets the pinned builtins too, whatever it is called: no list of
    the probe's functions to keep, and none left on the kernel's (a student's) builtins."""
    import ast
    import builtins

    added = "\n\ndef _scan_added_later(scan, problems):\n    return len\n"
    source = Path(probe.__file__).read_text(encoding="utf-8") + added
    defined = {node.name for node in ast.parse(source).body if isinstance(node, ast.FunctionDef)}
    assert {"_probe", "_scan_builtins", "_scan_shell", "_verify_pinned"} <= defined
    kernel: dict = {}
    exec(compile(source, probe.__file__, "exec"), kernel)  # as the plugin runs it in the kernel

    def pinned_len(value):  # stands for the snapshot's genuine len
        return 0

    monkeypatch.setattr(
        sys,
        probe.SNAPSHOT_SLOT,
        ((("builtins", builtins, ("len",), (pinned_len,)),), ()),
        raising=False,
    )
    scope = kernel["_genuine_scope"]()
    assert kernel["_scan_added_later"](None, []) is len  # as defined: the kernel's builtins
    assert scope["_scan_added_later"](None, []) is pinned_len
    for name in defined:
        function = scope[name]
        assert function is not kernel[name] and function.__code__ is kernel[name].__code__, name
        assert function.__globals__ is scope and scope["__builtins__"] == {"len": pinned_len}, name


def test_probe_recognises_the_genuine_checks_module_and_a_forged_one(tmp_path: Path) -> None:
    checks = Path(probe.__file__).resolve().parents[2] / "course" / "checks.py"
    script = (
        "import json\nfrom hookviz.course import checks\nfrom hookviz.grading.run import probe\n"
        f"config = {{'workdir': {str(tmp_path)!r}, 'checks_path': {str(checks)!r}}}\n"
        "print(json.loads(probe.probe(config))['problems'])\n"
        # A look-alike compiled under the genuine file name still differs in its code.
        f"exec(compile('def sentinel(grade_id):\\n    return None\\n', {str(checks)!r}, 'exec'), ns := {{}})\n"
        "checks.sentinel = ns['sentinel']\n"
        "print(json.loads(probe.probe(config))['problems'])\n"
    )
    lines = printed_lines(script)
    before, after = (eval(line) for line in lines[-2:])
    assert not any("checks" in p for p in before), before
    assert "hookviz.course.checks.sentinel is not the genuine function" in after


def test_probe_trusts_code_installed_under_tmp_but_not_ipython_cell_files(tmp_path: Path) -> None:
    """A CI checkout may live under /tmp: only the submission's folder and IPython's cell files
    count as the student's code."""
    workdir = tmp_path / "submission"
    workdir.mkdir()
    cells = Path(tempfile.mkdtemp(prefix="ipykernel_"))
    installed = tmp_path / "site"
    installed.mkdir()
    script = (
        "import builtins, json\nfrom hookviz.grading.run import probe\n"
        f"for name, folder in (('from_site', {str(installed)!r}), ('from_cell', {str(cells)!r})):\n"
        "    ns = {}\n"
        "    exec(compile('def planted():\\n    return 1\\n', folder + '/x.py', 'exec'), ns)\n"
        "    setattr(builtins, name, ns['planted'])\n"
        f"print(json.loads(probe.probe({{'workdir': {str(workdir)!r}}}))['problems'])\n"
    )
    lines = printed_lines(script)
    problems = eval(lines[-1])
    assert "builtins.from_cell was replaced by code from the notebook" in problems
    assert not any("from_site" in p for p in problems), problems


def test_probe_sees_planted_callables_whatever_their_type_pretends(tmp_path: Path) -> None:
    """The scan skips values of types that run no file's code, learnt by type: a type that
    claims to equal int, one whose metaclass hides its __call__, and a code object whose file
    name is a str subclass that hashes like a library's, are still caught; plain numbers
    planted beside them are not reported."""
    workdir = tmp_path / "submission"
    workdir.mkdir()
    planted = str(workdir / "x.py")
    script = (
        "import builtins, json, torch\nfrom hookviz.grading.run import probe\n"
        "class Liar(type):\n"
        "    def __eq__(cls, other):\n        return True\n"
        "    def __hash__(cls):\n        return hash(int)\n"
        "ns = {'Liar': Liar}\n"
        f"exec(compile('class Planted(metaclass=Liar):\\n    def __call__(self):\\n"
        f"        return 1\\n', {planted!r}, 'exec'), ns)\n"
        "class Hider(type):\n"
        "    def __getattribute__(cls, name):\n"
        "        return None if name == '__call__' else type.__getattribute__(cls, name)\n"
        "ns['Hider'] = Hider\n"
        f"exec(compile('class Hidden(metaclass=Hider):\\n    def __call__(self):\\n"
        f"        return 1\\n', {planted!r}, 'exec'), ns)\n"
        "class Library(str):\n    def __hash__(self):\n        return hash(torch.__file__)\n"
        "    def __eq__(self, other):\n        return True\n"
        "def sneaky():\n    return 2\n"
        f"sneaky.__code__ = sneaky.__code__.replace(co_filename=Library({planted!r}))\n"
        "builtins.a_number, builtins.planted_call, builtins.sneaky = 5, ns['Planted'](), sneaky\n"
        "builtins.hidden_call = ns['Hidden']()\n"
        f"print(json.loads(probe.probe({{'workdir': {str(workdir)!r}}}))['problems'])\n"
    )
    lines = printed_lines(script)
    problems = eval(lines[-1])
    assert "builtins.planted_call was replaced by code from the notebook" in problems
    assert "builtins.sneaky was replaced by code from the notebook" in problems
    assert "builtins.hidden_call was replaced by code from the notebook" in problems
    assert not any("a_number" in p for p in problems), problems


def test_check_cells_in_the_fixture_end_with_their_sentinel() -> None:
    for c in nbformat.read(TINY, as_version=4).cells:
        if is_check(c):
            assert c.outputs[-1].text.endswith(f"[hookviz] {grade_id(c)}: finished\n")


def test_the_identity_snapshot_pins_what_checks_rely_on_and_names_what_was_rebound(
    tmp_path: Path,
) -> None:
    script = (
        "import json, builtins, torch\nimport hookviz as hv\nfrom torch import nn\n"
        "from hookviz.grading.run import probe\n"
        f"config = {{'workdir': {str(tmp_path)!r}, 'preload': ['hookviz.course.checks']}}\n"
        "taken = json.loads(probe.snapshot(config))\n"
        "labels = {f'{g[0]}.{n}' for g in __import__('sys')._hookviz_integrity[0] for n in g[2]}\n"
        "print(json.dumps(sorted(l for l in labels if l in {'torch.equal', 'builtins.all', "
        "'torch.nn.modules.module.Module.modules', 'hookviz.postorder', "
        "'hookviz.course.checks.Check.equal', 'torch.Tensor.backward'})))\n"
        "before = json.loads(probe.probe(config))\n"
        "import torch._dynamo  # torch wraps torch.manual_seed itself: not a student's patch\n"
        "after_dynamo = json.loads(probe.probe(config))\n"
        "torch.equal, builtins.all = torch.is_same_size, bool\n"
        "nn.Module.modules = nn.Module.children\n"
        "torch.Tensor.tolist = torch.Tensor.clone  # shadows the C method of its base class\n"
        "del hv.postorder\n"
        "patched = json.loads(probe.probe(config))\n"
        "print(json.dumps([taken, before, after_dynamo, patched]))\n"
    )
    lines = printed_lines(script, timeout=180)
    labels, (taken, before, after_dynamo, patched) = (json.loads(line) for line in lines[-2:])
    assert labels == sorted(
        [
            "builtins.all",
            "hookviz.course.checks.Check.equal",
            "hookviz.postorder",
            "torch.Tensor.backward",
            "torch.equal",
            "torch.nn.modules.module.Module.modules",
        ]
    )
    assert taken["count"] > 3000 and before["digest"] == taken["digest"]
    assert not any(
        "rebound" in p or "deleted" in p for p in before["problems"] + after_dynamo["problems"]
    )
    assert {p for p in patched["problems"] if "rebound" in p or "deleted" in p or "added" in p} == {
        "torch.Tensor.tolist was added, over the inherited one the checks rely on",
        "torch.equal was rebound: it is not the function the checks rely on",
        "builtins.all was rebound: it is not the function the checks rely on",
        "torch.nn.modules.module.Module.modules was rebound: it is not the function the checks rely on",
        "hookviz.postorder was deleted",
    }
    assert patched["digest"] == taken["digest"]  # the snapshot itself is untouched


def test_the_grading_limits_have_one_owner() -> None:
    """--timeout, --submission-timeout, --memory-mb: the CLI, GradeOptions and the Gradescope export
    all default to the sandbox's Limits."""
    from hookviz.cli import parser as build_parser
    from hookviz.grading.grade.batch import GradeOptions
    from hookviz.grading.platforms.gradescope_export import ExportOptions

    owner = Limits()
    for argv in (["grade", "x", "--assignment", "y"], ["export", "gradescope", "y"]):
        args = build_parser().parse_args(argv)
        assert (args.timeout, args.submission_timeout, args.memory_mb) == (
            owner.cell_timeout,
            owner.submission_timeout,
            owner.memory_mb,
        )
        assert Limits.from_args(args) == owner
    for options in (GradeOptions(), ExportOptions()):
        assert options.limits == owner
    args = build_parser().parse_args(["grade", "x", "--assignment", "y", "--timeout", "7"])
    assert Limits.from_args(args) == Limits(cell_timeout=7)


def test_a_run_that_ran_no_cell_is_an_error_not_ok(assignment) -> None:
    """pytest could not collect the notebook: it finished, but no cell ran; the row says so."""
    from hookviz.grading.run.sandbox import ChildResult
    from hookviz.grading.run.scoring import score

    child = ChildResult(
        returncode=4,
        timed_out=False,
        seconds=1.0,
        records=[{"event": "done"}],
        output_tail="ERROR: file or directory not found: ...",
    )
    result = score(assignment, child, Limits())
    assert result.status == "error" and "no cell of the notebook ran" in result.detail
    assert result.total == 0 and all(c.outcome == "not-run" for c in result.checks)
    assert any("file or directory not found" in note for note in result.notes)
