"""heatmap.js alone on a page, without the book: one widget drawn by the book's widget host.

The page holds the widget's state and view as myst-nb embeds them in the book's pages, and loads
the same host (_ext/widget-host.js), so the heatmap's browser tests and its benchmark exercise
the path the book's readers take; neither needs a build.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from attnkit.heatmap import AttentionHeatmap
from tests.support.book import ROOT

FRONT_END = ROOT / "chapters" / "attnkit"

# The dark themes the widget takes its colours from, as their pages set them: the book's
# (pydata-sphinx-theme 0.17, on <html data-theme="dark">) and JupyterLab's (on an ancestor with
# data-jp-theme-light="false"). Each is the attributes of <html> and the theme's variables.
DARK_THEMES = {
    "book": (
        'data-theme="dark"',
        "html[data-theme=dark] { --pst-color-text-base: #ced6dd; --pst-color-text-muted: #9ca4af;"
        " --pst-color-border: #48566b; --pst-color-background: #14181e; --pst-color-accent: #e47fd7;"
        " color-scheme: dark; background: var(--pst-color-background); }",
    ),
    "jupyterlab": (
        'data-jp-theme-light="false"',
        "[data-jp-theme-light=false] { --jp-ui-font-color0: rgba(255, 255, 255, 1);"
        " --jp-ui-font-color1: rgba(255, 255, 255, 0.87); --jp-layout-color0: #111111;"
        " --jp-border-color1: #616161; --jp-brand-color1: #42a5f5; background: #111111; }",
    ),
}

PAGE = """<!doctype html><html lang="en" %s><meta charset="utf-8"><title>heatmap</title>
<style>%s</style>
<script type="application/vnd.jupyter.widget-state+json">%s</script>
<script type="module" async src="widget-host.js"></script>
<main><script type="application/vnd.jupyter.widget-view+json">{"model_id": "heatmap"}</script></main>
"""
HOST = ROOT / "_ext" / "widget-host.js"


def widget_state(widget: AttentionHeatmap) -> dict:
    """The traits an AttentionHeatmap syncs to its front end (anywidget's own left out)."""
    return {name: getattr(widget, name) for name in AttentionHeatmap.class_own_traits(sync=True)}


def write_page(
    folder: Path, widget: AttentionHeatmap, front_end: Path = FRONT_END, dark: str | None = None
) -> None:
    """Put index.html and the widget host into ``folder``: one heatmap of ``widget``, with the
    front end in ``front_end``, on a plain light page or in one of the ``DARK_THEMES``."""
    shutil.copy(HOST, folder / HOST.name)
    traits = {
        **widget_state(widget),
        "_esm": (front_end / "heatmap.js").read_text(encoding="utf-8"),
        "_css": (front_end / "heatmap.css").read_text(encoding="utf-8"),
    }
    state = {"heatmap": {"model_module": "anywidget", "model_name": "AnyModel", "state": traits}}
    attributes, style = DARK_THEMES[dark] if dark else ("", "")
    script = json.dumps({"version_major": 2, "version_minor": 0, "state": state})
    page = PAGE % (attributes, style, script.replace("</", "<\\/"))
    (folder / "index.html").write_text(page, encoding="utf-8")
