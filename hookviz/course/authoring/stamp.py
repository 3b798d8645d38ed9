"""The cells `hookviz build` stamps on every notebook: an Open-in-Colab badge and an install cell.

Both are opt-in, in ``course.toml``::

    [colab]
    enabled = true           # a badge and an install cell on every notebook (default: none)
    install = "hookviz"      # what the install cell gives pip (default: hookviz itself)

The badge opens the notebook from the repository named in ``[course]``. The cells carry
``metadata.hookviz.stamp`` so a later build finds and updates them instead of adding more, and
removes them when Colab is turned off.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..format.notebooks import INSTALL_FIRST_LINE, NotebookError, nbformat_module

COURSE_FILE = "course.toml"
STAMP_KEY = "stamp"
BADGE, INSTALL = "colab-badge", "install"
BADGE_IMAGE = "https://colab.research.google.com/assets/colab-badge.svg"
DEFAULT_INSTALL = "hookviz"
_GITHUB = re.compile(r"^https://github\.com/(?P<owner>[\w.-]+)/(?P<name>[\w.-]+?)(?:\.git)?/?$")


@dataclass(frozen=True)
class CourseConfig:
    """Where badges and install cells point: a GitHub repository and branch."""

    repository: str
    branch: str
    owner: str
    name: str
    site: str = ""  # where the web edition is published; "" means GitHub Pages' address
    colab: bool = False  # stamp an Open-in-Colab badge and an install cell ([colab] enabled)
    install: str = DEFAULT_INSTALL  # what the install cell gives pip ([colab] install)

    @property
    def site_url(self) -> str:
        """The web edition's address: ``[course] site``, or GitHub Pages' for the repository."""
        return self.site or f"https://{self.owner}.github.io/{self.name}/"

    def colab_url(self, relative_path: str) -> str:
        """The Colab address that opens ``relative_path`` from this repository and branch."""
        return (
            f"https://colab.research.google.com/github/{self.owner}/{self.name}"
            f"/blob/{self.branch}/{relative_path}"
        )

    @property
    def pip_requirement(self) -> str:
        """What the install cell gives pip: hookviz, or the requirement ``[colab] install`` names."""
        return self.install


def find_course_root(start: Path) -> Path:
    """The folder holding course.toml: ``start`` or its nearest parent that has one."""
    start = Path(start).resolve()
    for folder in (start, *start.parents):
        if (folder / COURSE_FILE).is_file():
            return folder
    raise NotebookError(
        f"no {COURSE_FILE} in {start} or any folder above it. Run this in the course repository, "
        "or pass --root with the folder that holds course.toml."
    )


def load_course_config(root: Path) -> CourseConfig:
    """Read ``[course] repository``, ``branch`` and ``site`` from ``root/course.toml``."""
    path = Path(root) / COURSE_FILE
    try:
        import tomllib
    except ImportError:  # Python 3.10
        try:
            import tomli as tomllib
        except ImportError as error:
            raise NotebookError(
                f"reading {path} on Python 3.10 needs tomli: pip install tomli"
            ) from error
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise NotebookError(f"cannot read {path}: {error}") from error
    except tomllib.TOMLDecodeError as error:
        raise NotebookError(f"{path} is not valid TOML: {error}") from error
    course = data.get("course")
    if not isinstance(course, dict):
        raise NotebookError(
            f'{path} needs a [course] table with repository = "..." and branch = "...".'
        )
    repository, branch = course.get("repository"), course.get("branch", "main")
    if not isinstance(repository, str) or not (match := _GITHUB.match(repository.strip())):
        raise NotebookError(
            f"{path}: [course] repository must be a GitHub address such as "
            f'"https://github.com/OWNER/NAME" (Colab opens notebooks from GitHub), got {repository!r}.'
        )
    if not isinstance(branch, str) or not re.fullmatch(r"[\w./-]+", branch):
        raise NotebookError(
            f'{path}: [course] branch must be a branch name such as "main", got {branch!r}.'
        )
    site = course.get("site", "")
    if not isinstance(site, str) or (site and not re.match(r"https?://\S+$", site.strip())):
        raise NotebookError(
            f"{path}: [course] site must be the web address of the course's site, such as "
            f'"https://OWNER.github.io/NAME/", got {site!r}.'
        )
    colab = data.get("colab", {})
    if not isinstance(colab, dict):
        raise NotebookError(f"{path}: [colab] must be a table, such as [colab] enabled = true.")
    enabled, install = colab.get("enabled", False), colab.get("install", DEFAULT_INSTALL)
    if not isinstance(enabled, bool):
        raise NotebookError(
            f"{path}: [colab] enabled must be true or false (a badge and an install cell on "
            f"every notebook, or none), got {enabled!r}."
        )
    if not isinstance(install, str) or not install.strip() or '"' in install or "\n" in install:
        raise NotebookError(
            f"{path}: [colab] install must be what the install cell gives pip, such as "
            f'"hookviz" or "hookviz==0.9", got {install!r}.'
        )
    return CourseConfig(
        repository.strip(),
        branch,
        match["owner"],
        match["name"],
        site.strip(),
        colab=enabled,
        install=install.strip(),
    )


def badge_source(config: CourseConfig, relative_path: str) -> str:
    """Markdown for the Open-in-Colab badge of one notebook."""
    return f"[![Open In Colab]({BADGE_IMAGE})]({config.colab_url(relative_path)})"


def install_source(config: CourseConfig) -> str:
    """The install cell: pip-installs hookviz only when it is missing, and prints nothing otherwise.

    A plain ``pip install`` keeps every requirement that is already satisfied, so Colab's
    ipywidgets 7.7 and anywidget 0.9 stay (hookviz asks for ipywidgets>=7.7,<9, anywidget>=0.9).
    """
    return "\n".join(
        [
            INSTALL_FIRST_LINE,
            "import importlib, importlib.util, subprocess, sys",
            'if importlib.util.find_spec("hookviz") is None:',
            "    subprocess.run(",
            f'        [sys.executable, "-m", "pip", "install", "-q", "{config.pip_requirement}"],',
            "        check=True,",
            "    )",
            "    importlib.invalidate_caches()",
        ]
    )


def stamp_role(cell: Any) -> str | None:
    """'colab-badge' or 'install' for a stamped cell, else None."""
    meta = cell.get("metadata", {}).get("hookviz", {})
    return meta.get(STAMP_KEY) if isinstance(meta, dict) else None


def stamp_notebook(notebook: Any, config: CourseConfig, relative_path: str) -> None:
    """Put the badge first and the install cell before the first code cell (idempotent).

    A stamped cell whose source is already right keeps its outputs and execution count, so
    re-stamping a notebook whose outputs nbval checks changes nothing.
    """
    nbformat = nbformat_module()
    old = {stamp_role(c): c for c in notebook.cells if stamp_role(c)}
    cells = [c for c in notebook.cells if not stamp_role(c)]
    if not config.colab:  # Colab is opt-in: no badge, no install cell (old ones go)
        notebook.cells = cells
        _stable_ids(notebook)
        return

    badge = old.get(BADGE)
    if (
        badge is None
        or badge.cell_type != "markdown"
        or badge.source != badge_source(config, relative_path)
    ):
        badge = nbformat.v4.new_markdown_cell(badge_source(config, relative_path))
    badge.metadata = nbformat.NotebookNode({"hookviz": {STAMP_KEY: BADGE}})
    badge.pop("id", None)

    install = old.get(INSTALL)
    if install is None or install.cell_type != "code" or install.source != install_source(config):
        install = nbformat.v4.new_code_cell(install_source(config))
    install.metadata = nbformat.NotebookNode({"hookviz": {STAMP_KEY: INSTALL}})
    install.pop("id", None)

    first_code = next((i for i, c in enumerate(cells) if c.cell_type == "code"), len(cells))
    cells.insert(first_code, install)
    notebook.cells = [badge, *cells]
    _stable_ids(notebook)


def _stable_ids(notebook: Any) -> None:
    """Give cells without an id a deterministic one (nbformat 4.5 wants ids; random ones churn)."""
    if (notebook.get("nbformat"), notebook.get("nbformat_minor", 0)) < (4, 5):
        for cell in notebook.cells:
            cell.pop("id", None)
        return
    taken = {c.get("id") for c in notebook.cells if c.get("id")}
    for cell in notebook.cells:
        if cell.get("id"):
            continue
        role = stamp_role(cell)
        base = f"hookviz-{role}" if role else "cell"
        candidate, n = base, 1
        while candidate in taken:
            n += 1
            candidate = f"{base}-{n}"
        cell["id"] = candidate
        taken.add(candidate)


def relative_posix(path: Path, root: Path) -> str:
    """``path`` relative to ``root`` with forward slashes (what URLs need)."""
    return Path(path).resolve().relative_to(Path(root).resolve()).as_posix()
