"""The student edition: the same book with every solution removed from its pages.

With the environment variable ``BOOK_EDITION=student`` (``make student`` sets it), the
solutions of sphinx-exercise (the ``solution`` directive and the gated
``solution-start``/``solution-end`` form, code cells and outputs included) and the
"Answers to ..." dropdowns are deleted from every page's document tree before it is
written, so they are absent from the HTML, not merely hidden.
"""

from __future__ import annotations

import os

from docutils import nodes
from sphinx_exercise.nodes import solution_node

ANSWERS_TITLE = "Answers to"


def is_answers_dropdown(node) -> bool:
    return (isinstance(node, nodes.admonition) and "dropdown" in node.get("classes", [])
            and node.children and isinstance(node[0], nodes.title)
            and node[0].astext().startswith(ANSWERS_TITLE))


def remove_solutions(app, doctree, docname):
    if not app.config.student_edition:
        return
    for node in list(doctree.findall(lambda n: isinstance(n, solution_node) or is_answers_dropdown(n))):
        node.parent.remove(node)


def setup(app):
    app.add_config_value("student_edition", os.environ.get("BOOK_EDITION") == "student", "env")
    app.connect("doctree-resolved", remove_solutions)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
