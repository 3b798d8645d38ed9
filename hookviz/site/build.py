"""`hookviz site`: the course as a static site whose widgets play without a kernel.

The walkthrough notebooks run once at build time (their stored outputs keep only a widget's
repr), and each widget's recorded state goes into its page; the page's host draws it with the
widget's own ES module, the one JupyterLab and Colab load. The assignments are shown as
students get them. Everything the pages use is copied into the site: no request leaves it.
"""

from __future__ import annotations

import concurrent.futures
import json
import multiprocessing
import os
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..course.authoring.stamp import load_course_config
from ..course.format.notebooks import NotebookError
from .article import (
    ASSETS,
    Article,
    Heading,
    Links,
    Section,
    finish,
    markdown_article,
    notebook_article,
)
from .assignment import exercise_for_page
from .reference import reference_html
from .search import SearchDocument, search_index_script
from .widget_state import widget_views

STATIC = Path(__file__).parent / "static"
TEMPLATES = Path(__file__).parent / "templates"
SITE_TITLE = "hookviz"
GUIDES = (  # (repository path, site path, label): the Markdown guides that get a page
    ("docs/instructors.md", "instructors.html", "Instructors' guide"),
    ("docs/CONVENTIONS.md", "conventions.html", "Notebook conventions"),
)


@dataclass
class NavItem:
    label: str
    path: str
    summary: str = ""


@dataclass
class Action:
    label: str
    href: str
    download: bool = False
    steps: list[str] = field(default_factory=list)  # shell lines: shown in a disclosure


def run_locally(config: Any, source: str) -> Action:
    """ "Run in JupyterLab": the commands that open this notebook on the reader's machine."""
    folder = config.repository.rstrip("/").rsplit("/", 1)[-1]
    return Action(
        "Run in JupyterLab",
        "../index.html#run-it",
        steps=[
            f"git clone {config.repository}",
            f"cd {folder}",
            f"make lab    # sets up .venv, then opens JupyterLab; then open {source}",
        ],
    )


@dataclass
class Page:
    path: str  # relative to the site's root
    title: str
    html: str
    toc: list[Heading] = field(default_factory=list)
    actions: list[Action] = field(default_factory=list)
    previous: NavItem | None = None
    next: NavItem | None = None
    widgets: int = 0
    search: bool = False
    sections: list[Section] = field(default_factory=list)  # what the search index holds


@dataclass
class SiteReport:
    out: Path
    pages: list[str]
    widgets: int
    seconds: float
    stateless: list[str] = field(default_factory=list)  # widget views drawn as their repr only


def _article_page(path: str, title: str, article: Article, toc_levels: tuple[int, ...]) -> Page:
    """A page that is one article, its contents listing the headings of ``toc_levels``."""
    toc = [h for h in article.headings if h.level in toc_levels]
    return Page(path, title, article.html, toc=toc, sections=article.sections)


def _label(article: Article, fallback: str) -> str:
    return article.title or fallback


def _run_notebook(path: str) -> tuple[Any, dict]:
    """In a worker process: execute one notebook and collect its widgets."""
    from .figures import kernel_settings
    from .widget_state import run_with_widgets

    with tempfile.TemporaryDirectory(prefix="hookviz-site-settings-") as settings:
        return run_with_widgets(Path(path), kernel_settings(Path(settings)))


def _execute_all(paths: list[Path], jobs: int) -> list[tuple[Any, dict]]:
    if jobs <= 1 or len(paths) <= 1:
        return [_run_notebook(str(p)) for p in paths]
    context = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(jobs, mp_context=context) as pool:
        return list(pool.map(_run_notebook, [str(p) for p in paths]))


def _environment() -> Any:
    from jinja2 import Environment, FileSystemLoader, select_autoescape

    return Environment(
        loader=FileSystemLoader(str(TEMPLATES)),
        autoescape=select_autoescape(["html", "j2"]),
        keep_trailing_newline=True,
    )


def _widget_modules() -> str:
    """``window.HOOKVIZ_WIDGETS``: each widget's ES module and CSS, the text the kernel sends."""
    from ..widgets import ApplyTraversal, HookInventory, HookMonitor, HookTimeline, Prediction
    from ..widgets.base import front_end

    modules = {}
    for cls in (ApplyTraversal, HookInventory, HookMonitor, HookTimeline, Prediction):
        esm, css = front_end(cls._front_end)
        modules[cls._front_end] = {"esm": esm, "css": css}
    text = json.dumps(modules, ensure_ascii=False).replace("</", "<\\/")
    return f"window.HOOKVIZ_WIDGETS = {text};\n"


def _pygments_css() -> str:
    from pygments.formatters import HtmlFormatter

    light = HtmlFormatter(style="default").get_style_defs(".highlight")
    dark = HtmlFormatter(style="github-dark").get_style_defs(".highlight")
    return (
        "/* Code colours: pygments' default style, and github-dark for a dark system theme. */\n"
        f"{light}\n@media (prefers-color-scheme: dark) {{\n{dark}\n}}\n"
    )


