"""Dropdowns written as native ``<details>`` elements when the book is built, closed, their
titles as the ``<summary>``: the browser opens and closes them, by click and by keyboard, with no
script.

A dropdown is an admonition or a sphinx-exercise solution with ``:class: dropdown`` (the
chapters' solutions and "Answers to" boxes). sphinx-togglebutton's script closed each one after
the page had loaded by rewriting its markup: on Lighthouse's phone, main-thread tasks of up to
half a second on a long chapter (benchmarks/lighthouse.py), and until then every answer showed.
Here the HTML writer writes each as it is shown. Its content is in the page (for search engines,
readers without scripts, and find-in-page, which opens it); it keeps the admonition's classes, so
that the theme's colours, icon and border apply, and ``_static/book.css`` draws its summary as
the title bar with a chevron that turns.

The one-page build (Sphinx's ``singlehtml``) is what ``make pdf`` prints: there every dropdown
is written open, so that the PDF shows the answers.

Relies on sphinx-exercise's ``solution_node`` and its
``visit_solution_node``/``depart_solution_node``, whose HTML handlers it replaces, and on the
signature of Sphinx's ``HTML5Translator.visit_admonition(node, name)``.
(tests/library/test_internals.py fails, naming it, if it moves.)
"""

from __future__ import annotations

from docutils import nodes
from sphinx.locale import admonitionlabels
from sphinx_exercise.nodes import depart_solution_node, solution_node, visit_solution_node

DROPDOWN = "dropdown"
PRINTED = "singlehtml"  # the builder whose pages are printed (booktools/print_pdf.py)
SUMMARY = '<summary class="admonition-title">'
# drawn by _static/book.css; a screen reader hears the open or closed state from the <details>
CHEVRON = '<span class="dropdown-chevron" aria-hidden="true"></span>'


def is_dropdown(node) -> bool:
    return DROPDOWN in node.get("classes", [])


def unlinked(title):
    """A copy of ``title`` whose links are their text. The summary is the button that opens the
    box, and a link inside a button is a control inside a control, which a screen reader cannot
    tell apart (axe's nested-interactive): a solution's title links to its exercise, which is
    just above it."""
    title = title.deepcopy()
    for link in list(title.findall(nodes.reference)):
        link.replace_self(link.children)
    return title


def write_details(translator, node, label: str = "") -> None:
    """``node`` whole as ``<details>``: its title, or for a typed admonition (a note, a hint)
    its ``label``, as the ``<summary>``, then the rest of it; the writer then skips the node."""
    opened = {"open": "open"} if translator.builder.name == PRINTED else {}
    body = translator.body
    body.append(translator.starttag(node, "details", CLASS=f"admonition {label}", **opened))
    content = list(node.children)
    if label:
        body.append(SUMMARY + translator.encode(admonitionlabels[label]))
    else:
        title = content.pop(0)
        body.append(translator.starttag(title, "summary", "", CLASS="admonition-title"))
        for child in unlinked(title).children:
            child.walkabout(translator)
    body.append(f"{CHEVRON}</summary>\n")
    for child in content:
        child.walkabout(translator)
    body.append("</details>\n")
    raise nodes.SkipNode


def visit_admonition(translator, node, name: str = "") -> None:
    """Every admonition, the typed ones too (Sphinx's ``visit_note`` calls this with "note")."""
    if is_dropdown(node):
        write_details(translator, node, name)
    type(translator).visit_admonition(translator, node, name)


def visit_solution(translator, node) -> None:
    if is_dropdown(node):
        write_details(translator, node)
    visit_solution_node(translator, node)


def setup(app):
    # sphinx-exercise first: the solution's handlers it registers are replaced here
    app.setup_extension("sphinx_exercise")
    for node, handlers in [
        (nodes.admonition, (visit_admonition, None)),  # the writer's own depart_admonition
        (solution_node, (visit_solution, depart_solution_node)),
    ]:
        app.add_node(node, override=True, html=handlers, singlehtml=handlers)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
