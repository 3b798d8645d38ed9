"""A notebook or a Markdown guide as a page's article: HTML, its headings, its search sections.

Notebooks go through nbconvert with the site's own template (``templates/hookviz_site``);
Markdown guides through the same Markdown renderer, so both read alike. Afterwards links are
rewritten for the site (a link to another notebook goes to its page; a link to another file in
the repository goes to GitHub), headings get unique ids, and the text is split at headings for
the search index.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from bs4 import BeautifulSoup

from ..course.authoring.execute import WIDGET_VIEW
from ..course.format.notebooks import CONTENT, stamp_role
from .labels import ENGLISH, labels
from .widget_state import WidgetState

TEMPLATES = Path(__file__).parent / "templates"
# A widget view first (the host draws it), then what a browser shows best.
DISPLAY_PRIORITY = [
    WIDGET_VIEW,
    "text/html",
    "image/svg+xml",
    "image/png",
    "image/jpeg",
    "text/markdown",
    "text/plain",
]
HEADINGS = ("h1", "h2", "h3")
ASSETS = "_assets"  # where the site keeps copies of the repository's images


@dataclass(frozen=True)
class Heading:
    level: int
    id: str
    text: str


@dataclass(frozen=True)
class Section:
    """A stretch of a page from one heading to the next, as the search index holds it."""

    anchor: str
    title: str
    text: str


@dataclass
class Article:
    html: str
    title: str
    headings: list[Heading] = field(default_factory=list)
    sections: list[Section] = field(default_factory=list)
    summary: str = ""  # the first paragraph, as plain text
    widgets: int = 0
    cell_anchors: dict[str, list[str]] = field(default_factory=dict)  # cell id -> heading ids


@dataclass(frozen=True)
class Links:
    """How a repository path becomes a link on the site."""

    pages: dict[str, str]  # repository path -> site path, for files that have a page
    repository_url: str  # e.g. https://github.com/OWNER/NAME/blob/BRANCH; "": none to link to
    root: Path  # the repository on disk
    assets: set[str] = field(default_factory=set)  # repository files the pages show (images)

    def asset(self, source: str, page: str, src: str) -> str:
        """An image in the repository, copied to the site's ``_assets/``: its link from ``page``."""
        parts = urlsplit(src)
        if parts.scheme or parts.netloc or not parts.path:
            return src
        target = posixpath.normpath(posixpath.join(posixpath.dirname(source), parts.path))
        if not (self.root / target).is_file():
            return src  # left as written: the site's link check reports it
        self.assets.add(target)
        return posixpath.relpath(f"{ASSETS}/{target}", posixpath.dirname(page) or ".")

    def href(self, source: str, page: str, href: str) -> str:
        """``href`` as written in ``source`` (a repository path), for the page at ``page``."""
        parts = urlsplit(href)
        if parts.scheme or parts.netloc or href.startswith(("#", "mailto:")) or not parts.path:
            return href
        target = posixpath.normpath(posixpath.join(posixpath.dirname(source), parts.path))
        fragment = f"#{parts.fragment}" if parts.fragment else ""
        if target in self.pages:
            here = posixpath.dirname(page) or "."
            return posixpath.relpath(self.pages[target], here) + fragment
        if (self.root / target).exists() and self.repository_url:
            return f"{self.repository_url}/{target}{fragment}"
        return href  # left as written: the site's link check reports it


def _alt_text(cell: Any) -> str:
    """A figure's alt text: the comment that opens its cell, or what drew it."""
    first = cell.get("source", "").strip().splitlines()[:1]
    if first and first[0].startswith("#") and not first[0].startswith("# NBVAL"):
        return first[0].lstrip("# ").strip()
    return "Figure drawn by the code above"