@dataclass
class Sources:
    """What the site is built from, and the page each source becomes."""

    walkthrough: list[Path]
    exercises: list[Path]
    guides: list[tuple[str, str, str]]  # (repository path, site path, label)
    pages_of: dict[str, str]  # repository path -> site path


def find_sources(root: Path) -> Sources:
    """The walkthrough notebooks, the exercises and the guides of the course at ``root``."""
    walkthrough = sorted((root / "notebooks").glob("*.ipynb"))
    # an assignment is a notebook, or a folder of them (exercises/ps1/problem1.ipynb)
    exercises = sorted(
        p
        for p in (root / "exercises").rglob("*.ipynb")
        if len(p.relative_to(root / "exercises").parts) <= 2 and ".ipynb_checkpoints" not in p.parts
    )
    if not walkthrough and not exercises:
        raise NotebookError(
            f"no notebooks in {root / 'notebooks'} and no exercises in {root / 'exercises'}: "
            "nothing to build a site from (run `hookviz build` first)."
        )
    guides = [(src, dst, label) for src, dst, label in GUIDES if (root / src).is_file()]
    pages_of = {f"notebooks/{p.name}": f"walkthrough/{p.stem}.html" for p in walkthrough}
    pages_of |= {exercise_source(root, p): exercise_page(root, p) for p in exercises}
    pages_of |= {src: dst for src, dst, _ in guides}
    pages_of["README.md"] = "index.html"
    return Sources(walkthrough, exercises, guides, pages_of)


def exercise_source(root: Path, path: Path) -> str:
    """An exercise's repository path: exercises/NN-name.ipynb, or exercises/ps1/problem1.ipynb."""
    return path.relative_to(root).as_posix()


def exercise_page(root: Path, path: Path) -> str:
    """An exercise's page: assignments/NN-name.html, or assignments/ps1-problem1.html (one level,
    so that every assignment page links the site the same way)."""
    return (
        f"assignments/{'-'.join(path.relative_to(root / 'exercises').with_suffix('').parts)}.html"
    )


def make_articles(
    root: Path, sources: Sources, links: Links, jobs: int
) -> tuple[dict[str, Article], list[str]]:
    """Every source as an article (the walkthrough run for its widgets), and the widget views
    that have no state to play from."""
    executed = _execute_all(sources.walkthrough, jobs)
    articles: dict[str, Article] = {}
    stateless = []
    for path, (notebook, widgets) in zip(sources.walkthrough, executed, strict=True):
        source = f"notebooks/{path.name}"
        missing = [m for m in widget_views(notebook) if m not in widgets]
        if missing:  # closed before the end, or not a hookviz widget: the page shows its repr
            stateless.append(f"{source}: {len(missing)} widget view(s) with no state")
        articles[source] = notebook_article(
            notebook, widgets, source, sources.pages_of[source], links
        )
    for path in sources.exercises:
        source = exercise_source(root, path)
        solution = root / "solutions" / path.relative_to(root / "exercises")
        notebook = exercise_for_page(path, solution if solution.is_file() else None)
        articles[source] = notebook_article(notebook, {}, source, sources.pages_of[source], links)
    for src, dst, _ in sources.guides:
        text = (root / src).read_text(encoding="utf-8")
        articles[src] = markdown_article(text, src, dst, links)
    return articles, stateless


def navigation(
    sources: Sources, articles: dict[str, Article]
) -> tuple[list[NavItem], list[NavItem], list[dict]]:
    """The walkthrough's and the assignments' items, and the whole navigation."""

    def items(names: list[str]) -> list[NavItem]:
        return [
            NavItem(_label(articles[s], Path(s).stem), sources.pages_of[s], articles[s].summary)
            for s in names
        ]

    walk_items = items([f"notebooks/{p.name}" for p in sources.walkthrough])
    task_items = items([s for s in sources.pages_of if s.startswith("exercises/")])
    guide_items = [NavItem(label, dst) for _, dst, label in sources.guides]
    nav = [
        {"title": "Start", "links": [NavItem("Home", "index.html")]},
        {"title": "Walkthrough", "links": walk_items},
        {"title": "Assignments", "links": task_items},
        {
            "title": "Reference",
            "links": [
                *guide_items,
                NavItem("Package reference", "reference.html"),
                NavItem("Search", "search.html"),
            ],
        },
    ]
    return walk_items, task_items, nav


