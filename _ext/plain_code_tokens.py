"""Highlighted code without a span around each name, punctuation mark and space.

Pygments wraps every token of highlighted code in a span whose class names its type, for the
style sheet to colour. The theme's two styles (pydata-sphinx-theme's ``pygments_light_style``
and ``pygments_dark_style``) draw names, punctuation and white space exactly as plain text, yet
chapter 5 had 3,487 such spans, a third of its page's elements, each of which a browser styles
and lays out. Here the tokens that both styles draw as plain text are written without a span:
the code looks the same and copies the same, and chapter 5 has 7,338 elements instead of 10,825
(Lighthouse's phone scores moved within their run-to-run noise: benchmarks/lighthouse.py).
"""

from __future__ import annotations

from pygments.formatters import HtmlFormatter
from pygments.styles import get_style_by_name
from pygments.token import STANDARD_TYPES, Text
from sphinx.highlighting import PygmentsBridge

STYLE_OPTIONS = ("pygments_light_style", "pygments_dark_style")


def plain_tokens(styles) -> frozenset:
    """The token types that every one of ``styles`` draws as it draws plain text."""
    return frozenset(
        token
        for token in STANDARD_TYPES
        if all(style.style_for_token(token) == style.style_for_token(Text) for style in styles)
    )


class PlainTokensFormatter(HtmlFormatter):
    """Pygments' HTML, with no span for the token types in ``plain``."""

    plain: frozenset = frozenset()

    def _get_css_classes(self, ttype):
        return "" if ttype in self.plain else super()._get_css_classes(ttype)


def theme_styles(app) -> list[str]:
    """The names of the theme's light and dark styles, as the book sets them or by default."""
    defaults = app.builder.theme.get_options() if getattr(app.builder, "theme", None) else {}
    chosen = app.config.html_theme_options
    return [chosen.get(key) or defaults.get(key) for key in STYLE_OPTIONS]


def find_plain_tokens(app):
    names = [name for name in theme_styles(app) if name]
    # no theme's styles known: every span stays
    PlainTokensFormatter.plain = (
        plain_tokens([get_style_by_name(name) for name in names]) if names else frozenset()
    )


def setup(app):
    PygmentsBridge.html_formatter = PlainTokensFormatter
    app.connect("builder-inited", find_plain_tokens)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
