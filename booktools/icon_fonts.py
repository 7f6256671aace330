"""The icon fonts cut down to the icons the book draws.

The theme draws its icons (menu, search, dark mode, download, ...) with Font Awesome's web
fonts, which hold about two thousand icons: the solid one alone is 156 kB, fetched at the
highest priority while a phone is still waiting for the first paint of the page's text
(Lighthouse's network dependency tree, benchmarks/lighthouse.py). The one style sheet
(``one_stylesheet.py``) keeps only the rules of the icons that some page or script uses; this
cuts each Font Awesome font to the characters those rules draw, saves it beside the sheet and
points the sheet's ``@font-face`` rules at it. fontTools, which matplotlib already brings, does
the cutting; it reads the fonts' TrueType files and writes WOFF (WOFF2 would need brotli, which
nothing else here uses, and the cut fonts are a few kB either way).
"""

from __future__ import annotations

import re
from pathlib import Path

from fontTools import subset
from fontTools.ttLib import TTFont

FOLDER = "icons"  # beside the sheet
FONT_FACE = re.compile(r"@font-face\s*\{[^}]*\}")
# a Font Awesome font in a src: url(../vendor/fontawesome/webfonts/fa-solid-900.woff2)
WEBFONT = re.compile(
    r"""url\((['"]?)(?P<folder>[^'")]*fontawesome/webfonts/)(?P<name>[\w-]+)\.\w+\1\)"""
)
SOURCE = re.compile(r"src:[^;}]*")
# what a rule draws, CSS escapes and all: content:"\f0c9"
CONTENT = re.compile(r"""content:\s*(["'])(?P<text>(?:\\.|(?!\1).)*)\1""")
ESCAPE = re.compile(r"\\([0-9a-fA-F]{1,6}) ?|\\(.)")


def drawn_characters(css: str) -> set[int]:
    """The code points that the sheet's ``content`` declarations draw."""
    characters = set()
    for found in CONTENT.finditer(css):
        text = ESCAPE.sub(
            lambda escape: chr(int(escape[1], 16)) if escape[1] else escape[2], found["text"]
        )
        characters.update(map(ord, text))
    return characters


def cut(source: Path, target: Path, characters: set[int]) -> None:
    """``source`` (TrueType or WOFF) with only the glyphs of ``characters``, as WOFF; with every
    typographic feature and, in a math font, the MATH table's larger and script-size variants
    of those glyphs (prerendered_math.py cuts the formulas' font with this too)."""
    font = TTFont(source)
    options = subset.Options()
    options.layout_features = ["*"]
    cutter = subset.Subsetter(options)
    cutter.populate(unicodes=characters & set(font.getBestCmap()))
    cutter.subset(font)
    font.flavor = "woff"
    target.parent.mkdir(parents=True, exist_ok=True)
    font.save(target)


def cut_icon_fonts(css: str, sheet: Path) -> str:
    """``css``, the sheet to be written at ``sheet``, with each Font Awesome font it names cut
    to the characters it draws, written to ``icons/`` beside it."""
    characters = drawn_characters(css)
    done: set[str] = set()

    def point_at_cut_font(face):
        rule = face.group(0)
        found = WEBFONT.search(rule)
        if not found:
            return rule
        name = found["name"]
        if name not in done:
            source = (sheet.parent / found["folder"] / f"{name}.ttf").resolve()
            cut(source, sheet.parent / FOLDER / f"{name}.woff", characters)
            done.add(name)
        return SOURCE.sub(f'src:url({FOLDER}/{name}.woff) format("woff")', rule, count=1)

    return FONT_FACE.sub(point_at_cut_font, css)
