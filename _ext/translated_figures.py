"""The chapters' figures in the edition's language.

The chapters' cells run once, in English. When a cell shows a figure, ``attnkit.plots`` draws
it in each other language too, its words translated by the catalogue of figure labels
(``attnkit.figure_text``), and carries that picture in the output's metadata beside the labels
the catalogue lacked. In an edition in another language myst-nb writes that picture in place of
the English one; a label without a translation is a warning that names it, so a build with -W
fails until ``chapters/attnkit/locales/<language>/LC_MESSAGES/figures.po`` has it. (The static
figures in figures/ need none of this: Sphinx's ``figure_language_filename`` picks their
``<name>.<language>.svg``.)

Relies on myst-nb's ``NbElementRenderer.render_image``, which it wraps, and on the fields of
its ``MimeData`` (tests/library/test_internals.py fails, naming them, if they move).
"""

from __future__ import annotations

import dataclasses

from myst_nb.core.render import NbElementRenderer

from attnkit.plots import TRANSLATIONS, UNTRANSLATED


def picture_in(language: str, render_image):
    """``render_image`` showing an output's picture in ``language`` where it carries one."""

    def render_translated_image(self, data):
        metadata = data.output_metadata.get(data.mime_type, {})
        for label in metadata.get(UNTRANSLATED, {}).get(language, []):
            self.logger.warning(
                f"figure label {label!r} has no translation in the {language!r} catalogue of "
                "figure labels (chapters/attnkit/locales)",
                subtype="figure_label",
                line=data.line,
            )
        translated = metadata.get(TRANSLATIONS, {}).get(language)
        if translated:
            data = dataclasses.replace(data, content=translated)
        return render_image(self, data)

    return render_translated_image


def show_translated_figures(app):
    language = app.config.language
    if language not in (None, "en"):
        NbElementRenderer.render_image = picture_in(language, NbElementRenderer.render_image)


def setup(app):
    app.connect("builder-inited", show_translated_figures)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
