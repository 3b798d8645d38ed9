"""The package reference: every public function and widget with its signature and docstring.

"Public" is what ``hookviz.__all__`` names (the widgets and ``plots`` load lazily and are
among them), plus the public functions of ``hookviz.plots`` and ``hookviz.course.predictions``.
"""

from __future__ import annotations

import html
import importlib
import inspect
from typing import Any

MODULES_LISTED = ("hookviz.plots", "hookviz.course.predictions")


def _signature(obj: Any, name: str) -> str:
    try:
        return f"{name}{inspect.signature(obj)}"
    except (TypeError, ValueError):
        return name


def _doc(obj: Any) -> str:
    doc = inspect.getdoc(obj) or ""
    paragraphs = [p.strip() for p in doc.split("\n\n") if p.strip()]
    return "".join(f"<pre class='site-doc'>{html.escape(p)}</pre>" for p in paragraphs)


def _anchor(name: str) -> str:
    return "ref-" + name.replace(".", "-")


def _entry(qualified: str, obj: Any, level: int = 3) -> str:
    short = qualified.rsplit(".", 1)[-1]
    kind = "class" if inspect.isclass(obj) else "function"
    parts = [
        f"<section class='site-ref site-ref-{kind}'>",
        f"<h{level} id='{_anchor(qualified)}'><code>{html.escape(qualified)}</code></h{level}>",
        f"<pre class='site-signature'><code>{html.escape(_signature(obj, short))}</code></pre>",
        _doc(obj),
    ]
    if inspect.isclass(obj):
        for name, member in sorted(vars(obj).items()):
            if name.startswith("_") or not (
                inspect.isfunction(member) or isinstance(member, property)
            ):
                continue
            target = member.fget if isinstance(member, property) else member
            if (target.__doc__ or "").strip():
                parts.append(
                    f"<div class='site-ref-member'><pre class='site-signature'><code>"
                    f"{html.escape(_signature(target, '.' + name) if inspect.isfunction(member) else '.' + name)}"
                    f"</code></pre>{_doc(target)}</div>"
                )
    parts.append("</section>")
    return "\n".join(parts)


def public_objects() -> list[tuple[str, str, Any]]:
    """(group, qualified name, object) for everything the reference lists."""
    import hookviz

    found = []
    for name in hookviz.__all__:
        obj = getattr(hookviz, name)
        if inspect.ismodule(obj) or not (inspect.isclass(obj) or callable(obj)):
            continue
        if name.startswith("__"):
            continue
        group = "Widgets" if obj.__module__.startswith("hookviz.widgets") else "Core"
        found.append((group, f"hookviz.{name}", obj))
    for module_name in MODULES_LISTED:
        module = importlib.import_module(module_name)
        for name, obj in sorted(vars(module).items()):
            if name.startswith("_") or not inspect.isfunction(obj):
                continue
            if obj.__module__ != module_name:
                continue
            found.append((module_name.removeprefix("hookviz."), f"{module_name}.{name}", obj))
    return found


def reference_html() -> str:
    """The reference page's article."""
    groups: dict[str, list[str]] = {}
    for group, qualified, obj in public_objects():
        groups.setdefault(group, []).append(_entry(qualified, obj))
    intro = (
        "<h1 id='reference'>Package reference</h1>"
        "<p>Every public function and widget of <code>hookviz</code>, with its signature and "
        "docstring. <code>import hookviz as hv</code> gives all of them; the widgets and "
        "<code>hv.plots</code> load their dependencies the first time they are used.</p>"
    )
    body = "".join(
        f"<h2 id='{_anchor(group)}'>{html.escape(group)}</h2>" + "".join(entries)
        for group, entries in groups.items()
    )
    return intro + body
