"""`hookviz export gradescope`: an autograder zip for Gradescope, and the grading it runs there.

The zip holds, at its root, what Gradescope's autograder specification asks for:

- ``setup.sh``: run once when Gradescope builds the image; a Python virtual environment with the
  CPU build of torch (through the course's constraints file, as ``make`` installs it) and
  hookviz, shipped in the zip as a wheel of the very install that exported it;
- ``run_autograder``: run for every submission; it grades the notebook found in
  ``/autograder/submission/`` with hookviz's own grader (the merge, nbval in a sandbox, the same
  limits and integrity checks as ``hookviz grade``) and writes ``results/results.json``;
- the instructor's notebook, the torch constraints and the export's settings.

``HOOKVIZ_AUTOGRADER_ROOT`` moves ``/autograder`` (to try the autograder in a folder laid out
the same way) and ``HOOKVIZ_PYTHON`` picks the Python that runs it.
"""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import io
import json
import os
import re
import shutil
import stat
import sys
import tempfile
import time
import traceback
import zipfile
from dataclasses import dataclass
from pathlib import Path

from .. import __version__
from ..course.notebooks import NotebookError, atomic_write_text
from .engine import CheckResult, GradeSettings, SubmissionResult, grade_submission
from .gradebook import feedback_markdown
from .merge import Assignment, load_assignment
from .sandbox import Limits, Sandbox, SandboxError, claim_uid_block, detect_sandbox, start_python_in
from .submissions import Submission

DEFAULT_ROOT = Path("/autograder")
ROOT_VARIABLE = "HOOKVIZ_AUTOGRADER_ROOT"
PYTHON_VARIABLE = "HOOKVIZ_PYTHON"
CONFIG_FILE = "hookviz-autograder.json"
TORCH_CONSTRAINTS = "torch-cpu.txt"
VENV = "hookviz-venv"
VISIBILITIES = ("visible", "after_due_date", "after_published", "hidden")
SANDBOXES = ("user", "bwrap", "none")
GRADE_EXTRA = "grade"  # pyproject's extra with what grading needs beyond the package (nbval, ...)
STUDENT = "submission"
ZIP_TIME = (1980, 1, 1, 0, 0, 0)  # fixed timestamps: the same export gives the same bytes

_WHEN_SHOWN = {
    "after_due_date": "after the due date",
    "after_published": "when your instructor publishes the grades",
    "hidden": "to your instructor only",
}

RUN_AUTOGRADER = """\
#!/usr/bin/env bash
# Gradescope runs this for every submission, with /autograder as the working directory.
# Written by `hookviz export gradescope` (hookviz {version}). HOOKVIZ_AUTOGRADER_ROOT moves
# /autograder (to try the autograder in another folder laid out the same way); HOOKVIZ_PYTHON
# picks another Python that has hookviz installed.
ROOT="${{HOOKVIZ_AUTOGRADER_ROOT:-/autograder}}"
exec "${{HOOKVIZ_PYTHON:-$ROOT/{venv}/bin/python}}" -m hookviz.grading.gradescope "$ROOT"
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
    cell_timeout: float = Limits.cell_timeout  # the sandbox's Limits own the defaults
    submission_timeout: float = Limits.submission_timeout
    memory_mb: int = Limits.memory_mb
    torch_index_url: str | None = None


@dataclass(frozen=True)
class Export:
    """What was written."""

    path: Path
    members: tuple[str, ...]
    wheel: str


# -- the export -----------------------------------------------------------------------------


def export_gradescope(assignment_path: Path, zip_path: Path, options: ExportOptions) -> Export:
    """Write Gradescope's autograder zip for the instructor's notebook ``assignment_path``."""
    if options.sandbox not in SANDBOXES:
        raise NotebookError(
            f"--sandbox must be one of {', '.join(SANDBOXES)}, not {options.sandbox!r}."
        )
    if options.hidden_visibility not in VISIBILITIES:
        raise NotebookError(
            f"--hidden-tests-visibility must be one of {', '.join(VISIBILITIES)}, "
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
        "cell_timeout": options.cell_timeout,
        "submission_timeout": options.submission_timeout,
        "memory_mb": options.memory_mb,
    }
    members = {
        "setup.sh": (setup.encode(), 0o755),
        "run_autograder": (RUN_AUTOGRADER.format(version=__version__, venv=VENV).encode(), 0o755),
        f"{assignment.name}.ipynb": (assignment.path.read_bytes(), 0o644),
        TORCH_CONSTRAINTS: (torch_constraints().encode(), 0o644),
        CONFIG_FILE: ((json.dumps(config, indent=1) + "\n").encode(), 0o644),
        wheel_name: (wheel, 0o644),
    }
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
    from .gradebook import OutFolder
    from .selfcheck import verify_solution

    assignment = _load(assignment_path)
    settings = GradeSettings(
        Limits(
            cell_timeout=options.cell_timeout,
            submission_timeout=options.submission_timeout,
            memory_mb=options.memory_mb,
        )
    )
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
    root = Path(__file__).resolve().parents[2]
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
    package = Path(__file__).resolve().parents[1]
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


# -- on Gradescope: grade one submission ------------------------------------------------------


class UserSandbox(Sandbox):
    """Limits and a process group, with the graded code run as an unprivileged user.

    Gradescope runs each submission in a throwaway container as root, where bubblewrap usually
    cannot create its namespaces; its own advice is to run students' code as another user, with
    the instructor's folders closed to it (run_autograder makes them 0700).
    """

    def user_for(self, slot: int) -> tuple[int, int] | None:
        """A uid of a block no account or process uses, as under bubblewrap (None: not root)."""
        if not self.as_root:
            return None
        with self._lock:
            if self._uid_block is None:
                self._uid_block, self._uid_lock = claim_uid_block()
        return self._uid_block + slot, self._uid_block + slot


def make_sandbox(mode: str, hidden: list[Path]) -> Sandbox:
    """The sandbox the export asked for, checked to work here."""
    if mode == "user":
        sandbox = UserSandbox("user")
        if not sandbox.as_root:
            sandbox.warning = (
                "--sandbox user: not running as root, so submissions run with this user's rights "
                "(limits and timeouts still apply)."
            )
        _probe(sandbox)
        return sandbox
    try:
        return detect_sandbox(mode, hidden)
    except SandboxError as error:
        raise NotebookError(str(error)) from error


def _probe(sandbox: Sandbox) -> None:
    """Start the grading Python the way a submission's will be started: as the grading user."""
    probe = start_python_in(sandbox, "pytest, nbval, ipykernel, hookviz")
    if probe.returncode != 0:
        raise NotebookError(
            "the grading user cannot start Python with pytest, nbval, ipykernel and hookviz "
            f"({probe.stderr.strip()[-500:]}). The virtual environment and every folder above it "
            "must be readable by others (setup.sh runs chmod o+rx on them)."
        )


