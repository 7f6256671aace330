"""The book's widget host: it is loaded on the pages that have widgets, as an async module after
their state, and the build stops on a widget it could not draw. (The browser tests and
test_heatmap.py see it draw.)"""

import json
from collections import defaultdict
from types import SimpleNamespace

import pytest
from sphinx.errors import ExtensionError

from tests.support.book import load_extension

widget_host = load_extension("widget_host")


def page_with(*kinds):
    """A Sphinx app and environment in which the page "chapter" holds models of ``kinds``."""
    state = {
        f"model{i}": {"model_module": module, "model_name": name, "state": {}}
        for i, (module, name) in enumerate(kinds)
    }
    body = json.dumps({"version_major": 2, "version_minor": 0, "state": state})
    env = SimpleNamespace(nb_metadata=defaultdict(dict))
    env.nb_metadata["chapter"] = {"js_files": {"ipywidgets_state": (None, {"body": body})}}
    scripts = []
    app = SimpleNamespace(env=env, add_js_file=lambda *a, **k: scripts.append((a, k)))
    return app, scripts


def test_a_page_of_anywidgets_loads_the_host_after_the_state():
    app, scripts = page_with(("anywidget", "AnyModel"), ("@jupyter-widgets/base", "LayoutModel"))
    widget_host.add_host(app, "chapter", "page.html", {}, None)
    assert scripts == [
        (("jsdeps/widget-host.js",), {"priority": 600, "loading_method": "async", "type": "module"})
    ]


def test_a_page_without_widgets_loads_nothing():
    app, scripts = page_with()
    app.env.nb_metadata["chapter"] = {}
    widget_host.add_host(app, "chapter", "page.html", {}, None)
    assert scripts == []


def test_a_widget_the_host_cannot_draw_stops_the_build():
    app, scripts = page_with(
        ("anywidget", "AnyModel"), ("@jupyter-widgets/controls", "IntSliderModel")
    )
    with pytest.raises(
        ExtensionError, match="chapter: widget model1 is a @jupyter-widgets/controls IntSliderModel"
    ):
        widget_host.add_host(app, "chapter", "page.html", {}, None)
    assert scripts == []
