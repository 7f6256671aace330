"""Typeset every formula when the book is built, not in the reader's browser.

Sphinx writes each formula as TeX in a ``math`` span or div, exactly as for MathJax (this
renderer reuses MathJax's writer). When the build has finished, the TeX in every page is replaced
by MathML, made by ``booktools/typeset-math.cjs`` under Node.js with Temml (pinned in package-lock.json),
which writes MathML Core: the browser lays formulas out itself, and screen readers read them as
they are. The pages with formulas link one stylesheet made for them: Temml's, for the Noto Sans
Math font, which the book serves itself, cut to the characters its formulas use. Pages then load
no MathJax and typeset nothing: formulas are there at the first paint, the layout does not jump
when they arrive, and text taken from a page (search snippets, a copy) has the formulas' text.

MathJax's CommonHTML, typeset at build time the same way before, drew each formula in many more
elements, which a phone lays out before its first paint: chapter 1 had 7,967 elements and has
4,378 (chapter 5: 17,817 and 10,825). On Lighthouse's phone (benchmarks/lighthouse.py), chapter
1's first contentful paint went from 3.3 s to 1.4 s, the icon fonts cut at the same time.

Relies on ``sphinx.ext.mathjax.html_visit_math`` and ``html_visit_displaymath``, the writers it
reuses. (tests/library/test_internals.py fails, naming it, if it moves.)
"""

from __future__ import annotations

import html
import json
import re
import shutil
import unicodedata
from pathlib import Path

from sphinx.errors import ExtensionError
from sphinx.ext.mathjax import html_visit_displaymath, html_visit_math

import booktools
from booktools.icon_fonts import cut
from booktools.node_script import run_node

ROOT = Path(__file__).resolve().parent.parent
TYPESETTER = Path(booktools.__file__).resolve().parent / "typeset-math.cjs"
MODULES = ROOT / "node_modules"
TEMML_CSS = MODULES / "temml" / "dist" / "Temml-NotoSans.css"
FONT = MODULES / "@fontsource" / "noto-sans-math" / "files" / "noto-sans-math-latin-400-normal.woff"
LICENCES = {
    "temml.txt": MODULES / "temml" / "LICENSE",
    "noto-sans-math.txt": MODULES / "@fontsource" / "noto-sans-math" / "LICENSE",
}
STYLESHEET = "jsdeps/math.css"  # in _static/; its font in jsdeps/math-fonts/
FONT_FILE = "math-fonts/noto-sans-math.woff"  # beside the sheet
# what a page with formulas links: the sheet itself, or the one sheet that holds it and all the
# others (one_stylesheet)
LINKED_AS = (STYLESHEET, "styles/book.css")
# Temml's sheet names the font's file as it is distributed; the book serves it cut down, as WOFF
TEMML_FONT_SOURCE = re.compile(r"src:\s*url\([^)]*\);")
# A display formula wider than the column scrolls in its box (_static/book.css); focusable, it
# scrolls by keys too
DISPLAY = re.compile(r'^<math display="block"')
TAG = re.compile(r"<[^>]*>")

# A formula as Sphinx writes it: a span (inline) or div (display) of class "math", holding the
# TeX (HTML-escaped) between MathJax's delimiters or, for amsmath environments, without them; a
# numbered equation's div starts with its number. Once typeset, it holds the MathML and
# keeps its TeX in data-tex: an incremental build leaves unchanged pages as they are, and every
# build typesets every page's formulas again, so that the font is cut to all their characters.
FORMULA = re.compile(
    r'<(?P<tag>span|div) class="math notranslate nohighlight"(?P<attributes>[^>]*)>'
    r"(?P<number>\s*<span class=\"eqno\">.*?</span>)?(?P<content>.*?)</(?P=tag)>",
    re.S,
)
DELIMITERS = re.compile(r"^\s*\\[(\[](?P<tex>.*)\\[)\]]\s*$", re.S)
TYPESET_TEX = re.compile(r' data-tex="(?P<tex>[^"]*)"')


def link_stylesheet(app, pagename, templatename, context, doctree):
    """The formulas' sheet, and their font fetched beside it (_templates/layout.html): one that
    came after the first layout would change the formulas' size as the page is read."""
    if app.env.get_domain("math").has_equations(pagename):
        app.add_css_file(STYLESHEET)
        context["math_font"] = f"_static/{Path(STYLESHEET).parent / FONT_FILE}"


