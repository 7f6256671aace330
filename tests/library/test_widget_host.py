"""The book's widget host: it is loaded on the pages that have widgets, as a module after their
state, and the build stops on a widget it could not draw. (The browser tests and
test_heatmap.py see it draw.)"""

import json
from collections import defaultdict
from types import SimpleNamespace

import pytest
import widget_host
from sphinx.errors import ExtensionError


def page_with(*kinds, builder="html"):
    """A Sphinx app and environment in which the page "chapter" holds models of ``kinds``."""
    state = {
        f"model{i}": {"model_module": module, "model_name": name, "state": {}}
        for i, (module, name) in enumerate(kinds)
    }
    body = json.dumps({"version_major": 2, "version_minor": 0, "state": state})
    env = SimpleNamespace(nb_metadata=defaultdict(dict), all_docs={"chapter": 0})
    env.nb_metadata["chapter"] = {"js_files": {"ipywidgets_state": (None, {"body": body})}}
    scripts = []
    app = SimpleNamespace(
        env=env,
        builder=SimpleNamespace(name=builder),
        add_js_file=lambda *a, **k: scripts.append((a, k)),
    )
    return app, scripts


def test_a_page_of_anywidgets_loads_the_host_after_the_state():
    app, scripts = page_with(("anywidget", "AnyModel"), ("@jupyter-widgets/base", "LayoutModel"))
    widget_host.add_host(app, "chapter", "page.html", {}, None)
    assert scripts == [(("jsdeps/widget-host.js",), {"priority": 600, "type": "module"})]


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


def test_the_one_page_book_embeds_every_chapter_s_widgets_before_the_host():
    """make pdf's one page (singlehtml) holds every chapter, whose states myst-nb would not
    embed: the host gets them all, in one state script, before it starts."""
    app, scripts = page_with(("anywidget", "AnyModel"), builder="singlehtml")
    other = {"model_module": "anywidget", "model_name": "AnyModel", "state": {}}
    body = json.dumps({"version_major": 2, "version_minor": 0, "state": {"other1": other}})
    app.env.nb_metadata["other"] = {"js_files": {"ipywidgets_state": (None, {"body": body})}}
    app.env.all_docs = {"intro": 0, "chapter": 0, "other": 0}
    widget_host.add_host(app, "intro", "page.html", {}, None)
    (state_args, state), (host_args, host) = scripts
    assert state_args == (None,) and set(json.loads(state["body"])["state"]) == {"model0", "other1"}
    assert host_args == ("jsdeps/widget-host.js",) and host["priority"] == 600
