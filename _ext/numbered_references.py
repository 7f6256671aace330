"""Numbered references ({numref}) resolved without unpickling their target page again each time.

Sphinx 7.4 finds the node that a numbered reference points to by unpickling the whole document
tree of the target's page, once per reference (``StandardDomain._resolve_numref_xref``): the
book's 73 references cost 73 unpicklings of pages of up to 350 kB, about 6 s of each build. Here
that lookup reads one copy of each page, unpickled once per build and only read, never changed
(the pages that are written are unpickled anew, as before).

Relies on the private ``StandardDomain._resolve_numref_xref`` and its ``env.get_doctree`` call,
wrapped: Sphinx offers no hook for the lookup. (tests/library/test_internals.py fails, naming it,
if it moves.)
"""

from __future__ import annotations

from sphinx.domains.std import StandardDomain


class _ReadOnlyPages:
    """The build environment, except that ``get_doctree`` returns one kept copy of each page."""

    def __init__(self, env, kept: dict):
        self._env, self._kept = env, kept

    def get_doctree(self, docname):
        if docname not in self._kept:
            self._kept[docname] = self._env.get_doctree(docname)
        return self._kept[docname]

    def __getattr__(self, name):
        return getattr(self._env, name)


def forget_kept_pages(app, env):
    """A build reads pages anew before it writes: copies kept by an earlier build are stale."""
    app.numbered_reference_pages = {}


def resolve_with_kept_pages(resolve):
    def resolve_numref_xref(domain, env, *args):
        kept = getattr(env.app, "numbered_reference_pages", None)
        return resolve(domain, env if kept is None else _ReadOnlyPages(env, kept), *args)

    resolve_numref_xref.kept_pages = True
    return resolve_numref_xref


def setup(app):
    if not getattr(StandardDomain._resolve_numref_xref, "kept_pages", False):  # once a process
        StandardDomain._resolve_numref_xref = resolve_with_kept_pages(
            StandardDomain._resolve_numref_xref
        )
    app.connect("env-updated", forget_kept_pages)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
