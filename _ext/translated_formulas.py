"""Displayed formulas in the edition's language (the Japanese edition's ``\\text{処理済み}``).

Sphinx's Locale transform hands the translation of a literal block, which a displayed formula is,
to the page's parser as a reStructuredText literal block: ``"::"``, a blank line, the text
indented. MyST has no such block and reads ``::`` as a paragraph, and the formula's text became
``::``: a Japanese page lost every displayed formula whose words were translated. A formula's
translation is its text, with nothing to parse, so it is put in place here, just before that
transform, which then leaves the formula alone.

Relies on Sphinx's Locale transform (priority 20) reading a displayed formula's message from its
``rawsource`` and skipping a node marked ``translatable = False``
(tests/library/test_internals.py fails, naming it, if they move; tests/book/
test_japanese_edition.py fails, naming the page, if a displayed formula is lost).
"""

from __future__ import annotations

from pathlib import Path

from docutils import nodes
from sphinx.locale import init as init_locale
from sphinx.transforms import SphinxTransform
from sphinx.util.i18n import docname_to_domain


class TranslatedFormulas(SphinxTransform):
    default_priority = 19  # before sphinx.transforms.i18n.Locale

    def apply(self, **kwargs) -> None:
        if self.config.language in (None, "en"):
            return
        folders = [str(Path(self.env.srcdir) / folder) for folder in self.config.locale_dirs]
        domain = docname_to_domain(self.env.docname, self.config.gettext_compact)
        catalogue, found = init_locale(folders, self.config.language, domain)
        if not found:
            return
        for formula in self.document.findall(nodes.math_block):
            message = formula.rawsource or formula.astext()
            translation = catalogue.gettext(message)
            if translation.strip() and translation != message:
                formula[:] = [nodes.Text(translation)]
                formula.rawsource = translation
                formula["translated"] = True
                formula["translatable"] = False


def setup(app):
    app.add_transform(TranslatedFormulas)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
