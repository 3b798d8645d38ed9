"""The offline search index: lunr.py builds it at build time, lunr.js reads it in the page.

One document per section (a page's text from one heading to the next). The index and the
documents' titles and snippets ship as a classic script, ``_static/search-index.js``, because a
page opened from file:// may not fetch a JSON file.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass

SNIPPET = 220  # characters of a section shown under its result


@dataclass(frozen=True)
class SearchDocument:
    url: str  # relative to the site's root, with the section's anchor
    page: str  # the page's title
    title: str  # the section's heading
    text: str


def search_index_script(documents: Iterable[SearchDocument]) -> str:
    """``window.HOOKVIZ_SEARCH = {index, docs}`` as JavaScript."""
    from lunr import lunr

    documents = list(documents)
    records = [
        {"id": str(i), "title": f"{d.title} {d.page}", "body": d.text}
        for i, d in enumerate(documents)
    ]
    index = lunr(
        ref="id",
        fields=[{"field_name": "title", "boost": 5}, "body"],
        documents=records,
    )
    docs = {
        str(i): {"url": d.url, "page": d.page, "title": d.title, "snippet": d.text[:SNIPPET]}
        for i, d in enumerate(documents)
    }
    payload = json.dumps(
        {"index": index.serialize(), "docs": docs}, separators=(",", ":"), ensure_ascii=False
    )
    return f"window.HOOKVIZ_SEARCH = {payload.replace('</', '<' + chr(92) + '/')};\n"
