"""`hookviz export gradescope`: the autograder zip that Gradescope builds and runs.

The zip holds, at its root, what Gradescope's autograder specification asks for:

- ``setup.sh``: run once when Gradescope builds the image; a Python virtual environment with the
  CPU build of torch (through the course's constraints file, as ``make`` installs it) and
  hookviz, shipped in the zip as a wheel of the very install that exported it;
- ``run_autograder``: run for every submission; it runs gradescope_autograder.py, which grades
  the notebook in ``/autograder/submission/`` and writes ``results/results.json``;
- the instructor's notebook, the torch constraints and the export's settings.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import os
import re
import stat
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

import hookviz

from ... import __version__
from ...course.format.notebooks import NotebookError
from ..core.gradebook import MANUAL_GRADES
from ..core.merge import Assignment, load_assignment
from ..run.limits import Limits
from ..run.nbval_child import GradeSettings
from ..run.sandbox import AUTOGRADER_MODES, SandboxError, detect_sandbox
from . import gradescope_autograder as autograder

TORCH_CONSTRAINTS = "torch-cpu.txt"
VENV = "hookviz-venv"
GRADE_EXTRA = "grade"  # pyproject's extra with what grading needs beyond the package (nbval, ...)
ZIP_TIME = (1980, 1, 1, 0, 0, 0)  # fixed timestamps: the same export gives the same bytes

RUN_AUTOGRADER = """\
#!/usr/bin/env bash
# Gradescope runs this for every submission, with /autograder as the working directory.
# Written by `hookviz export gradescope` (hookviz {version}). HOOKVIZ_AUTOGRADER_ROOT moves
# /autograder (to try the autograder in another folder laid out the same way); HOOKVIZ_PYTHON
# picks another Python that has hookviz installed.
ROOT="${{HOOKVIZ_AUTOGRADER_ROOT:-/autograder}}"
exec "${{HOOKVIZ_PYTHON:-$ROOT/{venv}/bin/python}}" -m {module} "$ROOT"
"""

SETUP_SH = """\
#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the autograder's image.
# Written by `hookviz export gradescope` (hookviz {version}).
set -euo pipefail
ROOT="${{HOOKVIZ_AUTOGRADER_ROOT:-/autograder}}"
SOURCE="$ROOT/source"
VENV="$ROOT/{venv}"

# Python 3.10 or newer, with venv (Gradescope's Ubuntu 22.04 image has Python 3.10).
if ! python3 -c 'import sys, venv, ensurepip; sys.exit(sys.version_info < (3, 10))' 2>/dev/null; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3 python3-venv python3-pip >/dev/null
fi
if ! python3 -c 'import sys; sys.exit(sys.version_info < (3, 10))'; then
  echo "hookviz needs Python 3.10 or newer: choose Gradescope's Ubuntu 22.04 (or newer) base image." >&2
  exit 1
