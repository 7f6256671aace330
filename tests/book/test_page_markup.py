"""What every built page says to a screen reader and a search engine, read from its HTML:
images described, Japanese marked as Japanese, and no TeX left outside the math."""

import re

import pytest

from tests.support.book import page, toc_files
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
