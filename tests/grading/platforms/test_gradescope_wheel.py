"""The autograder's wheel and set-up read the whole package and the course checkout, wherever in
the package the export's own module sits."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import hookviz
from hookviz.grading.platforms.gradescope_export import build_wheel, project_root, torch_constraints

PACKAGE = Path(hookviz.__file__).resolve().parent
REPO = PACKAGE.parent


def test_the_wheel_holds_every_module_of_the_package() -> None:
    _, data = build_wheel()
    names = set(zipfile.ZipFile(io.BytesIO(data)).namelist())
    modules = {
        f"hookviz/{p.relative_to(PACKAGE).as_posix()}"
        for p in PACKAGE.rglob("*.py")
        if "__pycache__" not in p.parts
    }
    assert {"hookviz/__init__.py", "hookviz/tree.py", "hookviz/cli.py"} <= modules
    assert modules <= names


def test_the_export_reads_the_checkouts_constraints() -> None:
    assert project_root() == REPO
    assert torch_constraints() == (REPO / "constraints" / "torch-cpu.txt").read_text()