def notebook_pages(
    sequences: tuple[list[NavItem], ...],
    articles: dict[str, Article],
    config: Any,
    pages_of: dict[str, str],
) -> list[Page]:
    """A page per notebook, with its actions and the previous and next in its sequence."""
    pages = []
    for sequence in sequences:
        for i, item in enumerate(sequence):
            source = next(s for s, page in pages_of.items() if page == item.path)
            article = articles[source]
            download = f"{Path(item.path).stem}.ipynb"  # copied beside the page (write_site)
            pages.append(
                Page(
                    item.path,
                    item.label,
                    article.html,
                    toc=[h for h in article.headings if h.level in (2, 3)],
                    actions=[
                        *(
                            [Action("Open in Colab", config.colab_url(source))]
                            if config.colab
                            else []
                        ),
                        run_locally(config, source),
                        Action("Download the notebook", download, download=True),
                    ],
                    previous=sequence[i - 1] if i > 0 else None,
                    next=sequence[i + 1] if i + 1 < len(sequence) else None,
                    widgets=article.widgets,
                    sections=article.sections,
                )
            )
    return pages


def other_pages(
    sources: Sources,
    articles: dict[str, Article],
    walk_items: list[NavItem],
    task_items: list[NavItem],
    links: Links,
    config: Any,
    env: Any,
) -> list[Page]:
    """The guides, the package reference, the landing page and the search page."""
    pages = [_article_page(dst, label, articles[src], (2, 3)) for src, dst, label in sources.guides]
    reference = finish(reference_html(), "reference", "reference.html", links)
    pages.append(_article_page("reference.html", "Package reference", reference, (2,)))
    landing = env.get_template("landing.html.j2").render(
        root="",
        walkthrough=walk_items,
        assignments=task_items,
        repository=config.repository,
        colab=config.colab,
        # this repository's own `make lab`; another course is opened with plain jupyter lab
        make_lab=(links.root / "Makefile").is_file()
        and "\nlab:" in (links.root / "Makefile").read_text(encoding="utf-8"),
    )
    landing_article = finish(landing, "index", "index.html", links)
    pages.append(_article_page("index.html", "Home", landing_article, (2,)))
    search_html = env.get_template("search.html.j2").render()
    pages.append(Page("search.html", "Search", search_html, search=True))
    return pages


def search_documents(pages: list[Page]) -> list[SearchDocument]:
    """What the offline search indexes: every section of every page."""
    return [
        SearchDocument(
            f"{page.path}#{section.anchor}" if section.anchor else page.path,
            page.title,
            section.title or page.title,
            section.text,
        )
        for page in pages
        for section in page.sections
    ]


def write_site(
    out: Path,
    root: Path,
    sources: Sources,
    pages: list[Page],
    nav: list[dict],
    links: Links,
    env: Any,
) -> None:
    """Write everything into a staging folder next to ``out``, then put it in ``out``'s place."""
    staging = Path(tempfile.mkdtemp(prefix=".site-", dir=out.parent))
    try:
        shutil.copytree(STATIC, staging / "_static")
        (staging / "_static" / "hookviz-widgets.js").write_text(_widget_modules(), encoding="utf-8")
        (staging / "_static" / "pygments.css").write_text(_pygments_css(), encoding="utf-8")
        (staging / "_static" / "search-index.js").write_text(
            search_index_script(search_documents(pages)), encoding="utf-8"
        )
        (staging / ".nojekyll").write_text("", encoding="utf-8")  # GitHub Pages: keep _static/
        template = env.get_template("page.html.j2")
        for page in pages:
            target = staging / page.path
            target.parent.mkdir(parents=True, exist_ok=True)
            depth = page.path.count("/")
            target.write_text(
                template.render(page=page, nav=nav, root="../" * depth, site_title=SITE_TITLE),
                encoding="utf-8",
            )
        for asset in sorted(links.assets):
            (staging / ASSETS / asset).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(root / asset, staging / ASSETS / asset)
        for path in [*sources.walkthrough, *sources.exercises]:  # beside its page, its name
            page = Path(sources.pages_of[path.relative_to(root).as_posix()])
            shutil.copyfile(path, staging / page.with_suffix(".ipynb"))
        if out.exists():
            shutil.rmtree(out)
        staging.rename(out)
    finally:
        if staging.exists():
            shutil.rmtree(staging)


def build_site(root: Path, out: Path | None = None, *, jobs: int | None = None) -> SiteReport:
    """Build the site from ``root``'s notebooks, exercises and guides into ``out`` (root/site)."""
    start = time.monotonic()
    root = Path(root).resolve()
    out = Path(out).resolve() if out else root / "site"
    config = load_course_config(root)
    sources = find_sources(root)
    links = Links(sources.pages_of, config.files_url, root)
    jobs = jobs or min(2, os.cpu_count() or 1)
    articles, stateless = make_articles(root, sources, links, jobs)
    walk_items, task_items, nav = navigation(sources, articles)
    env = _environment()
    pages = notebook_pages((walk_items, task_items), articles, config, sources.pages_of)
    pages += other_pages(sources, articles, walk_items, task_items, links, config, env)
    write_site(out, root, sources, pages, nav, links, env)
    widgets = sum(p.widgets for p in pages)
    return SiteReport(out, [p.path for p in pages], widgets, time.monotonic() - start, stateless)
