"""Binder and Colab buttons on every chapter page, for the repository the book is built from.

The repository is found at build time (``booktools/repository.py``: its URL is never written into the
book's files); where there is none, the book is built without launch buttons, and the log says
so in one line. The result is the config value ``book_repository`` (a dict, or None), which
the notebooks extension also reads for the install cell of the downloadable notebooks.

Colab opens only notebooks stored on GitHub: its button opens the generated notebook on the
branch ``NOTEBOOKS_BRANCH``, which the publish workflow fills with ``booktools/publish_notebooks.py``.
Binder opens the chapter's MyST file in JupyterLab, where Jupytext shows it as a notebook
(``binder/postBuild`` installs attnkit and sets that viewer).

The student edition's buttons open its own notebooks, without solutions, which the workflow
publishes under ``STUDENT_FOLDER/`` on the same branch; the Japanese edition's open its
notebooks in Japanese, published under its folder (``ja/``, as on the site: ``edition_folder``),
and the Japanese student edition's under ``STUDENT_FOLDER/ja/``.
Colab opens them there; Binder starts the book's environment (the branch built, with its
``binder/``) and pulls the notebooks branch into it with nbgitpuller
(``binder/requirements.txt``), then opens the edition's notebook.

Why not the theme's own ``launch_buttons`` settings: they take the repository from
``_config.yml`` (where its URL must not be written), point Colab at the page's source on the
branch built (a MyST ``.md`` file, which Colab cannot open), and have no nbgitpuller link for
the student edition.

Their words are in the page's language: the tooltips from the book's catalogue (sphinx.po, where
``_templates/words-outside-templates.html`` keeps them), and "logo", which the theme writes after
each icon's name from its own catalogue, from ``booktheme.po`` beside it, which the theme's
catalogue falls back to.

Relies on sphinx-book-theme's ``context["header_buttons"]``, made at priority 501, to which it adds
its menu, and on Sphinx's ``sphinx.util.i18n.CatalogInfo`` to compile the theme's words.
(tests/library/test_internals.py fails, naming it, if it moves.)
"""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import urlencode

from edition_language import edition_folder
from sphinx.locale import _
from sphinx.util import logging
from sphinx.util.i18n import CatalogInfo

from booktools.publish_notebooks import NOTEBOOKS_BRANCH, STUDENT_FOLDER
from booktools.repository import find_repository, origin_remote

LOGGER = logging.getLogger(__name__)

BINDER = "https://mybinder.org"
COLAB = "https://colab.research.google.com"
# the theme's own icons
ICONS = {"Binder": "_static/images/logo_binder.svg", "Colab": "_static/images/logo_colab.png"}


def notebook_folder(student: bool, language: str | None) -> str:
    """Where an edition's notebooks are on the notebooks branch: "" for the book's, ``ja/`` for
    the Japanese one's, ``student/`` and ``student/ja/`` for the student edition's."""
    return f"{STUDENT_FOLDER}/{edition_folder(language)}" if student else edition_folder(language)


def launch_links(repository: dict, pagename: str, folder: str = "") -> dict[str, str]:
    """The Binder and Colab URLs that open ``pagename`` (e.g. ``chapters/attention``): the
    chapter itself, or the notebook of an edition whose notebooks are in ``folder`` on the
    notebooks branch (the student edition's, without solutions; the Japanese one's)."""
    github, branch = repository["github"], repository["branch"]
    if not folder:
        return {
            "Binder": f"{BINDER}/v2/gh/{github}/{branch}?urlpath=lab/tree/{pagename}.md",
            "Colab": f"{COLAB}/github/{github}/blob/{NOTEBOOKS_BRANCH}/{pagename}.ipynb",
        }
    notebook = f"{folder}{pagename}.ipynb"
    # nbgitpuller's git-pull: clone the branch into the folder targetpath, then open urlpath
    pull = {
        "repo": repository["url"],
        "branch": NOTEBOOKS_BRANCH,
        "targetpath": NOTEBOOKS_BRANCH,
        "urlpath": f"lab/tree/{NOTEBOOKS_BRANCH}/{notebook}",
    }
    return {
        "Binder": f"{BINDER}/v2/gh/{github}/{branch}?"
        + urlencode({"urlpath": f"git-pull?{urlencode(pull)}"}),
        "Colab": f"{COLAB}/github/{github}/blob/{NOTEBOOKS_BRANCH}/{notebook}",
    }


def resolve_repository(app, config):
    repository = find_repository(os.environ, origin_remote(Path(app.srcdir)))
    config.book_repository = repository
    if repository is None:
        LOGGER.info(
            "launch buttons: no repository URL (set BOOK_REPOSITORY_URL=https://github.com/"
            "OWNER/NAME); building without Binder and Colab buttons"
        )
    elif repository["github"] is None:
        LOGGER.info(f"launch buttons: {repository['url']} is not on GitHub; building without them")
    else:
        LOGGER.info(
            f"launch buttons: {repository['url']} ({repository['branch']}), "
            f"from {repository['source']}"
        )


def add_launch_buttons(app, pagename, templatename, context, doctree):
    repository = app.config.book_repository
    metadata = app.env.metadata.get(pagename, {})
    if (
        doctree is None
        or not repository
        or not repository["github"]
        or "kernelspec" not in metadata
    ):
        return
    buttons = [
        {
            "type": "link",
            "text": text,
            "tooltip": str(_("Open this chapter in %(platform)s")) % {"platform": text},
            "icon": ICONS[text],
            "url": url,
            "label": f"launch-{text.lower()}-button",
        }
        for text, url in launch_links(
            repository,
            pagename,
            notebook_folder(app.config.student_edition, app.config.language),
        ).items()
    ]
    context["header_buttons"].append(
        {
            "type": "group",
            "tooltip": str(_("Run this chapter")),
            "icon": "fas fa-rocket",
            "buttons": buttons,
            "label": "launch-buttons",
        }
    )


THEME_CATALOGUE = "booktheme"  # sphinx-book-theme's, which translates the icons' "logo"


def theme_words(app, config):
    """The book's own translations of the theme's words, where the theme's catalogue has none:
    compiled here, since Sphinx compiles the catalogues of its locale_dirs only after the
    extensions have loaded theirs."""
    if not config.language or config.language == "en":
        return
    for folder in config.locale_dirs:
        base = Path(app.srcdir, folder, config.language, "LC_MESSAGES")
        info = CatalogInfo(str(base), THEME_CATALOGUE, config.source_encoding)
        if Path(info.po_path).is_file():
            if info.is_outdated():
                info.write_mo(config.language)
            app.add_message_catalog(THEME_CATALOGUE, str(Path(app.srcdir, folder)))


def setup(app):
    app.setup_extension("student_edition")  # for the student_edition config value
    app.add_config_value("book_repository", None, "html")
    app.connect("config-inited", resolve_repository)
    app.connect("config-inited", theme_words)
    # after the theme has made its header buttons (priority 501)
    app.connect("html-page-context", add_launch_buttons, priority=510)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
