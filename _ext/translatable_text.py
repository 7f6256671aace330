"""Text of the pages that Sphinx's gettext machinery missed, made translatable.

The Japanese edition (``_ext/edition_language.py``) takes each page's sentences from its
catalogue: ``sphinx.util.nodes.extract_messages`` finds them in the document tree, the gettext
builder writes them to the catalogue (``make catalogues``) from the tree as it would be written,
after the post-transforms, and Sphinx's ``Locale`` transform replaces them while the page is
read (priority 20). Text made or rebuilt outside that order stayed English on Japanese pages:

- **the titles of exercises** (``{exercise} Counting the model``, and ``exercise-start``):
  sphinx-exercise parses the title into a subtitle node without its source text (no
  ``rawsource``, so no message), and its post-transform ``ResolveTitlesInExercises`` moves the
  subtitle's content into a new title node, which the gettext builder does not take. Here the
  directive keeps the title as written on the subtitle, which ``Locale`` then translates; for
  the gettext builder the content is carried through the rebuilding
  (:class:`KeepExerciseTitles`); a solution's title, which sphinx-exercise builds from a copy of
  its exercise made before ``Locale``, gets the translated title
  (:class:`TranslatedTitlesForSolutions`). The title nodes themselves are no messages
  (:class:`UntranslatableTitleNodes`).
- **the alt text of a code cell's picture** (``mystnb: image: alt:``): myst-nb keeps only the
  text/plain form of an output for the gettext builder, so the picture and its alt text were
  gone before the messages were taken. ``nb_mime_priority_overrides`` in ``_config.yml`` gives
  the gettext builder the picture, as the HTML has it; nothing here.
- **the words of a display formula** (``\\text{projections}`` → ``\\text{射影}``): ``Locale``
  reads the translation of a literal block as reStructuredText's ``::`` block, which MyST reads
  as a paragraph "::", and that text took the formula's place. The formula's translation is put
  in before ``Locale``, which then leaves it (:class:`TranslatedFormulas`).
- **the captions of the table of contents** ("Chapters", from ``_toc.yml``): in the catalogue
  (the gettext builder takes them from the environment), but sphinx-external-toc inserts the
  toctrees at priority 100, after ``Locale``: they are translated once inserted
  (:class:`TranslatedTocCaptions`).

Relies on sphinx-exercise's directive classes (subclassed), its nodes, its post-transform's
priority and ``env.sphinx_exercise_registry``; on the priorities of Sphinx's ``Locale`` (20) and
sphinx-external-toc's ``InsertToctrees`` (100); on ``Locale`` taking a display formula's message
from its ``rawsource`` and skipping a node marked ``translatable = False``. (tests/library/test_internals.py fails, naming it,
if it moves.)
"""

from __future__ import annotations

from docutils import nodes
from edition_language import translations
from sphinx import addnodes
from sphinx.transforms import SphinxTransform
from sphinx.transforms.post_transforms import SphinxPostTransform
from sphinx.util.nodes import is_translatable
from sphinx_exercise.directive import ExerciseDirective, ExerciseStartDirective
from sphinx_exercise.nodes import exercise_subtitle, exercise_title, solution_title

LOCALE_PRIORITY = 20  # sphinx.transforms.i18n.Locale


class TitleAsWritten:
    """An exercise directive whose subtitle (its title argument) is a message: its MyST source
    text, where the page has it."""

    def run(self):
        result = super().run()
        if self.arguments:
            source, line = self.get_source_info()
            for node in result:
                for subtitle in node.findall(exercise_subtitle):
                    subtitle.rawsource = self.arguments[0]
                    subtitle.source, subtitle.line = source, line
        return result


class Exercise(TitleAsWritten, ExerciseDirective):
    pass


class ExerciseStart(TitleAsWritten, ExerciseStartDirective):
    pass


