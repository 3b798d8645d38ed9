"""The offline search's data: every section's plain text, and which sections hold each term.

The page looks a query's terms up in ``terms`` (term -> the sections that hold it), then reads
only those sections with ``tokenize()`` in ``static/search-core.js`` to rank and mark the
matches. ``terms`` is cut at build time by ``tokens.tokenize``, the same tokeniser in Python
(Hangul as syllables and syllable pairs, everything else as words and identifier parts): a
test feeds both the same texts. The data ships as a classic script (``search-index.js``),
because a page opened from file:// may not fetch a JSON file.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass

from .tokens import tokenize


@dataclass(frozen=True)
class SearchDocument:
    url: str  # relative to the site's root, with the section's anchor
    page: str  # the page's title
    title: str  # the section's heading
    text: str


def postings(docs: list[dict]) -> dict[str, list[int]]:
    """Each term of the sections' titles, page titles and texts -> the sections that hold it."""
    terms: dict[str, list[int]] = {}
    for i, doc in enumerate(docs):
        for term in {t.term for field in ("title", "page", "text") for t in tokenize(doc[field])}:
            terms.setdefault(term, []).append(i)
    return dict(sorted(terms.items()))


def search_index_script(documents: Iterable[SearchDocument]) -> str:
    """``window.HOOKVIZ_SEARCH = {docs, terms}`` as JavaScript: one entry per section, in site
    order, and the sections of each term."""
    docs, seen = [], set()
    for d in documents:
        if d.url in seen or not d.text:
            continue  # one result per section (a page's heading alone is not one)
        seen.add(d.url)
        docs.append({"url": d.url, "page": d.page, "title": d.title, "text": d.text})
    payload = json.dumps(
        {"docs": docs, "terms": postings(docs)}, separators=(",", ":"), ensure_ascii=False
    )
    return f"window.HOOKVIZ_SEARCH = {payload.replace('</', '<' + chr(92) + '/')};\n"