fi
{bubblewrap}
python3 -m venv "$VENV"
PIP=("$VENV/bin/python" -m pip install --disable-pip-version-check --no-cache-dir -q)
# The CPU build of torch through the course's constraints file, as `make` installs it: a bare
# "torch" would pull a multi-gigabyte CUDA build.
"${{PIP[@]}}" -c "$SOURCE/{constraints}" {torch_index}torch
# hookviz as exported (the grader that checked your notebook), with what grading needs.
"${{PIP[@]}}" -c "$SOURCE/{constraints}" "$SOURCE/{wheel}"
# Graded code runs as an unprivileged user: it must reach this Python, and nothing else of yours.
chmod o+rx "$ROOT" "$VENV"
"$VENV/bin/python" -c "import hookviz, nbval, torch; print('hookviz', hookviz.__version__, 'torch', torch.__version__)"
"""

BUBBLEWRAP = """\
# bubblewrap contains each submission (--sandbox bwrap); it needs unprivileged user namespaces.
if ! command -v bwrap >/dev/null; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap >/dev/null
fi
"""


@dataclass(frozen=True)
class ExportOptions:
    """How the autograder grades: sandbox, visibility of checks with hidden tests, limits."""

    sandbox: str = "user"
    hidden_visibility: str = "after_published"
    limits: Limits = Limits()  # time and memory per cell, per submission, per process
    torch_index_url: str | None = None
    manual_grades: Path | None = None  # an out folder whose grades given by hand ship too


@dataclass(frozen=True)
class Export:
    """What was written."""

    path: Path
    members: tuple[str, ...]
    wheel: str


def export_gradescope(assignment_path: Path, zip_path: Path, options: ExportOptions) -> Export:
    """Write Gradescope's autograder zip for the instructor's notebook ``assignment_path``."""
    if options.sandbox not in AUTOGRADER_MODES:
        raise NotebookError(
            f"--sandbox must be one of {', '.join(AUTOGRADER_MODES)}, not {options.sandbox!r}."
        )
    if options.hidden_visibility not in autograder.VISIBILITIES:
        raise NotebookError(
            f"--hidden-tests-visibility must be one of {', '.join(autograder.VISIBILITIES)}, "
            f"not {options.hidden_visibility!r}."
        )
    assignment = _load(assignment_path)
    wheel_name, wheel = build_wheel()
    index = (
        f"--index-url {_shell_word(options.torch_index_url)} " if options.torch_index_url else ""
    )
    setup = SETUP_SH.format(
        version=__version__,
        venv=VENV,
        constraints=TORCH_CONSTRAINTS,
        wheel=wheel_name,
        torch_index=index,
        bubblewrap=BUBBLEWRAP if options.sandbox == "bwrap" else "",
    )
    config = {
        "hookviz": __version__,
        "notebook": f"{assignment.name}.ipynb",
        "assignment_sha256": assignment.sha256,
        "sandbox": options.sandbox,
        "hidden_visibility": options.hidden_visibility,
        "cell_timeout": options.limits.cell_timeout,
        "submission_timeout": options.limits.submission_timeout,
        "memory_mb": options.limits.memory_mb,
    }
    members = {
        "setup.sh": (setup.encode(), 0o755),
        "run_autograder": (_run_autograder().encode(), 0o755),
        f"{assignment.name}.ipynb": (assignment.path.read_bytes(), 0o644),
        TORCH_CONSTRAINTS: (torch_constraints().encode(), 0o644),
        autograder.CONFIG_FILE: ((json.dumps(config, indent=1) + "\n").encode(), 0o644),
        wheel_name: (wheel, 0o644),
    }
    folder = assignment.path.parent
    for path in assignment.files:  # data and helper modules, where the notebook finds them
        members.setdefault(path.relative_to(folder).as_posix(), (path.read_bytes(), 0o644))
    if options.manual_grades is not None:
        grades = Path(options.manual_grades) / MANUAL_GRADES
        if not grades.is_file():
            raise NotebookError(
                f"{grades} does not exist: run `hookviz merge-manual` into "
                f"{options.manual_grades} first, or leave out --manual-grades."
            )
        members[autograder.MANUAL_GRADES_FILE] = (grades.read_bytes(), 0o644)
    zip_path = Path(zip_path)
    zip_path.parent.mkdir(parents=True, exist_ok=True)
    temporary = zip_path.with_name(f".{zip_path.name}.tmp")
    temporary.write_bytes(_zip_bytes(members))
    os.replace(temporary, zip_path)
    return Export(zip_path, tuple(sorted(members)), wheel_name)


def check_solution(assignment_path: Path, options: ExportOptions, stream=None) -> None:
    """Grade the instructor's notebook as a submission, as `hookviz grade` does first.

    An autograder whose own solution does not score full marks would fail every student:
    NotebookError names the checks and the fix.
    """
    from ..core.gradebook import OutFolder
    from ..run.selfcheck import verify_solution

    assignment = _load(assignment_path)
    settings = GradeSettings(options.limits)
    try:  # your own notebook: contained where bubblewrap works, else with limits only
        sandbox = detect_sandbox("auto", [assignment.path.resolve().parent])
    except SandboxError:
        sandbox = detect_sandbox("none", [])
    with tempfile.TemporaryDirectory(prefix="hookviz-export-") as folder:
        verify_solution(
            assignment, sandbox, settings, OutFolder(Path(folder)), stream or sys.stderr
        )


def _load(path: Path) -> Assignment:
    if not Path(path).is_file():
        raise NotebookError(
            f"{path} does not exist; pass the instructor's notebook, solutions/NAME.ipynb."
        )
    return load_assignment(Path(path))


def _shell_word(text: str) -> str:
    if re.fullmatch(r"[A-Za-z0-9_@%+=:,./-]+", text):
        return text
    return "'" + text.replace("'", "'\"'\"'") + "'"


def _zip_bytes(members: dict[str, tuple[bytes, int]]) -> bytes:
    """A zip of ``name -> (data, mode)``, sorted, with fixed timestamps."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name in sorted(members):
            data, mode = members[name]
            info = zipfile.ZipInfo(name, date_time=ZIP_TIME)
            info.external_attr = (stat.S_IFREG | mode) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, data)
    return buffer.getvalue()


