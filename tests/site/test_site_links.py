"""The built site's links and references, read from its files (no browser): every relative link
lands on a file of the site and, with a #fragment, on an id of that page; and nothing a page
loads by itself (scripts, styles, images, fonts, frames) comes from outside the site."""

from __future__ import annotations

import posixpath
import re
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

from tests.site.pages import soup

pytestmark = pytest.mark.slow  # the site is built first (about a minute)

# What a page loads without being asked: (tag, attribute). <a href> is a link, not a load.
LOADS = [
    ("script", "src"),
    ("link", "href"),
    ("img", "src"),
    ("img", "srcset"),
    ("source", "src"),
    ("source", "srcset"),
    ("iframe", "src"),
    ("frame", "src"),
    ("embed", "src"),
    ("object", "data"),
    ("video", "src"),
    ("video", "poster"),
    ("audio", "src"),
    ("track", "src"),
    ("input", "src"),
    ("image", "href"),
    ("image", "xlink:href"),
    ("use", "href"),
    ("use", "xlink:href"),
    ("form", "action"),
]
CSS_URL = re.compile(r"""url\(\s*(['"]?)(.*?)\1\s*\)|@import\s+(['"])(.*?)\3""", re.IGNORECASE)
# A script that fetches or imports an absolute URL (quotes may be JSON-escaped: \").
JS_FETCH = re.compile(
    r"""(?:\bimport\s*\(?|\bfrom|\bfetch\s*\(|\bimportScripts\s*\(|\.src\s*=|"""
    r"""new\s+(?:Worker|SharedWorker|WebSocket|EventSource)\s*\()\s*\\?["'`]((?:https?:|wss?:)?//[^"'`\\]*)""",
)


def relative_problem(url: str) -> str | None:
    """Why ``url`` is not a path inside the site (None when it is one)."""
    parts = urlsplit(url)
    if parts.scheme:
        return f"has a scheme ({parts.scheme}:)"
    if url.startswith("//"):
        return "is protocol-relative (a host outside the site)"
    if url.startswith("/"):
        return "starts at the host's root (not the site's: wrong under a sub-path or file://)"
    return None


def resolve(site: Path, page: str, url: str) -> tuple[str | None, str]:
    """The site path a relative ``url`` on ``page`` points to (None: outside the site), and its
    fragment."""
    parts = urlsplit(url)
    if not parts.path:  # "#here" or "?q=": this page
        return page, unquote(parts.fragment)
    joined = posixpath.normpath(posixpath.join(posixpath.dirname(page), unquote(parts.path)))
    if joined == ".." or joined.startswith("../"):
        return None, unquote(parts.fragment)
    return joined, unquote(parts.fragment)


def ids_of(site: Path, page: str) -> set[str]:
    document = soup(site, page)
    return {tag["id"] for tag in document.find_all(id=True)} | {
        tag["name"] for tag in document.find_all("a", attrs={"name": True})
    }


def srcset_urls(value: str) -> list[str]:
    if value.strip().startswith("data:"):  # one data: URI (its commas are its own)
        return [value.split()[0]]
    return [item.split()[0] for item in value.split(",") if item.strip()]


def test_every_relative_link_reaches_a_page_of_the_site_and_its_anchor(built_site):
    site, broken, checked = built_site.root, [], 0
    for page in built_site.pages:
        for link in soup(site, page).find_all("a", href=True):
            href = link["href"].strip()
            where = f"{page}: <a href={href!r}> ({' '.join(link.get_text().split())[:40]!r})"
            checked += 1
            parts = urlsplit(href)
            if parts.scheme in ("http", "https"):
                if not parts.netloc:
                    broken.append(f"{where}: not an absolute URL")
                continue
            if parts.scheme == "mailto":
                if not parts.path:
                    broken.append(f"{where}: no address")
                continue
            problem = "is empty" if not href or href == "#" else relative_problem(href)
            if problem:
                broken.append(f"{where}: {problem}")
                continue
            target, fragment = resolve(site, page, href)
            if target is None:
                broken.append(f"{where}: leads out of the site")
            elif not (site / target).is_file():
                broken.append(f"{where}: no file {target} in the site")
            elif fragment and not target.endswith(".html"):
                broken.append(f"{where}: a #fragment on {target}, which is not a page")
            elif fragment and fragment not in ids_of(site, target):
                broken.append(f"{where}: {target} has no id {fragment!r}")
    assert checked > 100  # the crawl found the site's links
    assert not broken, f"{len(broken)} broken links:\n" + "\n".join(broken)


def test_nothing_a_page_or_a_stylesheet_loads_comes_from_outside_the_site(built_site):
    site, outside = built_site.root, []

    def check(where: str, origin: str, url: str) -> None:
        url = url.strip()
        if not url or url.startswith(("data:", "#")):
            return
        problem = relative_problem(url)
        if problem:
            outside.append(f"{where}: {url!r} {problem}")
            return
        target, _ = resolve(site, origin, url)
        if target is None or not (site / target).is_file():
            outside.append(f"{where}: {url!r} is not a file of the site")

    for page in built_site.pages:
        document = soup(site, page)
        for tag, attribute in LOADS:
            for element in document.find_all(tag, attrs={attribute: True}):
                values = element[attribute]
                urls = srcset_urls(values) if attribute == "srcset" else [values]
                for url in urls:
                    check(f"{page}: <{tag} {attribute}>", page, url)
        for element in document.find_all("meta", attrs={"http-equiv": True}):
            if element["http-equiv"].lower() == "refresh":
                outside.append(f"{page}: <meta http-equiv=refresh> leaves the page by itself")
        styles = [e.get("style", "") for e in document.find_all(style=True)]
        styles += [e.get_text() for e in document.find_all("style")]
        for css in styles:
            for match in CSS_URL.finditer(css):
                check(f"{page}: inline CSS", page, match[2] or match[4])
        for script in document.find_all("script", src=False):
            if script.get("type") == "application/json":
                continue  # a widget's state: data, nothing the browser loads
            for match in JS_FETCH.finditer(script.get_text()):
                outside.append(f"{page}: an inline script loads {match[1]!r}")
    for path in sorted(site.rglob("*.css")):
        name = path.relative_to(site).as_posix()
        for match in CSS_URL.finditer(path.read_text(encoding="utf-8")):
            check(name, name, match[2] or match[4])
    for path in sorted(site.rglob("*.js")):
        name = path.relative_to(site).as_posix()
        for match in JS_FETCH.finditer(path.read_text(encoding="utf-8")):
            outside.append(f"{name} loads {match[1]!r}")
    assert not outside, f"{len(outside)} loads from outside the site:\n" + "\n".join(outside)


def test_walkthrough_pages_load_their_scripts_and_styles_from_the_site(built_site):
    """The no-kernel pages' own assets, by name: the host, the widgets' modules, the themes."""
    for page in built_site.walkthrough():
        document = soup(built_site.root, page)
        scripts = [s["src"] for s in document.find_all("script", src=True)]
        styles = [s["href"] for s in document.find_all("link", rel="stylesheet")]
        for src in [*scripts, *styles]:
            assert relative_problem(src) is None and src.startswith("../_static/"), (page, src)
        assert {"../_static/host.js", "../_static/hookviz-widgets.js"} <= set(scripts), page
