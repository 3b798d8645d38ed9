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
from .article import ASSETS, Article, Links, markdown_article, notebook_article
from .assignment import exercise_for_page
from .labels import LANGUAGE_NAMES, labels
from .pages import Alternate, Page, guide_pages, landing_and_search, navigation, notebook_pages
from .search import SearchDocument, search_index_script
from .sources import ENGLISH, Sources, exercise_source, find_sources
from .widget_state import widget_views

STATIC = Path(__file__).parent / "static"
TEMPLATES = Path(__file__).parent / "templates"
SITE_TITLE = "hookviz"


@dataclass
class SiteReport:
    out: Path
    pages: list[str]
    widgets: int
    seconds: float
    stateless: list[str] = field(default_factory=list)  # widget views drawn as their repr only


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
    from ..widgets import (
        ApplyTraversal,
        CompiledTimeline,
        HookInventory,
        HookMonitor,
        HookTimeline,
        Prediction,
    )
    from ..widgets.base import front_end

    modules = {}
    for cls in (
        ApplyTraversal,
        CompiledTimeline,
        HookInventory,
        HookMonitor,
        HookTimeline,
        Prediction,
    ):
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


def make_articles(
    root: Path,
    sources: Sources,
    links: Links,
    executed: list[tuple[Any, dict]],
    english: dict[str, Article] | None = None,
) -> tuple[dict[str, Article], list[str]]:
    """Every source of one language as an article (``executed``: its walkthrough, run for its
    widgets), and the widget views that have no state to play from. ``english``: the English
    articles, whose heading ids a translation takes (by repository path without the language)."""
    lang, prefix = sources.lang, sources.prefix
    english = english or {}

    def anchors(source: str) -> dict[str, list[str]]:
        original = english.get(source.removeprefix(prefix))
        return original.cell_anchors if original else {}

    articles: dict[str, Article] = {}
    stateless = []
    for path, (notebook, widgets) in zip(sources.walkthrough, executed, strict=True):
        source = f"{prefix}notebooks/{path.name}"
        missing = [m for m in widget_views(notebook) if m not in widgets]
        if missing:  # closed before the end, or not a hookviz widget: the page shows its repr
            stateless.append(f"{source}: {len(missing)} widget view(s) with no state")
        articles[source] = notebook_article(
            notebook,
            widgets,
            source,
            sources.pages_of[source],
            links,
            lang=lang,
            anchors=anchors(source),
        )
    for path in sources.exercises:
        source = exercise_source(root, path)
        solution = sources.folder / "solutions" / path.relative_to(sources.folder / "exercises")
        notebook = exercise_for_page(path, solution if solution.is_file() else None)
        articles[source] = notebook_article(
            notebook,
            {},
            source,
            sources.pages_of[source],
            links,
            lang=lang,
            anchors=anchors(source),
        )
    for src, dst, _ in sources.guides:
        text = (root / src).read_text(encoding="utf-8")
        articles[src] = markdown_article(text, src, dst, links)
    return articles, stateless


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


def search_index_path(lang: str) -> str:
    """Where a language's search index is: _static/search-index.js, or ko/_static/..."""
    return "_static/search-index.js" if lang == ENGLISH else f"{lang}/_static/search-index.js"


def link_languages(pages: list[Page]) -> None:
    """Give every page its language switch: the same page in each other language when there is
    one, else that language's landing page (the guides and the reference are English only)."""
    langs = sorted({p.lang for p in pages}, key=lambda lang: (lang != ENGLISH, lang))
    if len(langs) < 2:
        return
    paths = {p.path for p in pages}

    def prefix(lang: str) -> str:
        return "" if lang == ENGLISH else f"{lang}/"

    for page in pages:
        bare = page.path.removeprefix(prefix(page.lang))
        for lang in langs:
            if lang != page.lang:
                same = prefix(lang) + bare
                path = same if same in paths else f"{prefix(lang)}index.html"
                page.alternates.append(Alternate(lang, LANGUAGE_NAMES.get(lang, lang), path))


def write_site(
    out: Path,
    root: Path,
    editions: list[Sources],
    pages: list[Page],
    navs: dict[str, list[dict]],
    links: Links,
    env: Any,
) -> None:
    """Write everything into a staging folder next to ``out``, then put it in ``out``'s place."""
    staging = Path(tempfile.mkdtemp(prefix=".site-", dir=out.parent))
    try:
        shutil.copytree(STATIC, staging / "_static")
        (staging / "_static" / "hookviz-widgets.js").write_text(_widget_modules(), encoding="utf-8")
        (staging / "_static" / "pygments.css").write_text(_pygments_css(), encoding="utf-8")
        for sources in editions:  # each language's own index, of its own pages
            index = staging / search_index_path(sources.lang)
            index.parent.mkdir(parents=True, exist_ok=True)
            mine = [p for p in pages if p.lang == sources.lang]
            index.write_text(search_index_script(search_documents(mine)), encoding="utf-8")
        (staging / ".nojekyll").write_text("", encoding="utf-8")  # GitHub Pages: keep _static/
        template = env.get_template("page.html.j2")
        for page in pages:
            target = staging / page.path
            target.parent.mkdir(parents=True, exist_ok=True)
            prefix = "" if page.lang == ENGLISH else f"{page.lang}/"
            target.write_text(
                template.render(
                    page=page,
                    nav=navs[page.lang],
                    root="../" * page.path.count("/"),
                    site_title=SITE_TITLE,
                    ui=labels(page.lang),
                    home=f"{prefix}index.html",
                    search_page=f"{prefix}search.html",
                    search_index=search_index_path(page.lang),
                ),
                encoding="utf-8",
            )
        for asset in sorted(links.assets):
            (staging / ASSETS / asset).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(root / asset, staging / ASSETS / asset)
        for sources in editions:
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
    """Build the site from ``root``'s notebooks, exercises and guides into ``out`` (root/site),
    and each language of course.toml's ``[i18n]`` into ``out/<lang>/``."""
    start = time.monotonic()
    root = Path(root).resolve()
    out = Path(out).resolve() if out else root / "site"
    config = load_course_config(root)
    editions = [find_sources(root)]
    editions += [
        find_sources(root, lang)
        for lang in config.languages
        if (root / lang / "notebooks").is_dir() or (root / lang / "exercises").is_dir()
    ]
    pages_of = {src: dst for sources in editions for src, dst in sources.pages_of.items()}
    links = Links(pages_of, config.files_url, root)
    # every language's walkthrough in one pool: the notebooks of one language are not enough
    # to keep every worker busy
    walkthrough = [path for sources in editions for path in sources.walkthrough]
    executed = iter(_execute_all(walkthrough, jobs or min(2, os.cpu_count() or 1)))
    env = _environment()
    pages: list[Page] = []
    navs: dict[str, list[dict]] = {}
    stateless: list[str] = []
    english: dict[str, Article] = {}
    for sources in editions:
        ran = [next(executed) for _ in sources.walkthrough]
        articles, missing = make_articles(root, sources, links, ran, english)
        english = english or articles
        stateless += missing
        walk_items, task_items, navs[sources.lang] = navigation(
            sources, articles, editions[0].guides
        )
        pages += notebook_pages((walk_items, task_items), articles, config, sources)
        if sources.lang == ENGLISH:
            pages += guide_pages(sources, articles, links)
        pages += landing_and_search(sources, (walk_items, task_items), links, config, env)
    link_languages(pages)
    write_site(out, root, editions, pages, navs, links, env)
    widgets = sum(p.widgets for p in pages)
    return SiteReport(out, [p.path for p in pages], widgets, time.monotonic() - start, stateless)
