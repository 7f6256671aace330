"""heatmap.js alone on a page, without the book or a widget manager.

A stand-in model serves a widget's traits to the front end, as the widget manager would. The
heatmap's browser tests and its benchmark use it; neither needs a build.
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

# A minimal anywidget host: get/set/on/off/save_changes on a plain object. Like the widget
# manager's model, set() calls the trait's change listeners at once.
PAGE = """<!doctype html><html lang="en" %s><meta charset="utf-8"><title>heatmap</title>
<link rel="stylesheet" href="heatmap.css"><style>%s</style>
<main id="host"></main>
<script type="module">
import widget from "./heatmap.js";
const state = %s;
const listeners = {};
const model = {
  get: (name) => state[name],
  set: (name, value) => { state[name] = value; (listeners["change:" + name] || []).forEach((f) => f()); },
  on: (event, f) => { (listeners[event] = listeners[event] || []).push(f); },
  off: (event, f) => { listeners[event] = (listeners[event] || []).filter((g) => g !== f); },
  save_changes: () => {},
};
widget.render({ model, el: document.getElementById("host") });
window.ready = true;
</script>
"""


def widget_state(widget: AttentionHeatmap) -> dict:
    """The traits an AttentionHeatmap syncs to its front end (anywidget's own left out)."""
    return {name: getattr(widget, name) for name in AttentionHeatmap.class_own_traits(sync=True)}


def write_page(
    folder: Path, widget: AttentionHeatmap, front_end: Path = FRONT_END, dark: str | None = None
) -> None:
    """Put index.html, heatmap.js and heatmap.css into ``folder``: one heatmap of ``widget``, on a
    plain light page or in one of the ``DARK_THEMES``."""
    for name in ["heatmap.js", "heatmap.css"]:
        shutil.copy(front_end / name, folder / name)
    attributes, style = DARK_THEMES[dark] if dark else ("", "")
    page = PAGE % (attributes, style, json.dumps(widget_state(widget)))
    (folder / "index.html").write_text(page, encoding="utf-8")
