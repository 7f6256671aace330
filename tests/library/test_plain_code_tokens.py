"""Highlighted code without spans where the theme's styles draw plain text
(_ext/plain_code_tokens.py). (The built pages: tests/book/test_book.py.)"""

import re
from html import unescape

import plain_code_tokens
from pygments import highlight
from pygments.lexers import PythonLexer
from pygments.styles import get_style_by_name
from pygments.token import Keyword, Name, Number, Punctuation, Text

THEME_STYLES = [
    get_style_by_name(n) for n in ("a11y-high-contrast-light", "a11y-high-contrast-dark")
]
CODE = "def scores(q, k):  # one query\n    return q @ k.T / 2.0\n"


def test_tokens_drawn_as_plain_text_in_both_styles_are_found():
    plain = plain_code_tokens.plain_tokens(THEME_STYLES)
    assert {Name, Punctuation, Text.Whitespace} <= plain
    assert not {Keyword, Number, Name.Builtin} & plain
    # a style that colours names keeps their spans
    assert Name not in plain_code_tokens.plain_tokens([*THEME_STYLES, get_style_by_name("tango")])


def test_code_keeps_its_text_and_its_coloured_tokens_but_not_the_plain_spans(monkeypatch):
    monkeypatch.setattr(
        plain_code_tokens.PlainTokensFormatter,
        "plain",
        plain_code_tokens.plain_tokens(THEME_STYLES),
    )
    html = highlight(CODE, PythonLexer(), plain_code_tokens.PlainTokensFormatter())
    classes = set(re.findall(r'<span class="([^"]+)"', html))
    assert {"k", "nf", "c1", "mf", "o"} <= classes
    assert not {"n", "p", "w"} & classes
    code = re.search(r"<pre>(.*)</pre>", html, re.S)[1]
    assert unescape(re.sub(r"<[^>]+>", "", code)) == CODE  # the same text, to read and to copy
