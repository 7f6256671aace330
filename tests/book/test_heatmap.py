"""The heatmap widget drawn in Chromium: masks, controls, keyboard, colours and contrast, and
axe-core on a widget in use. (Its maths and traits: tests/library/test_heatmap.py.)"""

import contextlib
import io
import json
import os
import re

import numpy as np
import pytest
from PIL import Image

from attnkit.heatmap import CONTROLS, AttentionHeatmap
from tests.support.book import ROOT
from tests.support.browser import (
    PageLog,
    drawn_weights,
    move_slider,
    serious_violations,
    serve,
)
from tests.support.colours import contrast, css_rgb, luminance
from tests.support.heatmap_page import DARK_THEMES, write_page

RNG = np.random.default_rng(0)


X = RNG.normal(size=(5, 4))  # (n, d)


TOKENS = ["a", "b", "c", "d", "e"]


W_Q, W_K = RNG.normal(size=(4, 3)), RNG.normal(size=(4, 3))  # (d, d_k)


SYNCED = set(AttentionHeatmap.class_own_traits(sync=True))  # the one list of the widget's traits


def numpy_twin(widget, root):
    """``widget`` with the traits the page's model has now: its NumPy weights."""
    state = root.evaluate(
        f"r => Object.fromEntries({json.dumps(sorted(SYNCED))}"
        ".map(n => [n, r.attnWidget.model.get(n)]))"
    )
    for name, value in state.items():
        setattr(widget, name, value)
    return widget.expected_weights()


@pytest.mark.parametrize("n", [6, 40])  # numbers in the cells; colour only
def test_heatmap_alone_draws_masks_follows_controls_and_reads_out(chromium, tmp_path, n):
    rng = np.random.default_rng(n)
    tokens = [f"<b>t{i}</b>" for i in range(n)]  # labels are text, never HTML
    widget = AttentionHeatmap(
        tokens, rng.normal(size=(n, 4)), causal=True, controls=["temperature", "causal", "padding"]
    )
    write_page(tmp_path, widget)
    with serve(tmp_path) as base:
        page = chromium.new_page(viewport={"width": 1280, "height": 1400})  # the whole grid
        log = PageLog(page)
        page.goto(base + "index.html")
        root = page.locator("[data-attn-widget][data-drawn]")
        assert np.max(np.abs(drawn_weights(root) - numpy_twin(widget, root))) < 1e-12
        move_slider(root.locator("input.attn-temperature"), -0.5)
        root.locator(".attn-colhead").nth(2).click()  # mask the third key
        drawn = drawn_weights(root)
        assert np.max(np.abs(drawn - numpy_twin(widget, root))) < 1e-12
        assert np.all(drawn[:, 2] == 0) and np.all(np.triu(drawn, 1) == 0)
        assert root.locator(".attn-cell").count() == (n * n if n <= 16 else 0)
        canvas = root.locator("canvas.attn-canvas")
        assert "repeating-linear-gradient" in canvas.evaluate(
            "c => getComputedStyle(c).backgroundImage"
        )
        box = canvas.bounding_box()  # hover the middle of cell (n-1, 1)
        page.mouse.move(box["x"] + 1.5 * box["width"] / n, box["y"] + (n - 0.5) * box["height"] / n)
        expected = f"{tokens[n - 1]} attends to {tokens[1]}: {drawn[n - 1, 1]:.6f}"
        assert root.locator(".attn-readout").text_content() == expected
        page.mouse.move(box["x"] + 2.5 * box["width"] / n, box["y"] + 0.5 * box["height"] / n)
        assert (
            root.locator(".attn-readout").text_content()
            == f"{tokens[0]} attends to {tokens[2]}: masked (0)"
        )
        labels = root.locator(".attn-rowhead, .attn-colhead").all_text_contents()
        assert labels == tokens + tokens and root.locator("b").count() == 0
        assert log.problems() == {}
        page.close()


