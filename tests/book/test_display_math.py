"""Display equations fit the page: on a desktop none needs a sideways scroll.

Each display equation is typeset at build time into an ``mjx-container`` with ``display="true"``
(_ext/prerendered_math.py), a box as wide as the content column that scrolls sideways when the
formula is wider (_static/book.css). At 1280 px no box may scroll: a formula too long for the
column is split over aligned lines in its source (amsmath's ``aligned`` inside the math
directive). On a 390 px phone most formulas are wider than the column; there they scroll inside
their own box, by touch and, since the box takes the keyboard's focus, by the arrow keys, which
the phone test checks and counts (``pytest -rP`` shows the count).
"""

import pytest

from tests.support.book import toc_files
from tests.support.browser import launch, require_chromium, serve

pytestmark = pytest.mark.build

DESKTOP = {"width": 1280, "height": 900}
PHONE = {"width": 390, "height": 844}
# every display equation of the page: its number (if any), its TeX, and its box's widths
MEASURE = """() => [...document.querySelectorAll('mjx-container[jax="CHTML"][display="true"]')]
  .map(box => {
    const formula = box.closest('.math');
    const number = formula && formula.querySelector('.eqno');
    return {
      number: number ? number.textContent.replace('#', '').trim() : null,
      tex: formula ? formula.dataset.tex : null,
      scroll: box.scrollWidth,
      client: box.clientWidth,
      focusable: box.tabIndex === 0,
      overflow: getComputedStyle(box).overflowX,
    };
  })"""


@pytest.fixture(scope="module")
def measured(built_book):
    """Every page's display equations, measured on a desktop and then, the window narrowed, on
    a phone: {page: {"desktop": [...], "phone": [...]}}."""
    require_chromium()
    from playwright.sync_api import sync_playwright

    html_dir, _ = built_book
    found = {}
    with serve(html_dir) as base, sync_playwright() as playwright:
        browser = launch(playwright)
        page = browser.new_page(viewport=DESKTOP)
        for name in toc_files():
            page.set_viewport_size(DESKTOP)
            page.goto(f"{base}{name}.html", wait_until="load")
            page.evaluate("() => document.fonts.ready.then(() => null)")
            desktop = page.evaluate(MEASURE)
            page.set_viewport_size(PHONE)
            found[name] = {"desktop": desktop, "phone": page.evaluate(MEASURE)}
        browser.close()
    return found


def described(equation):
    """The equation's number, as the page shows it, and the start of its TeX."""
    tex = " ".join((equation["tex"] or "").split())
    return f"{equation['number'] or ''} {tex[:70]}{'…' if len(tex) > 70 else ''}".strip()


@pytest.mark.parametrize("name", toc_files())
def test_no_display_equation_scrolls_sideways_on_a_desktop(measured, name):
    too_wide = [
        f"{described(e)}: {e['scroll']} px in a box of {e['client']} px"
        for e in measured[name]["desktop"]
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
    record_property("display equations scrolling at 390 px", f"{len(scrolling)} of {total}")
    print(
        f"at {PHONE['width']} px, {len(scrolling)} of {total} display equations scroll in their box"
    )