def _exporter(widgets: dict[str, WidgetState]) -> Any:
    from nbconvert import HTMLExporter

    def preferred(data: dict) -> list[str]:
        """The one type of an output the page shows (nbconvert's filter drops every widget view
        of a notebook without stored widget state, which ours never have)."""
        for mime in DISPLAY_PRIORITY:
            if mime == WIDGET_VIEW and data.get(mime, {}).get("model_id") not in widgets:
                continue
            if mime in data:
                return [mime]
        return []

    class SiteExporter(HTMLExporter):
        def register_filter(self, name: str, jinja_filter: Any) -> None:
            # HTMLExporter puts its own filter_data_type back on every conversion.
            super().register_filter(name, preferred if name == "filter_data_type" else jinja_filter)

    exporter = SiteExporter(
        extra_template_basedirs=[str(TEMPLATES)],
        template_name="hookviz_site",
        exclude_input_prompt=True,
        exclude_output_prompt=True,
    )
    exporter.register_filter("hv_alt", _alt_text)
    return exporter


def notebook_article(
    notebook: Any,
    widgets: dict[str, WidgetState],
    source: str,
    page: str,
    links: Links,
    *,
    lang: str = ENGLISH,
    anchors: dict[str, list[str]] | None = None,
) -> Article:
    """The notebook's cells as an article, its widget views drawn from ``widgets`` (the content
    cell `hookviz build` stamps is the notebook's, not the reader's: left out). ``anchors``: a
    translation's heading ids, the English notebook's by cell id (``Article.cell_anchors``)."""
    notebook.cells = [c for c in notebook.cells if stamp_role(c) != CONTENT]
    body, _ = _exporter(widgets).from_notebook_node(
        notebook, resources={"hookviz_widgets": widgets, "hookviz_ui": labels(lang)}
    )
    return finish(body, source, page, links, lang=lang, anchors=anchors)


def markdown_article(text: str, source: str, page: str, links: Links) -> Article:
    """A Markdown guide as an article (the renderer notebooks use)."""
    from nbconvert.filters.markdown_mistune import markdown2html_mistune

    return finish(markdown2html_mistune(text), source, page, links, github_ids=True)


def finish(
    html: str,
    source: str,
    page: str,
    links: Links,
    *,
    github_ids: bool = False,
    lang: str = ENGLISH,
    anchors: dict[str, list[str]] | None = None,
) -> Article:
    """Rewrite links, give headings unique ids and self-links, and split the text at headings.

    ``github_ids``: the heading ids GitHub gives a Markdown file, which its links were written for.
    ``anchors``: the ids to give the headings of each markdown cell, by cell id, in order (a
    translation takes its English notebook's, so that #a-section works in every language).
    """
    soup = BeautifulSoup(html, "html.parser")
    for a in soup.find_all("a", href=True):
        if "anchor-link" in (a.get("class") or []):
            continue
        a["href"] = links.href(source, page, a["href"])
    for img in soup.find_all("img", src=True):
        img["src"] = links.asset(source, page, img["src"])
    for picture_source in soup.find_all("source", srcset=True):  # one URL: a theme's picture
        picture_source["srcset"] = links.asset(source, page, picture_source["srcset"])
    # Code and wide tables scroll sideways on a phone: the keyboard must reach them too.
    for node in soup.select("pre:not(.site-signature), .site-html, table"):
        if node.name != "table" or node.find_parent(class_="site-html") is None:
            node["tabindex"] = "0"
    headings, seen = [], set()
    in_cell: dict[str, list[str]] = {}  # cell id -> the ids of its headings, in order
    for tag in soup.find_all(HEADINGS):
        for old in tag.find_all("a", class_="anchor-link"):
            old.decompose()
        text = " ".join(tag.get_text().split())
        cell = tag.find_parent("div", class_="site-md")
        cell_id = cell.get("data-cell-id", "") if cell is not None else ""
        given = (anchors or {}).get(cell_id, [])
        nth = len(in_cell.get(cell_id, []))
        if nth < len(given):
            anchor = _unique(given[nth], seen)
        elif github_ids:
            anchor = _github_unique(_github_slug(text), seen)
        else:
            anchor = _unique(tag.get("id") or _slug(text), seen)
        if cell_id:
            in_cell.setdefault(cell_id, []).append(anchor)
        tag["id"] = anchor
        link = soup.new_tag("a", attrs={"class": "site-anchor", "href": f"#{anchor}"})
        link["aria-label"] = f"{labels(lang)['anchor']} {text}"
        link.string = "#"
        tag.append(link)
        headings.append(Heading(int(tag.name[1]), anchor, text))
    first_h1 = next((h for h in headings if h.level == 1), None)
    paragraph = soup.find("p")
    return Article(
        html=str(soup),
        title=first_h1.text if first_h1 else "",
        headings=headings,
        sections=_sections(soup),
        summary=summary_sentences(paragraph.get_text()) if paragraph else "",
        widgets=len(soup.select(".hv-site-widget")),
        cell_anchors=in_cell,
    )


