"""The cells `hookviz build` stamps on every notebook, and the course.toml they read.

- An Open-in-Colab badge and an install cell, opt-in in ``course.toml``::

      [colab]
      enabled = true           # a badge and an install cell on every notebook (default: none)
      install = "hookviz"      # what the install cell gives pip (default: hookviz itself)

  The badge opens the notebook from the repository named in ``[course]``, which must then be on
  GitHub (Colab opens notebooks from GitHub).
- A content cell in every notebook that uses the course's hints or predictions: the notebook's
  own, packed (``hookviz.course.content``), so that it works opened alone (Colab, grading).

The cells carry ``metadata.hookviz.stamp`` so a later build finds and updates them instead of
adding more, and removes them when they are no longer wanted.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..content import COURSE_FILE, ContentError, CourseContent, content_of, pack
from ..format.notebooks import (
    BADGE,
    CONTENT,
    INSTALL,
    STAMP_KEY,
    NotebookError,
    content_first_line,
    install_first_line,
    nbformat_module,
    stamp_role,
)

BADGE_IMAGE = "https://colab.research.google.com/assets/colab-badge.svg"
DEFAULT_INSTALL = "hookviz"
_GITHUB = re.compile(r"^https://github\.com/(?P<owner>[\w.-]+)/(?P<name>[\w.-]+?)(?:\.git)?/?$")
_GITLAB = re.compile(r"^https://[^/]*gitlab[^/]*/.+[^/]$")
_ASSIGNMENT = re.compile(r"""checks\.assignment\(\s*["']([^"']+)["']""")
_STAMP_ID = re.compile(rf"hookviz-({BADGE}|{INSTALL}|{CONTENT})(-\d+)?")
_PREDICTION = re.compile(r"""\bpredict\(\s*["']([A-Za-z0-9][A-Za-z0-9_-]*)["']""")


@dataclass(frozen=True)
class CourseConfig:
    """What course.toml says: where the course lives (optional), Colab, and its content."""

    repository: str = ""  # any git host's address; "" when the course names none
    branch: str = "main"
    owner: str = ""  # on GitHub only
    name: str = ""
    site: str = ""  # where the web edition is published; "" means GitHub Pages' (on GitHub)
    colab: bool = False  # stamp an Open-in-Colab badge and an install cell ([colab] enabled)
    install: str = DEFAULT_INSTALL  # what the install cell gives pip ([colab] install)
    content: CourseContent | None = field(default=None, compare=False)  # hints/, predictions/
    languages: tuple[str, ...] = ()  # [i18n] languages: built into <lang>/ from translations/
    defaults: str = ""  # when there was no course.toml: what was assumed, for a one-line note

    @property
    def on_github(self) -> bool:
        return bool(self.owner)

    @property
    def site_url(self) -> str:
        """The web edition's address: ``[course] site``, or GitHub Pages' for the repository."""
        if self.site:
            return self.site
        return f"https://{self.owner}.github.io/{self.name}/" if self.on_github else ""

    @property
    def files_url(self) -> str:
        """Where a repository file is shown, path to append ("" when it cannot be said)."""
        repository = self.repository.rstrip("/")
        if self.on_github:
            return f"{repository}/blob/{self.branch}"
        if _GITLAB.match(repository):
            return f"{repository}/-/blob/{self.branch}"
        return ""

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


# What marks a folder as an nbgrader course that has no course.toml yet.
NBGRADER_MARKS = ("nbgrader_config.py", "source")


def find_course_root(start: Path) -> Path:
    """The folder holding course.toml (``start`` or its nearest parent that has one), else the
    nearest that is an nbgrader course (nbgrader_config.py, or a source/ folder of notebooks)."""
    start = Path(start).resolve()
    for folder in (start, *start.parents):
        if (folder / COURSE_FILE).is_file():
            return folder
    for folder in (start, *start.parents):
        if nbgrader_course(folder):
            return folder
    raise NotebookError(
        f"no {COURSE_FILE} in {start} or any folder above it. Run this in the course folder, pass "
        "--root with the folder that holds course.toml, or start a course: `hookviz init`."
    )


def nbgrader_course(folder: Path) -> bool:
    """True if ``folder`` looks like an nbgrader course: its config, or source/ with notebooks."""
    if (folder / "nbgrader_config.py").is_file():
        return True
    source = folder / "source"
    return source.is_dir() and next(source.glob("*/*.ipynb"), None) is not None


def load_course_config(root: Path) -> CourseConfig:
    """Read ``root/course.toml``; an nbgrader course without one gets the defaults, and the
    config says which (``defaults``) so that the command can say it once."""
    path = Path(root) / COURSE_FILE
    if not path.is_file() and nbgrader_course(Path(root)):
        return CourseConfig(
            content=content_of(Path(root), optional=True),
            defaults=(
                f"no {COURSE_FILE} in {root}: an nbgrader course, taken with the defaults (its "
                "assignments in solutions/, exercises/ written beside them, no Colab badges, no "
                "repository links). `hookviz init --from-nbgrader` writes them down to change."
            ),
        )
    data = _read_toml(path)
    course = data.get("course", {})
    if not isinstance(course, dict):
        raise NotebookError(f'{path}: [course] must be a table, such as [course] branch = "main".')
    repository = course.get("repository", "")
    branch = course.get("branch", "main")
    if not isinstance(repository, str) or (
        repository and not re.match(r"^(https?://|git@)\S+$", repository.strip())
    ):
        raise NotebookError(
            f"{path}: [course] repository must be the address of the course's repository, such as "
            f'"https://github.com/OWNER/NAME" or a GitLab address, or left out; got {repository!r}.'
        )
    repository = repository.strip()
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
    github = _GITHUB.match(repository)
    if enabled and not github:
        raise NotebookError(
            f"{path}: [colab] enabled needs [course] repository on GitHub, such as "
            f'"https://github.com/OWNER/NAME" (Colab opens notebooks from GitHub only); got '
            f"{repository or 'none'}. Turn Colab off (enabled = false) or name a GitHub repository."
        )
    try:
        content = content_of(Path(root))
    except ContentError as error:
        raise NotebookError(str(error)) from None
    languages = _languages(path, data.get("i18n", {}))
    return CourseConfig(
        repository,
        branch,
        github["owner"] if github else "",
        github["name"] if github else "",
        site.strip(),
        colab=enabled,
        install=install.strip(),
        content=content,
        languages=languages,
    )


def _languages(path: Path, table: Any) -> tuple[str, ...]:
    """``[i18n] languages``: the languages the course is built in besides English."""
    from ... import language

    languages = table.get("languages", []) if isinstance(table, dict) else None
    known = [code for code in language.LANGUAGES if code != language.ENGLISH]
    if not isinstance(languages, list) or any(code not in known for code in languages):
        raise NotebookError(
            f"{path}: [i18n] languages must list the languages to build besides English, from "
            f'{known}, such as languages = ["ko"]; got {languages!r}.'
        )
    return tuple(languages)


def _read_toml(path: Path) -> dict[str, Any]:
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
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise NotebookError(f"cannot read {path}: {error}") from error
    except tomllib.TOMLDecodeError as error:
        raise NotebookError(f"{path} is not valid TOML: {error}") from error


def badge_source(config: CourseConfig, relative_path: str) -> str:
    """Markdown for the Open-in-Colab badge of one notebook."""
    return f"[![Open In Colab]({BADGE_IMAGE})]({config.colab_url(relative_path)})"


def install_source(config: CourseConfig, lang: str = "en") -> str:
    """The install cell: pip-installs hookviz only when it is missing, and prints nothing otherwise.

    A plain ``pip install`` keeps every requirement that is already satisfied, so Colab's
    ipywidgets 7.7 and anywidget 0.9 stay (hookviz asks for ipywidgets>=7.7,<9, anywidget>=0.9).
    """
    return "\n".join(
        [
            install_first_line(lang),
            "import importlib, importlib.util, subprocess, sys",
            'if importlib.util.find_spec("hookviz") is None:',
            "    subprocess.run(",
            f'        [sys.executable, "-m", "pip", "install", "-q", "{config.pip_requirement}"],',
            "        check=True,",
            "    )",
            "    importlib.invalidate_caches()",
        ]
    )


def content_source(packed: str, lang: str = "en") -> str:
    """The content cell: the notebook's hints and predictions, loaded and nothing printed; a
    translated notebook's also says its language."""
    says = "" if lang == "en" else f', lang="{lang}"'
    return "\n".join(
        [
            content_first_line(lang),
            f'import hookviz.course.content; hookviz.course.content.load("{packed}"{says})',
        ]
    )


def notebook_content(
    notebook: Any, content: CourseContent | None, lang: str = "en", english: str = ""
) -> str | None:
    """What ``notebook`` reads of the course, packed: the hints of the assignment its cells name
    (``checks.assignment("...")``) and the predictions they show, with their translations into
    ``lang`` (and the words of its figures, for a translation of the English notebook
    ``english``); None when it reads none."""
    if content is None:
        return None
    sources = [c.source for c in notebook.cells if c.cell_type == "code" and not stamp_role(c)]
    assignments = sorted({m for s in sources for m in _ASSIGNMENT.findall(s)})
    keys = sorted({m for s in sources for m in _PREDICTION.findall(s)})
    hints = {}
    for assignment in assignments:
        path = content.hints_file(assignment)
        if path.is_file():
            hints[assignment] = path.read_text(encoding="utf-8")
    predictions = {}
    if keys:
        from ..content import prediction_tables

        try:
            tables = prediction_tables(content.predictions) if content.predictions.is_dir() else {}
        except ContentError as error:
            raise NotebookError(str(error)) from None
        predictions = {key: tables[key][0] for key in keys if key in tables}
    strings = None
    if lang != "en":
        from ..i18n.apply import content_strings

        found = content_strings(content, lang, list(hints), list(predictions), english)
        strings = {lang: found}
        if not hints and not predictions and not found.get("figures") and not found["messages"]:
            return None
    elif not hints and not predictions:
        return None
    return pack(hints, predictions, strings)


def stamp_notebook(
    notebook: Any, config: CourseConfig, relative_path: str, lang: str = "en"
) -> None:
    """Put the badge first, then the install cell and the content cell before the first code
    cell, each only when it is wanted (idempotent).

    A stamped cell whose source is already right keeps its outputs and execution count, so
    re-stamping a notebook whose outputs nbval checks changes nothing.
    """
    old = {stamp_role(c): c for c in notebook.cells if stamp_role(c)}
    cells = [c for c in notebook.cells if not stamp_role(c)]
    notebook.cells = cells
    packed = notebook_content(notebook, config.content, lang, _english_of(relative_path, lang))
    wanted = []  # the code cells to put before the first code cell, in order
    if config.colab:
        wanted.append(_stamped(old.get(INSTALL), "code", install_source(config, lang), INSTALL))
    if packed is not None or lang != "en":  # a translated notebook says its language there
        source = content_source(packed or "", lang)
        cell = _stamped(old.get(CONTENT), "code", source, CONTENT)
        cell.metadata.update({"jupyter": {"source_hidden": True}, "editable": False})
        wanted.append(cell)
    first_code = next((i for i, c in enumerate(cells) if c.cell_type == "code"), len(cells))
    cells[first_code:first_code] = wanted
    if config.colab:  # Colab is opt-in: no badge, no install cell (old ones go)
        badge = _stamped(old.get(BADGE), "markdown", badge_source(config, relative_path), BADGE)
        cells.insert(0, badge)
    notebook.cells = cells
    _stable_ids(notebook)


def _english_of(relative_path: str, lang: str) -> str:
    """The English notebook a translated one is made from (``ko/exercises/x`` ->
    ``solutions/x``), or "" for an English notebook."""
    if lang == "en" or not relative_path.startswith(f"{lang}/"):
        return ""
    folder, _, rest = relative_path[len(lang) + 1 :].partition("/")
    return f"solutions/{rest}" if folder == "exercises" else f"{folder}/{rest}"


def _stamped(old: Any, cell_type: str, source: str, role: str) -> Any:
    """The stamped cell of ``role``: ``old`` when it is already right (its outputs kept)."""
    nbformat = nbformat_module()
    if old is None or old.cell_type != cell_type or old.source != source:
        make = nbformat.v4.new_code_cell if cell_type == "code" else nbformat.v4.new_markdown_cell
        old = make(source)
    old.metadata = nbformat.NotebookNode({"hookviz": {STAMP_KEY: role}})
    old.pop("id", None)
    return old


def _stable_ids(notebook: Any) -> None:
    """Give cells without an id a deterministic one (nbformat 4.5 wants ids; random ones churn)."""
    if (notebook.get("nbformat"), notebook.get("nbformat_minor", 0)) < (4, 5):
        for cell in notebook.cells:
            cell.pop("id", None)
        return
    for cell in notebook.cells:  # a stamp's id on another cell: the stamps' ids would shift
        if not stamp_role(cell) and _STAMP_ID.fullmatch(cell.get("id") or ""):
            cell.pop("id")
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