def find_notebook(folder: Path, name: str) -> Submission:
    """The notebook to grade in Gradescope's submission folder (uploaded as is, or in folders)."""
    wanted = f"{name}.ipynb"
    notebooks = sorted(
        path
        for path in Path(folder).rglob("*.ipynb")
        if len(path.relative_to(folder).parts) <= 3
        and not any(p.startswith(".") or p == "__MACOSX" for p in path.relative_to(folder).parts)
    )
    exact = [path for path in notebooks if path.name == wanted]
    listed = ", ".join(str(path.relative_to(folder)) for path in notebooks)
    if len(exact) == 1:
        return Submission(STUDENT, exact[0])
    if len(exact) > 1:
        return Submission(
            STUDENT, None, f"several {wanted} files were uploaded ({listed}): upload one"
        )
    if len(notebooks) == 1:
        return Submission(
            STUDENT,
            notebooks[0],
            f"graded {notebooks[0].name}, the only notebook (expected {wanted})",
        )
    if notebooks:
        return Submission(STUDENT, None, f"none of the notebooks uploaded ({listed}) is {wanted}")
    return Submission(STUDENT, None, f"no notebook was uploaded: upload {wanted}")


def check_output(result: SubmissionResult, check: CheckResult) -> str:
    """The student's feedback for one check: its section of the feedback file, without its heading."""
    base = dataclasses.replace(result, checks=[], notes=[], status="ok", detail="")
    prefix = feedback_markdown(base).rstrip("\n")
    whole = feedback_markdown(dataclasses.replace(base, checks=[check]))
    section = whole[len(prefix) :] if whole.startswith(prefix) else whole
    lines = section.strip("\n").splitlines()
    if lines and lines[0].startswith("## "):
        lines = lines[1:]
    text = "\n".join(lines).strip()
    return text or ("Passed." if check.points >= check.max_points else "Not passed.")


def overall_output(result: SubmissionResult, delayed: list[str], visibility: str) -> str:
    """What concerns the whole submission: its status and the grader's notes; never the score."""
    lines = []
    if result.status != "ok":
        lines.append(
            f"**Status: {result.status}**" + (f": {result.detail}." if result.detail else ".")
        )
    if result.notes:
        lines += ["", "Notes:", ""] + [f"- {note}" for note in result.notes]
    if delayed and visibility in _WHEN_SHOWN:
        lines += [
            "",
            f"The checks with hidden tests ({', '.join(delayed)}) are shown {_WHEN_SHOWN[visibility]}.",
        ]
    return "\n".join(lines).strip()