def test_controls_follow_heads_and_controls_set_from_python(chromium, tmp_path):
    write_page(tmp_path, AttentionHeatmap(TOKENS, X, controls=["temperature"]))
    with serve(tmp_path) as base:
        page = chromium.new_page()
        log = PageLog(page)
        page.goto(base + "index.html")
        root = page.locator("[data-attn-widget][data-drawn]")
        assert root.locator("select.attn-head").count() == 0
        heads = [
            {"W_Q": W_Q.tolist(), "W_K": W_K.tolist(), "name": name} for name in ["one", "two"]
        ]
        root.evaluate(
            """(r, heads) => {
            r.attnWidget.model.set('heads', heads);
            r.attnWidget.model.set('controls', ['head', 'scale']);
        }""",
            heads,
        )
        assert root.locator("select.attn-head option").all_text_contents() == ["one", "two"]
        assert root.locator("input.attn-temperature").count() == 0
        root.locator("input.attn-scale").click()
        widget = AttentionHeatmap(TOKENS, X, heads=[(W_Q, W_K)], scale=True)
        assert np.max(np.abs(drawn_weights(root) - widget.expected_weights())) < 1e-12
        assert log.problems() == {}
        page.close()


AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"


EVERY_CONTROL = dict(heads=[(W_Q, W_K), (W_K, W_Q)], controls=list(CONTROLS), d_k_choices=[1, 3])


@contextlib.contextmanager
def opened(chromium, folder, widget, dark=None, height=900):
    """A page with ``widget`` alone on it, once drawn: yields the page and the widget's root."""
    write_page(folder, widget, dark=dark)
    with serve(folder) as base:
        page = chromium.new_page(viewport={"width": 1280, "height": height})
        log = PageLog(page)
        page.goto(base + "index.html")
        root = page.locator("[data-attn-widget][data-drawn]")
        root.wait_for(state="attached")
        yield page, root
        assert log.problems() == {}
        page.close()


def pixels(page, box, inset=2):
    """The colours drawn inside ``box`` (a bounding box), ``inset`` pixels in from its edges."""
    clip = {
        "x": box["x"] + inset,
        "y": box["y"] + inset,
        "width": box["width"] - 2 * inset,
        "height": box["height"] - 2 * inset,
    }
    image = Image.open(io.BytesIO(page.screenshot(clip=clip))).convert("RGB")
    return np.asarray(image).reshape(-1, 3)


def hatching(page, root, row, col):
    """The darkest and the lightest colour of the hatching in masked cell (row, col), as drawn."""
    cell = root.locator(f'.attn-cell[data-row="{row}"][data-col="{col}"]')
    cell.evaluate("c => { c.style.visibility = 'hidden'; }")  # its dash off the picture
    colours = pixels(page, cell.bounding_box())
    cell.evaluate("c => { c.style.visibility = ''; }")
    by_luminance = sorted({tuple(c) for c in colours}, key=luminance)
    return by_luminance[0], by_luminance[-1]


def focus(page):
    """The focused element's place among the widget's focusable elements (see number_focusable),
    its outline (style, width in px, colour) and the widget's background colour."""
    return page.evaluate("""() => {
        const e = document.activeElement, s = getComputedStyle(e);
        const background = getComputedStyle(document.querySelector('.attn-widget')).backgroundColor;
        return { k: e.dataset.k ?? null, outline: [s.outlineStyle, parseFloat(s.outlineWidth),
            s.outlineColor], background };
    }""")


def number_focusable(root):
    """Numbers every element of the widget that can take the focus, in document order."""
    return root.evaluate("""r => {
        const nodes = r.querySelectorAll('input, select, button, [tabindex]');
        nodes.forEach((node, k) => { node.dataset.k = String(k); });
        return nodes.length;
    }""")


def tab_to(page, selector, key="Tab"):
    for _ in range(60):
        page.keyboard.press(key)
        if page.evaluate("s => document.activeElement.matches(s)", selector):
            return
    pytest.fail(f"{key} never reaches {selector}")


