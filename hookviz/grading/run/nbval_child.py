"""The sandboxed run of one merged notebook: its work folder, then `pytest --nbval` in the sandbox.

Writes the notebook, the files beside the instructor's, and the plugin's settings into a fresh
work folder, and starts ``python -I -c PYTEST_BOOT PLUGIN_DIR ...`` there through the sandbox
with a scrubbed environment; returns what the child recorded. Scoring is scoring.py's.
"""

from __future__ import annotations

import ast
import hashlib
import json
import os
import secrets
import shutil
import stat
import sys
from dataclasses import dataclass
from pathlib import Path

import hookviz

from ...course.content import COURSE_ENV, NO_COURSE
from ...course.format import regions
from ...course.format.notebooks import is_answer, notebook_text
from ..core.merge import Assignment
from . import locked_names, probe
from .limits import Limits
from .plugin import PYTEST_BOOT, boot_command
from .sandbox import ChildResult, ChildRunner, ChildSpec


@dataclass(frozen=True)
class GradeSettings:
    """Per-run settings shared by every submission."""

    limits: Limits
    output_limit: int = 100_000


def run_notebook(
    notebook,
    assignment: Assignment,
    sandbox: ChildRunner,
    settings: GradeSettings,
    slot: int,
    workdir: Path,
) -> ChildResult:
    """Run ``notebook`` with pytest --nbval in ``workdir`` through ``sandbox``; the child's records."""
    for sub in (
        "home",
        "tmp",
        "jupyter/config",
        "jupyter/data",
        "jupyter/runtime",
        "ipython",
        "mpl",
    ):
        (workdir / sub).mkdir(parents=True, exist_ok=True)
    workdir.chmod(0o700)
    notebook_path = workdir / f"{assignment.name}.ipynb"
    notebook_path.write_text(notebook_text(notebook), encoding="utf-8")
    copy_assignment_files(assignment, workdir)
    settings_path = workdir / "hookviz-settings.json"
    checks_path = Path(hookviz.__file__).resolve().parent / "course" / "checks.py"
    settings_path.write_text(
        json.dumps(
            {
                "notebook": str(notebook_path),
                "output_limit": settings.output_limit,
                "probe_source": Path(probe.__file__).read_text(encoding="utf-8"),
                "locked_names_source": Path(locked_names.__file__).read_text(encoding="utf-8"),
                "probe_config": {
                    "workdir": str(workdir),
                    "checks_path": str(checks_path) if checks_path.is_file() else None,
                    "checks_sha256": _sha256(checks_path) if checks_path.is_file() else None,
                    "preload": instructor_imports(assignment),
                },
                # a probe is as slow as a cell on a loaded machine: a shorter limit
                # flagged honest submissions as tampered
                "probe_timeout": settings.limits.cell_timeout,
                "snapshot_timeout": settings.limits.cell_timeout,
            }
        ),
        encoding="utf-8",
    )
    sandbox.prepare_workdir(workdir, slot)
    token = secrets.token_hex(8)
    env = {
        "PATH": os.pathsep.join(
            [str(Path(sys.executable).parent), "/usr/local/bin", "/usr/bin", "/bin"]
        ),
        "HOME": str(workdir / "home"),
        "TMPDIR": str(workdir / "tmp"),
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "JUPYTER_CONFIG_DIR": str(workdir / "jupyter/config"),
        "JUPYTER_DATA_DIR": str(workdir / "jupyter/data"),
        "JUPYTER_RUNTIME_DIR": str(workdir / "jupyter/runtime"),
        "JUPYTER_PLATFORM_DIRS": "1",
        "IPYTHONDIR": str(workdir / "ipython"),
        "MPLCONFIGDIR": str(workdir / "mpl"),
        "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
        "PYDEVD_DISABLE_FILE_VALIDATION": "1",
        "OMP_NUM_THREADS": "1",  # one thread per kernel: submissions run side by side
        "MKL_NUM_THREADS": "1",
        "HOOKVIZ_GRADE_TOKEN": token,
        COURSE_ENV: NO_COURSE,  # hints and predictions from the instructor's notebook alone
    }
    if os.environ.get("VIRTUAL_ENV"):
        env["VIRTUAL_ENV"] = os.environ["VIRTUAL_ENV"]
    program = [
        *boot_command(PYTEST_BOOT),
        str(notebook_path),
        "-p", "hookviz_grading_plugin",
        "-p", "nbval.plugin",
        "--nbval",
        "--nbval-current-env",
        f"--nbval-cell-timeout={settings.limits.cell_timeout:g}",
        "--noconftest",
        "-p", "no:cacheprovider",
        "-c", os.devnull,
        f"--rootdir={workdir}",
        "-q", "--color=no",
        f"--hookviz-config={settings_path}",
    ]  # fmt: skip
    log_path = workdir.parent / f"{workdir.name}.log"  # out of the child's sight
    return sandbox.run(program, ChildSpec(workdir, env, settings.limits, slot, log_path))


def copy_assignment_files(assignment: Assignment, workdir: Path) -> None:
    """The files beside the instructor's notebook (data, helper modules), where the notebook
    finds them: the kernel runs in ``workdir``, as it ran beside the notebook."""
    folder = assignment.path.parent
    for path in assignment.files:
        target = workdir / path.relative_to(folder)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)


def instructor_imports(assignment: Assignment) -> list[str]:
    """Modules the instructor's own code cells import: pinned before the first student cell.

    ``from a.b import c`` gives ``a.b`` and ``a.b.c`` (c may be a module); names that are not
    modules are skipped in the kernel.
    """
    found: dict[str, None] = {}
    for cell in assignment.notebook.cells:
        if cell.cell_type != "code" or is_answer(cell):
            continue
        try:
            tree = ast.parse(regions.python_source(regions.remove_hidden_tests(cell.source)))
        except (SyntaxError, ValueError, RecursionError, regions.RegionError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                found.update(dict.fromkeys(alias.name for alias in node.names))
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                found[node.module] = None
                found.update(
                    dict.fromkeys(f"{node.module}.{a.name}" for a in node.names if a.name != "*")
                )
    return list(found)


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def remove_tree(path: Path) -> None:
    """Delete a work folder even when the student's code made parts of it read-only."""

    def unlock(function, target, _info) -> None:
        try:
            os.chmod(Path(target).parent, stat.S_IRWXU)
            os.chmod(target, stat.S_IRWXU)
            function(target)
        except OSError:
            pass

    if path.exists():
        shutil.rmtree(path, onerror=unlock)
    log = path.parent / f"{path.name}.log"
    log.unlink(missing_ok=True)
