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

# A minimal anywidget host: get/set/on/off/save_changes on a plain object. Like the widget
# manager's model, set() calls the trait's change listeners at once.
PAGE = """<!doctype html><meta charset="utf-8"><link rel="stylesheet" href="heatmap.css">
<div id="host"></div>
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


def write_page(folder: Path, widget: AttentionHeatmap, front_end: Path = FRONT_END) -> None:
    """Put index.html, heatmap.js and heatmap.css into ``folder``: one heatmap of ``widget``."""
    for name in ["heatmap.js", "heatmap.css"]:
        shutil.copy(front_end / name, folder / name)
    (folder / "index.html").write_text(PAGE % json.dumps(widget_state(widget)), encoding="utf-8")
