"""Make hookviz/fonts/HookvizHangul.ttf: Nanum Gothic cut down to what Korean plot text needs.

    apt-get install fonts-nanum && pip install fonttools
    .venv/bin/python tools/subset_korean_font.py [/usr/share/fonts/truetype/nanum/NanumGothic.ttf]

Nanum Gothic is under the SIL Open Font License 1.1 with Reserved Font Names (Nanum,
NanumGothic, ...): a subset is a Modified Version, so it must not carry those names. It is
renamed "Hookviz Hangul"; the copyright notice stays, and the license travels beside it
(hookviz/fonts/OFL.txt). Hinting is dropped: matplotlib hints glyphs itself.
"""

from __future__ import annotations

import sys
from pathlib import Path

from fontTools import subset
from fontTools.ttLib import TTFont

SOURCE = Path("/usr/share/fonts/truetype/nanum/NanumGothic.ttf")
TARGET = Path(__file__).resolve().parents[1] / "hookviz" / "fonts" / "HookvizHangul.ttf"
FAMILY = "Hookviz Hangul"  # the hookviz.fonts.FAMILY the plots ask for
POSTSCRIPT = "HookvizHangul-Regular"
RESERVED = ("nanum", "나눔")  # the Reserved Font Names, in either script: none may remain
UNICODES = [
    *range(0x20, 0x7F),  # Basic Latin
    *range(0xA0, 0x100),  # Latin-1 Supplement
    *range(0x1100, 0x1200),  # Hangul Jamo
    *range(0x2000, 0x2070),  # General Punctuation
    *range(0x2190, 0x2200),  # Arrows
    *range(0x3000, 0x3040),  # CJK Symbols and Punctuation (「」, 〈〉, ...)
    *range(0x3130, 0x3190),  # Hangul Compatibility Jamo
    *range(0xAC00, 0xD7A4),  # every Hangul syllable
    0x2713,  # ✓ check mark
    0x2717,  # ✗ ballot x
    0x25CB,  # ○ white circle
    0x00D7,  # × (in Latin-1 already; the marks ✗ falls back to)
]
MODIFIED = (
    " Modified by hookviz: a subset of NAVER's Nanum Gothic, renamed Hookviz Hangul since"
    " Nanum and NanumGothic are Reserved Font Names (see OFL.txt)."
)
LICENSE = (
    "This Font Software is licensed under the SIL Open Font License, Version 1.1. "
    "This license is available with a FAQ at: https://openfontlicense.org"
)


def subset_font(source: Path, target: Path) -> None:
    """Keep the glyphs of UNICODES (those the font has), drop hinting, rename, save."""
    options = subset.Options()
    options.hinting = False
    options.drop_tables += ["TSI0", "TSI1", "TSI2", "TSI3", "TSI5"]
    options.name_IDs = [0, 1, 2, 3, 4, 5, 6, 13, 14, 16, 17]
    # English names only: the Korean ones are 나눔고딕, a Reserved Font Name in Hangul.
    options.name_languages = [0x409, 0]
    options.notdef_outline = True
    font = TTFont(source)
    subsetter = subset.Subsetter(options)
    subsetter.populate(unicodes=UNICODES)
    subsetter.subset(font)
    rename(font)
    target.parent.mkdir(parents=True, exist_ok=True)
    font.save(target)


def rename(font: TTFont) -> None:
    """Give the subset its own name, keeping the copyright notice and naming the license."""
    names = font["name"]
    version = names.getDebugName(5) or "Version 1.0"
    notice = (names.getDebugName(0) or "") + MODIFIED
    for record in list(names.names):
        if record.nameID not in (0, 2, 5):  # copyright, style and version stay as they are
            names.removeNames(nameID=record.nameID)
    for name_id, text in {
        0: notice,
        1: FAMILY,
        3: f"{POSTSCRIPT};{version.split(';')[0]}",
        4: f"{FAMILY} Regular",
        6: POSTSCRIPT,
        13: LICENSE,
        14: "https://openfontlicense.org",
    }.items():
        names.setName(text, name_id, 3, 1, 0x409)
    left = [
        r.toUnicode()
        for r in names.names
        if r.nameID != 0 and any(n in r.toUnicode().lower() for n in RESERVED)
    ]
    if left:
        raise SystemExit(f"a Reserved Font Name is left in the subset's names: {left}")


if __name__ == "__main__":
    subset_font(Path(sys.argv[1]) if len(sys.argv) > 1 else SOURCE, TARGET)
    print(f"{TARGET}: {TARGET.stat().st_size:,} bytes")
