"""Offer every chapter as a Jupyter notebook (.ipynb) in the page's download menu.

When a page is written, its MyST Markdown source is converted with Jupytext into a notebook
without outputs at ``_sources/<page>.ipynb``, and the theme's download menu links to it
(sphinx-book-theme shows an ".ipynb" entry when ``ipynb_source`` is set). The notebooks are
generated at build time and never committed.
"""

from __future__ import annotations

from pathlib import Path

import jupytext
import nbformat

FIRST_CELL = (
    "This notebook is generated from the book's source. Its code imports the book's helper "
    "library `attnkit`, which lives in the `chapters/` folder of the book's repository: run the "
    "notebook from that folder (as Binder and `make lab` do), or put `chapters/` on your "
    "Python path."
)


def write_notebook(app, pagename, templatename, context, doctree):
    source = Path(app.srcdir) / f"{pagename}.md"
    if doctree is None or not source.exists():
        return
    notebook = jupytext.read(source)
    if "jupytext" not in notebook.metadata:  # plain Markdown pages are not notebooks
        return
    notebook.cells.insert(0, nbformat.v4.new_markdown_cell(FIRST_CELL))
    target = Path(app.outdir) / "_sources" / f"{pagename}.ipynb"
    target.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(notebook, target)
    context["ipynb_source"] = f"{pagename}.ipynb"


def setup(app):
    # before the theme builds its download menu (priority 500)
    app.connect("html-page-context", write_notebook, priority=400)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
