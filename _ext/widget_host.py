"""Draw the pages' widgets with the book's own host, ``booktools/widget-host.js``, not a widget manager.

Every widget in the book is an anywidget, whose front end travels in the widget state that
myst-nb embeds in the page; ``widget-host.js`` imports it and renders each view (see its header).
This extension loads the host on the pages that have widgets (instead of the widget manager
myst-nb would load, which ``_config.yml`` turns off), as a module, which runs once the page has
been read, before the theme's deferred scripts; copies it into ``_static/jsdeps/``; and fails the build
when a page holds a widget the host cannot draw (anything but anywidgets and the layout and style
models they carry).

Relies on myst-nb's ``NbMetadataCollector.get_js_files(env, docname)``, where myst-nb keeps a
page's widget state. (tests/library/test_internals.py fails, naming it, if it moves.)
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from myst_nb.sphinx_ import NbMetadataCollector
from sphinx.errors import ExtensionError

import booktools

HOST = Path(booktools.__file__).resolve().parent / "widget-host.js"
DRAWN = {"anywidget"}
CARRIED = {("@jupyter-widgets/base", "LayoutModel"), ("@jupyter-widgets/controls", "StyleModel")}


def widget_state(app, pagename) -> dict | None:
    """The page's widget state as myst-nb embeds it (None where it has no widget). The
    one-page build (``single_page.py``, for ``make pdf``) holds every chapter: their states
    together, which it must embed itself, as myst-nb embeds only its own page's."""
    single = app.builder.name == "singlehtml"
    merged, attributes = None, {}
    for docname in sorted(app.env.all_docs) if single else [pagename]:
        _, found = NbMetadataCollector.get_js_files(app.env, docname).get(
            "ipywidgets_state", (None, {})
        )
        if "body" in found:
            attributes, state = found, json.loads(found["body"])
            merged = (
                state if merged is None else merged | {"state": merged["state"] | state["state"]}
            )
    if single and merged is not None:
        app.add_js_file(None, **attributes | {"body": json.dumps(merged)})
    return merged


def add_host(app, pagename, templatename, context, doctree):
    state = widget_state(app, pagename)
    if state is None:
        return
    for model_id, entry in state["state"].items():
        kind = (entry["model_module"], entry["model_name"])
        if kind[0] not in DRAWN and kind not in CARRIED:
            raise ExtensionError(
                f"{pagename}: widget {model_id} is a {kind[0]} {kind[1]}, which the static "
                "page cannot draw; the book's widgets are anywidgets (see booktools/widget-host.js)"
            )
    # after the widget state (priority 500), which it reads
    app.add_js_file(f"jsdeps/{HOST.name}", priority=600, type="module")


def copy_host(app, exception):
    if exception is None and app.builder.format == "html":
        target = Path(app.outdir) / "_static" / "jsdeps"
        target.mkdir(parents=True, exist_ok=True)
        shutil.copy2(HOST, target / HOST.name)


def setup(app):
    app.connect("html-page-context", add_host)
    app.connect("build-finished", copy_host)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