def results_json(
    result: SubmissionResult, assignment: Assignment, visibility: str, seconds: float
) -> dict:
    """Gradescope's results.json for one graded submission."""
    with_hidden = {check.grade_id for check in assignment.checks if check.hidden_lines}
    tests = []
    for number, check in enumerate(result.checks, start=1):
        tests.append(
            {
                "name": check.grade_id,
                "number": str(number),
                "score": check.points,
                "max_score": check.max_points,
                "status": "passed" if check.points >= check.max_points else "failed",
                "output": check_output(result, check),
                "output_format": "md",
                "visibility": visibility if check.grade_id in with_hidden else "visible",
                "extra_data": {"outcome": check.outcome},
            }
        )
    delayed = [
        c.grade_id for c in result.checks if c.grade_id in with_hidden and visibility != "visible"
    ]
    document = {
        "score": result.total,
        "execution_time": round(seconds),
        "output": overall_output(result, delayed, visibility),
        "output_format": "md",
        "stdout_visibility": "hidden",  # the grader's log shows expected outputs
        "tests": tests,
        "extra_data": {
            "hookviz": __version__,
            "status": result.status,
            "flags": result.flags,
            "sandbox": result.sandbox,
            "notebook": result.submission,
        },
    }
    if not document["output"]:
        del document["output"], document["output_format"]
    return document


def _close(path: Path) -> None:
    """Keep graded code out of an instructor's folder (root's, mode 0700)."""
    if path.exists() and os.geteuid() == 0:
        path.chmod(0o700)


def run_autograder(root: Path, stream=None) -> int:
    """Grade the submission in ``root``/submission into ``root``/results/results.json.

    A fault of the set-up (a missing file, a sandbox that cannot start) writes no results and
    exits 1: Gradescope then reports an autograder failure, not a score of 0.
    """
    stream = stream or sys.stdout
    started = time.monotonic()
    root = Path(root)
    source, results = root / "source", root / "results"
    try:
        config = json.loads((source / CONFIG_FILE).read_text(encoding="utf-8"))
        assignment = load_assignment(source / config["notebook"])
        results.mkdir(parents=True, exist_ok=True)
        for folder in (source, results, root / "submission"):
            _close(folder)
        submission = find_notebook(root / "submission", assignment.name)
        settings = GradeSettings(
            Limits(
                cell_timeout=float(config["cell_timeout"]),
                submission_timeout=float(config["submission_timeout"]),
                memory_mb=int(config["memory_mb"]),
            )
        )
        sandbox = make_sandbox(config["sandbox"], [source, root / "submission", results])
        if sandbox.warning:
            print(f"warning: {sandbox.warning}", file=stream)
        scratch = Path(tempfile.mkdtemp(prefix="hookviz-grade-"))
        scratch.chmod(0o755)  # pytest lists it; the one work folder inside is the grading user's
        try:
            result = grade_submission(
                submission, assignment, sandbox, settings, slot=0, scratch=scratch
            )
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
    except (NotebookError, OSError, KeyError, ValueError):
        print(
            "hookviz autograder: could not grade (a fault of the set-up, not of the submission):",
            file=stream,
        )
        traceback.print_exc(file=stream)
        return 1
    document = results_json(
        result, assignment, config["hidden_visibility"], time.monotonic() - started
    )
    atomic_write_text(results / "results.json", json.dumps(document, indent=1, ensure_ascii=False))
    _log(result, stream)
    return 0


def _log(result: SubmissionResult, stream) -> None:
    """The instructor's view, in Gradescope's stdout (never shown to students)."""
    print(
        f"hookviz {__version__}: {result.submission or 'no notebook'}: {result.total:g}/{result.max_total:g}, "
        f"status {result.status}, sandbox {result.sandbox}, {result.seconds:.1f} s",
        file=stream,
    )
    if result.detail:
        print(f"  {result.detail}", file=stream)
    for check in result.checks:
        print(
            f"  {check.grade_id}: {check.points:g}/{check.max_points:g} {check.outcome} {check.detail}".rstrip(),
            file=stream,
        )
    for flag in result.flags:
        print(f"  flag: {flag}", file=stream)
    for note in result.notes:
        print(f"  note: {note}", file=stream)


def main(argv: list[str] | None = None) -> int:
    """``python -m hookviz.grading.gradescope [ROOT]``: what run_autograder runs."""
    argv = sys.argv[1:] if argv is None else argv
    root = Path(argv[0]) if argv else Path(os.environ.get(ROOT_VARIABLE) or DEFAULT_ROOT)
    return run_autograder(root)


if __name__ == "__main__":
    sys.exit(main())
