"""Typeset every formula when the book is built, not in the reader's browser.

Sphinx writes each formula as TeX in a ``math`` span or div, exactly as for MathJax (this
renderer reuses MathJax's writer). When the build has finished, the TeX in every page is replaced
by MathJax's CommonHTML, made by ``typeset-math.cjs`` under Node.js with the MathJax pinned in
package-lock.json, MathML for screen readers beside it, and the pages with formulas link one
stylesheet made for them all; the fonts are served from the book's own files. Pages then load no
MathJax and typeset nothing: formulas are there at the first paint, the layout does not jump
when they arrive, and text taken from a page (search snippets, a copy) has MathML, not TeX.
"""

from __future__ import annotations

import html
import json
import re
import shutil
from pathlib import Path

from node_script import run_node
from sphinx.errors import ExtensionError
from sphinx.ext.mathjax import html_visit_displaymath, html_visit_math

ROOT = Path(__file__).resolve().parent.parent
TYPESETTER = Path(__file__).resolve().parent / "typeset-math.cjs"
FONTS = ROOT / "node_modules" / "mathjax-full" / "es5" / "output" / "chtml" / "fonts" / "woff-v2"
LICENCE = ROOT / "node_modules" / "mathjax-full" / "LICENSE"
STYLESHEET = "jsdeps/mathjax-chtml.css"  # in _static/; its fonts in jsdeps/mathjax-fonts/
# what a page with formulas links: the sheet itself, or the one sheet that holds it and all the
# others (one_stylesheet)
LINKED_AS = (STYLESHEET, "styles/book.css")

# A formula as Sphinx writes it: a span (inline) or div (display) of class "math", holding the
# TeX (HTML-escaped) between MathJax's delimiters or, for amsmath environments, without them; a
# numbered equation's div starts with its number. Once typeset, it holds the CommonHTML and
# keeps its TeX in data-tex: an incremental build leaves unchanged pages as they are, and every
# build typesets every page's formulas again, so that the one stylesheet has all their glyphs.
FORMULA = re.compile(
    r'<(?P<tag>span|div) class="math notranslate nohighlight"(?P<attributes>[^>]*)>'
    r"(?P<number>\s*<span class=\"eqno\">.*?</span>)?(?P<content>.*?)</(?P=tag)>",
    re.S,
)
DELIMITERS = re.compile(r"^\s*\\[(\[](?P<tex>.*)\\[)\]]\s*$", re.S)
TYPESET_TEX = re.compile(r' data-tex="(?P<tex>[^"]*)"')


def link_stylesheet(app, pagename, templatename, context, doctree):
    if app.env.get_domain("math").has_equations(pagename):
        app.add_css_file(STYLESHEET)


def typeset(formulas: list[tuple[str, bool]]) -> tuple[list[str], str]:
    """CommonHTML for each (TeX, display) and the stylesheet for them all."""
    request = json.dumps([{"tex": tex, "display": display} for tex, display in formulas])
    output = run_node(
        [TYPESETTER, "mathjax-fonts"],
        input=request,
        needs="typesetting the formulas",
        tool="MathJax",
    )
    result = json.loads(output)
    return result["html"], result["css"]


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
    markup, css = typeset(formulas)
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
    static = folder / "_static"
    (static / STYLESHEET).parent.mkdir(parents=True, exist_ok=True)
    (static / STYLESHEET).write_text(css, encoding="utf-8")
    shutil.copytree(FONTS, static / "jsdeps" / "mathjax-fonts", dirs_exist_ok=True)
    (static / "jsdeps" / "licenses").mkdir(exist_ok=True)
    shutil.copy2(LICENCE, static / "jsdeps" / "licenses" / "mathjax.txt")


def typeset_pages(app, exception):
    if exception is not None or app.builder.format != "html":
        return
    if not FONTS.is_dir():
        raise ExtensionError(f"missing {FONTS.relative_to(ROOT)}: run `npm ci` in {ROOT}")
    typeset_folder(Path(app.outdir))


def setup(app):
    app.setup_extension("sphinx.ext.mathjax")  # its writer and its delimiters' settings
    app.add_html_math_renderer(
        "prerendered", (html_visit_math, None), (html_visit_displaymath, None)
    )
    app.connect("html-page-context", link_stylesheet)
    app.connect("build-finished", typeset_pages)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
