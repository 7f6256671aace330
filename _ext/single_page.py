"""The whole book as one HTML page (Sphinx's singlehtml builder), which ``make pdf`` prints.

Sphinx gives a builder the node handlers registered under its own name and falls back to those of
its format only when it has none: sphinx-proof registers its nodes for ``html`` alone, while
other extensions register for ``singlehtml`` too, so the one-page build would not know how to
write a definition. This lends the ``html`` handlers to ``singlehtml`` where it has none.

Relies on Sphinx's ``app.registry.translation_handlers`` (the handlers by builder name), which it
fills: Sphinx has no public way to copy handlers between builders. (tests/library/test_internals.py
fails, naming it, if it moves.)
"""

from __future__ import annotations


def lend_html_handlers(app):
    if app.builder.name != "singlehtml":
        return
    handlers = app.registry.translation_handlers
    single = handlers.setdefault("singlehtml", {})
    for node, visitors in handlers.get("html", {}).items():
        single.setdefault(node, visitors)


def setup(app):
    app.connect("builder-inited", lend_html_handlers)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
