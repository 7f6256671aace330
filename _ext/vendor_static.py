"""Serve the book's JavaScript from its own static files, so that it works offline.

The widget manager (@jupyter-widgets/html-manager with RequireJS), anywidget's
front end and MathJax are pinned in package.json / package-lock.json and
installed by ``npm ci`` (the Makefile runs it). When the HTML build finishes,
this extension copies the files the pages need into ``_static/jsdeps/``;
``_config.yml`` points ``nb_ipywidgets_js`` and ``mathjax_path`` there.

The files are copied here rather than listed in ``html_static_path`` because
jupyter-book adds every .js and .css under that path to every page.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from sphinx.errors import ExtensionError

ROOT = Path(__file__).resolve().parent.parent
MODULES = ROOT / "node_modules"
MANAGER = MODULES / "@jupyter-widgets" / "html-manager"

# (source, destination inside _static/jsdeps)
FILES = [
    (MODULES / "requirejs" / "require.js", "require.js"),
    (ROOT / "_ext" / "requirejs-config.js", "requirejs-config.js"),
    (MANAGER / "dist" / "embed-amd.js", "html-manager/embed-amd.js"),
    (MODULES / "anywidget" / "dist" / "index.js", "anywidget/index.js"),
    (MODULES / "mathjax" / "es5" / "tex-chtml.js", "mathjax/tex-chtml.js"),
    # licences travel with the code (require.js carries its own in its header)
    (MANAGER / "dist" / "embed.js.LICENSE.txt", "licenses/html-manager-bundle.txt"),
    (MODULES / "anywidget" / "LICENSE", "licenses/anywidget.txt"),
    (MODULES / "mathjax" / "LICENSE", "licenses/mathjax.txt"),
]
# MathJax loads its output fonts and input extensions lazily, relative to itself.
FOLDERS = [
    (MODULES / "mathjax" / "es5" / sub, f"mathjax/{sub}")
    for sub in ("output/chtml", "input/tex", "ui", "a11y", "adaptors")
]
FONT_SUFFIXES = {".woff2", ".woff", ".ttf", ".eot", ".svg"}  # html-manager's CSS uses them


def copy_static_files(app, exception):
    if exception is not None or app.builder.format != "html":
        return
    missing = [str(src.relative_to(ROOT)) for src, _ in FILES + FOLDERS if not src.exists()]
    if missing:
        raise ExtensionError(f"missing {', '.join(missing)}: run `npm ci` in {ROOT}")
    target = Path(app.outdir) / "_static" / "jsdeps"
    for src, dst in FILES:
        (target / dst).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, target / dst)
    for src, dst in FOLDERS:
        shutil.copytree(src, target / dst, dirs_exist_ok=True)
    for font in (MANAGER / "dist").iterdir():
        if font.suffix in FONT_SUFFIXES:
            shutil.copy2(font, target / "html-manager" / font.name)


def setup(app):
    app.connect("build-finished", copy_static_files)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
