"""Self-contained HTML pictures (``to_html()``): inline CSS and SVG, no script, no CDN.

They show in exported pages and viewers without a kernel. Colours use JupyterLab's variables
when the page has them (so a picture shown in JupyterLab follows its theme) and light
fallbacks elsewhere.
"""

from __future__ import annotations

from .. import markup
from ..markup import escape, tag

__all__ = ["STYLE", "bars", "escape", "page", "table", "tag"]

STYLE = """
.hvs{font-family:var(--jp-ui-font-family,system-ui,sans-serif);font-size:13px;line-height:1.4;
color:var(--jp-ui-font-color0,#1a1a1a);background:var(--jp-layout-color0,#fff);
border:1px solid var(--jp-border-color2,#d4d4d4);border-radius:6px;padding:8px 10px;max-width:100%}
.hvs-title{font-weight:600;font-size:14px}
.hvs-muted{color:var(--jp-ui-font-color2,#5f5f5f)}
.hvs-tree{margin:6px 0;font-family:var(--jp-code-font-family,monospace);font-size:12px}
.hvs-node{padding:1px 4px;border-radius:3px}
.hvs-current{background:rgba(230,159,0,.25);outline:2px solid #e69f00}
.hvs-visited{background:rgba(0,114,178,.10)}
.hvs-badge{display:inline-block;min-width:22px;margin-right:6px;text-align:right;font-weight:600;color:#0072b2}
.hvs-type{color:var(--jp-ui-font-color2,#5f5f5f)}
.hvs-tag{font-size:11px;border:1px solid currentColor;border-radius:8px;padding:0 5px}
.hvs-order{font-family:var(--jp-code-font-family,monospace);font-size:12px;margin-top:6px}
.hvs table{border-collapse:collapse;font-size:12px}
.hvs th,.hvs td{padding:2px 8px;border-bottom:1px solid var(--jp-border-color2,#e0e0e0);text-align:left}
.hvs td.hvs-num,.hvs th.hvs-num{text-align:right;font-family:var(--jp-code-font-family,monospace)}
.hvs-warn{color:#d55e00;font-weight:600}
.hvs svg{vertical-align:middle}
.hvs-bar{fill:#0072b2}
.hvs-bar-warn{fill:#d55e00}
"""


def page(kind: str, body: str) -> str:
    """Wrap a picture's body with its stylesheet in one ``div``."""
    return f'<div class="hvs hvs-{kind}"><style>{STYLE}</style>{body}</div>'


def table(headers: list[str], rows: list[list[str]], numeric: set[int] = frozenset()) -> str:
    """An HTML table; cells are already HTML; columns in ``numeric`` are right-aligned."""
    return markup.table(headers, rows, numeric=numeric, numeric_class="hvs-num")


def bars(
    counts: list[int] | tuple[int, ...] | None,
    *,
    width: int = 64,
    height: int = 18,
    warn: bool = False,
) -> str:
    """A histogram as an inline SVG of bars."""
    if not counts:
        return ""
    top = max(max(counts), 1)
    w = width / len(counts)
    cls = "hvs-bar-warn" if warn else "hvs-bar"
    rects = []
    for i, count in enumerate(counts):
        bar = max(1.0, count / top * height) if count else 0.0
        rects.append(
            f'<rect class="{cls}" x="{i * w + 0.5:.1f}" y="{height - bar:.1f}" '
            f'width="{max(1.0, w - 1):.1f}" height="{bar:.1f}"/>'
        )
    return (
        f'<svg width="{width}" height="{height}" viewBox="0 0 {width} {height}" role="img" '
        f'aria-label="histogram">{"".join(rects)}</svg>'
    )
