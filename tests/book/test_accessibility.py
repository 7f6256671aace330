"""Every page read as a reader would: on a 1280 px laptop and a 375 px phone, in light and
dark mode, with no network beyond this machine. It loads without an error or a request that
fails or leaves the machine, its formulas typeset and its heatmaps drawn; axe-core finds no
serious or critical WCAG violation, no page scrolls sideways or
jumps while it loads, the console stays quiet, every block that scrolls (and no other) takes the
keyboard's focus, and the chapter list opens and leads to another chapter on a phone.

Each page is opened once per width and mode (tests.support.readings: ``make test`` reads each
page once, on a phone in dark mode; ``make test-accessibility`` in all four ways), and a
screenshot of each is kept (the folder is printed) for a person to look at.
"""

import pytest

from tests.support.book import chapter_files, toc_files
from tests.support.readings import READINGS, WIDTHS, measured_at_each_width

pytestmark = pytest.mark.build


@pytest.fixture(scope="module")
def readings(page_readings):
    """{(width, mode, page): {"mode", "axe", "width", "console"}}: every page read in every way
    (tests.support.readings, run in the background once the book is built)."""
    found, shots = page_readings
    print(f"screenshots: {shots}")
    return {tuple(key.split(" ", 2)): reading for key, reading in found.items()}


@pytest.mark.parametrize("name", toc_files())
@pytest.mark.parametrize("width, mode", READINGS)
def test_page_loads_offline_without_errors_and_typesets_math(readings, width, mode, name):
    reading = readings[width, mode, name]
    assert reading["problems"] == {}
    if name in chapter_files():
        assert reading["typeset"] >= 5
        assert reading["left_as_tex"] == 0, "math left as TeX"
        assert all(keys > 0 for keys in reading["heatmap_keys"])


@pytest.mark.parametrize("name", toc_files())
@pytest.mark.parametrize("width, mode", READINGS)
def test_no_serious_accessibility_violation(readings, width, mode, name):
    assert readings[width, mode, name]["mode"] == mode
    assert readings[width, mode, name]["axe"] == []


@pytest.mark.parametrize("name", toc_files())
@pytest.mark.parametrize("mode", [mode for width, mode in READINGS if width == "phone"])
def test_no_sideways_scroll_on_a_phone(readings, mode, name):
    document_width, viewport_width = readings["phone", mode, name]["width"]
    assert document_width == viewport_width


@pytest.mark.parametrize("name", toc_files())
@pytest.mark.parametrize("width, mode", READINGS)
def test_layout_stays_put_while_the_page_loads(readings, width, mode, name):
    """What a reader sees does not jump as formulas, fonts and widgets arrive: a cumulative
    layout shift of 0.05 or less (0.1 is the web's "good")."""
    assert readings[width, mode, name]["layout_shift"] <= 0.05


@pytest.fixture(scope="module")
def blocks(page_readings):
    """{page: {width: [(tab index, scrolls), ...]}}: every code block and cell output of every
    page, its dropdowns open and every section laid out, as a reader who reads down the page
    finds them."""
    found, _ = page_readings
    return measured_at_each_width(found, "blocks")


@pytest.mark.parametrize("name", toc_files())
@pytest.mark.parametrize("width", WIDTHS)
def test_every_block_that_scrolls_takes_the_focus_and_no_other(blocks, width, name):
    """The arrow keys reach what a block hides: _static/theme-controls.js gives a block a tab
    stop exactly when its content overflows it."""
    found = blocks[name][width]
    assert [tab for tab, _ in found] == [0 if scrolls else -1 for _, scrolls in found]


@pytest.mark.parametrize("width", WIDTHS)
def test_some_blocks_scroll_at_each_width(blocks, width):
    """The test above has something to check: the code blocks wider than a phone, and the
    long outputs on a laptop."""
    assert any(scrolls for layout in blocks.values() for _, scrolls in layout[width])


@pytest.mark.parametrize("name", toc_files())
def test_console_is_quiet(readings, name):
    said = {text for (_, _, page), r in readings.items() if page == name for text in r["console"]}
    assert said == set()


@pytest.fixture
def phone(site):
    tabs, base = site
    page = tabs.new_page(viewport={"width": 375, "height": 800})
    yield page, base
    page.close()


def test_chapter_list_opens_on_a_phone_and_leads_to_another_chapter(phone):
    page, base = phone
    page.goto(f"{base}chapters/attention.html")
    toggle = page.locator("button.primary-toggle:visible")
    assert toggle.count() == 1, "one visible button opens the chapter list"
    toggle.click()
    chapters = page.locator("dialog#pst-primary-sidebar-modal[open]")
    chapters.get_by_role("link", name="Self-attention").first.click()
    page.wait_for_url("**/chapters/self-attention.html")
    page.locator("button.secondary-toggle:visible").click()
    assert page.locator("dialog#pst-secondary-sidebar-modal[open] nav").count() == 1


def test_chapter_list_hides_and_one_search_field_shows_on_a_laptop(phone):
    from playwright.sync_api import expect

    page, base = phone
    page.set_viewport_size({"width": 1280, "height": 800})
    page.goto(f"{base}chapters/attention.html")
    assert page.locator(".search-button-field:visible").count() == 1
    sidebar = page.locator("#pst-primary-sidebar")
    assert sidebar.is_visible()
    page.locator("button.primary-toggle:visible").click()
    expect(sidebar).to_be_hidden()
