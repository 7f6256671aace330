"""The exercises' labels as a textbook in the edition's language prints them.

sphinx-exercise names an exercise in its own words, and its Japanese word (練習) is not the
book's (演習, as its pages say). The book's words come first: ``locales/<language>/LC_MESSAGES/
exercise.po``, loaded here before sphinx-exercise loads its own (this extension comes before it
in _config.yml), so that its boxes, its solutions and every reference to an exercise say them.

In Japanese an exercise's title is 「演習 1.1（形状）」, its title in full-width parentheses, and a
solution's title 「演習 1.1 の解答」 in Japanese word order, where sphinx-exercise writes
「解答 練習 1.1 (形状)」: both are rewritten after sphinx-exercise has built them.
"""

from __future__ import annotations

import re
from pathlib import Path

from docutils import nodes
from sphinx.transforms.post_transforms import SphinxPostTransform
from sphinx.util.i18n import CatalogInfo
from sphinx_exercise.nodes import exercise_enumerable_node, solution_node

CATALOGUE = "exercise"  # sphinx-exercise's domain
# a solution's title, around its link to the exercise, in languages that do not say
# "Solution to Exercise 1.1"
SOLUTION_TITLE = {"ja": ("", " の解答")}
FULL_WIDTH = {"ja": ("（", "）")}
# the number Sphinx writes before a numbered title: "演習 1.1 " and its closing tag
NUMBER_BEFORE_TITLE = re.compile(r'(<span class="caption-number">[^<]*?) (</span>)（')


def book_words_first(app) -> None:
    """The book's catalogue of sphinx-exercise's words, compiled and loaded before its own, so
    that Sphinx looks a word up there first."""
    language = app.config.language
    if language in (None, "en"):
        return
    locales = Path(app.srcdir, "locales")
    info = CatalogInfo(str(locales / language / "LC_MESSAGES"), CATALOGUE, "utf-8")
    if Path(info.po_path).is_file():
        if info.is_outdated():
            info.write_mo(language)
        app.add_message_catalog(CATALOGUE, str(locales))


class ExerciseLabels(SphinxPostTransform):
    """After sphinx-exercise's titles (priorities 20 to 22): the parentheses of an exercise's
    title and the word order of a solution's, in the edition's language."""

    default_priority = 30

    def run(self, **kwargs) -> None:
        language = self.config.language
        if language in FULL_WIDTH:
            for exercise in self.document.findall(exercise_enumerable_node):
                self.full_width(exercise.children[0], *FULL_WIDTH[language])
        if language in SOLUTION_TITLE:
            for solution in self.document.findall(solution_node):
                self.reorder(solution, *SOLUTION_TITLE[language])

    @staticmethod
    def full_width(title: nodes.Element, opening: str, closing: str) -> None:
        """`` (title)`` around an exercise's title as ``（title）``."""
        texts = [child for child in title.children if isinstance(child, nodes.Text)]
        if len(texts) >= 2 and str(texts[0]) == " (" and str(texts[-1]) == ")":
            texts[0].parent.replace(texts[0], nodes.Text(opening))
            texts[-1].parent.replace(texts[-1], nodes.Text(closing))

    @staticmethod
    def reorder(solution: nodes.Element, before: str, after: str) -> None:
        """``Solution to <link>Exercise 1.1 (title)</link>`` as ``<link>演習 1.1</link> の解答``:
        the link keeps the exercise's number, without its title, which the box above shows."""
        title = solution.children[0]
        links = [child for child in title.children if isinstance(child, nodes.reference)]
        if not isinstance(title, nodes.title) or len(links) != 1:
            return
        link = links[0]
        label = link.astext().strip().split(" (", 1)[0]
        link.children = []
        link += nodes.Text(label)
        title.children = []
        title += (
            [nodes.Text(before), link, nodes.Text(after)] if before else [link, nodes.Text(after)]
        )
        solution["title"] = f"{before}{label}{after}"


def no_space_before_title(app, pagename, templatename, context, doctree) -> None:
    """Sphinx ends an exercise's number with a space (``演習 1.1 ``), which Japanese does not put
    before a full-width parenthesis."""
    if app.config.language in FULL_WIDTH and "body" in context:
        context["body"] = NUMBER_BEFORE_TITLE.sub(r"\1\2（", context["body"])


def setup(app):
    book_words_first(app)
    app.add_post_transform(ExerciseLabels)
    app.connect("html-page-context", no_space_before_title)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