def cursor_cell(root):
    """The cell (row, column) that the cursor's mark outlines."""
    canvas = root.locator("canvas.attn-canvas")
    rows, columns = canvas.evaluate("c => [c.height, c.width]")
    box, mark = canvas.bounding_box(), root.locator(".attn-cursor").bounding_box()
    return (
        round((mark["y"] - box["y"]) / (box["height"] / rows)),
        round((mark["x"] - box["x"]) / (box["width"] / columns)),
    )


def test_every_control_is_reached_by_tab_and_shows_its_focus(chromium, tmp_path):
    widget = AttentionHeatmap(TOKENS, X, **EVERY_CONTROL)
    with opened(chromium, tmp_path, widget) as (page, root):
        count = number_focusable(root)
        assert count == 14 + len(TOKENS)  # 4 sliders, 3 boxes, 2 menus, 2 buttons, the grid, keys
        reached = []
        for _ in range(count + 1):
            page.keyboard.press("Tab")
            now = focus(page)
            if now["k"] is None:  # out of the widget
                break
            reached.append(int(now["k"]))
            style, width, colour = now["outline"]
            background = css_rgb(now["background"])
            assert style == "solid" and width >= 2, (reached, now)
            assert contrast(css_rgb(colour, background), background) >= 3, (reached, now)
        assert reached == list(range(count)), "each control once, in the order they are shown"


def test_keyboard_alone_masks_keys_and_reads_every_cell(chromium, tmp_path):
    widget = AttentionHeatmap(TOKENS, X, controls=["temperature", "causal", "padding"])
    with opened(chromium, tmp_path, widget) as (page, root):
        key = root.locator('.attn-colhead button[aria-label="mask c"]')
        tab_to(page, '.attn-colhead button[aria-label="mask c"]')
        page.keyboard.press("Enter")
        drawn = drawn_weights(root)
        assert np.all(drawn[:, 2] == 0) and key.get_attribute("aria-pressed") == "true"
        assert np.max(np.abs(drawn - numpy_twin(widget, root))) < 1e-12
        assert page.evaluate("document.activeElement.getAttribute('aria-label')") == "mask c"
        page.keyboard.press(" ")
        assert key.get_attribute("aria-pressed") == "false" and np.all(drawn_weights(root) > 0)

        grid = root.locator(".attn-grid")
        readout = root.locator(".attn-readout")
        assert readout.get_attribute("aria-live") == "polite"
        tab_to(page, ".attn-grid", "Shift+Tab")
        assert readout.text_content() == f"a attends to a: {drawn_weights(root)[0, 0]:.6f}"
        for move in ["ArrowDown"] * 3 + ["ArrowRight"]:
            page.keyboard.press(move)
        assert readout.text_content() == f"d attends to b: {drawn_weights(root)[3, 1]:.6f}"
        assert cursor_cell(root) == (3, 1)
        page.keyboard.press("End")
        page.keyboard.press("Enter")  # masks the cursor's key
        assert readout.text_content() == "d attends to e: masked (0)" and cursor_cell(root) == (
            3,
            4,
        )
        assert np.all(drawn_weights(root)[:, 4] == 0)
        assert root.locator('button[aria-label="mask e"]').get_attribute("aria-pressed") == "true"
        for move in ["ArrowDown"] * 9 + ["Home", "ArrowLeft"]:  # the cursor stops at the edges
            page.keyboard.press(move)
        assert readout.text_content() == f"e attends to a: {drawn_weights(root)[4, 0]:.6f}"
        assert page.evaluate("document.activeElement.classList.contains('attn-grid')")

        assert grid.get_attribute("role") == "grid"
        name = grid.get_attribute("aria-label")
        for said in ["5 queries", "5 keys", "temperature 1.00", "1 key masked"]:
            assert said in name, name
        move_slider(root.locator("input.attn-temperature"), -1)
        root.locator("input.attn-causal").check()
        assert "temperature 0.10, causal mask" in grid.get_attribute("aria-label")


