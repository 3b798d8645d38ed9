"""The plots' Korean font, shipped in the package: matplotlib falls back to it for Hangul.

Colab and many machines have no Korean font, and installing one needs a restart, so hookviz
carries one: `HookvizHangul.ttf` in this folder, a renamed subset of Nanum Gothic under the SIL
Open Font License (`OFL.txt` beside it; tools/subset_korean_font.py made it). It is registered
with matplotlib on the first plot, not on import, and added after the fonts already asked for:
Latin text is drawn exactly as before, and only glyphs those fonts lack (Hangul) come from it.
The subset has no bold face: bold Hangul is drawn in the regular weight (quietly: matplotlib
would otherwise log a warning for each bold text, Hangul or not). Only `hookviz.plots` uses
this module.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

FAMILY = "Hookviz Hangul"  # the family name inside the font file (tools/subset_korean_font.py)
FONT_FILE = Path(__file__).resolve().parent / "HookvizHangul.ttf"
_registered = False


def register() -> None:
    """Tell matplotlib's font manager about the bundled font, once per process."""
    global _registered
    if _registered:
        return
    from matplotlib import font_manager

    fonts = font_manager.fontManager
    fonts.addfont(str(FONT_FILE))
    regular = [entry for entry in fonts.ttflist if entry.name == FAMILY]
    fonts.ttflist += [dataclasses.replace(entry, weight=700) for entry in regular]
    _registered = True


def with_fallback(families: str | Sequence[str]) -> list[str]:
    """``families`` with the bundled font after them, for the glyphs none of them has."""
    chosen = [families] if isinstance(families, str) else list(families)
    return chosen if FAMILY in chosen else [*chosen, FAMILY]


@contextmanager
def hangul_fallback() -> Iterator[None]:
    """Text made inside falls back to the bundled font (also a decorator)."""
    import matplotlib

    register()
    with matplotlib.rc_context({"font.family": with_fallback(matplotlib.rcParams["font.family"])}):
        yield
