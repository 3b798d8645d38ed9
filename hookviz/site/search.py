"""The offline search's data: every section's plain text, for the page to index.

The page indexes the sections when it loads, with ``tokenize()`` in ``static/search-core.js``,
the one tokeniser of the site (Hangul as syllables and syllable pairs, everything else as
words and identifier parts), so there is no second tokeniser at build time to disagree with
it. The text ships as a classic script, ``_static/search-index.js``, because a page opened
from file:// may not fetch a JSON file.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class SearchDocument:
    url: str  # relative to the site's root, with the section's anchor
    page: str  # the page's title
    title: str  # the section's heading
    text: str


def search_index_script(documents: Iterable[SearchDocument]) -> str:
    """``window.HOOKVIZ_SEARCH = {docs}`` as JavaScript: one entry per section, in site order."""
    docs, seen = [], set()
    for d in documents:
        if d.url in seen or not d.text:
            continue  # one result per section (a page's heading alone is not one)
        seen.add(d.url)
        docs.append({"url": d.url, "page": d.page, "title": d.title, "text": d.text})
    payload = json.dumps({"docs": docs}, separators=(",", ":"), ensure_ascii=False)
    return f"window.HOOKVIZ_SEARCH = {payload.replace('</', '<' + chr(92) + '/')};\n"
