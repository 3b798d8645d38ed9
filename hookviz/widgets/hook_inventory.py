"""HookInventory: the hooks on a model, duplicates flagged, each with a remove button."""

from __future__ import annotations

import os
from typing import Any

import traitlets
from torch import nn

from ..inventory import (
    HookInfo,
    Removed,
    find_duplicate_hooks,
    list_hooks,
    remove_hook,
    remove_hooks,
)
from ..tree import check_model
from . import static_html
from .base import HookvizWidget, front_end
from .messages import widget_language

ACTIONS = ("remove", "remove_duplicates", "remove_all", "refresh")


class HookInventory(HookvizWidget):
    """The hooks registered on a model (`hookviz.list_hooks`), with duplicates flagged.

    A remove button takes one hook off (by its handle id); "remove duplicates" keeps the first
    registration of each duplicated hook. The list is read when the widget is made and after
    each change it makes: call `refresh()` (or press its button) after registering more hooks
    elsewhere.

    Parameters
    ----------
    model : nn.Module
        The model to list.
    include_globals : bool
        Also list the global module hooks.
    theme : str
        `"auto"` (follow JupyterLab), `"light"` or `"dark"`.
    lang : str or None
        The language of its words (`"en"` or `"ko"`); None follows
        `hookviz.language.current_language()`.
    """

    _vocabulary = ("inventory",)  # its keys in the message tables (messages/*.json)
    _front_end = "hook_inventory"  # static/hook_inventory.js and .css
    _esm, _css = front_end(_front_end)

    title = traitlets.Unicode("").tag(sync=True)
    hooks = traitlets.List().tag(sync=True)  # one dict per hook, see _row
    status = traitlets.Unicode("").tag(sync=True)

    def __init__(
        self,
        model: nn.Module,
        *,
        include_globals: bool = True,
        theme: str = "auto",
        lang: str | None = None,
    ):
        """List the hooks on ``model`` (and the global module hooks, unless ``include_globals=False``)."""
        lang = widget_language(lang)
        check_model(model, what="HookInventory's model")
        self._model = model
        self._include_globals = bool(include_globals)
        self._infos: list[HookInfo] = []
        super().__init__(theme=theme, lang=lang)
        self.title = self.say("inventory.title", name=type(model).__name__)
        self.on_msg(self._on_message)
        self.refresh()

    # -- actions ---------------------------------------------------------------------------

    def refresh(self) -> None:
        """Read the hooks again."""
        self._infos = list_hooks(self._model, include_globals=self._include_globals)
        copies: dict[
            int, tuple[int, bool]
        ] = {}  # handle id -> (copies in its group, first of them)
        for duplicate in find_duplicate_hooks(self._model):
            for position, handle_id in enumerate(duplicate.handle_ids):
                copies[handle_id] = (duplicate.count, position == 0)
        self.hooks = [
            _row(info, self._model, *copies.get(info.handle_id, (1, True))) for info in self._infos
        ]

    def remove(self, handle_id: int) -> HookInfo:
        """Remove the hook with this handle id; returns what it was."""
        if isinstance(handle_id, bool) or not isinstance(handle_id, int):
            raise TypeError(
                f"handle_id must be a hook's handle id (an int, as in handle.id), got {handle_id!r}."
            )
        info = remove_hook(self._model, handle_id)
        self.status = self.say("inventory.status_removed", what=self._describe(info))
        self.refresh()
        return info

    def remove_duplicates(self) -> int:
        """Remove every extra copy of a duplicated hook, keeping the first; returns how many went."""
        removed = 0
        for duplicate in find_duplicate_hooks(self._model):
            for handle_id in duplicate.handle_ids[1:]:
                remove_hook(self._model, handle_id)
                removed += 1
        key = "inventory.status_duplicates_one" if removed == 1 else "inventory.status_duplicates"
        self.status = self.say(key, count=removed)
        self.refresh()
        return removed

    def remove_all(self) -> Removed:
        """Remove every hook on the model and its parameters (global hooks stay)."""
        removed = remove_hooks(self._model)
        self.status = str(removed)
        self.refresh()
        return removed

    def offline_state(self) -> dict[str, Any]:
        """The state a page replays: the list as it is, without the status of an action taken
        in the kernel ("removed 2 duplicate hooks"), since nothing is removed on the page."""
        state = super().offline_state()
        state["status"] = ""
        return state

    def _on_message(self, widget: Any, content: Any, buffers: Any = None) -> None:
        """A click in the browser: {'action': 'remove', 'id': 12} and the like."""
        action = content.get("action") if isinstance(content, dict) else None
        try:
            if action == "remove":
                self.remove(int(content.get("id")))
            elif action == "remove_duplicates":
                self.remove_duplicates()
            elif action == "remove_all":
                self.remove_all()
            elif action == "refresh":
                self.refresh()
                count = len(self._infos)
                key = "inventory.status_refreshed" + ("_one" if count == 1 else "")
                self.status = self.say(key, count=count)
            else:
                self.status = self.say(
                    "common.status_unknown", action=repr(action), actions=", ".join(ACTIONS)
                )
        except (TypeError, ValueError) as error:  # e.g. a hook removed in the meantime
            self.status = self.say("common.status_failed", action=action, error=error)
            self.refresh()

    # -- reading ---------------------------------------------------------------------------

    @property
    def infos(self) -> list[HookInfo]:
        """The hooks as listed at the last refresh."""
        return list(self._infos)

    def __repr__(self) -> str:
        extra = sum(row["copies"] - 1 for row in self.hooks if row["first"] and row["copies"] > 1)
        duplicates = f", {extra} duplicate{'s' if extra != 1 else ''}" if extra else ""
        return f"HookInventory({type(self._model).__name__}, {len(self.hooks)} hook{'s' if len(self.hooks) != 1 else ''}{duplicates})"

    def to_html(self) -> str:
        """A self-contained HTML table of the hooks (no scripts; no ids, which change between runs)."""
        rows = []
        for n, row in enumerate(self.hooks, 1):
            dup = (
                static_html.tag(
                    "span",
                    self.say("inventory.static_duplicate", count=row["copies"]),
                    cls="hvs-warn",
                )
                if row["copies"] > 1
                else ""
            )
            rows.append(
                [
                    str(n),
                    static_html.escape(row["where"]),
                    static_html.escape(row["kind"]),
                    static_html.escape(row["name"]),
                    static_html.escape(row["source"]),
                    static_html.escape(", ".join(row["flags"])),
                    dup,
                ]
            )
        body = (
            static_html.tag("div", self.title, cls="hvs-title")
            + static_html.tag("div", repr(self), cls="hvs-muted")
            + (
                static_html.table(["#", *self._headings(), ""], rows, numeric={0})
                if rows
                else static_html.tag("div", self.say("inventory.static_none"), cls="hvs-muted")
            )
        )
        return static_html.page("inventory", body)

    def _headings(self) -> list[str]:
        """The static table's column headings, in the widget's language."""
        return [
            self.say(f"inventory.column_{c}") for c in ("where", "kind", "hook", "source", "flags")
        ]

    def _describe(self, info: HookInfo) -> str:
        """One hook in the status line: where, what kind, which function, its handle id."""
        return self.say(
            "inventory.describe",
            where=info.where,
            kind=info.kind,
            name=info.name,
            id=info.handle_id,
        )


def _row(info: HookInfo, model: nn.Module, copies: int, first: bool) -> dict[str, Any]:
    return {
        "id": info.handle_id,
        "where": info.where,
        "kind": info.kind,
        "target": info.target,
        "name": info.name,
        "source": _short_source(info.source),
        "flags": list(info.flags),
        "copies": copies,
        "first": first,
    }


def _short_source(source: str) -> str:
    """'file:line' with only the file's name: no absolute paths, which differ between machines."""
    if not source or source.startswith("<"):
        return source
    path, _, line = source.rpartition(":")
    return f"{os.path.basename(path)}:{line}" if path else source
