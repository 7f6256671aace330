"""Serve the book's JavaScript from its own static files, so that it works offline.

MathJax is pinned in package.json / package-lock.json and installed by ``npm ci`` (the
Makefile runs it). When the HTML build finishes, this extension copies the files the pages
need into ``_static/jsdeps/``; ``_config.yml`` points ``mathjax_path`` there. (Widgets need no
library: ``widget_host`` draws them.)

The files are copied here rather than listed in ``html_static_path`` because
jupyter-book adds every .js and .css under that path to every page.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from sphinx.errors import ExtensionError

ROOT = Path(__file__).resolve().parent.parent
MODULES = ROOT / "node_modules"

# (source, destination inside _static/jsdeps)
FILES = [
    (MODULES / "mathjax" / "es5" / "tex-chtml.js", "mathjax/tex-chtml.js"),
    (MODULES / "mathjax" / "LICENSE", "licenses/mathjax.txt"),  # the licence travels with it
]
# MathJax loads its output fonts and input extensions lazily, relative to itself.
FOLDERS = [
    (MODULES / "mathjax" / "es5" / sub, f"mathjax/{sub}")
    for sub in ("output/chtml", "input/tex", "ui", "a11y", "adaptors")
]


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


def setup(app):
    app.connect("build-finished", copy_static_files)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
