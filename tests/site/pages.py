"""Reading the built pages without a browser: their HTML, and each widget's embedded state."""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass
from pathlib import Path


@functools.lru_cache(maxsize=64)
def soup(root: Path, page: str):
    """The parsed HTML of ``page`` (a path inside the site), parsed once: do not change it."""
    from bs4 import BeautifulSoup

    return BeautifulSoup((root / page).read_text(encoding="utf-8"), "html.parser")


@dataclass(frozen=True)
class EmbeddedWidget:
    """One widget as its page holds it: name, synced state, the extras the host answers with."""

    name: str
    state: dict
    extras: dict


# A widget's container and its JSON: the builder escapes every "</" inside the JSON, so the
# first "</script>" after it ends it (a regular expression: an HTML parser takes seconds on 07).
WIDGET = re.compile(
    r'<div\b(?P<tag>[^>]*\bclass="hv-site-widget"[^>]*)>\s*'
    r'<script type="application/json">(?P<json>.*?)</script>',
    re.DOTALL,
)
WIDGET_NAME = re.compile(r'\bdata-widget="([^"]+)"')


@functools.lru_cache(maxsize=64)
def _widgets(root: Path, page: str) -> tuple[EmbeddedWidget, ...]:
    found = []
    for match in WIDGET.finditer((root / page).read_text(encoding="utf-8")):
        data = json.loads(match["json"])
        name = WIDGET_NAME.search(match["tag"])[1]
        found.append(EmbeddedWidget(name, data["state"], data["extras"]))
    return tuple(found)


def widgets(root: Path, page: str, name: str | None = None) -> list[EmbeddedWidget]:
    """The widgets on ``page`` in page order (only those called ``name``, if given)."""
    return [w for w in _widgets(root, page) if name is None or w.name == name]


def tree_labels(nodes: list[list]) -> list[str]:
    """Each ApplyTraversal node's label: the root's class, every other its module path."""
    paths: list[str] = []
    labels: list[str] = []
    for name, kind, parent, *_ in nodes:
        if parent < 0:
            paths.append("")
            labels.append(kind)
        else:
            path = f"{paths[parent]}.{name}" if paths[parent] else name
            paths.append(path)
            labels.append(path)
    return labels


def plain(text: str) -> str:
    """Text as a page shows it: no backticks, one space for any run of white space."""
    return " ".join(text.replace("`", "").split())
