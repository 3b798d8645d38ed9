"""What the site is built from, per language: the walkthrough, the exercises and the guides,
and the page each becomes.

English is the course's source, at the site's root; a language of course.toml's ``[i18n]``
is built from ``<lang>/notebooks`` and ``<lang>/exercises`` (``hookviz build`` writes them)
into ``<lang>/`` of the site, with the same pages at the same paths under it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..course.format.notebooks import NotebookError
from ..language import ENGLISH

GUIDES = (  # (repository path, site path, label): the Markdown guides that get a page
    ("docs/instructors.md", "instructors.html", "Instructors' guide"),
    ("docs/CONVENTIONS.md", "conventions.html", "Notebook conventions"),
)


@dataclass
class Sources:
    """What one language's pages are built from, and the page each source becomes."""

    walkthrough: list[Path]
    exercises: list[Path]
    guides: list[tuple[str, str, str]]  # (repository path, site path, label)
    pages_of: dict[str, str]  # repository path -> site path
    lang: str = ENGLISH
    folder: Path = Path(".")  # the course's root, or its <lang>/ folder

    @property
    def prefix(self) -> str:
        """Where this language's pages are, in the site and in the repository: "" or "ko/"."""
        return "" if self.lang == ENGLISH else f"{self.lang}/"


def find_sources(root: Path, lang: str = ENGLISH) -> Sources:
    """The walkthrough notebooks, the exercises and the guides of the course at ``root``, in
    ``lang`` (the guides only in English)."""
    folder = root if lang == ENGLISH else root / lang
    prefix = "" if lang == ENGLISH else f"{lang}/"
    walkthrough = sorted((folder / "notebooks").glob("*.ipynb"))
    # an assignment is a notebook, or a folder of them (exercises/ps1/problem1.ipynb)
    exercises = sorted(
        p
        for p in (folder / "exercises").rglob("*.ipynb")
        if len(p.relative_to(folder / "exercises").parts) <= 2
        and ".ipynb_checkpoints" not in p.parts
    )
    if not walkthrough and not exercises:
        raise NotebookError(
            f"no notebooks in {folder / 'notebooks'} and no exercises in {folder / 'exercises'}: "
            "nothing to build a site from (run `hookviz build` first)."
        )
    guides = (
        [(src, dst, label) for src, dst, label in GUIDES if (root / src).is_file()]
        if lang == ENGLISH
        else []
    )
    pages_of = {
        f"{prefix}notebooks/{p.name}": f"{prefix}walkthrough/{p.stem}.html" for p in walkthrough
    }
    pages_of |= {exercise_source(root, p): exercise_page(folder, p, prefix) for p in exercises}
    pages_of |= {src: dst for src, dst, _ in guides}
    if lang == ENGLISH:
        pages_of["README.md"] = "index.html"
    return Sources(walkthrough, exercises, guides, pages_of, lang, folder)


def exercise_source(root: Path, path: Path) -> str:
    """An exercise's repository path: exercises/NN-name.ipynb, or exercises/ps1/problem1.ipynb."""
    return path.relative_to(root).as_posix()


def exercise_page(folder: Path, path: Path, prefix: str = "") -> str:
    """An exercise's page: assignments/NN-name.html, or assignments/ps1-problem1.html (one level,
    so that every assignment page links the site the same way)."""
    name = "-".join(path.relative_to(folder / "exercises").with_suffix("").parts)
    return f"{prefix}assignments/{name}.html"
