"""The bibliography without a broken ARIA list.

Sphinx's HTML writer marks the list of citations ``role="list"`` but each entry
``role="doc-biblioentry"``, so assistive technology meets a list without list items
(WCAG 1.3.1). Dropping the list role leaves plain containers that read in order. The entries'
role goes too: DPUB-ARIA 1.1 deprecates ``doc-biblioentry`` (axe-core's aria-deprecated-role, in
Lighthouse's accessibility score).

Relies on the exact markup of docutils' HTML writer for a citation list (``_html_base``), which it
rewrites. (tests/library/test_internals.py fails, naming it, if it moves.)
"""

from __future__ import annotations

CITATION_LIST = '<div role="list" class="citation-list">'
ENTRY_ROLE = ' role="doc-biblioentry"'


def drop_list_role(app, pagename, templatename, context, doctree):
    if CITATION_LIST in context.get("body", ""):
        body = context["body"].replace(CITATION_LIST, '<div class="citation-list">')
        context["body"] = body.replace(ENTRY_ROLE, "")


def setup(app):
    app.connect("html-page-context", drop_list_role)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
