"""What a link to a page shows when it is shared: the Open Graph tags of sphinxext-opengraph,
with the site's address found at build time and each page's own description.

The site's name is the book's title. Its public URL is never written into the book's files; it
is decided at build time:

1. ``BOOK_SITE_URL`` (``https://example.org/book/``), for a site served anywhere;
2. otherwise the GitHub Pages address of the repository that ``launch_buttons`` found
   (``https://OWNER.github.io/NAME/``, or ``https://OWNER.github.io/`` for the repository
   ``OWNER.github.io``), which is where the publish workflow deploys the book;
3. otherwise none: ``og:url`` and ``og:image`` stay relative, and the log says so in one line.

A page's description is written in its front matter (``myst: html_meta: description:``), from
its learning goals; MyST puts it in ``<meta name="description">``. The extension gives the same
text to ``og:description``, which sphinxext-opengraph would otherwise take from the page's
first paragraph.

Relies on sphinxext-opengraph taking the ``og:`` fields of ``context["meta"]`` as the page's own
(``get_tags``). (tests/library/test_internals.py fails, naming it, if it moves.)
"""

from __future__ import annotations

import os
from html.parser import HTMLParser

from edition_language import edition_folder
from sphinx.locale import _
from sphinx.util import logging

LOGGER = logging.getLogger(__name__)


def site_url(environ, repository: dict | None) -> str:
    """The address the book is served at, ending in ``/``; "" where it cannot be known."""
    if environ.get("BOOK_SITE_URL"):
        return environ["BOOK_SITE_URL"].rstrip("/") + "/"
    if repository and repository.get("github"):
        owner, name = repository["github"].split("/")
        host = f"{owner.lower()}.github.io"
        return f"https://{host}/" if name.lower() == host else f"https://{host}/{name}/"
    return ""


class _Description(HTMLParser):
    def __init__(self):
        super().__init__()
        self.content = None

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        if tag == "meta" and attributes.get("name") == "description":
            self.content = attributes.get("content")


def meta_description(metatags: str) -> str | None:
    """The content of the ``<meta name="description">`` among a page's meta tags, if any."""
    parser = _Description()
    parser.feed(metatags)
    parser.close()
    return parser.content


def resolve_site(app, config):
    # jupyter-book gives the book's title to html_title and leaves Sphinx's project unset
    if config.ogp_site_name is None:
        config.ogp_site_name = config.html_title or config.project
    # the card's description in the page's language (_templates/words-outside-templates.html)
    if config.ogp_image_alt:
        config.ogp_image_alt = str(_(config.ogp_image_alt))
    if config.ogp_site_url:  # set in _config.yml: it wins
        return
    config.book_site_root = site_url(os.environ, config.book_repository)
    if config.book_site_root:  # the Japanese edition's pages are in its folder
        config.ogp_site_url = config.book_site_root + edition_folder(config.language)
    if config.ogp_site_url:
        LOGGER.info(f"open graph: the site is at {config.ogp_site_url}")
    else:
        LOGGER.info(
            "open graph: no site URL (set BOOK_SITE_URL, or BOOK_REPOSITORY_URL for GitHub "
            "Pages); shared links get relative og:url and og:image"
        )


def describe_page(app, pagename, templatename, context, doctree):
    """Hand the page's own description to sphinxext-opengraph (it reads ``og:`` fields from
    the page's metadata), in a copy: the environment's metadata stays as it was read."""
    description = meta_description(context.get("metatags", ""))
    if doctree is None or not description:
        return
    context["meta"] = {**(context.get("meta") or {}), "og:description": description}


def setup(app):
    app.setup_extension("launch_buttons")  # for the book_repository config value
    # the site's root, where the English edition is ("" where unknown): found, not set
    app.add_config_value("book_site_root", "", "html", str)
    app.setup_extension("sphinxext.opengraph")
    # after launch_buttons has found the repository (priority 500)
    app.connect("config-inited", resolve_site, priority=510)
    # before sphinxext-opengraph writes its tags (priority 500)
    app.connect("html-page-context", describe_page, priority=490)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
