"""Load the extensions' small scripts after the page is parsed, not before its first paint.

Sphinx, the theme and the extensions (copy buttons, highlighting) add their scripts to the
page's head as plain ``<script src>`` tags, each of which stops the browser from showing
anything until it has been fetched and run: on a phone over a slow network, a dozen
round trips before the first paint (benchmarks/lighthouse.py). None of them draws the page;
each waits for the document to be ready before it starts its work. So every script file is
loaded with ``defer``, which keeps their order and runs them before DOMContentLoaded, except
``documentation_options.js``: the inline scripts after it set fields of the object it defines.
Inline scripts, modules and scripts already async or deferred are left as they are, and so is
the search page, whose template adds Sphinx's search tools (they need doctools.js at once).

Relies on Sphinx's private asset class ``sphinx.builders.html._assets._JavaScript`` (its filename,
priority and attributes), rebuilt with ``defer``: Sphinx has no public way to change a script
another extension added. (tests/library/test_internals.py fails, naming it, if it moves.)
"""

from __future__ import annotations

import os

from sphinx.builders.html._assets import _JavaScript

# Scripts that inline code later in the head reads at once
IMMEDIATE = frozenset({"documentation_options.js"})


def deferred(script):
    attributes = getattr(script, "attributes", None)
    if attributes is None or not script.filename:
        return script
    if os.path.basename(os.fspath(script.filename)) in IMMEDIATE:
        return script
    if attributes.get("type", "text/javascript") != "text/javascript":
        return script  # a module is deferred already; a data block is not run
    if {"async", "defer"} & {key for key, value in attributes.items() if value is not None}:
        return script
    return _JavaScript(script.filename, priority=script.priority, **attributes, defer="defer")


def defer_scripts(app, pagename, templatename, context, doctree):
    if pagename == "search":  # its template runs Sphinx's search tools, which need doctools.js
        return
    scripts = context.get("script_files")
    if scripts is not None:  # the builder's own list: changed in place
        scripts[:] = [deferred(script) for script in scripts]


def setup(app):
    # after every other handler that adds a script to the page
    app.connect("html-page-context", defer_scripts, priority=990)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
