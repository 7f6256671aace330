"""The student edition: the same book with every solution removed from every file it serves.

With the environment variable ``BOOK_EDITION=student`` (``make student`` sets it):

- the solutions of sphinx-exercise (the ``solution`` directive and the gated
  ``solution-start``/``solution-end`` form, code cells and outputs included) and the
  "Answers to ..." dropdowns (marked before the Japanese edition translates their titles) are
  deleted from every page's document tree before it is
  written, so they are absent from the HTML and from the search index, not merely hidden
  (pages are read as in the full edition, whose read pages ``make student`` starts from);
- a page whose front matter says ``student-edition: intro-only`` (the errata, which answer the
  spot-the-error exercises) keeps its title and introduction, and a note replaces the rest, in
  its contents menu ("On this page") too: the titles of its sections give answers away;
- no label points into what is withheld, so ``objects.inv`` (which lists every label with its
  title) names no solution and no withheld section;
- the page sources under ``_sources/`` are replaced by the same text with the same parts removed
  (:func:`strip_solutions`), and the notebooks extension builds the downloadable notebooks from
  that text too.

Why not sphinx-exercise's own ``hide_solutions``: it drops the ``solution`` directive only, and
keeps the gated ``solution-start``/``solution-end`` form (the chapters' code solutions), the
"Answers to" dropdowns, the labels in ``objects.inv`` and the sources.

Relies on Sphinx's ``BuildEnvironment.tocs`` (each page's contents menu), which it cuts on intro-
only pages. (tests/library/test_internals.py fails, naming it, if it moves.)
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from docutils import nodes
from sphinx.locale import _
from sphinx.transforms import SphinxTransform
from sphinx_exercise.nodes import solution_node

from booktools.myst_directives import directives

ANSWERS_TITLE = "Answers to"
ANSWERS_CLASS = "answers"
INTRO_ONLY = "intro-only"
# its Japanese is in sphinx.po (_templates/words-outside-templates.html)
WITHHELD = (
    "The rest of this page is withheld in the student edition: it answers the "
    "spot-the-error exercises. Your instructor can give you the full edition."
)


class MarkAnswers(SphinxTransform):
    """Mark the "Answers to" dropdowns by a class while their titles are still English: the
    Japanese edition translates them next (Sphinx's Locale transform, priority 20)."""

    default_priority = 10

    def apply(self, **kwargs) -> None:
        for node in self.document.findall(nodes.admonition):
            title = node[0] if node.children else None
            if isinstance(title, nodes.title) and title.astext().startswith(ANSWERS_TITLE):
                node["classes"].append(ANSWERS_CLASS)


def is_answers_dropdown(node) -> bool:
    return isinstance(node, nodes.admonition) and {"dropdown", ANSWERS_CLASS} <= set(
        node.get("classes", [])
    )


def withheld(doctree) -> list:
    """The solutions and "Answers to" dropdowns of a page."""
    return list(doctree.findall(lambda n: isinstance(n, solution_node) or is_answers_dropdown(n)))


def sections_after_intro(doctree) -> list:
    """The sections of an intro-only page: all but its title and introduction."""
    page = next(iter(doctree.findall(nodes.section)))
    return [child for child in page.children if isinstance(child, nodes.section)]


def is_intro_only(env, docname) -> bool:
    return env.metadata[docname].get("student-edition") == INTRO_ONLY


def forget_labels(env, docname, withheld_nodes):
    """Drop the labels that point into ``withheld_nodes``: the standard domain files a label for
    every labelled section and sphinx-exercise one for every solution, and objects.inv lists
    them all with their titles."""
    ids = {i for node in withheld_nodes for n in node.findall(nodes.Element) for i in n["ids"]}
    std = env.get_domain("std")
    for labels in (std.labels, std.anonlabels):
        for name, (doc, label, *_rest) in list(labels.items()):
            if doc == docname and label in ids:
                del labels[name]


def withhold_from_environment(app, env):
    """Once every page is read, what is withheld leaves what the environment keeps of the pages:
    their labels, and an intro-only page's contents menu (collected from the whole page), which
    keeps only the page's title. Pages are read alike in both editions, so that the student
    edition can start from the full edition's read pages (make student) and only write."""
    if not app.config.student_edition:
        return
    for docname in sorted(env.found_docs):
        doctree = env.get_doctree(docname)
        hidden = withheld(doctree)
        if is_intro_only(env, docname):
            hidden += sections_after_intro(doctree)
            (title,) = env.tocs[docname].children
            del title[1:]
        forget_labels(env, docname, hidden)


def remove_solutions(app, doctree, docname):
    """Solutions leave the page when it is written: sphinx-exercise resolves them until then. An
    intro-only page is cut to its introduction, and a note says why."""
    if not app.config.student_edition:
        return
    for node in withheld(doctree):
        node.parent.remove(node)
    if is_intro_only(app.env, docname):
        for section in sections_after_intro(doctree):
            section.parent.remove(section)
        next(iter(doctree.findall(nodes.section))).append(
            nodes.note("", nodes.paragraph(text=str(_(WITHHELD))))
        )


def strip_solutions(text: str) -> str:
    """MyST Markdown ``text`` without its solutions and "Answers to" dropdowns."""
    lines = text.splitlines(keepends=True)
    if re.search(rf"^student-edition:\s*{INTRO_ONLY}\s*$", text, re.M):
        first_section = next(i for i, line in enumerate(lines) if line.startswith("## "))
        lines = lines[:first_section] + [f"```{{note}}\n{WITHHELD}\n```\n"]
    found = directives("".join(lines))
    cut = []  # (first line, line after the last) of each withheld part
    for index, directive in enumerate(found):
        if directive.name == "solution" or (
            directive.name == "admonition" and directive.argument.startswith(ANSWERS_TITLE)
        ):
            cut.append((directive.start, directive.end))
        elif directive.name == "solution-start":  # everything up to the end of solution-end
            end = next(d for d in found[index + 1 :] if d.name == "solution-end")
            cut.append((directive.start, end.end))
    for start, end in reversed(cut):
        del lines[start:end]
    return re.sub(r"\n{3,}", "\n\n", "".join(lines))


def write_student_sources(app, exception):
    """Replace the copied page sources by their student versions."""
    if exception is not None or not app.config.student_edition or app.builder.format != "html":
        return
    for docname in app.env.found_docs:
        source = Path(app.env.doc2path(docname))
        copy = Path(app.outdir) / "_sources" / f"{docname}{source.suffix}"
        if source.suffix == ".md" and copy.exists():
            copy.write_text(strip_solutions(source.read_text(encoding="utf-8")), encoding="utf-8")


def setup(app):
    # "html": the edition changes what is written, not what is read
    app.add_config_value("student_edition", os.environ.get("BOOK_EDITION") == "student", "html")
    app.add_transform(MarkAnswers)
    app.connect("env-updated", withhold_from_environment)
    app.connect("doctree-resolved", remove_solutions)
    app.connect("build-finished", write_student_sources)
    # env_version: the pages are now read alike in both editions; an environment that an older
    # version of this extension left (with the solutions' labels dropped) is read again
    return {"env_version": 3, "parallel_read_safe": True, "parallel_write_safe": True}