def summary_sentences(text: str) -> str:
    """A paragraph as a summary that reads alone: its sentences, without a last one that
    stops on a colon (it introduces a list the summary does not show)."""
    text = " ".join(text.split())
    sentences = re.split(r"(?<=[.!?:])\s+(?=[A-Z`*(\"'])", text)
    while len(sentences) > 1 and sentences[-1].rstrip().endswith(":"):
        sentences.pop()
    summary = " ".join(sentences)
    return summary[:-1] + "." if summary.endswith(":") else summary


def _slug(text: str) -> str:
    return re.sub(r"[^\w]+", "-", text.casefold()).strip("-") or "section"


def _github_slug(text: str) -> str:
    """GitHub's heading anchor: lower case, only letters, digits, '-', '_' and spaces, spaces as '-'."""
    return re.sub(r"[^\w\- ]", "", text.casefold()).replace(" ", "-")


def _github_unique(anchor: str, seen: set[str]) -> str:
    candidate, n = anchor, 0
    while candidate in seen:  # GitHub numbers a repeated heading -1, -2, ...
        n += 1
        candidate = f"{anchor}-{n}"
    seen.add(candidate)
    return candidate


def _unique(anchor: str, seen: set[str]) -> str:
    candidate, n = anchor, 1
    while candidate in seen:
        n += 1
        candidate = f"{anchor}-{n}"
    seen.add(candidate)
    return candidate


# What the search index leaves out: code (a cell's input, its outputs, the reference's
# signatures and examples), the buttons' labels, and the widgets (their fallback text is a
# repr). Inline code in prose stays: it is words.
NOT_INDEXED = (
    ".site-input",
    ".site-outputs",
    ".hv-site-widget",
    "button",
    ".site-anchor",
    "pre",  # code blocks: a guide's shell lines, the reference's signatures
)
BLOCKS = {"p", "li", "td", "th", "dt", "dd", "pre", "div", "section", "blockquote", "tr"}


def _sections(soup: BeautifulSoup) -> list[Section]:
    """The article's prose split at h1-h3, each part under its heading's anchor."""
    skipped = {id(node) for selector in NOT_INDEXED for node in soup.select(selector)}
    sections: list[Section] = []
    anchor, title, parts = "", "", []
    block = None
    for node in soup.find_all(string=True):
        parent = node.parent
        if parent.name in ("script", "style") or parent.find_parent(["script", "style"]):
            continue
        if any(id(p) in skipped for p in (parent, *parent.parents)):
            continue
        heading = parent if parent.name in HEADINGS else parent.find_parent(HEADINGS)
        if heading is not None:
            if heading.get("id") != anchor:
                if parts or title:
                    sections.append(Section(anchor, title, _join(parts)))
                anchor, title, parts = heading["id"], " ".join(heading.get_text().split()), []
                title = title.removesuffix("#").strip()
            continue
        here = parent if parent.name in BLOCKS else parent.find_parent(BLOCKS)
        if here is not block and parts:
            parts.append(" ")  # a new paragraph or list item; inline code stays in its word
        block = here
        parts.append(str(node))
    if parts or title:
        sections.append(Section(anchor, title, _join(parts)))
    return sections


def _join(parts: list[str]) -> str:
    return " ".join("".join(parts).split())
