"""The text that Sphinx's gettext machinery missed reaches the Japanese edition's catalogues and
the Japanese pages (``_ext/translatable_text.py``, ``nb_mime_priority_overrides`` in
``_config.yml``): on a tiny book with the book's extensions, built by Sphinx twice, a few
seconds each: the gettext builder's catalogues, then the Japanese HTML from catalogues that
translate every message."""

import base64
import html
import json
import pickle
import re

import pytest
import yaml
from babel.messages.pofile import read_po, write_po

from tests.support.book import ROOT
from tests.support.sphinx_project import sphinx_build

CONFIG = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
MARK = "訳："  # what the test's translation puts before every English message

CONF = f"""
extensions = ["myst_nb", "sphinx_external_toc", "sphinx_exercise", "sphinx_proof",
              "edition_language", "translatable_text", "translated_messages"]
external_toc_path = "_toc.yml"
myst_enable_extensions = ["colon_fence", "dollarmath"]
nb_execution_mode = "off"
nb_mime_priority_overrides = {CONFIG["sphinx"]["config"]["nb_mime_priority_overrides"]!r}
locale_dirs = ["locales"]
gettext_compact = False
gettext_location = False
"""
TOC = """
format: jb-book
root: index
parts:
  - caption: Chapters
    chapters:
      - file: exercises
      - file: pictures
"""
EXERCISES = """---
myst:
  html_meta:
    description: A page of exercises.
---
# Problems

```{figure} picture.png
:alt: A figure's alt text

The figure's caption.
```

```{exercise} Spot the error: article 000's $W^{(O)}$
:label: ex-spot

Find the error.
```

```{solution} ex-spot
It is in the shape.
```

:::{exercise} Counting the model
:label: ex-count
How many parameters?
:::

```{exercise-start} Top-k sampling
:label: ex-top-k
```
Keep the $k$ largest.
```{exercise-end}
```

```{prf:proof}
It holds.
```
"""
NOTEBOOK = {
    "nbformat": 4,
    "nbformat_minor": 5,
    "metadata": {
        "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
        "language_info": {"name": "python"},
    },
    "cells": [
        {"cell_type": "markdown", "id": "a", "metadata": {}, "source": "# Pictures"},
        {
            "cell_type": "code",
            "id": "b",
            "metadata": {"mystnb": {"image": {"alt": "A tiny picture of one pixel"}}},
            "execution_count": 1,
            "source": "plt.show()",
            "outputs": [
                {
                    "output_type": "display_data",
                    "metadata": {},
                    "data": {"image/png": PNG, "text/plain": ["<Figure size 1x1 with 1 Axes>"]},
                }
            ],
        },
    ],
}


@pytest.fixture(scope="module")
def book(tmp_path_factory):
    """The tiny book's folder, its gettext catalogues' messages per page, its Japanese HTML
    folder and that build's warnings."""
    source = tmp_path_factory.mktemp("tiny-book")
    (source / "conf.py").write_text(CONF, encoding="utf-8")
    (source / "_toc.yml").write_text(TOC, encoding="utf-8")
    (source / "index.md").write_text("# A tiny book\n\nIts pages.\n", encoding="utf-8")
    (source / "exercises.md").write_text(EXERCISES, encoding="utf-8")
    (source / "pictures.ipynb").write_text(json.dumps(NOTEBOOK), encoding="utf-8")
    (source / "picture.png").write_bytes(base64.b64decode(PNG))

    gettext = source.parent / "gettext"
    sphinx_build(source, "gettext", gettext, strict=False, BOOK_LANGUAGE="")
    messages = {}
    for page in ("index", "exercises", "pictures"):
        with open(gettext / f"{page}.pot", "rb") as file:
            catalogue = read_po(file)
        messages[page] = [message.id for message in catalogue if message.id]
        for message in catalogue:
            if message.id:
                message.string = MARK + message.id
        folder = source / "locales" / "ja" / "LC_MESSAGES"
        folder.mkdir(parents=True, exist_ok=True)
        with open(folder / f"{page}.po", "wb") as file:
            write_po(file, catalogue)

    japanese = source.parent / "ja"
    warnings = sphinx_build(source, "html", japanese, strict=False, BOOK_LANGUAGE="ja")
    return messages, japanese, warnings


def test_the_book_configures_what_the_test_builds():
    extensions = CONFIG["sphinx"]["config"]["extensions"]
    assert "translatable_text" in extensions
    assert extensions.index("translatable_text") > extensions.index("sphinx_exercise")


def test_exercise_titles_are_messages_as_written(book):
    messages, _, _ = book
    found = messages["exercises"]
    for title in (
        "Spot the error: article 000's $W^{(O)}$",
        "Counting the model",
        "Top-k sampling",
    ):
        assert title in found, f"{title!r} not in {found}"
    # the title nodes sphinx-exercise rebuilds (and translates) are no messages
    assert not [m for m in found if m.startswith("Exercise") or m == "Solution to"], found


def test_alt_texts_are_messages(book):
    messages, _, _ = book
    assert "A figure's alt text" in messages["exercises"]
    assert "A tiny picture of one pixel" in messages["pictures"]
    assert "Chapters" in messages["index"]  # the caption of _toc.yml's part


def test_the_japanese_pages_show_the_translations(book):
    _, japanese, warnings = book
    page = html.unescape((japanese / "exercises.html").read_text(encoding="utf-8"))
    titles = [
        re.sub(r"<[^>]+>", "", title)
        for title in re.findall(r'<p class="admonition-title">(.*?)</p>', page, re.S)
    ]
    spot = f"({MARK}Spot the error: article 000's"
    assert len([t for t in titles if spot in t]) == 2, titles  # the exercise's, its solution's
    assert [t for t in titles if f"({MARK}Counting the model)" in t], titles
    assert [t for t in titles if f"({MARK}Top-k sampling)" in t], titles
    assert f'alt="{MARK}A figure\'s alt text"' in page
    pictures = html.unescape((japanese / "pictures.html").read_text(encoding="utf-8"))
    assert f'alt="{MARK}A tiny picture of one pixel"' in pictures
    index = html.unescape((japanese / "index.html").read_text(encoding="utf-8"))
    assert f'<span class="caption-text">{MARK}Chapters</span>' in index
    # every message translated, the alt texts and captions too: the edition's check is quiet
    assert "no ja translation" not in warnings, warnings


def test_a_japanese_page_is_pickled_without_the_build_environment(book):
    """Nodes of translated messages belong to the page (_ext/translated_messages.py), not to
    the throw-away documents Sphinx parsed them in, whose settings hold the build environment."""
    _, japanese, _ = book
    pickled = (japanese / ".doctrees" / "exercises.doctree").read_bytes()
    assert b"BuildEnvironment" not in pickled
    page = pickle.loads(pickled)
    assert {id(node.document) for node in page.findall()} == {id(page)}