def test_cursor_keeps_in_view_in_a_large_grid(chromium, tmp_path):
    n = 64
    widget = AttentionHeatmap(
        [f"t{i}" for i in range(n)], np.random.default_rng(n).normal(size=(n, 4))
    )
    with opened(chromium, tmp_path, widget, height=400) as (page, root):
        tab_to(page, ".attn-grid")
        for move in ["PageDown"] * 6 + ["End"]:
            page.keyboard.press(move)
        assert root.locator(".attn-readout").text_content().startswith("t60 attends to t63: ")
        mark = root.locator(".attn-cursor").bounding_box()
        assert page.evaluate("scrollY") > 0 and 0 <= mark["y"] <= 400 - mark["height"]
        assert cursor_cell(root) == (60, 63)


def test_readout_follows_a_redraw(chromium, tmp_path):
    with opened(chromium, tmp_path, AttentionHeatmap(TOKENS, X)) as (_, root):
        root.locator('.attn-cell[data-row="2"][data-col="1"]').hover()
        readout = root.locator(".attn-readout")
        before = readout.text_content()
        assert before == f"c attends to b: {drawn_weights(root)[2, 1]:.6f}"
        move_slider(root.locator("input.attn-temperature"), 0.5)
        assert (
            readout.text_content() == f"c attends to b: {drawn_weights(root)[2, 1]:.6f}" != before
        )


@pytest.mark.parametrize("dark", [None, *DARK_THEMES])
def test_every_number_contrasts_with_its_cell(chromium, tmp_path, dark):
    n = 16  # the most keys whose cells show numbers
    rng = np.random.default_rng(3)
    widget = AttentionHeatmap(
        [f"t{i}" for i in range(n)], rng.normal(size=(n, 4)), causal=True, padding=[False] * n
    )
    numbers, text_colours = [], set()
    with opened(chromium, tmp_path, widget, dark=dark) as (page, root):
        hatch = hatching(page, root, 0, n - 1)  # a cell the causal mask hides
        assert contrast(*hatch) > 1.1, "the hatching shows"
        for value in np.linspace(-1, 1, 9):  # τ from 0.1 to 10: weights all over the scale
            move_slider(root.locator("input.attn-temperature"), value)
            cells = root.evaluate("""r => {
                const canvas = r.querySelector('canvas.attn-canvas');
                const { data } = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height);
                return [...r.querySelectorAll('.attn-cell')].map((cell) => {
                    const at = 4 * (Number(cell.dataset.row) * canvas.width + Number(cell.dataset.col));
                    return [cell.textContent, getComputedStyle(cell).color, Array.from(data.slice(at, at + 4))];
                });
            }""")
            assert len(cells) == n * n
            for text, colour, (r, g, b, alpha) in cells:
                if alpha == 0:  # masked: the dash is on the hatching
                    assert min(contrast(css_rgb(colour), h) for h in hatch) >= 4.5, colour
                else:
                    assert contrast(css_rgb(colour), (r, g, b)) >= 4.5, (text, colour, (r, g, b))
                    numbers.append(float(text))
                    text_colours.add(css_rgb(colour))
    assert text_colours == {(0, 0, 0), (255, 255, 255)}
    assert sum(0.3 < w < 0.7 for w in numbers) > 20, "mid-viridis cells, where white text fails"


# The page's text and background colours each theme gives the widget: the light ones are the
# widget's own, on a page without a theme.
PAGE_COLOURS = {
    None: ("rgb(34, 40, 50)", "rgb(255, 255, 255)"),
    "book": ("rgb(206, 214, 221)", "rgb(20, 24, 30)"),
    "jupyterlab": ("rgb(255, 255, 255)", "rgb(17, 17, 17)"),
}


