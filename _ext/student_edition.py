"""The student edition: the same book with every solution removed from every file it serves.

With the environment variable ``BOOK_EDITION=student`` (``make student`` sets it):

- the solutions of sphinx-exercise (the ``solution`` directive and the gated
  ``solution-start``/``solution-end`` form, code cells and outputs included) and the
  "Answers to ..." dropdowns are deleted from every page's document tree before it is
  written, so they are absent from the HTML and from the search index, not merely hidden;
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
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from docutils import nodes
from myst_directives import directives
from sphinx_exercise.nodes import solution_node

ANSWERS_TITLE = "Answers to"
INTRO_ONLY = "intro-only"
WITHHELD = (
    "The rest of this page is withheld in the student edition: it answers the "
    "spot-the-error exercises. Your instructor can give you the full edition."
)


def is_answers_dropdown(node) -> bool:
    return (
        isinstance(node, nodes.admonition)
        and "dropdown" in node.get("classes", [])
        and node.children
        and isinstance(node[0], nodes.title)
        and node[0].astext().startswith(ANSWERS_TITLE)
    )


def withheld(doctree) -> list:
    """The solutions and "Answers to" dropdowns of a page."""
    return list(doctree.findall(lambda n: isinstance(n, solution_node) or is_answers_dropdown(n)))


def keep_intro_only(app, doctree, docname) -> list:
    """Cut an intro-only page, and its contents menu, to its introduction; the sections cut."""
    page = next(iter(doctree.findall(nodes.section)))
    sections = [child for child in page.children if isinstance(child, nodes.section)]
    for section in sections:
        page.remove(section)
    page += nodes.note("", nodes.paragraph(text=WITHHELD))
    # the menu was collected from the whole page (TocTreeCollector): keep only the page's title
    (title,) = app.env.tocs[docname].children
    del title[1:]
    return sections


def forget_labels(app, docname, withheld_nodes):
    """Drop the labels that point into ``withheld_nodes``: the standard domain files a label for
    every labelled section and sphinx-exercise one for every solution, and objects.inv lists
    them all with their titles."""
    ids = {i for node in withheld_nodes for n in node.findall(nodes.Element) for i in n["ids"]}
    std = app.env.get_domain("std")
    for labels in (std.labels, std.anonlabels):
        for name, (doc, label, *_) in list(labels.items()):
            if doc == docname and label in ids:
                del labels[name]


def withhold_when_read(app, doctree):
    """Run after the collectors and sphinx-exercise have filed the page's metadata, contents
    and labels, so that what is withheld leaves those too."""
    if not app.config.student_edition:
        return
    docname = app.env.docname
    hidden = withheld(doctree)
    if app.env.metadata[docname].get("student-edition") == INTRO_ONLY:
        hidden += keep_intro_only(app, doctree, docname)
    forget_labels(app, docname, hidden)


def remove_solutions(app, doctree, docname):
    """Solutions leave the page when it is written: sphinx-exercise resolves them until then."""
    if app.config.student_edition:
        for node in withheld(doctree):
            node.parent.remove(node)


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
    app.add_config_value("student_edition", os.environ.get("BOOK_EDITION") == "student", "env")
    app.connect("doctree-read", withhold_when_read, priority=600)
    app.connect("doctree-resolved", remove_solutions)
    app.connect("build-finished", write_student_sources)
    # env_version: a change to what reading a page leaves in the environment (contents, labels)
    # makes Sphinx read every page again, instead of keeping what an older version left there
    return {"env_version": 1, "parallel_read_safe": True, "parallel_write_safe": True}
