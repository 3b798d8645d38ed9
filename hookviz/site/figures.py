"""Figures for the site: each matplotlib figure drawn twice, for the light and the dark theme,
at a size and resolution chosen for the page.

Installed in the kernel that runs a walkthrough notebook at build time (see ``kernel_settings``):
the PNG formatter for a ``Figure`` returns the light picture as the output's ``image/png`` and
the dark one, the CSS size and the smallest text size in the output's metadata, so the page's
``<picture>`` shows the one that matches the reader's theme. The notebook's own files are never
touched: this runs only in the build's kernel.
"""

from __future__ import annotations

import base64
import io
import pickle
from pathlib import Path
from typing import Any

CSS_DPI = 96  # CSS pixels per inch
SCALE = 1.5  # device pixels per CSS pixel: sharp on most screens, light enough for the budget
MAX_WIDTH_IN = 7.6  # the article's column at 1280 px (about 730 CSS px): wider figures shrink
DARK_BG = "#0f1217"  # the site's dark background (site.css --site-bg)
DARK_TEXT = "#e6e9ee"
DARK_GRID = "#3a424d"
METADATA_KEY = "hookviz"


def _luminance(color: Any) -> float:
    from matplotlib.colors import to_rgba

    r, g, b, a = to_rgba(color)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b if a > 0 else 1.0


def darken(fig: Any) -> None:
    """Recolour ``fig`` for a dark page: backgrounds dark, dark text and lines light; data
    colours (colour maps, the palette) stay as they are."""
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch
    from matplotlib.text import Text

    fig.patch.set_facecolor(DARK_BG)
    for ax in fig.axes:
        if _luminance(ax.get_facecolor()) > 0.8:
            ax.set_facecolor(DARK_BG)
        for spine in ax.spines.values():
            spine.set_edgecolor(DARK_GRID if _luminance(spine.get_edgecolor()) > 0.5 else DARK_TEXT)
        ax.tick_params(colors=DARK_TEXT, which="both")
        legend = ax.get_legend()
        if legend is not None:
            legend.get_frame().set_facecolor(DARK_BG)
            legend.get_frame().set_edgecolor(DARK_GRID)
    for text in fig.findobj(Text):
        if _luminance(text.get_color()) < 0.45:
            text.set_color(DARK_TEXT)
        box = text.get_bbox_patch()
        if box is not None and _luminance(box.get_facecolor()) > 0.8:
            box.set_facecolor(DARK_BG)
    for line in fig.findobj(Line2D):
        if _luminance(line.get_color()) < 0.25:
            line.set_color(DARK_TEXT)
        elif _luminance(line.get_color()) > 0.8 and line.get_alpha() is None:
            line.set_color(DARK_GRID)  # white separators become the page's rule colour
    for patch in fig.findobj(Patch):
        if patch is fig.patch or patch in [ax.patch for ax in fig.axes]:
            continue
        if _luminance(patch.get_edgecolor()) < 0.25:
            patch.set_edgecolor(DARK_TEXT)
        if _luminance(patch.get_facecolor()) > 0.95 and patch.get_facecolor()[3] > 0:
            patch.set_facecolor(DARK_BG)


def smallest_text_pt(fig: Any) -> float:
    """The smallest font size (points) of the figure's visible text."""
    from matplotlib.text import Text

    sizes = [t.get_fontsize() for t in fig.findobj(Text) if t.get_visible() and t.get_text()]
    return min(sizes) if sizes else 10.0


def _png(fig: Any) -> bytes:
    """The figure as a PNG of at most 256 colours: a plot's flat colours and anti-aliased text
    survive, at a third of the bytes (the page-weight budget carries two per figure)."""
    from PIL import Image

    buffer = io.BytesIO()
    fig.savefig(
        buffer,
        format="png",
        dpi=CSS_DPI * SCALE,
        bbox_inches="tight",
        facecolor=fig.get_facecolor(),
    )
    image = Image.open(io.BytesIO(buffer.getvalue())).convert("RGB")
    small = io.BytesIO()
    image.quantize(colors=256, method=Image.Quantize.MEDIANCUT).save(small, "PNG", optimize=True)
    return small.getvalue()


def render(fig: Any) -> tuple[bytes, dict[str, Any]]:
    """The light PNG, and metadata with the dark PNG, the CSS size and the smallest text."""
    import matplotlib.pyplot as plt

    copy = pickle.loads(pickle.dumps(fig))
    try:
        width, height = copy.get_size_inches()
        if width > MAX_WIDTH_IN:  # text keeps its size in points; the axes make room
            copy.set_size_inches(MAX_WIDTH_IN, height * max(0.75, MAX_WIDTH_IN / width))
        copy.patch.set_facecolor("white")
        light = _png(copy)
        darken(copy)
        dark = _png(copy)
        font_px = smallest_text_pt(copy) * CSS_DPI / 72
    finally:
        plt.close(copy)
    from PIL import Image

    pixels = Image.open(io.BytesIO(light)).size
    meta = {
        METADATA_KEY: {
            "dark": base64.b64encode(dark).decode("ascii"),
            "width": round(pixels[0] / SCALE),
            "height": round(pixels[1] / SCALE),
            "font_px": round(font_px, 2),
        }
    }
    return light, meta


def install(shell: Any = None) -> None:
    """In a kernel: draw every figure with ``render``, set after the inline backend's own
    formatter, and again around each cell should anything replace it."""
    from IPython import get_ipython

    shell = shell or get_ipython()
    if shell is None:
        return

    def ensure(*_: Any) -> None:
        try:
            from matplotlib.figure import Figure
        except ImportError:
            return
        shell.display_formatter.formatters["image/png"].for_type(Figure, render)

    try:
        import matplotlib.pyplot as plt
    except ImportError:
        return
    # The inline backend puts its own formatter in place when its module loads, which pyplot
    # does at the first figure: make one now, so that ours comes after it.
    plt.close(plt.figure())
    ensure()
    shell.events.register("post_execute", ensure)
    shell.events.register("pre_run_cell", ensure)


KERNEL_CONFIG = """\
# Written by hookviz site for the kernels of its build; not a user's configuration.
# The kernel talks to the build over loopback: its warning about unencrypted TCP is noise here.
c.IPKernelApp.log_level = "ERROR"
"""
STARTUP = "import hookviz.site.figures\nhookviz.site.figures.install()\n"


def kernel_settings(settings: Path) -> Path:
    """Prepare ``settings`` (the kernel's settings folders) for a site build: figures for both
    themes, and a quiet kernel log."""
    profile = Path(settings) / "ipythondir" / "profile_default"
    (profile / "startup").mkdir(parents=True, exist_ok=True)
    (profile / "ipython_kernel_config.py").write_text(KERNEL_CONFIG, encoding="utf-8")
    (profile / "startup" / "00-hookviz-site-figures.py").write_text(STARTUP, encoding="utf-8")
    return Path(settings)