def typeset(formulas: list[tuple[str, bool]]) -> list[str]:
    """MathML for each (TeX, display)."""
    request = json.dumps([{"tex": tex, "display": display} for tex, display in formulas])
    output = run_node([TYPESETTER], input=request, needs="typesetting the formulas", tool="Temml")
    return [
        DISPLAY.sub('<math display="block" tabindex="0"', m) for m in json.loads(output)["html"]
    ]


def italic(character: str) -> str | None:
    """The math italic form of a letter (𝑎 for a), which the browser draws for a one-letter
    ``<mi>`` (MathML Core's automatic italic); None for other characters."""
    if character == "h":
        return "\u210e"  # ℎ, PLANCK CONSTANT: the hole in the italic alphabet
    name = unicodedata.name(character, "").replace("LUNATE ", "")  # ϵ: 𝜖
    found = re.fullmatch(r"(?:LATIN |GREEK )?(SMALL |CAPITAL )?(?:LETTER )?(.+)", name)
    if found is None:  # a character without a name
        return None
    try:
        return unicodedata.lookup(f"MATHEMATICAL ITALIC {found[1] or ''}{found[2]}")
    except KeyError:
        return None


def characters(markup: list[str]) -> set[int]:
    """The characters the formulas draw, letters in their italic forms too: the font is cut to
    these."""
    drawn = {c for formula in markup for c in html.unescape(TAG.sub("", formula))}
    if any("<msqrt" in formula or "<mroot" in formula for formula in markup):
        drawn.add("\u221a")  # a root's sign is the font's √, grown to fit
    return {ord(c) for c in drawn | {italic(c) for c in drawn} if c}


def stylesheet() -> str:
    """Temml's sheet for Noto Sans Math, with the font the book serves."""
    css = TEMML_CSS.read_text(encoding="utf-8")
    return TEMML_FONT_SOURCE.sub(f'src: url("{FONT_FILE}") format("woff");', css, count=1)


def source(formula: re.Match) -> tuple[str, bool]:
    """The TeX of a formula found by FORMULA, typeset already or not, and whether it is displayed."""
    typeset_before = TYPESET_TEX.search(formula["attributes"])
    if typeset_before:
        tex = html.unescape(typeset_before["tex"])
    else:
        tex = html.unescape(formula["content"])
        delimited = DELIMITERS.match(tex)
        tex = delimited["tex"] if delimited else tex
    return tex, formula["tag"] == "div"


def typeset_folder(folder: Path) -> None:
    """Typeset the formulas of every page under ``folder`` and write the stylesheet for them."""
    pages = {path: path.read_text(encoding="utf-8") for path in folder.rglob("*.html")}
    pages = {path: text for path, text in pages.items() if FORMULA.search(text)}
    for path, text in pages.items():
        if not any(name in text for name in LINKED_AS):
            raise ExtensionError(f"{path.relative_to(folder)} has formulas but no {STYLESHEET}")
    formulas = [source(m) for text in pages.values() for m in FORMULA.finditer(text)]
    markup = typeset(formulas)
    next_markup = iter(markup)

    def typeset_formula(formula: re.Match) -> str:
        tex, _ = source(formula)
        attributes = TYPESET_TEX.sub("", formula["attributes"])
        return (
            f'<{formula["tag"]} class="math notranslate nohighlight"{attributes}'
            f' data-tex="{html.escape(tex)}">{formula["number"] or ""}{next(next_markup)}'
            f"</{formula['tag']}>"
        )

    for path, text in pages.items():
        path.write_text(FORMULA.sub(typeset_formula, text), encoding="utf-8")
    sheet = folder / "_static" / STYLESHEET
    sheet.parent.mkdir(parents=True, exist_ok=True)
    sheet.write_text(stylesheet(), encoding="utf-8")
    cut(FONT, sheet.parent / FONT_FILE, characters(markup))
    (sheet.parent / "licenses").mkdir(exist_ok=True)
    for name, licence in LICENCES.items():
        shutil.copy2(licence, sheet.parent / "licenses" / name)


def typeset_pages(app, exception):
    if exception is not None or app.builder.format != "html":
        return
    if not FONT.is_file():
        raise ExtensionError(f"missing {FONT.relative_to(ROOT)}: run `npm ci` in {ROOT}")
    typeset_folder(Path(app.outdir))


def setup(app):
    app.setup_extension("sphinx.ext.mathjax")  # its writer and its delimiters' settings
    app.add_html_math_renderer(
        "prerendered", (html_visit_math, None), (html_visit_displaymath, None)
    )
    app.connect("html-page-context", link_stylesheet)
    app.connect("build-finished", typeset_pages)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
