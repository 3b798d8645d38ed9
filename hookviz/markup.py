"""Small HTML builders that escape by default: a tag, a table, escaped text.

The widgets' static pictures (``widgets/static_html``) and the grading report write their HTML
with them. Standard library only, so the grading side uses them without importing the widgets.
"""

from __future__ import annotations

import html


def escape(value: object) -> str:
    """``value`` as HTML text, escaped (quotes too)."""
    return html.escape(str(value))


def tag(
    name: str, content: str = "", *, cls: str = "", style: str = "", raw: bool = False, **attrs: str
) -> str:
    """``<name class=... style=...>content</name>``; content is escaped unless ``raw`` (already HTML)."""
    parts = [name]
    if cls:
        parts.append(f'class="{html.escape(cls)}"')
    if style:
        parts.append(f'style="{html.escape(style)}"')
    parts += [
        f'{key.rstrip("_").replace("_", "-")}="{html.escape(str(v))}"' for key, v in attrs.items()
    ]
    body = content if raw else html.escape(content)
    return f"<{' '.join(parts)}>{body}</{name}>"


def table(
    headers: list[str],
    rows: list[list[str]],
    *,
    numeric: set[int] = frozenset(),
    numeric_class: str = "",
    caption: str = "",
    scope: bool = False,
) -> str:
    """An HTML table of headers (text) and rows (cells already HTML).

    Columns in ``numeric`` get ``numeric_class``; ``scope`` marks each header as its column's
    (``scope="col"``), for screen readers; ``caption`` is already HTML.
    """

    def cls(i: int) -> str:
        return numeric_class if i in numeric else ""

    extra = {"scope": "col"} if scope else {}
    head = "".join(
        tag("th", html.escape(h), cls=cls(i), raw=True, **extra) for i, h in enumerate(headers)
    )
    body = "".join(
        "<tr>" + "".join(tag("td", c, cls=cls(i), raw=True) for i, c in enumerate(row)) + "</tr>"
        for row in rows
    )
    title = f"<caption>{caption}</caption>" if caption else ""
    return f"<table>{title}<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
