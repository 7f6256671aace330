"""The dropdowns (the exercises' solutions, the "Answers to" boxes) in the book and in its
Japanese edition: each written at build time as a closed ``<details>`` whose ``<summary>`` is its
title (_ext/dropdown_details.py), which Chromium opens at a click or the Enter key with no
script; and no page loads sphinx-togglebutton, whose script closed them after the page loaded."""

import re

import pytest

from tests.support.book import ROOT, chapter_files, page, toc_files
from tests.support.browser import PageLog, open_page
from tests.support.markup import read

pytestmark = pytest.mark.build

EDITIONS = ["", "ja/"]
# what a solution's title starts with: the exercise it answers, by its number
SOLUTION_TITLE = {"": r"Solution to Exercise \d+\.\d+", "ja/": r"演習 \d+\.\d+ の解答$"}
JAPANESE = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]")
# classes of sphinx-togglebutton's own style sheet (togglebutton.css)
TOGGLEBUTTON_CLASSES = ["toggle-button", "tb-icon", "toggle-details"]
# shown: laid out and painted, not left out with a closed <details>'s content
SHOWN = "e => e.checkVisibility() && e.getBoundingClientRect().height > 0"


def is_dropdown(element):
    return element.has_class("admonition") and (
        element.has_class("dropdown") or element.has_class("solution")
    )


def dropdowns(html):
    """Every dropdown of a page (a solution, or an admonition with the class dropdown): the
    element, its child elements in order, and the text of the first of them."""
    markup = read(html)
    found = []
    for element, _ in markup.elements:
        if is_dropdown(element):
            children = [e for e, around in markup.elements if around and around[-1] is element]
            first = " ".join(
                text
                for text, around in markup.texts
                if children and any(e is children[0] for e in around)
            )
            found.append((element, children, " ".join(first.split())))
    return found


def test_no_page_loads_togglebutton(built_book):
    html_dir, _ = built_book
    assert not list(html_dir.rglob("togglebutton*")), "its files are still in the build"
    for edition in EDITIONS:
        for name in [*toc_files(), "search", "genindex"]:
            assert "togglebutton" not in page(html_dir / edition, name), f"{edition}{name}"
        sheet = (html_dir / edition / "_static/styles/book.css").read_text(encoding="utf-8")
        assert [name for name in TOGGLEBUTTON_CLASSES if name in sheet] == [], edition


@pytest.mark.parametrize("edition", EDITIONS)
@pytest.mark.parametrize("name", chapter_files())
def test_every_dropdown_is_a_closed_details_titled_by_its_summary(built_book, edition, name):
    html_dir, _ = built_book
    html = page(html_dir / edition, name)
    found = dropdowns(html)
    source = (ROOT / f"{name}.md").read_text(encoding="utf-8")
    assert len(found) == source.count(":class: dropdown"), (name, edition)
    assert len(found) >= 5, (
        f"{name}: {len(found)} dropdowns; the rule (CONTRIBUTING.md): a chapter has at least 5 "
        "(its exercises' solutions and the answers to its questions)"
    )
    answers = []
    for element, children, title in found:
        assert element.tag == "details" and "open" not in element.attrs, (element, title)
        summary, *content = children
        assert summary.tag == "summary" and summary.has_class("admonition-title"), title
        assert content, f"{title}: its content is not in the page"
        if element.has_class("solution"):
            assert re.match(SOLUTION_TITLE[edition], title), title
        else:
            answers.append(title)
    # a summary is the button that opens its box: no link inside it (axe's nested-interactive)
    assert not re.search(r"<summary\b(?:(?!</summary>).)*<a\b", html, re.S)
    if edition:  # translated
        assert all(JAPANESE.search(title) for title in answers), answers
    else:  # the admonition's title as written, its quotes made curly
        written = re.findall(r"^:::\{admonition\} (.+)\n:class: dropdown$", source, re.M)
        assert [re.findall(r"\w+", t) for t in answers] == [re.findall(r"\w+", t) for t in written]


def test_a_click_or_the_enter_key_opens_a_dropdown_with_no_script(site):
    tabs, base = site
    context = tabs.browser.new_context(java_script_enabled=False)
    page = context.new_page()
    log = PageLog(page)
    page.goto(f"{base}chapters/attention.html", wait_until="load")
    found = page.locator("details.dropdown")
    assert found.count() >= 5
    for details in found.all():
        summary = details.locator(":scope > summary")
        content = details.locator(":scope > :not(summary)").first
        assert not details.evaluate("d => d.open") and not content.evaluate(SHOWN)
        summary.click(position={"x": 8, "y": 8})  # on the title bar, beside any link in it
        assert details.evaluate("d => d.open") and content.evaluate(SHOWN)
        summary.click(position={"x": 8, "y": 8})
        assert not details.evaluate("d => d.open") and not content.evaluate(SHOWN)
        summary.focus()
        page.keyboard.press("Enter")
        assert details.evaluate("d => d.open") and content.evaluate(SHOWN)
    assert log.problems() == {}
    context.close()


def test_a_printed_page_shows_every_dropdown_s_content(site):
    """As sphinx-togglebutton opened them before printing: _static/book.css, with no script."""
    page, log = open_page(site, "chapters/attention")
    contents = page.locator("details.dropdown > :not(summary)")
    assert contents.count() >= 5
    assert not any(content.evaluate(SHOWN) for content in contents.all())
    page.emulate_media(media="print")
    assert all(content.evaluate(SHOWN) for content in contents.all())
    assert log.problems() == {}
    page.close()
