"""Offer every chapter as a Jupyter notebook (.ipynb) that runs on its own, anywhere.

When a page is written, its MyST Markdown source is converted with Jupytext into a notebook
without outputs at ``_sources/<page>.ipynb``, and the theme's download menu links to it
(sphinx-book-theme shows an ".ipynb" entry when ``ipynb_source`` is set). In the student
edition the notebook is made from the source with its solutions removed.

The notebook starts with the set-up cell of ``booktools/setup_cell.py``: where ``attnkit`` is missing
(Colab, a student's own Jupyter) it installs the helper from the book's repository, and PyTorch's
CPU build where a chapter needs torch and has none; in the book's own environment and on Binder
it does nothing. In an edition in another language (the Japanese one) the notebook's prose is
the page's, translated from the same catalogue (``booktools/translated_markdown.py``); its code is the
same but for the exercises' stubs, whose line is in that language (``attnkit.exercises.stub``),
and its set-up cell sets the language of the exercise checks' messages. The notebooks are
generated at build time and never committed.

Relies on sphinx-book-theme's download menu offering ``context["ipynb_source"]``
(``header_buttons.add_header_buttons``). (tests/library/test_internals.py fails, naming it, if it
moves.)
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import jupytext
import nbformat
from edition_language import page_catalogue
from student_edition import strip_solutions

from attnkit.exercises import stub
from booktools.setup_cell import setup_cell
from booktools.translated_markdown import parser, proof_aware, translate_markdown


def chapter_notebook(
    text: str,
    repository: dict | None,
    student: bool,
    translate: Callable[[str], str] | None = None,
    language: str | None = None,
):
    """The notebook of a chapter's MyST ``text``, set-up cell first; ``translate`` gives each
    Markdown cell in the edition's ``language``, in which the exercise checks answer too."""
    notebook = jupytext.reads(strip_solutions(text) if student else text, fmt="md:myst")
    notebook.metadata.pop("jupytext", None)  # a standalone notebook, not paired with a file
    if translate is not None:
        for cell in notebook.cells:
            if cell.cell_type == "markdown":
                cell.source = translate(cell.source)
            elif language:
                cell.source = stub.in_language(cell.source, language)
    code = "\n".join(cell.source for cell in notebook.cells if cell.cell_type == "code")
    notebook.cells.insert(0, nbformat.v4.new_code_cell(setup_cell(repository, code, language)))
    return notebook


def page_translation(app, pagename) -> Callable[[str], str] | None:
    """The Markdown of ``pagename`` in the edition's language, from its catalogue as Sphinx read
    it; None in English."""
    catalogue = page_catalogue(app.config, app.srcdir, pagename)
    if catalogue is None:
        return None
    md = parser(app.env.myst_config)
    translate = proof_aware(lambda text: catalogue.get(text) or None)
    return lambda text: translate_markdown(text, translate, md)


def is_chapter(app, pagename) -> bool:
    return (Path(app.srcdir) / f"{pagename}.md").exists() and "kernelspec" in app.env.metadata.get(
        pagename, {}
    )


def offer_notebook(app, pagename, templatename, context, doctree):
    if doctree is not None and is_chapter(app, pagename):
        context["ipynb_source"] = f"{pagename}.ipynb"


def write_notebook(app, pagename, templatename, context, doctree):
    if doctree is None or not is_chapter(app, pagename):
        return
    text = (Path(app.srcdir) / f"{pagename}.md").read_text(encoding="utf-8")
    notebook = chapter_notebook(
        text,
        app.config.book_repository,
        app.config.student_edition,
        page_translation(app, pagename),
        app.config.language,
    )
    target = Path(app.outdir) / "_sources" / f"{pagename}.ipynb"
    target.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(notebook, target)


def setup(app):
    app.setup_extension("student_edition")
    app.setup_extension("launch_buttons")  # the book_repository config value
    # the download menu is built at priority 501; the file is written after anything else
    # (the theme's launch buttons would copy the executed notebook there) has run
    app.connect("html-page-context", offer_notebook, priority=400)
    app.connect("html-page-context", write_notebook, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
