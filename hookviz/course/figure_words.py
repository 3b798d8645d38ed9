"""The figures a translated notebook draws itself, in its language.

A notebook's plotting code stays the English (``ax.set_xlabel("step")``); its content cell
carries the translations of the words its figures show (``i18n.figures`` finds them in the
code, `hookviz build` packs them). ``translate_figures`` makes every text a figure is given in
this kernel go through that table first, with the catalogue a check's lines go through (an
f-string's words as a template), so a title or an axis label is set, measured and laid out in
the notebook's language; Hangul falls back to the font hookviz ships. A text the table does
not know (a number, a module path, a legend of parameter names) stays as it is.
"""

from __future__ import annotations

from .i18n.catalogue import translate

_table: dict[str, str] = {}
_installed = False


def translate_figures(table: dict[str, str]) -> None:
    """Figures drawn from now on in this kernel show ``table``'s translations (English ->
    translation) of the words they are given; calling it again adds to the table."""
    global _installed
    _table.update(table)
    if _installed or not _table:
        return
    import matplotlib
    from matplotlib.text import Text

    from .. import fonts

    fonts.register()
    matplotlib.rcParams["font.family"] = fonts.with_fallback(matplotlib.rcParams["font.family"])
    original = Text.set_text

    def set_text(self, s):
        text = "" if s is None else str(s)
        return original(self, translate(text, _table) if text else s)

    set_text.__doc__ = original.__doc__
    set_text.__wrapped__ = original
    Text.set_text = set_text
    _installed = True


def said(text: str) -> str:
    """``text`` as a figure in this kernel would show it."""
    return translate(text, _table) if text else text


__all__ = ["said", "translate_figures"]
