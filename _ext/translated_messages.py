"""Each translated message parsed at the cost of its text (the Japanese edition's build).

Sphinx's Locale transform parses every translated message of a page as a small document of its
own, with the page's parser (MyST): 3,568 messages in the Japanese edition. Two costs came with
each message that had nothing to do with its text:

- MyST made a throw-away document for it, with default settings built afresh (docutils builds an
  option parser of every setting to get them), though Sphinx hands it the document to use: the
  default of ``options.get("document", make_document())`` is computed all the same. The default
  settings are now built once and copied: 3.7 s less per Japanese build.
- The nodes moved into the page kept a reference to that document (docutils'
  ``node._document``), whose settings hold the build environment: pickling the page pickled the
  whole environment with it, every page's widget state included (4.4 MB for the intro page,
  against 69 kB in English), and every read of a page unpickled it again. Each node now finds
  its document through its parent: the Japanese build went from 53 s to 36 s.

Relies on ``myst_parser.mdit_to_docutils.base.make_document``, replaced (the module's renderer
calls it by its global name), and on docutils' ``Node._document``. (tests/library/test_internals.py
fails, naming it, if it moves.)
"""

from __future__ import annotations

import functools

from docutils.parsers.rst import Parser as RSTParser
from docutils.utils import new_document
from myst_parser.mdit_to_docutils import base

build_document = base.make_document


@functools.cache
def default_settings(parser_cls):
    return build_document(parser_cls=parser_cls).settings


def make_document(source_path="notset", parser_cls=RSTParser):
    """MyST's make_document, with the default settings built once."""
    return new_document(source_path, settings=default_settings(parser_cls).copy())


def detach_from_message_documents(app, doctree):
    """Every node of the page points at its document through its parent."""
    for node in doctree.findall():
        if node is not doctree:
            vars(node).pop("_document", None)


def setup(app):
    base.make_document = make_document
    app.connect("doctree-read", detach_from_message_documents)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
