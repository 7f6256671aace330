"""Every page links one style sheet: the theme's and the extensions' sheets joined, with only
the rules that some page of the book can use.

The theme and the extensions link a dozen sheets in each page's head, and a browser paints
nothing before it has them all: on a phone's network each costs a round trip (Lighthouse's
render-blocking diagnostic, benchmarks/lighthouse.py). pydata-sphinx-theme's own sheet is 397 kB,
91 % of it rules for components the book does not use, and every rule is matched against every
element of a long chapter whenever styles are computed. The pages link ``_static/styles/book.css``
instead, made when the build has finished: the sheets in the order the pages had them, their
``url()``s rewritten for the new place, and the rules whose selectors match nothing in the built
pages, nor in the scripts that add classes to them, taken out by PurgeCSS (the maintained tool
for this, pinned in package-lock.json). The icon fonts it names are cut to the icons it keeps
(``booktools/icon_fonts.py``).

Relies on pydata-sphinx-theme's ``webpack-macros.html``: the sheets its ``head_pre_assets`` links
and the bundles it loads (``_templates/layout.html`` leaves them out).
(tests/library/test_internals.py fails, naming it, if it moves.)
"""

from __future__ import annotations

import posixpath
import re
import tempfile
import time
from pathlib import Path

from booktools.icon_fonts import cut_icon_fonts
from booktools.node_script import run_node

ROOT = Path(__file__).resolve().parent.parent
PURGECSS = ROOT / "node_modules" / "purgecss" / "bin" / "purgecss.js"
SHEET = "_static/styles/book.css"
# The theme's sheets, which its layout links before Sphinx's (webpack-macros.html's
# head_pre_assets; _templates/layout.html links this one sheet instead).
THEME_SHEETS = ["_static/styles/theme.css", "_static/styles/pydata-sphinx-theme.css"]
# Scripts the pages do not load (_templates/layout.html), whose words would keep rules: Font
# Awesome's lists every icon's class; the theme's two bundles, replaced by theme-controls.js,
# name Bootstrap's tooltips, popovers, carousels...
NOT_CONTENT = {"fontawesome.js", "bootstrap.js", "pydata-sphinx-theme.js"}
URL = re.compile(r"""url\((['"]?)([^)'"]+)\1\)""")
# @import "x.css"; or @import url(x.css); (the theme's sheet imports Sphinx's basic.css)
IMPORT = re.compile(r"""@import\s+(?:url\()?(['"]?)([^'")\s]+)\1\)?\s*;""")


def record_sheets(app, pagename, templatename, context, doctree):
    """Note the page's sheets, in order, and link the one sheet instead (where a page is built
    without the book's layout, as ``make page`` builds it, beside the theme's own two)."""
    sheets = app.env.one_stylesheet_sources = getattr(app.env, "one_stylesheet_sources", [])
    for css in context.get("css_files", []):
        name = getattr(css, "filename", css)
        if "://" not in name and name not in sheets:
            sheets.append(name)
    external = [css for css in context.get("css_files", []) if "://" in str(css)]
    # a new address for each build's sheet: a browser's copy of the last one may not fit
    context["css_files"] = [*external, f"{SHEET}?v={app.one_stylesheet_version}"]
    context["book_stylesheet"] = True  # _templates/layout.html: not the theme's own sheets


def rebased(css: str, source: str) -> str:
    """``css`` of the sheet at ``source`` with each relative ``url()`` made relative to SHEET."""

    def rebase(found):
        quote, url = found.groups()
        if not local(url):
            return found.group(0)
        target = posixpath.normpath(posixpath.join(posixpath.dirname(source), url))
        return f"url({quote}{posixpath.relpath(target, posixpath.dirname(SHEET))}{quote})"

    return URL.sub(rebase, css)


def local(url: str) -> bool:
    return not (url.startswith(("data:", "#", "/")) or "://" in url)


def flattened(out: Path, name: str) -> str:
    """The sheet at ``name`` rebased for SHEET, each local sheet it imports in its place: an
    import is one more round trip before the first paint, after the sheet itself has come."""
    css = (out / name).read_text(encoding="utf-8")
    pieces, last = [], 0
    for found in IMPORT.finditer(css):
        if local(found.group(2)):
            imported = posixpath.normpath(posixpath.join(posixpath.dirname(name), found.group(2)))
            pieces += [rebased(css[last : found.start()], name), flattened(out, imported)]
            last = found.end()
    return "".join([*pieces, rebased(css[last:], name)])


def write_sheet(app, exception):
    if exception or app.builder.format != "html":
        return
    out = Path(app.outdir)
    sources = THEME_SHEETS + [
        name for name in getattr(app.env, "one_stylesheet_sources", []) if name not in THEME_SHEETS
    ]
    joined = "\n".join(flattened(out, name) for name in sources if (out / name).is_file())
    content = [str(path) for path in out.rglob("*.html")] + [
        str(path) for path in (out / "_static").rglob("*.js") if path.name not in NOT_CONTENT
    ]
    with tempfile.TemporaryDirectory() as folder:
        unpurged = Path(folder) / "book.css"
        unpurged.write_text(joined, encoding="utf-8")
        run_node(
            [PURGECSS, "--css", unpurged, "--output", folder, "--content", *content],
            needs="joining the style sheets",
            tool="PurgeCSS",
        )
        purged = unpurged.read_text(encoding="utf-8")
    (out / SHEET).parent.mkdir(parents=True, exist_ok=True)
    (out / SHEET).write_text(cut_icon_fonts(purged, out / SHEET), encoding="utf-8")


def setup(app):
    app.one_stylesheet_version = str(int(time.time()))
    # after every extension has added its sheets, and after the formulas' sheet is written
    app.connect("html-page-context", record_sheets, priority=900)
    app.connect("build-finished", write_sheet, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": False}
