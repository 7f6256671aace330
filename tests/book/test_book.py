"""The built book: a clean build, every notebook executed, no warnings, no errors in any cell."""

import json
import re

import pytest
from fontTools.ttLib import TTFont

from tests.support.book import chapter_files, page, toc_files, widget_models

pytestmark = pytest.mark.build


def test_build_has_no_warnings(built_book):
    _, log = built_book
    problems = [
        line
        for line in log.splitlines()
        if re.search(r"\b(WARNING|ERROR|CRITICAL)\b", line)
        and "Kernel is running over TCP" not in line  # ipykernel's own notice
        and "Location 'file:" not in line
    ]  # pip's local mirrors
    assert problems == []


def test_every_page_of_the_toc_is_built(built_book):
    html_dir, _ = built_book
    for name in toc_files():
        assert (html_dir / f"{name}.html").is_file(), name
    assert (html_dir / "index.html").is_file()


@pytest.mark.parametrize("chapter", chapter_files())
def test_chapter_was_executed_without_errors(built_book, chapter):
    html = page(built_book[0], chapter)
    outputs = html.count('class="cell_output')
    assert outputs >= 5, (
        f"{chapter}: {outputs} code cells with output; the rule (CONTRIBUTING.md): a chapter "
        "shows at least 5, which checks its formulas (else its cells were not executed)"
    )
    assert "output traceback" not in html
    assert "output stderr" not in html
    assert "Traceback (most recent call last)" not in html


@pytest.mark.parametrize("chapter", chapter_files())
def test_chapter_has_math_exercises_and_solutions(built_book, chapter):
    html = page(built_book[0], chapter)
    rules = {  # CONTRIBUTING.md, "What a chapter must meet"
        "at least 5 formulas": html.count('class="math notranslate nohighlight"') >= 5,
        "at least 4 exercises": html.count('class="exercise admonition"') >= 4,
        "at least 4 solutions in dropdowns": html.count("solution dropdown admonition") >= 4,
    }
    assert all(rules.values()), (
        f"{chapter} breaks the rules {[r for r, met in rules.items() if not met]}"
    )


def test_attention_heatmap_embeds_its_widget_state(built_book):
    html = page(built_book[0], "chapters/attention")
    models = widget_models(html)
    assert models, "no widget state in the page"
    heatmaps = [m["state"] for m in models.values() if m["model_name"] == "AnyModel"]
    assert len(heatmaps) == 1
    (heatmap,) = heatmaps
    assert "computeWeights" in heatmap["_esm"] and ".attn-cell" in heatmap["_css"]
    assert heatmap["query_tokens"] == ["私は", "あなたを", "愛して", "いる"]
    assert heatmap["key_tokens"] == ["I", "love", "you"]
    assert len(heatmap["weights"]) == 4  # the weights as computed at build time
    views = re.findall(
        r'<script type="application/vnd.jupyter.widget-view\+json">(.*?)</script>', html, re.S
    )
    assert views and all(json.loads(v)["model_id"] in models for v in views)


@pytest.mark.parametrize("name", toc_files())
def test_pages_load_scripts_styles_and_math_from_the_book_itself(built_book, name):
    html_dir = built_book[0]
    html = page(html_dir, name)
    # what the page loads: not the addresses of its other editions (rel="alternate")
    sources = re.findall(
        r'<(?:script|link)\b(?![^>]*rel="alternate")[^>]*?\b(?:src|href)="([^"]+)"', html
    )
    assert sources
    external = [s for s in sources if re.match(r"(https?:)?//", s)]
    assert external == []
    if "widget-view+json" in html:  # the book's own host, no widget manager, no RequireJS
        assert re.search(r'<script type="module" src="[./]*_static/jsdeps/widget-host.js', html)
        assert "require.js" not in html and "html-manager" not in html
    # one style sheet (_ext/one_stylesheet.py), which has the formulas' rules: typeset at build
    # time, they need no MathJax to run
    assert len(re.findall(r'<link [^>]*rel="stylesheet"', html)) == 1
    assert re.search(r'<link [^>]*href="[./]*_static/styles/book.css\?v=\d+"', html)
    sheet = (html_dir / "_static/styles/book.css").read_text()
    assert "@import" not in sheet  # the sheets it imports are in it: no second round trip
    if 'class="math' in html:
        assert "NotoSans Math" in sheet
    assert "mathjax" not in " ".join(re.findall(r"<script\b[^>]*>", html)).lower()
    for local in [
        "jsdeps/widget-host.js",
        "jsdeps/math.css",
        "jsdeps/math-fonts/noto-sans-math.woff",
    ]:
        assert (html_dir / "_static" / local).exists(), local


def test_the_icon_fonts_hold_the_icons_the_sheet_draws_and_no_more(built_book):
    styles = built_book[0] / "_static/styles"
    sheet = (styles / "book.css").read_text()
    faces = re.findall(r"@font-face\{[^}]*\}", sheet)
    fonts = re.findall(r"src:url\((icons/[\w-]+\.woff)\)", " ".join(faces))
    assert fonts and "fontawesome" not in " ".join(faces)
    icons = {
        int(code, 16) for code in re.findall(r'\.fa-[\w-]+::?before\{content:"\\(\w+)"', sheet)
    }
    held = set().union(*(TTFont(styles / font).getBestCmap() for font in fonts))
    assert icons and icons <= held
    assert sum((styles / font).stat().st_size for font in fonts) < 50_000  # the whole: 300 kB


@pytest.mark.parametrize("name", chapter_files())
def test_code_is_highlighted(built_book, name):
    """Keywords and numbers get the classes the theme's styles colour them by."""
    code = "".join(
        re.findall(r'<div class="highlight"><pre>(.*?)</pre>', page(built_book[0], name), re.S)
    )
    classes = set(re.findall(r'<span class="([^"]+)"', code))
    assert {"k", "mi"} <= classes


def test_bibliography_lists_the_sources(built_book):
    html = page(built_book[0], "references")
    for title in [
        "Attention Is All You Need",
        "Attention might be something you need",
        "Scaled Dot Product Attention",
    ]:
        assert title in html
