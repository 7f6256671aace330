"""What every built page says to a screen reader and a search engine, read from its HTML:
images described, Japanese marked as Japanese, and no TeX left outside the math."""

import re
from html.parser import HTMLParser

import pytest
import yaml

from tests.support.book import ROOT, SITE_URL, page, toc_files
from tests.support.markup import read

pytestmark = pytest.mark.build

IMAGE_FILE = re.compile(r"\.(png|svg|jpe?g|gif|webp)\b|^[\w./-]*/|^[\w-]+$", re.IGNORECASE)
JAPANESE = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff]")
# what Markdown leaves behind when it breaks a formula: a dollar sign or a TeX command
LOOSE_TEX = re.compile(r"\$|\\(frac|mathbf|mathrm|operatorname|sum|sqrt|text|top|cdot)\b|\\\\")
NOT_PROSE = {"pre", "code", "script", "style", "kbd"}


def is_math(element):
    return element.has_class("math")


@pytest.mark.parametrize("name", toc_files())
def test_every_image_has_a_description(built_book, name):
    html_dir, _ = built_book
    for image, around in read(page(html_dir, name)).images:
        alt = image.attrs.get("alt")
        decorative = image.attrs.get("role") == "presentation" or image.attrs.get("aria-hidden")
        # the theme's icon beside a button's own text (the launch menu's "Binder", "Colab")
        decorative = decorative or any(e.has_class("btn__icon-container") for e in around)
        assert alt is not None, f"{image.attrs.get('src')}: no alt"
        if not decorative:
            assert len(alt.split()) >= 4, f"{image.attrs.get('src')}: alt {alt!r} describes nothing"
            assert not IMAGE_FILE.search(alt), f"{image.attrs.get('src')}: alt {alt!r} is a file"


def test_pictures_below_a_pages_first_section_load_lazily(built_book):
    """Each page's pictures after its first second-level heading wait for the reader to near
    them (``_ext/lazy_images.py``); those above it, which may be on the first screen, do not.
    Each drawn at a set size has its proportions before it loads."""
    html_dir, _ = built_book
    lazy_seen = 0
    for name in toc_files():
        for image, around in read(page(html_dir, name)).images:
            if not any(e.tag == "article" for e in around):
                continue  # the theme's own icons
            sections = sum(e.tag == "section" for e in around)
            lazy = image.attrs.get("loading") == "lazy"
            assert lazy == (sections > 1), (
                f"{name}: {image.attrs.get('src')} in {sections} sections"
            )
            lazy_seen += lazy
            # its box reserved before it loads: the drawn size as attributes too
            drawn = re.fullmatch(r"width: (\d+)px; height: (\d+)px;", image.attrs.get("style", ""))
            if drawn:
                assert (image.attrs.get("width"), image.attrs.get("height")) == drawn.groups()
    assert lazy_seen >= 20  # the chapters' figures and plotted outputs


@pytest.mark.parametrize("name", toc_files())
def test_japanese_text_is_marked_japanese(built_book, name):
    html_dir, _ = built_book
    unmarked = [
        text
        for text, around in read(page(html_dir, name)).texts
        if JAPANESE.search(text)
        and not any(e.attrs.get("lang") == "ja" for e in around)
        and not any(e.tag in {"script", "style"} or is_math(e) for e in around)
    ]
    assert unmarked == []


@pytest.mark.parametrize("name", toc_files())
def test_no_tex_is_left_outside_the_math(built_book, name):
    """A line of a formula that Markdown read as a list item, a heading or a paragraph of its
    own leaves a ``$`` or a TeX command in the text, which the build never typesets."""
    html_dir, _ = built_book
    loose = [
        text.strip()
        for text, around in read(page(html_dir, name)).texts
        if LOOSE_TEX.search(text)
        and not any(e.tag in NOT_PROSE or is_math(e) or e.has_class("highlight") for e in around)
    ]
    assert loose == []


# ---- What a search engine and a shared link show (_ext/open_graph.py) ------------------------
# The book wing's build is for the made-up REPOSITORY_URL, whose site is its GitHub Pages address.
CARD = "_static/card.png"  # figures/make_card.py draws it
SHARED = ["og:title", "og:description", "og:url", "og:image", "og:image:alt", "og:site_name"]


class _Head(HTMLParser):
    """Every ``<meta>`` of a page as (name or property, content), and its ``<title>``."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.meta, self.title, self._in_title = [], "", False

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        if tag == "meta" and "content" in attributes:
            key = attributes.get("name") or attributes.get("property")
            if key:
                self.meta.append((key, attributes["content"]))
        self._in_title = tag == "title"

    def handle_endtag(self, tag):
        self._in_title = False

    def handle_data(self, data):
        if self._in_title:
            self.title += data


def head(html: str) -> _Head:
    reader = _Head()
    reader.feed(html)
    reader.close()
    return reader


def front_matter_description(name):
    found = re.match(r"^---\n(.*?)\n---\n", (ROOT / f"{name}.md").read_text(encoding="utf-8"), re.S)
    meta = (yaml.safe_load(found[1]) if found else None) or {}
    return ((meta.get("myst") or {}).get("html_meta") or {}).get("description")


@pytest.mark.parametrize("name", toc_files())
def test_every_page_has_its_description_and_open_graph_card(built_book, name):
    html_dir, _ = built_book
    found = head(page(html_dir, name))
    meta = dict(found.meta)
    descriptions = [content for key, content in found.meta if key == "description"]
    expected = front_matter_description(name)
    assert expected, (
        f"{name}.md: no description in its front matter (tests/library/test_descriptions.py)"
    )
    assert descriptions == [expected], "one description, the front matter's"
    assert [key for key in SHARED if not meta.get(key, "").strip()] == [], "Open Graph tags missing"
    assert meta["og:description"] == descriptions[0]
    assert meta["og:title"] in found.title, "the card's title is the page's"
    assert meta["og:site_name"] == yaml.safe_load((ROOT / "_config.yml").read_text())["title"]
    assert meta["og:url"] == f"{SITE_URL}{name}.html", "an absolute address on the book's site"
    assert meta["og:image"] == f"{SITE_URL}{CARD}"
    assert meta.get("twitter:card") == "summary_large_image"
    assert [key for key, _ in found.meta].count("viewport") == 1, "one viewport, not two"


def test_the_card_picture_is_in_the_build(built_book):
    html_dir, _ = built_book
    png = (html_dir / CARD).read_bytes()
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    width, height = int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")
    assert (width, height) == (1200, 630), "the size link previews expect"
    assert png == (ROOT / CARD).read_bytes()
