"""heatmap.js alone on a page, without the book: one widget drawn by the book's widget host.

The page holds the widget's state and view as myst-nb embeds them in the book's pages, and loads
the same host (booktools/widget-host.js), so the heatmap's browser tests and its benchmark exercise
the path the book's readers take; neither needs a build. ``write_widgets`` puts any of the
book's widgets (heatmaps, the cache calculator) on one such page, in English or Japanese.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from anywidget import AnyWidget

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

PAGE = """<!doctype html><html lang="%s" %s><meta charset="utf-8"><title>widgets</title>
<style>%s</style>
<script type="application/vnd.jupyter.widget-state+json">%s</script>
<script type="module" src="widget-host.js"></script>
<main>%s</main>
"""
VIEW = '<script type="application/vnd.jupyter.widget-view+json">{"model_id": "%s"}</script>'
HOST = ROOT / "booktools" / "widget-host.js"


ANYWIDGET_OWN = {"_anywidget_id", "_esm", "_css"}


def widget_state(widget: AnyWidget) -> dict:
    """The traits a widget syncs to its front end (anywidget's own left out). Its class's: an
    anywidget's type is a subclass that anywidget makes for each instance, holding its own."""
    own = set(type(widget).class_traits(sync=True)) - set(AnyWidget.class_traits(sync=True))
    return {name: getattr(widget, name) for name in sorted(own - ANYWIDGET_OWN)}


def _write(folder: Path, states: dict, views: list, dark: str | None, lang: str) -> None:
    """index.html and the widget host in ``folder``: the models' ``states`` ({id: traits}) and
    ``views``, each a model id and the lang of an element around its view (None: none)."""
    shutil.copy(HOST, folder / HOST.name)
    state = {
        model_id: {"model_module": "anywidget", "model_name": "AnyModel", "state": traits}
        for model_id, traits in states.items()
    }
    attributes, style = DARK_THEMES[dark] if dark else ("", "")
    script = json.dumps({"version_major": 2, "version_minor": 0, "state": state})
    body = "".join(
        VIEW % model_id if view_lang is None else f'<div lang="{view_lang}">{VIEW % model_id}</div>'
        for model_id, view_lang in views
    )
    page = PAGE % (lang, attributes, style, script.replace("</", "<\\/"), body)
    (folder / "index.html").write_text(page, encoding="utf-8")


def write_page(
    folder: Path,
    widget: AttentionHeatmap,
    front_end: Path = FRONT_END,
    dark: str | None = None,
    lang: str = "en",
) -> None:
    """Put index.html and the widget host into ``folder``: one heatmap of ``widget``, with the
    front end in ``front_end``, on a plain light page or in one of the ``DARK_THEMES``, in the
    language ``lang`` (its <html lang>)."""
    traits = {
        **widget_state(widget),
        "_esm": (front_end / "heatmap.js").read_text(encoding="utf-8"),
        "_css": (front_end / "heatmap.css").read_text(encoding="utf-8"),
    }
    _write(folder, {"heatmap": traits}, [("heatmap", None)], dark, lang)


def write_widgets(folder: Path, views: list, lang: str = "en") -> None:
    """Put index.html and the widget host into ``folder``: a view of each of ``views``, in page
    order, on a page in the language ``lang``. A view is a widget (an AttentionHeatmap, a
    KVCacheCalculator), drawn by its own front end (chapters/attnkit), or a pair (widget, lang)
    whose view is inside an element of that lang. The models' ids are "widget0", "widget1", ..."""
    pairs = [view if isinstance(view, tuple) else (view, None) for view in views]
    states = {
        f"widget{i}": {**widget_state(widget), "_esm": str(widget._esm), "_css": str(widget._css)}
        for i, (widget, _) in enumerate(pairs)
    }
    _write(
        folder,
        states,
        [(f"widget{i}", view_lang) for i, (_, view_lang) in enumerate(pairs)],
        None,
        lang,
    )
