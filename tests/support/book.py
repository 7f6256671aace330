"""The repository, its table of contents, and what a built page holds."""

import json
import re
from pathlib import Path

from booktools import pins, toc

ROOT = Path(__file__).resolve().parents[2]
# A made-up repository: the launch buttons and install cells must follow whatever is set.
REPOSITORY_URL = "https://github.com/example-owner/example-book"
# Its site, the GitHub Pages address (_ext/open_graph.py): og:url and the languages' alternates.
SITE_URL = "https://example-owner.github.io/example-book/"
# The href of a launch button (Binder, Colab) in a built page.
LAUNCH_LINK = re.compile(
    r'href="(https://(?:mybinder\.org/v2|colab\.research\.google\.com/github)/[^"]*)"'
)


# The lock's pin of a package, such as torch==X.Y.Z: tests read it, never restate it.
pin = pins.pin
# Every page of the book, in the order of _toc.yml: the preface first.
toc_files = toc.pages
# The pages of the part of _toc.yml with a caption.
part_files = toc.part
# The numbered chapters (not the appendices).
chapter_files = toc.chapters


def page(html_dir, name):
    """The built HTML of the page ``name`` (a path of the table of contents, without suffix)."""
    return (html_dir / f"{name}.html").read_text(encoding="utf-8")


WIDGET_STATE = re.compile(
    r'<script type="application/vnd.jupyter.widget-state\+json">(.*?)</script>', re.S
)


def widget_models(html) -> dict:
    """The widget models a built page embeds (myst-nb's widget state), by model id; ``{}`` if
    it has none."""
    found = WIDGET_STATE.search(html)
    return json.loads(found.group(1))["state"] if found else {}
