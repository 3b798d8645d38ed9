"""The package's promises about itself: dependencies in sync, a light import."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
CONDA_NAMES = {"pytorch": "torch"}  # conda's name -> PyPI's name


def requirement_name(spec: str) -> str:
    return re.split(r"[<>=!~ ;\[]", spec.strip(), maxsplit=1)[0].lower()


def test_environment_yml_names_the_same_packages_as_pyproject():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    # conda has no environment markers: compare what comes before "; python_version ..."
    runtime = {
        requirement_name(d): d.split(";")[0].replace(" ", "") for d in project["dependencies"]
    }
    conda: dict[str, str] = {}
    pip_section = False
    text = (ROOT / "environment.yml").read_text()
    for line in text.split("dependencies:", 1)[1].splitlines():
        item = line.strip()
        if not item.startswith("- "):
            continue
        item = item[2:].strip()
        if item == "pip:":
            pip_section = True
            continue
        if pip_section or item in ("pip",) or item.startswith("python"):
            continue
        item = item.split("#")[0].strip()
        name = requirement_name(item)
        pypi = CONDA_NAMES.get(name, name)
        conda[pypi] = pypi + item[len(name) :]
    assert conda.keys() == runtime.keys()
    for name, spec in runtime.items():  # the same version ranges too
        assert conda[name].replace(" ", "") == spec, name
    assert "-e ." in (ROOT / "environment.yml").read_text()


def test_import_hookviz_loads_no_widget_or_plotting_library():
    code = (
        "import sys, hookviz, hookviz.examples\n"
        "heavy = [m for m in ('ipywidgets', 'anywidget', 'matplotlib', 'traitlets') if m in sys.modules]\n"
        "print(','.join(heavy))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == ""


def test_lazy_names_resolve_and_unknown_names_fail_clearly():
    import hookviz

    assert "ApplyTraversal" in dir(hookviz)
    try:
        hookviz.no_such_thing  # noqa: B018
    except AttributeError as error:
        assert "no_such_thing" in str(error)
    else:
        raise AssertionError("an unknown attribute must raise AttributeError")


def test_no_course_content_ships_inside_the_package():
    """Hints and predictions are the course's (hints/, predictions/ beside course.toml): the
    package ships none, and every assignment of this course has its hints file there."""
    package = ROOT / "hookviz"
    assert not list(package.rglob("*.toml"))
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert "hookviz.course" not in data["package-data"]
    solutions = {path.stem for path in (ROOT / "solutions").glob("*.ipynb")}
    assert {path.stem for path in (ROOT / "hints").glob("*.toml")} == solutions


def test_the_package_data_ships_every_file_the_site_is_built_from():
    """`hookviz site` outside this repository needs its templates, host, styles and search."""
    patterns = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"][
        "package-data"
    ]["hookviz.site"]
    package = ROOT / "hookviz" / "site"
    shipped = {path for pattern in patterns for path in package.glob(pattern)}
    needed = {
        path
        for folder in ("static", "templates")
        for path in (package / folder).rglob("*")
        if path.is_file()
    }
    assert {"host.js", "site.js", "site.css", "search-core.js", "page.html.j2"} <= {
        path.name for path in needed
    }
    assert needed <= shipped, sorted(str(p.relative_to(package)) for p in needed - shipped)


@pytest.mark.slow
def test_the_wheel_ships_the_korean_font_and_its_licence(tmp_path):
    """The plots draw Hangul from hookviz/fonts: a wheel without it (or its OFL) is broken.

    Built without isolation, from the setuptools already in the venv (torch requires it)."""
    source = tmp_path / "source"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    shutil.copytree(
        ROOT / "hookviz", source / "hookviz", ignore=shutil.ignore_patterns("__pycache__")
    )
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(tmp_path / "dist"),
            str(source),
        ],
        check=True,
        capture_output=True,
    )
    (wheel,) = (tmp_path / "dist").glob("hookviz-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        metadata = archive.read(next(n for n in names if n.endswith(".dist-info/METADATA")))
    assert {"hookviz/fonts/HookvizHangul.ttf", "hookviz/fonts/OFL.txt"} <= names
    assert {"hookviz/fonts/__init__.py", "hookviz/plot_labels.py"} <= names
    assert b"SIL Open Font License" in metadata  # the licence notes name the font's licence
