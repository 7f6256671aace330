"""The edition's language: BOOK_LANGUAGE=ja builds the Japanese edition (make book does).

With BOOK_TRANSLATED=1 (make book) the two editions are published together, the Japanese one in
``ja/`` beside the English pages, and every page links to itself in the other language
(``_templates/language-switch.html``).

The English sources stay the only sources; the Japanese lives in one gettext catalogue per
page, ``locales/ja/LC_MESSAGES/<page>.po`` (``make catalogues`` brings them up to date with the
English). A passage the catalogue lacks, or marks fuzzy because its English changed, stays
English on the Japanese page, marked (class ``untranslated``, ``lang="en"``) under a notice at
the top of the page, so that a chapter can land before its translation (``make untranslated``
lists what is left). With BOOK_REQUIRE_TRANSLATION=1 (the publishing workflow) it is instead a
warning that names the page and the English sentence, so that the build, under -W, fails. The page's
description (front matter, ``myst: html_meta``) is translated here too: MyST adds its meta tag
only after Sphinx has translated the page.

Relies on Sphinx's gettext helpers ``sphinx.locale.init``, ``sphinx.util.i18n.docname_to_domain``
and ``sphinx.util.nodes.extract_messages``. (tests/library/test_internals.py fails, naming it, if
it moves.)
"""

from __future__ import annotations

import os

from docutils import nodes
from sphinx.locale import _
from sphinx.locale import init as init_locale
from sphinx.transforms import SphinxTransform
from sphinx.util import logging
from sphinx.util.i18n import docname_to_domain
from sphinx.util.nodes import extract_messages

from booktools.translation import strict

logger = logging.getLogger(__name__)


def requested_language() -> str | None:
    language = os.environ.get("BOOK_LANGUAGE", "").strip()
    return None if language in ("", "en") else language


def choose_language_early(app) -> None:
    """The language before the other extensions are set up (this one comes first in
    _config.yml): each loads its own words' translations (sphinx-exercise's 練習, the theme's
    目次) in its setup, for the language set then, as Sphinx loads its own at its start."""
    language = requested_language()
    if language:
        app.config.language = language
        app._init_i18n()


def set_language(app, config):
    language = requested_language()
    if language:
        config.language = language
        config.html_title = config.book_titles.get(language, config.html_title)
        # the theme shows its search field's text (Jupyter Book's) as it is given
        options = config.html_theme_options
        if "search_bar_text" in options:
            options["search_bar_text"] = str(_(options["search_bar_text"]))
    if os.environ.get("BOOK_TRANSLATED") == "1":
        # the switch to the other edition first in the article's header, then the theme's buttons
        options = config.html_theme_options
        options["article_header_end"] = ["language-switch.html", "article-header-buttons.html"]


NAMES = {"en": "English", "ja": "日本語"}


def edition_folder(language: str | None) -> str:
    """Where the edition lies in the published site: ``ja/`` for the Japanese one published
    beside the English (BOOK_TRANSLATED=1), else the site's root ("")."""
    if os.environ.get("BOOK_TRANSLATED") == "1" and language not in (None, "en"):
        return f"{language}/"
    return ""


def link_other_language(app, pagename, templatename, context, doctree):
    """``other_language`` for the switch: the same page in the other edition, as a relative URL;
    and ``alternates``, every edition's address of the page, for search engines, which take
    only absolute ones (none where the site's address is unknown: _ext/open_graph.py)."""
    if os.environ.get("BOOK_TRANSLATED") != "1":
        return
    other = "en" if app.config.language == "ja" else "ja"
    to_root = "../" * (pagename.count("/") + edition_folder(app.config.language).count("/"))
    url = f"{to_root}{edition_folder(other)}{pagename}.html"
    context["other_language"] = {"code": other, "name": NAMES[other], "url": url}
    root = getattr(app.config, "book_site_root", "")  # open_graph finds it
    if root:
        context["alternates"] = [
            (language, f"{root}{edition_folder(language)}{pagename}.html") for language in NAMES
        ]


