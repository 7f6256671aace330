"""The Japanese pages show each figure with words in its Japanese drawing, and every other
picture as the English pages do (``_ext/translated_outputs.py``, ``figure_language_filename``;
the drawings' own text: tests/library/test_figure_text.py)."""

import re
from binascii import a2b_base64

import pytest
from jupyter_cache import get_cache

from attnkit.translated import TRANSLATIONS
from tests.support.book import ROOT, chapter_files

IMAGE = re.compile(r'<img\b[^>]*?\bsrc="([^"]+)"')


@pytest.fixture(scope="module")
def editions(built_book):
    html_dir, _ = built_book
    return html_dir, html_dir / "ja"


def pictures(html_dir, page):
    """The bytes of each picture of ``page``'s article, in page order."""
    html = (html_dir / f"{page}.html").read_text(encoding="utf-8")
    article = html[html.index('<article class="bd-article"') :]
    folder = (html_dir / page).parent
    return [(folder / src).resolve().read_bytes() for src in IMAGE.findall(article)]


@pytest.fixture(scope="module")
def japanese_drawings(editions) -> dict[bytes, bytes]:
    """English picture: its Japanese drawing, for the shown figures (carried in the outputs of
    the execution cache the build read) and the static figures (figures/<name>.ja.svg)."""
    english_dir, _ = editions
    drawings = {
        (
            ROOT / "figures" / f"{svg.name.removesuffix('.ja.svg')}.svg"
        ).read_bytes(): svg.read_bytes()
        for svg in (ROOT / "figures").glob("*.ja.svg")
    }
    cache = get_cache(english_dir.parent / ".jupyter_cache")
    for record in cache.list_cache_records():
        for cell in cache.get_cache_bundle(record.pk).nb.cells:
            for output in cell.get("outputs", []):
                metadata = output.get("metadata", {}).get("image/png", {})
                if "ja" in metadata.get(TRANSLATIONS, {}):
                    english = a2b_base64(output["data"]["image/png"])
                    drawings[english] = a2b_base64(metadata[TRANSLATIONS]["ja"])
    return drawings


@pytest.mark.parametrize("page", [str(chapter) for chapter in chapter_files()])
def test_a_japanese_page_shows_each_figure_with_words_in_japanese(
    editions, japanese_drawings, page
):
    english_dir, japanese_dir = editions
    english, japanese = pictures(english_dir, page), pictures(japanese_dir, page)
    assert len(english) == len(japanese), f"{page}: the editions show different pictures"
    drawings = japanese_drawings
    translated = 0
    for number, (shown_english, shown_japanese) in enumerate(zip(english, japanese), 1):
        expected = drawings.get(shown_english, shown_english)
        translated += shown_english in drawings
        assert shown_japanese == expected, (
            f"{page}: picture {number} of the Japanese page is not "
            + ("its Japanese drawing" if shown_english in drawings else "the English one")
        )
    assert translated > 0, f"{page}: no figure with words; a chapter draws at least one"
