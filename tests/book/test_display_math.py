"""Display equations fit the page: on a desktop none needs a sideways scroll.

Each display equation is typeset at build time into a ``<math display="block">``
(_ext/prerendered_math.py), a box as wide as the content column that scrolls sideways when the
formula is wider (_static/book.css). At 1280 px no box may scroll: a formula too long for the
column is split over aligned lines in its source (amsmath's ``aligned`` inside the math
directive). On a 375 px phone most formulas are wider than the column; there they scroll inside
their own box, by touch and, since the box takes the keyboard's focus, by the arrow keys, which
the phone test checks and counts (``pytest -rP`` shows the count); at most five may.
"""

import pytest

from tests.support.book import toc_files
from tests.support.readings import WIDTHS, measured_at_each_width

pytestmark = pytest.mark.build

# How many display equations may still scroll sideways on a phone, in the whole book
MOST_SCROLLING_ON_A_PHONE = 5


@pytest.fixture(scope="module")
def measured(page_readings):
    """Every page's display equations, measured on a laptop and on a phone (tests.support.readings
    measures them as it reads the page): {page: {"laptop": [...], "phone": [...]}}."""
    found, _ = page_readings
    return measured_at_each_width(found, "equations")


def described(equation):
    """The equation's number, as the page shows it, and the start of its TeX."""
    tex = " ".join((equation["tex"] or "").split())
    return f"{equation['number'] or ''} {tex[:70]}{'…' if len(tex) > 70 else ''}".strip()


@pytest.mark.parametrize("name", toc_files())
def test_no_display_equation_scrolls_sideways_on_a_desktop(measured, name):
    too_wide = [
        f"{described(e)}: {e['scroll']} px in a box of {e['client']} px"
        for e in measured[name]["laptop"]
        if e["scroll"] > e["client"]
    ]
    assert too_wide == [], (
        f"{name}: split these over aligned lines (\\begin{{aligned}} ... \\end{{aligned}})"
    )


def test_on_a_phone_wide_equations_scroll_in_their_own_box(measured, record_property):
    """Acceptable on a phone, where the box scrolls by touch and, focused, by the keyboard."""
    total = sum(len(found["phone"]) for found in measured.values())
    scrolling = [
        (name, e)
        for name, found in measured.items()
        for e in found["phone"]
        if e["scroll"] > e["client"]
    ]
    assert total > 0, "no display equation found: has the typeset markup changed?"
    for name, equation in scrolling:
        assert equation["overflow"] == "auto" and equation["focusable"], (
            f"{name}: {described(equation)} is wider than a phone but cannot be scrolled"
        )
    width = WIDTHS["phone"]
    record_property(f"display equations scrolling at {width} px", f"{len(scrolling)} of {total}")
    print(f"at {width} px, {len(scrolling)} of {total} display equations scroll in their box")
    # Broken where mathematics breaks them, almost all read on a phone; a few (wide matrices,
    # a sum of four terms) may scroll.
    assert len(scrolling) <= MOST_SCROLLING_ON_A_PHONE, [
        f"{name}: {described(equation)}" for name, equation in scrolling
    ]