def translations(transform: SphinxTransform) -> dict[str, str] | None:
    """The catalogue of the page being read, as Sphinx's Locale transform reads it (None in
    English)."""
    return page_catalogue(transform.config, transform.env.srcdir, transform.env.docname)


def page_catalogue(config, srcdir, docname: str) -> dict[str, str] | None:
    """The catalogue of page ``docname``, with its fallbacks, as Sphinx reads it (None in
    English)."""
    if config.language in (None, "en"):
        return None
    domain = docname_to_domain(docname, config.gettext_compact)
    dirs = [os.path.join(srcdir, directory) for directory in config.locale_dirs]
    catalog, found = init_locale(dirs, config.language, domain)
    merged: dict[str, str] = {}
    while found and catalog is not None:  # the page's catalogue and its fallbacks
        merged = {**getattr(catalog, "_catalog", {}), **merged}
        catalog = getattr(catalog, "_fallback", None)
    return merged


def warn_untranslated(language: str, node: nodes.Node, message: str) -> None:
    logger.warning(
        "no %s translation in locales for %r",
        language,
        message if len(message) < 160 else message[:157] + "...",
        location=node,
        type="i18n",
    )


def attached(node: nodes.Node, doctree: nodes.document) -> bool:
    """Whether ``node`` is still part of the page, outside its metadata (docinfo)."""
    while node is not None:
        if isinstance(node, nodes.docinfo):
            return False
        if node is doctree:
            return True
        node = node.parent
    return False


class UntranslatedMessages(SphinxTransform):
    """The messages of the page that its catalogue does not translate, noted just before
    Sphinx's Locale transform (priority 20) translates the others (fuzzy entries are not in the
    .mo); report_untranslated names those that are still text of the page when it is read."""

    default_priority = 19

    def apply(self, **kwargs) -> None:
        catalogue = translations(self)
        if catalogue is None:
            return
        self.document.untranslated_messages = [
            (node, message)
            for node, message in extract_messages(self.document)
            if not catalogue.get(message, "").strip()
        ]


NOTICE = {
    "ja": "このページには、まだ翻訳されていない箇所があります。その箇所は英語のまま表示しています。"
}


def report_untranslated(app, doctree):
    """Each passage left in English: a warning where every one must be translated (publishing),
    else marked, with the notice at the top of the page."""
    left = [
        (node, message)
        for node, message in getattr(doctree, "untranslated_messages", [])
        if attached(node, doctree)  # not front matter, which becomes metadata
    ]
    doctree.untranslated_messages = []
    if strict():
        for node, message in left:
            warn_untranslated(app.config.language, node, message)
        return
    if not left:
        return
    for node, _message in left:
        node["classes"] += ["untranslated", "language-en"]  # docutils writes lang="en"
    text = NOTICE.get(app.config.language, NOTICE["ja"])
    notice = nodes.note("", nodes.paragraph(text=text), classes=["untranslated-notice"])
    sections = list(doctree.findall(nodes.section))
    if sections:
        title = sections[0].next_node(nodes.title)
        sections[0].insert(sections[0].index(title) + 1 if title else 0, notice)


class TranslatedDescription(SphinxTransform):
    """The page's ``<meta name="description">`` in its language: MyST leaves it pending until
    docutils' Filter transform (priority 780), long after the Locale transform."""

    default_priority = 790

    def apply(self, **kwargs) -> None:
        catalogue = translations(self)
        if catalogue is None:
            return
        translated = set(catalogue.values())
        for meta in self.document.findall(nodes.meta):
            content = meta.get("content", "")
            if meta.get("name") != "description" or content in translated:
                continue
            if catalogue.get(content, "").strip():
                meta["content"] = catalogue[content]
            elif content and strict():
                warn_untranslated(self.config.language, meta, content)


def setup(app):
    choose_language_early(app)
    # the book's title in each language but English (whose title is _config.yml's title)
    app.add_config_value("book_titles", {}, "html", dict)
    app.connect("config-inited", set_language)
    app.add_transform(UntranslatedMessages)
    app.add_transform(TranslatedDescription)
    app.connect("doctree-read", report_untranslated)
    app.connect("html-page-context", link_other_language)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