class UntranslatableTitleNodes(SphinxTransform):
    """Before ``Locale``: the title nodes of exercises and solutions are no messages. Their
    text ("Exercise" and the title run together, "Solution to") is not what the page shows:
    sphinx-exercise rebuilds these titles after reading, in words it translates itself."""

    default_priority = LOCALE_PRIORITY - 5

    def apply(self, **kwargs) -> None:
        for title in self.document.findall(
            lambda node: isinstance(node, (exercise_title, solution_title))
        ):
            title["translatable"] = False


class TranslatedFormulas(SphinxTransform):
    """Before ``Locale``: a display formula whose translation differs from it takes the
    translation here, and is no message for ``Locale`` any more."""

    default_priority = LOCALE_PRIORITY - 5

    def apply(self, **kwargs) -> None:
        formulas = [
            node for node in self.document.findall(nodes.math_block) if is_translatable(node)
        ]
        catalogue = translations(self) if formulas else None
        if not catalogue:
            return
        for formula in formulas:
            message = formula.rawsource or formula.astext()  # as extract_messages takes it
            translation = catalogue.get(message, "")
            if translation.strip() and translation != message:
                formula.children = [nodes.Text(translation)]
                formula.rawsource = translation
                formula["translatable"] = False


class TranslatedTitlesForSolutions(SphinxTransform):
    """After ``Locale``: the translated title of each exercise also in sphinx-exercise's copy
    of it, from which a solution's title ("Solution to Exercise 1.1 (...)") is built."""

    default_priority = LOCALE_PRIORITY + 1

    def apply(self, **kwargs) -> None:
        registry = getattr(self.env, "sphinx_exercise_registry", {})
        for subtitle in self.document.findall(exercise_subtitle):
            exercise = subtitle.parent.parent if subtitle.get("translated") else None
            entry = registry.get(exercise.get("label")) if exercise is not None else None
            if entry is None:
                continue
            for copy in entry["node"].findall(exercise_subtitle):
                copy.children = []
                copy.extend(child.deepcopy() for child in subtitle.children)


class TranslatedTocCaptions(SphinxTransform):
    """The captions of the toctrees that sphinx-external-toc inserts after ``Locale``,
    translated from the page's catalogue as ``Locale`` translates a toctree."""

    default_priority = 101  # sphinx_external_toc.events.InsertToctrees is 100

    def apply(self, **kwargs) -> None:
        toctrees = list(self.document.findall(addnodes.toctree))
        catalogue = translations(self) if toctrees else None
        if not catalogue:
            return
        for toctree in toctrees:
            for message in toctree.extract_original_messages():
                translation = catalogue.get(message, "")
                if translation.strip() and translation != message:
                    toctree.apply_translated_message(message, translation)


class KeepExerciseTitles(SphinxPostTransform):
    """For the gettext builder, which takes the messages from the tree as it would be written:
    each exercise's title kept a message through sphinx-exercise's rebuilding of the title
    (``ResolveTitlesInExercises``, priority 20, moves the subtitle's content into a new title
    and drops the subtitle): its content goes in a translatable inline with the subtitle's
    message, place and id (the gettext builder keeps the inline; other builders never see it)."""

    builders = ("gettext",)
    default_priority = 19

    def run(self, **kwargs) -> None:
        for subtitle in self.document.findall(exercise_subtitle):
            if not is_translatable(subtitle) or not hasattr(subtitle, "uid"):
                continue
            content = list(subtitle.children)
            subtitle.children = []
            carrier = nodes.inline(subtitle.rawsource, "", *content, translatable=True)
            carrier.source, carrier.line, carrier.uid = subtitle.source, subtitle.line, subtitle.uid
            subtitle += carrier


def setup(app):
    app.setup_extension("sphinx_exercise")  # its directives first, then ours in their place
    app.add_directive("exercise", Exercise, override=True)
    app.add_directive("exercise-start", ExerciseStart, override=True)
    app.add_transform(UntranslatableTitleNodes)
    app.add_transform(TranslatedFormulas)
    app.add_transform(TranslatedTitlesForSolutions)
    app.add_transform(TranslatedTocCaptions)
    app.add_post_transform(KeepExerciseTitles)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
