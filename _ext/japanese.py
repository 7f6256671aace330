"""Mark every run of Japanese text in a page ``lang="ja"``.

The book quotes Japanese terms in prose, tables, code and printed outputs. Screen readers
speak a run of text in the language its element declares; without ``lang="ja"`` they read
漢字 and かな with English rules or skip them. Wrapping happens on the rendered HTML, where
code and outputs are text too; TeX (``class="math"``), scripts and styles are left alone:
the formulas, typeset at build time, and the widgets keep them as they are.
"""

from __future__ import annotations

import re

# kana, CJK ideographs, CJK punctuation and full-width forms
JAPANESE = re.compile(r"[\u3000-\u303f\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uff00-\uffef]+")
# a tag, or the text up to the next tag
PIECE = re.compile(r"<[^>]*>|[^<]+")
RAW_TAG = re.compile(r"<(script|style)\b|<(\w+)\b[^>]*\bclass=\"[^\"]*\bmath\b", re.IGNORECASE)


def mark_japanese(html: str) -> str:
    """``html`` with each run of Japanese text outside tags, TeX and scripts in a span."""
    out, closing = [], None
    for piece in PIECE.findall(html):
        if closing:  # inside a script, a style or TeX: copied as it is
            if piece.lower().startswith(closing):
                closing = None
        elif piece.startswith("<"):
            raw = RAW_TAG.match(piece)
            if raw:
                closing = f"</{(raw.group(1) or raw.group(2)).lower()}"
        else:
            piece = JAPANESE.sub(lambda m: f'<span lang="ja">{m.group(0)}</span>', piece)
        out.append(piece)
    return "".join(out)


def mark_page(app, pagename, templatename, context, doctree):
    # the Japanese edition's pages are lang="ja" as a whole
    if "body" in context and app.config.language != "ja":
        context["body"] = mark_japanese(context["body"])


def setup(app):
    app.connect("html-page-context", mark_page)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
