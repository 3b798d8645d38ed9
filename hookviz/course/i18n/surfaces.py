"""Everything else a reader of a language reads, outside the course's translation files.

The course package's own words (``course/wording/<lang>.py``: the checks, the card, the
grader's feedback), the widgets' message tables, the plots' labels, the site's frame and its
landing page, and the course's README in that language: the glossary and the voice apply to
them as to the notebooks (``hookviz i18n lint`` reads them all), and none may say English
where its language has words. Each is given as (where, text) pairs, one per string.
"""

from __future__ import annotations

import importlib
import json
import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2]  # hookviz/
_TAG = re.compile(r"<[^>]+>|\{\{.*?\}\}|\{%.*?%\}|\{#.*?#\}", re.S)
_ENTITY = re.compile(r"&[a-z]+;|&#\d+;")


def _table(where: str, table: dict[str, str]) -> list[tuple[str, str]]:
    return [(f"{where} [{key}]", text) for key, text in table.items() if isinstance(text, str)]


def template_text(html: str) -> str:
    """What a page template says to its reader: its text, tags and Jinja left out (a
    ``<code>`` element's text kept inside backticks, as code)."""
    html = re.sub(r"<pre[^>]*>(.*?)</pre>", r"\n```\n\1\n```\n", html, flags=re.S)
    html = re.sub(r"<code>(.*?)</code>", r"`\1`", html, flags=re.S)
    return _ENTITY.sub(" ", _TAG.sub(" ", html))


def package_texts(lang: str) -> list[tuple[str, str]]:
    """The hookviz package's words in ``lang``: (where, text) for each string."""
    found: list[tuple[str, str]] = []
    wording = importlib.import_module(f"hookviz.course.wording.{lang}")
    found += _table(f"hookviz/course/wording/{lang}.py", wording.WORDS)
    messages = PACKAGE / "widgets" / "messages" / f"{lang}.json"
    if messages.is_file():
        found += _table(
            f"hookviz/widgets/messages/{lang}.json",
            json.loads(messages.read_text(encoding="utf-8")),
        )
    from ... import plot_labels

    found += _table("hookviz/plot_labels.py", plot_labels.LABELS.get(lang, {}))
    from ...site import labels

    if lang in labels.LABELS:
        found += _table("hookviz/site/labels.py", labels.LABELS[lang])
    for template in sorted((PACKAGE / "site" / "templates").rglob(f"*.{lang}.html.j2")):
        text = template_text(template.read_text(encoding="utf-8"))
        found.append((template.relative_to(PACKAGE.parent).as_posix(), text))
    return found


def course_texts(root: Path, lang: str) -> list[tuple[str, str]]:
    """The course's own pages in ``lang`` outside translations/: ``README.<lang>.md`` and
    ``docs/*.<lang>.md``."""
    root = Path(root)
    pages = [root / f"README.{lang}.md", *sorted((root / "docs").glob(f"*.{lang}.md"))]
    return [
        (page.relative_to(root).as_posix(), page.read_text(encoding="utf-8"))
        for page in pages
        if page.is_file()
    ]


__all__ = ["course_texts", "package_texts", "template_text"]
