"""The chapters' figures in the built book, in Chromium: drawn for the column, legible on a phone.

On a 1280 px screen every figure shows at the size it was drawn for (a plot's display size, set
by attnkit.plots' style, or a {figure}'s width), never shrunk, inside the column, with twice its
pixels where it is a PNG. On a 375 px phone it shrinks to no less than MIN_SCALE of that size,
so that its smallest text (MIN_FONT_PT) stays at MIN_PHONE_PX or more; a figure wider than the
column then scrolls sideways in its own box, and the page itself does not.
"""

import pytest

from attnkit.plots import COLUMN_PX, MIN_FONT_PT, MIN_SCALE
from tests.support.book import chapter_files
from tests.support.browser import launch, require_chromium, serve

pytestmark = pytest.mark.build

MIN_PHONE_PX = 9  # the smallest text of a figure on a phone, in CSS px
WIDTHS = {"laptop": 1280, "phone": 375}
PX_PER_PT = 96 / 72  # CSS: 96 px and 72 pt to the inch

# Every image of a code cell's output or of a {figure} in the article: how wide it was drawn
# (its width set in the page), how wide it shows, its pixels, and the box it may scroll in.
MEASURE = """() => {
  const article = document.querySelector('article.bd-article');
  const style = getComputedStyle(article);
  const column = article.clientWidth - parseFloat(style.paddingLeft)
    - parseFloat(style.paddingRight);
  const images = [...article.querySelectorAll('img')].filter(i => i.closest('.cell_output, figure'));
  return {
    column,
    page: [document.documentElement.scrollWidth, window.innerWidth],
    figures: images.map(img => {
      const box = img.closest('a.image-reference');
      return {
        src: img.getAttribute('src').split('/').pop(),
        drawn: parseFloat(img.style.width) || null,
        shown: img.getBoundingClientRect().width,
        pixels: img.naturalWidth,
        box: box && {width: box.clientWidth, content: box.scrollWidth,
                     overflow: getComputedStyle(box).overflowX},
      };
    }),
  };
}"""


@pytest.fixture(scope="module")
def measured(built_book):
    """{(device, chapter): what MEASURE finds}, each chapter opened at both widths."""
    require_chromium()
    from playwright.sync_api import sync_playwright

    html_dir, _ = built_book
    found = {}
    with serve(html_dir) as base, sync_playwright() as playwright:
        browser = launch(playwright)
        for device, width in WIDTHS.items():
            page = browser.new_page(viewport={"width": width, "height": 900})
            for name in chapter_files():
                page.goto(f"{base}{name}.html")  # waits for the load event: images are in
                found[device, name] = page.evaluate(MEASURE)
            page.close()
        browser.close()
    return found


def test_the_column_is_as_wide_as_the_figures_are_drawn(measured):
    columns = {m["column"] for (device, _), m in measured.items() if device == "laptop"}
    assert columns == {COLUMN_PX}, "the theme's column changed: set attnkit.plots.COLUMN_PX"


@pytest.mark.parametrize("name", chapter_files())
def test_figures_show_at_their_drawn_size_on_a_laptop(measured, name):
    found = measured["laptop", name]
    assert found["figures"], f"{name} draws figures, and none was found"
    for figure in found["figures"]:
        assert figure["drawn"], f"{figure['src']}: no display size: drawn without the book's style?"
        assert figure["drawn"] <= found["column"], f"{figure['src']} is wider than the column"
        assert figure["shown"] == pytest.approx(figure["drawn"], abs=0.5), figure
        # twice the pixels for a high-density screen; an SVG's own size is its drawn size
        ratio = 1 if figure["src"].endswith(".svg") else 2
        assert figure["pixels"] == pytest.approx(ratio * figure["drawn"], abs=1), figure


@pytest.mark.parametrize("name", chapter_files())
def test_figures_stay_legible_on_a_phone(measured, name):
    found = measured["phone", name]
    assert found["page"][0] == found["page"][1], "the page scrolls sideways"
    assert found["figures"]
    for figure in found["figures"]:
        scale = figure["shown"] / figure["drawn"]
        assert scale >= MIN_SCALE - 1e-3, figure
        assert MIN_FONT_PT * PX_PER_PT * scale >= MIN_PHONE_PX - 1e-6, figure
        if figure["shown"] > found["column"] + 0.5:  # wider than the column: its box scrolls
            box = figure["box"]
            assert box["overflow"] in {"auto", "scroll"}, figure
            assert box["width"] <= found["column"] and box["content"] >= figure["shown"], figure