@pytest.mark.parametrize("dark", PAGE_COLOURS)
def test_widget_takes_the_pages_colours(chromium, tmp_path, dark):
    widget = AttentionHeatmap(
        TOKENS, X, controls=["temperature", "padding"], padding=[False, False, True, False, False]
    )
    with opened(chromium, tmp_path, widget, dark=dark) as (_, root):
        root.locator('.attn-cell[data-row="1"][data-col="1"]').hover()  # a readout to read
        text, background = PAGE_COLOURS[dark]
        assert root.evaluate("r => getComputedStyle(r).color") == text
        assert root.evaluate("r => getComputedStyle(r).backgroundColor") == background
        assert root.evaluate("r => getComputedStyle(r).colorScheme") == (
            "dark" if dark else "normal"
        )
        colours = root.evaluate("""r => [...r.querySelectorAll(
            '.attn-hint, .attn-legend > span, .attn-colorbar-tick, .attn-readout, .attn-corner,'
            + ' .attn-rowhead, .attn-colhead, .attn-colhead button, output')]
            .map((e) => [e.className || e.tagName, e.textContent, getComputedStyle(e).color])""")
        assert len(colours) == 1 + 2 + 5 + 1 + 1 + 5 + 5 + 5 + 1
        page_background = css_rgb(background)
        for name, content, colour in colours:
            assert contrast(css_rgb(colour, page_background), page_background) >= 4.5, (
                name,
                content,
                colour,
            )
        borders = root.evaluate("r => getComputedStyle(r.querySelector('.attn-cell')).borderColor")
        assert borders == background  # the lines between the cells are the page's


def test_colour_bar_shows_the_scale_with_its_labels(chromium, tmp_path):
    with opened(chromium, tmp_path, AttentionHeatmap(TOKENS, X)) as (page, root):
        bar = page.get_by_role("img", name=re.compile(r"^colour scale: weight 0 .*, 1 yellow"))
        assert bar.count() == 1
        assert root.locator(".attn-legend").inner_text().split() == [
            "weight",
            *["0", "0.25", "0.5", "0.75", "1"],
            "masked",
        ]
        ramp = bar.locator(".attn-colorbar-ramp").bounding_box()
        for tick in bar.locator(".attn-colorbar-tick").all():
            box, value = tick.bounding_box(), float(tick.text_content())
            centre = box["x"] + box["width"] / 2
            assert abs(centre - (ramp["x"] + value * ramp["width"])) < 1.5, value
        colours = pixels(page, ramp).reshape(-1, int(ramp["width"]) - 4, 3)[0].astype(int)
        for at, viridis in [(0, (68, 1, 84)), (0.5, (33, 145, 140)), (1, (253, 231, 37))]:
            drawn = colours[round(at * (len(colours) - 1))]
            assert np.max(np.abs(drawn - viridis)) <= 12, (at, drawn)


@pytest.fixture(scope="module")
def axe_core():
    if not AXE.exists():
        if os.environ.get("CI") == "true":
            pytest.fail("axe-core is missing on CI: `npm ci` installs it from package-lock.json")
        pytest.skip(f"axe-core not found at {AXE}: `npm ci` installs it")
    return AXE


@pytest.mark.parametrize("dark", [None, "book"])
@pytest.mark.parametrize("n", [5, 40])  # numbers in the cells; colour only
def test_axe_finds_nothing_serious_in_a_widget_in_use(chromium, tmp_path, axe_core, dark, n):
    rng = np.random.default_rng(n)
    widget = AttentionHeatmap([f"t{i}" for i in range(n)], rng.normal(size=(n, 4)), **EVERY_CONTROL)
    with opened(chromium, tmp_path, widget, dark=dark) as (page, root):
        root.locator(".attn-colhead button").nth(2).click()
        move_slider(root.locator("input.attn-temperature"), -0.5)
        root.locator("input.attn-causal").check()
        tab_to(page, ".attn-grid")
        page.keyboard.press("ArrowDown")
        assert serious_violations(page, axe_core) == []
