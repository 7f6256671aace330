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
from tests.support.readings import layouts

pytestmark = pytest.mark.build

MIN_PHONE_PX = 9  # the smallest text of a figure on a phone, in CSS px
PX_PER_PT = 96 / 72  # CSS: 96 px and 72 pt to the inch


@pytest.fixture(scope="module")
def measured(page_readings):
    """{(width, chapter): the column, the page's widths and every figure's sizes}, measured on
    a laptop and on a phone (tests.support.readings measures them as it reads the page)."""
    found, _ = page_readings
    return {
        (width, name): measured
        for name, layout in layouts(found).items()
        if name in chapter_files()
        for width, measured in layout.items()
    }


def test_the_column_is_as_wide_as_the_figures_are_drawn(measured):
    columns = {m["column"] for (width, _), m in measured.items() if width == "laptop"}
    assert columns == {COLUMN_PX}, "the theme's column changed: set attnkit.plots.COLUMN_PX"


@pytest.mark.parametrize("name", chapter_files())
def test_figures_show_at_their_drawn_size_on_a_laptop(measured, name):
    found = measured["laptop", name]
    assert found["figures"], (
        f"{name}: no figure found; the rule (CONTRIBUTING.md): a chapter draws at least one"
    )
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
    assert found["figures"], f"{name}: no figure found (CONTRIBUTING.md: at least one)"
    for figure in found["figures"]:
        scale = figure["shown"] / figure["drawn"]
        assert scale >= MIN_SCALE - 1e-3, figure
        assert MIN_FONT_PT * PX_PER_PT * scale >= MIN_PHONE_PX - 1e-6, figure
        if figure["shown"] > found["column"] + 0.5:  # wider than the column: its box scrolls
            box = figure["box"]
            assert box["overflow"] in {"auto", "scroll"}, figure
            assert box["width"] <= found["column"] and box["content"] >= figure["shown"], figure
