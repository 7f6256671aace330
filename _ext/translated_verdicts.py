"""The exercise checks' verdicts among a page's outputs, in the edition's language.

The chapters' cells run once, in English: both editions read the same execution cache. A
check's verdict box carries what its message was written from
(``attnkit.exercises.harness.verdict_html``), so in an edition in another language the box is
written again, in that language, from the same parts (``attnkit.exercises.wording``): the
Japanese pages show the Japanese a student running the Japanese notebook sees. So do the
exercises' stubs in the cells' code: their line is written in the edition's language, as in its
notebooks (``attnkit.exercises.stub``).
"""

from __future__ import annotations

import html
import json
import re

from docutils import nodes

from attnkit.exercises import stub
from attnkit.exercises.harness import TRACE_CLASS, VERDICT_ATTRIBUTE, verdict_html

# the box, and the drawing of the answer's trace that follows it (harness.TRACE_CLASS)
VERDICT = re.compile(
    rf'<div [^>]*\b{VERDICT_ATTRIBUTE}="([^"]*)"[^>]*>.*?</div>'
    rf'(?:<section class="{TRACE_CLASS}">.*?</section>)?',
    re.S,
)


def in_language(text: str, language: str) -> str:
    """The HTML ``text`` with each verdict box in it written in ``language``."""

    def written(match):
        verdict = json.loads(html.unescape(match.group(1)))
        return verdict_html(verdict["passed"], verdict["parts"], language, verdict.get("trace"))

    return VERDICT.sub(written, text)


def translate_verdicts(app, doctree, docname):
    language = app.config.language
    if language in (None, "en"):
        return
    for node in doctree.findall(nodes.raw):
        if node.get("format") == "html" and VERDICT_ATTRIBUTE in node.astext():
            node.children = [nodes.Text(in_language(node.astext(), language))]
    english_stub = stub.stub_line("en")
    for node in doctree.findall(nodes.literal_block):
        if english_stub in node.astext():
            code = stub.in_language(node.astext(), language)
            node.rawsource, node.children = code, [nodes.Text(code)]


def setup(app):
    app.connect("doctree-resolved", translate_verdicts)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
