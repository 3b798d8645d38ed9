"""hookviz.fonts: the Korean font the plots ship, drawn for Hangul with no font installed and no
glyph missing, while English plots stay exactly as they were."""

from __future__ import annotations

import io
import subprocess
import sys
import warnings

import numpy as np
import pytest
import torch
from matplotlib import font_manager
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.ft2font import FT2Font
from matplotlib.text import Text

import hookviz as hv
from hookviz import language
from hookviz.fonts import FAMILY, FONT_FILE

HANGUL = range(0xAC00, 0xD7A4)


@pytest.fixture
def speak(monkeypatch):
    """Set the course's language for one test, and put it back after."""
    monkeypatch.delenv(language.LANG_ENV, raising=False)
    yield language.set_language
    language.set_language(None)


def every_plot():
    """One figure from each function of hookviz.plots, on small seeded models."""
    model = hv.examples.mlp((4, 8, 2))
    x = torch.randn(5, 4, generator=torch.Generator().manual_seed(0))
    with hv.record(model) as rec:
        for _ in range(3):
            model(x).sum().backward()
    hooked = hv.examples.mlp((4, 8, 2))
    hooked[0].register_forward_hook(lambda module, args, output: output * 1)  # a "replaced"
    with hv.HookMonitor(model) as monitor:
        model(x).sum().backward()
    return {
        # A tree too big to draw whole: its boxes say how many modules they hide.
        "apply_traversal": hv.plots.apply_traversal(
            hv.trace_apply(hv.examples.wide_tree(200), echo=False)
        ),
        "timeline": hv.plots.timeline(hv.trace_hooks(hooked, x)),
        "activation_heatmap": hv.plots.activation_heatmap(rec, "gradient"),
        "monitor": hv.plots.monitor(monitor.snapshot, monitor.modules),
    }


def pixels(figure) -> np.ndarray:
    canvas = FigureCanvasAgg(figure)
    canvas.draw()
    return np.asarray(canvas.buffer_rgba()).copy()


def font_for(char: str, text: Text) -> str:
    """The file matplotlib draws ``char`` of ``text`` from: the first of its families that has it."""
    prop = text.get_fontproperties()
    for family in prop.get_family():
        one = prop.copy()
        one.set_family(family)
        try:
            path = font_manager.fontManager.findfont(one, fallback_to_default=False)
        except ValueError:
            continue
        if ord(char) in FT2Font(path).get_charmap():
            return path
    return ""


def test_a_korean_plot_draws_its_hangul_from_the_bundled_font_with_no_glyph_missing(speak):
    speak("ko")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # "Glyph ... missing from font(s)" would fail the test
        figures = every_plot()
        for figure in figures.values():
            figure.savefig(io.BytesIO(), format="png")
    for name, figure in figures.items():
        texts = [t for t in figure.findobj(Text) if any(ord(c) in HANGUL for c in t.get_text())]
        assert texts, f"{name} draws no Korean"
        for text in texts:
            for char in {c for c in text.get_text() if ord(c) in HANGUL}:
                assert font_for(char, text) == str(FONT_FILE), (name, text.get_text(), char)
            latin = next((c for c in text.get_text() if c.isascii() and c.isalpha()), None)
            if latin:  # Latin letters keep the font they had before
                assert font_for(latin, text) != str(FONT_FILE)


def test_without_the_bundled_font_the_same_korean_plot_misses_its_glyphs(speak):
    speak("ko")
    trace = hv.trace_hooks(hv.examples.mlp((4, 8, 2)), torch.randn(2, 4))
    with pytest.warns(UserWarning, match="missing from font"):
        figure = hv.plots.timeline.__wrapped__(trace)  # the drawing alone, without the fallback
        figure.savefig(io.BytesIO(), format="png")


def test_english_plots_are_drawn_pixel_for_pixel_as_without_the_korean_font(speak):
    speak("en")
    model = hv.examples.mlp((4, 8, 2))
    x = torch.randn(5, 4, generator=torch.Generator().manual_seed(0))
    with hv.record(model) as rec:
        model(x).sum().backward()
    trace = hv.trace_apply(hv.examples.model(), echo=False)
    for draw, source in [
        (hv.plots.apply_traversal, trace),  # bold numbers too
        (hv.plots.activation_heatmap, rec),  # monospace titles
        (hv.plots.timeline, hv.trace_hooks(model, x)),
    ]:
        assert np.array_equal(pixels(draw(source)), pixels(draw.__wrapped__(source))), draw


def test_the_font_is_registered_on_the_first_plot_not_on_import():
    code = (
        "import torch, hookviz as hv, hookviz.plots\n"
        "from matplotlib import font_manager\n"
        "names = lambda: {f.name for f in font_manager.fontManager.ttflist}\n"
        f"before = {FAMILY!r} in names()\n"
        "hv.plots.timeline(hv.trace_hooks(hv.examples.mlp((2, 2)), torch.ones(1, 2)))\n"
        f"print(before, {FAMILY!r} in names())\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.split() == ["False", "True"]
    assert "findfont" not in result.stderr  # nothing logged about the font


def test_the_font_is_renamed_covers_every_hangul_syllable_and_has_its_licence_beside_it():
    font = FT2Font(str(FONT_FILE))
    assert font.family_name == FAMILY
    assert "nanum" not in (font.family_name + font.postscript_name).lower()  # a Reserved Font Name
    charmap = font.get_charmap()
    assert all(code in charmap for code in HANGUL)
    assert all(code in charmap for code in range(0x3131, 0x318F))  # compatibility Jamo
    assert all(code in charmap for code in range(0x20, 0x7F))
    licence = (FONT_FILE.parent / "OFL.txt").read_text(encoding="utf-8")
    assert "SIL OPEN FONT LICENSE" in licence and "Reserved Font Name" in licence
    assert "Hookviz Hangul" in licence and "Copyright (c) 2010, NAVER Corporation" in licence
    assert FONT_FILE.stat().st_size < 2_000_000  # a subset, not the 4.7 MB original
