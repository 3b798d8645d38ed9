"""The site's pages of one language: the navigation, a page per notebook with its actions and
its neighbours, the landing page, the search page, and the guides and reference (English)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .article import Article, Heading, Links, Section, finish
from .labels import labels
from .reference import reference_html
from .sources import ENGLISH, Sources

REFERENCE = "reference.html"  # the package reference: English only (the library prints English)


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


@dataclass(frozen=True)
class Alternate:
    """The same page in another language: its language, its name in itself, and its path."""

    lang: str
    name: str
    path: str


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
    lang: str = ENGLISH
    alternates: list[Alternate] = field(default_factory=list)  # the language switch


def run_locally(config: Any, source: str, lang: str = ENGLISH) -> Action:
    """ "Run in JupyterLab": the commands that open this notebook on the reader's machine."""
    ui = labels(lang)
    folder = config.repository.rstrip("/").rsplit("/", 1)[-1]
    return Action(
        ui["run_locally"],
        "../index.html#run-it",
        steps=[
            f"git clone {config.repository}",
            f"cd {folder}",
            f"make lab    # {ui['run_locally_then']} {source}",
        ],
    )


def article_page(
    path: str, title: str, article: Article, toc_levels: tuple[int, ...], lang: str = ENGLISH
) -> Page:
    """A page that is one article, its contents listing the headings of ``toc_levels``."""
    toc = [h for h in article.headings if h.level in toc_levels]
    return Page(path, title, article.html, toc=toc, sections=article.sections, lang=lang)


def navigation(
    sources: Sources, articles: dict[str, Article], guides: list[tuple[str, str, str]]
) -> tuple[list[NavItem], list[NavItem], list[dict]]:
    """The walkthrough's and the assignments' items, and the whole navigation (``guides``: the
    English guides, which every language links to)."""
    ui, prefix = labels(sources.lang), sources.prefix

    def items(names: list[str]) -> list[NavItem]:
        return [
            NavItem(articles[s].title or Path(s).stem, sources.pages_of[s], articles[s].summary)
            for s in names
        ]

    walk_items = items([f"{prefix}notebooks/{p.name}" for p in sources.walkthrough])
    task_items = items([s for s in sources.pages_of if s.startswith(f"{prefix}exercises/")])
    nav = [
        {"title": ui["start"], "links": [NavItem(ui["home"], f"{prefix}index.html")]},
        {"title": ui["walkthrough"], "links": walk_items},
        {"title": ui["assignments"], "links": task_items},
        {
            "title": ui["reference"],
            "links": [
                *(NavItem(label, dst) for _, dst, label in guides),
                NavItem(ui["package_reference"], REFERENCE),
                NavItem(ui["search"], f"{prefix}search.html"),
            ],
        },
    ]
    return walk_items, task_items, nav


def notebook_pages(
    sequences: tuple[list[NavItem], ...],
    articles: dict[str, Article],
    config: Any,
    sources: Sources,
) -> list[Page]:
    """A page per notebook, with its actions and the previous and next in its sequence."""
    ui, pages = labels(sources.lang), []
    source_of = {page: source for source, page in sources.pages_of.items()}
    for sequence in sequences:
        for i, item in enumerate(sequence):
            source = source_of[item.path]
            article = articles[source]
            download = f"{Path(item.path).stem}.ipynb"  # copied beside the page (write_site)
            colab = [Action(ui["open_in_colab"], config.colab_url(source))] if config.colab else []
            pages.append(
                Page(
                    item.path,
                    item.label,
                    article.html,
                    toc=[h for h in article.headings if h.level in (2, 3)],
                    actions=[
                        *colab,
                        run_locally(config, source, sources.lang),
                        Action(ui["download"], download, download=True),
                    ],
                    previous=sequence[i - 1] if i > 0 else None,
                    next=sequence[i + 1] if i + 1 < len(sequence) else None,
                    widgets=article.widgets,
                    sections=article.sections,
                    lang=sources.lang,
                )
            )
    return pages


def guide_pages(sources: Sources, articles: dict[str, Article], links: Links) -> list[Page]:
    """The guides and the package reference: English pages, which every language links to."""
    pages = [article_page(dst, label, articles[src], (2, 3)) for src, dst, label in sources.guides]
    reference = finish(reference_html(), "reference", REFERENCE, links)
    pages.append(article_page(REFERENCE, "Package reference", reference, (2,)))
    return pages


def landing_and_search(
    sources: Sources,
    items: tuple[list[NavItem], list[NavItem]],
    links: Links,
    config: Any,
    env: Any,
) -> list[Page]:
    """The language's landing page and search page."""
    lang, prefix = sources.lang, sources.prefix
    ui = labels(lang)
    template = "landing.html.j2" if lang == ENGLISH else f"landing.{lang}.html.j2"
    landing = env.get_template(template).render(
        root="",
        walkthrough=[_relative(item, prefix) for item in items[0]],
        assignments=[_relative(item, prefix) for item in items[1]],
        guides="../" * prefix.count("/"),  # from this landing page to the English guides
        repository=config.repository,
        colab=config.colab,
        # this repository's own `make lab`; another course is opened with plain jupyter lab
        make_lab=(links.root / "Makefile").is_file()
        and "\nlab:" in (links.root / "Makefile").read_text(encoding="utf-8"),
    )
    # "index" resolves the landing's images from the repository's root in every language
    landing_article = finish(landing, "index", f"{prefix}index.html", links, lang=lang)
    search_html = env.get_template("search.html.j2").render(ui=ui)
    return [
        article_page(f"{prefix}index.html", ui["home"], landing_article, (2,), lang),
        Page(f"{prefix}search.html", ui["search"], search_html, search=True, lang=lang),
    ]


def _relative(item: NavItem, prefix: str) -> NavItem:
    """``item`` with its path from its language's root (where that language's landing page is)."""
    return NavItem(item.label, item.path.removeprefix(prefix), item.summary)