def project_root() -> Path | None:
    """The source checkout hookviz runs from (an editable install), if there is one."""
    root = Path(hookviz.__file__).resolve().parent.parent
    pyproject = root / "pyproject.toml"
    if pyproject.is_file() and re.search(r'^name\s*=\s*"hookviz"', pyproject.read_text(), re.M):
        return root
    return None


def torch_constraints() -> str:
    """The course's constraints/torch-cpu.txt, or a pin of the torch installed here."""
    root = project_root()
    if root is not None and (root / "constraints" / TORCH_CONSTRAINTS).is_file():
        return (root / "constraints" / TORCH_CONSTRAINTS).read_text()
    import torch

    return f"torch=={torch.__version__.split('+')[0]}\n"


def requirements() -> list[str]:
    """What the autograder's hookviz needs: the package's dependencies and its grading extra."""
    root = project_root()
    if root is not None:
        try:
            import tomllib
        except ModuleNotFoundError:  # Python 3.10
            import tomli as tomllib
        project = tomllib.loads((root / "pyproject.toml").read_text())["project"]
        grading = project.get("optional-dependencies", {}).get(GRADE_EXTRA)
        if grading:
            return [*project["dependencies"], *grading]
    else:
        from importlib import metadata

        listed = metadata.metadata("hookviz").get_all("Requires-Dist") or []
        marker = re.compile(rf";\s*extra\s*==\s*['\"]{GRADE_EXTRA}['\"]\s*$")
        plain = [r for r in listed if "extra ==" not in r]
        grading = [marker.sub("", r) for r in listed if marker.search(r)]
        if grading:
            return plain + grading
    raise NotebookError(
        f"this hookviz install does not declare its '{GRADE_EXTRA}' extra (nbval, pytest, ...), "
        "which the autograder installs: reinstall hookviz (pip install -e . in the course repository)."
    )


def build_wheel() -> tuple[str, bytes]:
    """A wheel of the hookviz package this process runs (name, bytes): no build tools needed."""
    package = Path(hookviz.__file__).resolve().parent
    dist_info = f"hookviz-{__version__}.dist-info"
    files: dict[str, bytes] = {}
    for path in sorted(package.rglob("*")):
        relative = path.relative_to(package)
        if (
            path.is_file()
            and "__pycache__" not in relative.parts
            and not any(part.startswith(".") for part in relative.parts)
            and path.suffix not in (".pyc", ".pyo")
        ):
            files[f"hookviz/{relative.as_posix()}"] = path.read_bytes()
    metadata = (
        "Metadata-Version: 2.1\nName: hookviz\n"
        f"Version: {__version__}\nSummary: hookviz, as exported for a Gradescope autograder\n"
        "Requires-Python: >=3.10\n" + "".join(f"Requires-Dist: {r}\n" for r in requirements())
    )
    files[f"{dist_info}/METADATA"] = metadata.encode()
    files[f"{dist_info}/WHEEL"] = (
        b"Wheel-Version: 1.0\nGenerator: hookviz export\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    )
    files[f"{dist_info}/entry_points.txt"] = b"[console_scripts]\nhookviz = hookviz.cli:main\n"
    record = [f"{name},sha256={_digest(data)},{len(data)}" for name, data in sorted(files.items())]
    files[f"{dist_info}/RECORD"] = ("\n".join([*record, f"{dist_info}/RECORD,,"]) + "\n").encode()
    return f"hookviz-{__version__}-py3-none-any.whl", _zip_bytes(
        {name: (data, 0o644) for name, data in files.items()}
    )


def _digest(data: bytes) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def _run_autograder() -> str:
    return RUN_AUTOGRADER.format(version=__version__, venv=VENV, module=autograder.__name__)
