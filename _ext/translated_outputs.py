"""The chapters' figures and trace drawings in the edition's language.

The chapters' cells run once, in English. An output that has words carries its rendering in
each other language in its metadata (``attnkit.translated``): when a cell shows a figure,
``attnkit.plots`` draws it again with its words translated by the catalogue of figure labels
(``attnkit.figure_text``), beside the labels the catalogue lacked; a trace
(``attnkit.trace``) carries its drawing in each language. In an edition in another language
myst-nb writes that rendering in place of the English one; a figure label without a
translation is a warning that names it, so a build with -W fails until
``chapters/attnkit/locales/<language>/LC_MESSAGES/figures.po`` has it. (The static figures in
figures/ need none of this: Sphinx's ``figure_language_filename`` picks their
``<name>.<language>.svg``.)

Relies on myst-nb's ``NbElementRenderer.render_mime_type``, which it wraps, and on the fields of
its ``MimeData`` (tests/library/test_internals.py fails, naming them, if they move).
"""

from __future__ import annotations

import dataclasses

from myst_nb.core.render import NbElementRenderer

from attnkit.translated import TRANSLATIONS, UNTRANSLATED


def output_in(language: str, render_mime_type):
    """``render_mime_type`` showing an output in ``language`` where it carries a rendering in
    it."""

    def render_translated(self, data):
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
        return render_mime_type(self, data)

    return render_translated


def show_translated_outputs(app):
    language = app.config.language
    if language not in (None, "en"):
        NbElementRenderer.render_mime_type = output_in(language, NbElementRenderer.render_mime_type)


def setup(app):
    app.connect("builder-inited", show_translated_outputs)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
