"""A trace drawn in Chromium (attnkit/trace/draw.py): offline, at phone and desk width, in both
colour modes, axe-clean, and its table holding the same facts as its drawing. (What it
traces: tests/library/test_trace.py.)"""

import pytest

import attnkit
from tests.support.answers.multi_head_attention import split_mixing_tokens, split_reference
from tests.support.browser import PageLog, serious_violations, serve
from tests.support.colours import contrast, css_rgb
from tests.support.heatmap_page import DARK_THEMES
from tests.support.readings import AXE

PAGE = """<!doctype html><html lang="en" %s><meta charset="utf-8"><title>trace</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>%s body { margin: 8px; color: var(--jp-ui-font-color0, #222832); }</style><main><h1>Traces</h1>%s</main>"""

TRACES = {
    "right": attnkit.trace(split_reference, "B T d_model", 3, expect="B H T d_k"),
    "wrong": attnkit.trace(split_mixing_tokens, "B T d_model", 3, expect="B H T d_k"),
}


@pytest.fixture(scope="module")
def axe_core():
    if not AXE.exists():
        pytest.skip(f"axe-core not found at {AXE}: `npm ci` installs it")
    return AXE


def write_page(folder, dark: bool) -> None:
    """Both traces' drawings on a page, light or in JupyterLab's dark theme."""
    attributes, style = DARK_THEMES["jupyterlab"] if dark else ("", "")
    body = "".join(trace._repr_html_() for trace in TRACES.values())
    (folder / "index.html").write_text(PAGE % (attributes, style, body), encoding="utf-8")


@pytest.mark.parametrize("dark", [False, True], ids=["light", "jupyterlab-dark"])
@pytest.mark.parametrize("width", [390, 1280])
def test_a_trace_is_drawn_offline_readable_and_axe_clean(chromium, tmp_path, axe_core, width, dark):
    write_page(tmp_path, dark)
    with serve(tmp_path) as base:
        page = chromium.new_page(viewport={"width": width, "height": 900})
        log = PageLog(page)
        page.goto(base + "index.html")
        assert log.problems() == {}
        # nothing wider than the page: no scrolling sideways at phone width
        assert page.evaluate("() => document.documentElement.scrollWidth") <= width
        drawings = page.locator(".attn-trace-drawing")
        assert drawings.count() == 2
        for drawing in drawings.all():
            assert drawing.get_attribute("aria-hidden") == "true"
        # each block's label fits inside its block, and every text reads against the page
        cut = page.evaluate(
            """() => [...document.querySelectorAll('[data-axis]')].filter(b => {
                const label = b.firstElementChild.getBoundingClientRect(), box = b.getBoundingClientRect();
                return label.width > box.width + 0.5 || box.right > innerWidth; }).length"""
        )
        assert cut == 0
        background = (
            css_rgb(
                page.evaluate("() => getComputedStyle(document.documentElement).backgroundColor"),
                (255, 255, 255),
            )
            if dark
            else (255, 255, 255)
        )
        for selector in (
            "[data-step] > div:nth-child(2)",
            "[data-flagged=true] > div:nth-child(3)",
            "summary",
        ):
            colour = css_rgb(
                page.locator(selector).first.evaluate("e => getComputedStyle(e).color")
            )
            assert contrast(colour, background) >= 4.5, (selector, colour, background)
        # the flagged step is marked, and only it
        flagged = page.locator("[data-flagged=true]")
        assert flagged.count() == 1
        assert "mixes T and H" in flagged.text_content()
        assert serious_violations(page, axe_core) == []


def test_the_table_holds_what_the_drawing_shows(chromium, tmp_path):
    write_page(tmp_path, dark=False)
    with serve(tmp_path) as base:
        page = chromium.new_page(viewport={"width": 1280, "height": 900})
        page.goto(base + "index.html")
        for trace, root in zip(TRACES.values(), page.locator(".attn-trace").all()):
            drawn = root.evaluate(
                """r => [...r.querySelectorAll('[data-step]')].map(step => ({
                    step: step.dataset.step, flagged: step.dataset.flagged === "true",
                    axes: [...step.querySelectorAll(':scope > div:first-child > span')]
                      .filter(s => s.querySelector('[data-axis]'))
                      .map(s => [...s.querySelectorAll('[data-axis]')].map(b => b.dataset.axis)) }))"""
            )
            root.locator("summary").click()
            table = root.evaluate(
                """r => [...r.querySelectorAll('tbody tr')].map(tr =>
                    [...tr.cells].map(td => td.textContent))"""
            )
            assert len(drawn) == len(table) == len(trace.steps)
            for seen, row in zip(drawn, table):
                step, _operation, inputs, output, _line, flag = row
                assert seen["step"] == step
                *drawn_inputs, drawn_output = seen["axes"]
                assert "(" + ", ".join(drawn_output) + ")" == output
                assert " , ".join("(" + ", ".join(a) + ")" for a in drawn_inputs) == inputs
                assert seen["flagged"] == bool(flag)


# Every text of a drawing against the ground it is drawn on (the nearest ancestor's that is not
# transparent): the book's dark mode sets HTML outputs on a light ground of its own.
TEXT_ON_GROUND = """root => [...root.querySelectorAll('.attn-trace-drawing *')]
    .filter(e => [...e.childNodes].some(n => n.nodeType === 3 && n.textContent.trim()))
    .map(e => {
        let ground = e;
        while (ground && ['rgba(0, 0, 0, 0)', 'transparent'].includes(getComputedStyle(ground).backgroundColor)
               || ground && getComputedStyle(ground).backgroundImage !== 'none' && ground !== e)
            ground = ground.parentElement;
        return [e.textContent.trim(), getComputedStyle(e).color,
                ground ? getComputedStyle(ground).backgroundColor : 'rgb(255, 255, 255)'];
    })"""


@pytest.mark.parametrize("edition", ["", "ja/"], ids=["en", "ja"])
@pytest.mark.parametrize("width", [390, 1280])
def test_the_chapter_draws_its_traces_readably_in_the_book(
    chromium, built_book, axe_core, width, edition
):
    """In each edition, in both colour modes (the theme's switch, on the page once loaded): the
    Japanese pages draw the traces in Japanese (_ext/translated_outputs.py)."""
    html, _log = built_book
    with serve(html) as base:
        page = chromium.new_page(viewport={"width": width, "height": 900})
        log = PageLog(page)
        page.goto(base + edition + "chapters/multi-head-attention.html")
        assert page.locator(f".attn-trace[lang={edition[:2] or 'en'}]").count() == 3
        for mode in ("light", "dark"):
            chapter_traces_are_readable(page, log, mode)
            assert serious_violations(page, axe_core, ".attn-trace") == [], mode


def chapter_traces_are_readable(page, log, mode):
    page.evaluate(f"() => document.documentElement.dataset.theme = '{mode}'")
    traces = page.locator(".attn-trace")
    assert traces.count() == 3  # the right split, the wrong one, and the exercise's solution
    assert page.locator(".attn-trace [data-flagged=true]").count() >= 2
    for trace in traces.all():
        assert trace.evaluate("t => t.scrollWidth <= t.parentElement.clientWidth + 1")
        for text, colour, ground in trace.evaluate(TEXT_ON_GROUND):
            if text and "repeating" not in ground:
                assert contrast(css_rgb(colour), css_rgb(ground)) >= 4.5, (text, colour, ground)
    assert log.problems() == {}
