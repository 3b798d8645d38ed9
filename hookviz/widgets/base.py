"""What every hookviz widget shares: its front-end files, the theme switch, number formatting.

Each widget is one Python class and one ES module in ``static/``, which imports the helpers it
uses (elements, icons, keys, themes) from ``static/common.js``::

    import { button, h, widgetRoot } from "./common.js";

anywidget loads one module per widget (the kernel sends it as text; Colab's anywidget 0.9 and
the offline site load the same text), so ``front_end`` makes one of the two: its one step,
``inline_shared``, puts common.js in place of that import, its ``export`` keywords dropped. No
bundler and no build product: the files in ``static/`` are what runs. The CSS is ``common.css``
followed by the widget's own.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

import anywidget
import traitlets

from . import messages

STATIC = Path(__file__).parent / "static"
THEMES = ("auto", "light", "dark")
MAX_SPEED = 1_000.0  # steps per second, for the widgets that play


SHARED = "common.js"
_IMPORT = re.compile(r'^import\s*\{([^}]*)\}\s*from\s*"\./common\.js";\n', re.M)
_ANY_IMPORT = re.compile(r"^import\b", re.M)
_EXPORT = re.compile(r"^export (?=(?:async )?function\b|const\b|let\b|class\b)", re.M)
_DECLARED = re.compile(r"^(?:async )?(?:function\*?|const|let|class)\s+([A-Za-z_$][\w$]*)", re.M)


def inline_shared(shared: str, own: str, name: str = "the widget") -> str:
    """One module from a widget's file and the shared helpers it imports: ``shared`` (common.js)
    with its ``export`` keywords dropped, then ``own`` without its import of it.

    A ValueError names what cannot be inlined: another import, or a name common.js does not
    export.
    """
    found = _IMPORT.findall(own)
    own = _IMPORT.sub("", own, count=1)
    if len(found) > 1 or _ANY_IMPORT.search(own):
        raise ValueError(
            f"{name}: import only from ./common.js, in one statement: anywidget loads one module"
        )
    exports = [
        line.removeprefix("export ") for line in shared.splitlines() if line.startswith("export ")
    ]
    exported = set(_DECLARED.findall("\n".join(exports)))
    wanted = {n.strip() for n in found[0].split(",") if n.strip()} if found else set()
    if wanted - exported:
        raise ValueError(
            f"{name} imports {', '.join(sorted(wanted - exported))}, which {SHARED} does not export"
        )
    return _EXPORT.sub("", shared) + own


def front_end(name: str) -> tuple[str, str]:
    """The ESM and CSS text of the widget whose files are ``static/<name>.js`` and ``.css``."""
    esm = inline_shared(
        (STATIC / SHARED).read_text(encoding="utf-8"),
        (STATIC / f"{name}.js").read_text(encoding="utf-8"),
        f"{name}.js",
    )
    css = (STATIC / "common.css").read_text(encoding="utf-8") + (STATIC / f"{name}.css").read_text(
        encoding="utf-8"
    )
    return esm, css


def check_theme(theme: Any) -> str:
    """Return ``theme`` if it is one of THEMES; otherwise raise a ValueError that lists them."""
    if theme not in THEMES:
        raise ValueError(
            f"theme must be one of {', '.join(map(repr, THEMES))}, got {theme!r}. "
            "'auto' follows JupyterLab's light or dark theme."
        )
    return theme


def check_speed(speed: Any) -> float:
    """Return ``speed`` (steps per second) if it is a number in (0, MAX_SPEED]; otherwise raise."""
    if isinstance(speed, bool) or not isinstance(speed, (int, float)):
        raise TypeError(f"speed must be a number of steps per second, got {type(speed).__name__}.")
    if math.isnan(speed) or not 0 < speed <= MAX_SPEED:
        raise ValueError(
            f"speed must be more than 0 and at most {MAX_SPEED:g} steps per second, got {speed}."
        )
    return float(speed)


class HookvizWidget(anywidget.AnyWidget):
    """Base class: a synced ``theme`` ('auto' follows the notebook's theme, or 'light' / 'dark'),
    and the language it speaks: ``lang`` and its message table, synced so that a saved widget
    state (what the site replays) keeps its words."""

    _front_end: str = ""  # the name of its files in static/ (each subclass sets it)
    # the groups of the message tables it speaks ("apply": the keys "apply.*"), beside "common"
    _vocabulary: tuple[str, ...] = ()
    theme = traitlets.Unicode("auto").tag(sync=True)
    lang = traitlets.Unicode("en").tag(sync=True)
    messages = traitlets.Dict().tag(sync=True)  # its part of the table of `lang`: key -> text

    def __init__(self, *, lang: str | None = None, **traits: Any):
        """Make the widget in ``lang`` (None: the course's language, `current_language()`)."""
        lang = messages.widget_language(lang)
        super().__init__(lang=lang, messages=self._words_in(lang), **traits)

    def _words_in(self, lang: str) -> dict[str, str]:
        """The words of this widget in ``lang``: the common ones and its own groups'."""
        return messages.table(lang, ("common", *self._vocabulary))

    def say(self, key: str, **params: Any) -> str:
        """The text of ``key`` in the widget's language, its placeholders filled."""
        return messages.say(self.lang, key, **params)

    @traitlets.validate("lang")
    def _valid_lang(self, proposal):
        try:
            return messages.widget_language(proposal["value"])
        except ValueError as error:
            raise traitlets.TraitError(str(error)) from None

    @traitlets.observe("lang")
    def _lang_changed(self, change):
        self.messages = self._words_in(change["new"])

    def offline_state(self) -> dict[str, Any]:
        """The synced state a page without a kernel replays: traits the view reads, as JSON."""
        state = self.get_state()
        return {k: v for k, v in state.items() if not k.startswith("_") and k != "layout"}

    def offline_extras(self) -> dict[str, Any]:
        """What a page without a kernel needs beyond the synced state to answer the view's messages."""
        return {}

    @traitlets.validate("theme")
    def _valid_theme(self, proposal):
        try:
            return check_theme(proposal["value"])
        except ValueError as error:
            raise traitlets.TraitError(str(error)) from None


def number(value: float | int | None, digits: int = 4) -> float | int | str | None:
    """A JSON-safe number rounded to ``digits`` significant digits; 'nan', 'inf' or '-inf' as text.

    Jupyter sends widget state as strict JSON, where NaN and infinity are not allowed.
    """
    if value is None:
        return None
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return value
    value = float(value)
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return float(f"{value:.{digits}g}")


def shape_text(shape: tuple[int, ...] | None) -> str:
    """``(2, 3)`` as ``2×3``; a scalar as ``scalar``."""
    if shape is None:
        return ""
    return "×".join(str(s) for s in shape) if shape else "scalar"


class PlayedWidget(HookvizWidget):
    """A widget the browser plays step by step: ``step`` and ``speed`` are synced both ways.

    Subclasses say how many steps there are (``total``); the browser animates on its own and
    sends ``step`` back once playing stops.
    """

    step = traitlets.Int(0).tag(sync=True)  # 0: nothing shown yet; total: the end
    speed = traitlets.Float(2.0).tag(sync=True)  # steps per second

    @property
    def total(self) -> int:
        """How many steps there are to play."""
        raise NotImplementedError

    @traitlets.validate("speed")
    def _valid_speed(self, proposal):
        try:
            return check_speed(proposal["value"])
        except (TypeError, ValueError) as error:
            raise traitlets.TraitError(str(error)) from None

    @traitlets.validate("step")
    def _valid_step(self, proposal):
        step, total = proposal["value"], self.total
        if not 0 <= step <= total:
            raise traitlets.TraitError(
                f"step must be between 0 (nothing shown yet) and {total} (the end), got {step}."
            )
        return step
