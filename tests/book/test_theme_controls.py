"""The theme's controls as a reader uses them, run by _static/theme-controls.js instead of the
theme's two bundles: the colour mode, search, the header's menus, the page's contents, keyboard
focus on blocks that scroll, and back to top."""

import pytest

from tests.support import browser
from tests.support.book import toc_files

pytestmark = pytest.mark.build

PAGE = "chapters/positional-encoding"  # long, with code blocks wider than a phone


def open_page(site, width=1280):
    return browser.open_page(site, PAGE, width, height=800)


def test_no_page_loads_the_theme_bundles(built_book):
    html_dir, _ = built_book
    for name in [*toc_files(), "search", "genindex"]:
        text = (html_dir / f"{name}.html").read_text(encoding="utf-8")
        assert "bootstrap.js" not in text and "pydata-sphinx-theme.js" not in text, name
        assert "_static/theme-controls.js" in text, name


def test_colour_mode_cycles_and_is_kept_from_page_to_page(site):
    page, log = open_page(site)
    mode = "[document.documentElement.dataset.mode, document.documentElement.dataset.theme]"
    assert page.evaluate(mode) == ["light", "light"]
    button = page.locator(".theme-switch-button:visible").first
    button.click()
    assert page.evaluate(mode) == ["auto", "light"]  # Chromium here prefers light
    button.click()
    assert page.evaluate(mode) == ["dark", "dark"]
    assert page.locator(".dropdown-menu:not(.dropdown-menu-dark)").count() == 0
    page.goto(page.url.replace(PAGE, "chapters/attention"), wait_until="load")
    assert page.evaluate(mode) == ["dark", "dark"]
    button.click()
    assert page.evaluate(mode) == ["light", "light"]
    assert log.problems() == {}


@pytest.mark.parametrize("name", ["appendix/glossary", PAGE])
@pytest.mark.parametrize("width", [375, 900, 1280])
def test_the_header_items_sit_side_by_side_inside_the_header(site, name, width):
    """The other edition's link beside the theme's buttons, all within the header's height."""
    page, _ = browser.open_page(site, name, width, height=800)
    header, items = page.evaluate(
        """() => [document.querySelector('.bd-header-article').getBoundingClientRect(),
                  [...document.querySelectorAll('.header-article-items__end > *')]
                    .map(item => item.getBoundingClientRect())]"""
    )
    assert len(items) == 2
    for item in items:
        assert header["top"] <= item["top"] and item["bottom"] <= header["bottom"], (item, header)
    link, buttons = items
    assert link["right"] <= buttons["left"]


@pytest.mark.parametrize("width", [1280, 375])
def test_control_k_opens_the_search_dialog_and_searches(site, width):
    page, log = open_page(site, width)
    page.keyboard.press("Control+k")
    assert page.evaluate("document.getElementById('pst-search-dialog').open")
    assert page.evaluate("document.activeElement.closest('#pst-search-dialog form') !== null")
    page.keyboard.type("softmax")
    page.keyboard.press("Enter")
    page.wait_for_url("**/search.html?q=softmax")
    assert log.problems() == {}


def test_search_button_opens_the_dialog_and_a_click_beside_it_closes_it(site):
    page, _ = open_page(site, 375)
    page.locator(".search-button__button:visible").first.click()
    assert page.evaluate("document.getElementById('pst-search-dialog').open")
    page.mouse.click(5, 795)
    assert not page.evaluate("document.getElementById('pst-search-dialog').open")


def test_the_run_menu_opens_and_closes_by_keys_and_clicks(site):
    page, log = open_page(site)
    toggle = page.locator(".dropdown-launch-buttons button.dropdown-toggle")
    menu = page.locator(".dropdown-launch-buttons .dropdown-menu")
    toggle.focus()
    page.keyboard.press("ArrowDown")
    assert toggle.get_attribute("aria-expanded") == "true"
    assert "show" in menu.get_attribute("class")
    assert page.evaluate("document.activeElement.textContent.trim()") == "Binder"
    page.keyboard.press("ArrowDown")
    assert page.evaluate("document.activeElement.textContent.trim()") == "Colab"
    page.keyboard.press("Escape")
    assert toggle.get_attribute("aria-expanded") == "false"
    assert page.evaluate("document.activeElement.getAttribute('aria-label')") == "Run this chapter"
    toggle.click()
    assert toggle.get_attribute("aria-expanded") == "true"
    page.locator("article h1").click()
    assert toggle.get_attribute("aria-expanded") == "false"
    assert log.problems() == {}


def test_the_contents_mark_the_section_being_read(site):
    page, _ = open_page(site)
    links = page.locator("#pst-page-toc-nav a")
    last = links.nth(links.count() - 1)
    target = last.get_attribute("href")
    page.evaluate(f"document.getElementById({target[1:]!r}).scrollIntoView()")
    page.wait_for_function(
        f"document.querySelector('#pst-page-toc-nav a[href=\"{target}\"]')"
        ".classList.contains('active')"
    )
    assert page.locator("#pst-page-toc-nav a.active").count() == 1
    assert last.get_attribute("aria-current") == "true"


def test_back_to_top_shows_on_a_phone_while_scrolling_up(site):
    page, _ = open_page(site, 375)
    button = page.locator("#pst-back-to-top")
    page.evaluate("window.scrollTo(0, 4000)")
    page.wait_for_timeout(100)
    assert not button.is_visible()
    page.evaluate("window.scrollTo(0, 3000)")
    page.wait_for_timeout(100)
    assert button.is_visible()
    button.click()
    page.wait_for_function("window.scrollY === 0")
