"""Chapter 9's training scrubber on the built page, in headless Chromium with no network.

The slider, moved by the keyboard and by setting it, shows at every recorded step the weights
that the chapter's training recorded (the whole percentages the page carries: their packing is
tested in tests/library/test_induction_heads.py) and marks that step on the loss curves; it
opens at the phase change of those curves; its colours contrast in light and dark mode, it fits
a phone's width, and axe-core finds nothing serious. How long a redraw takes is measured by
benchmarks/scrubber_redraw.py, not here: a test shares the CPU with the others.
"""

import numpy as np
import pytest

from attnkit.induction import load_record, phase_change_step
from tests.support.book import ROOT, page, widget_models
from tests.support.browser import opened_widget, serious_violations
from tests.support.colours import contrast, css_rgb, luminance

pytestmark = pytest.mark.build

PAGE = "chapters/induction-heads"
SCRUBBER = "attnkit.scrubber.TrainingScrubber"
AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"


@pytest.fixture(scope="module")
def recorded(built_book):
    """What the page carries from the run its chapter trained: the steps, the loss curves and
    every head's weights at every step. The run is the book's recorded run (the same steps and
    the same losses before training), and the scrubber opens at its phase change."""
    models = widget_models(page(built_book[0], PAGE)).values()
    (state,) = [m["state"] for m in models if m["state"].get("_anywidget_id") == SCRUBBER]
    shipped = load_record()
    assert state["steps"] == shipped["steps"]
    assert abs(state["repeat"][0] - shipped["repeat"][0]) < 1e-3
    layers, heads, n = state["layers"], state["heads"], len(state["tokens"])
    rows, cols = np.tril_indices(n)
    attention = np.zeros((len(state["steps"]), layers, heads, n, n))
    attention[..., rows, cols] = np.reshape(state["weights"], (-1, layers, heads, len(rows))) / 100
    return {
        "steps": state["steps"],
        "attention": attention,
        "opens_at": state["step"],
        "phase_change": phase_change_step(state, shipped["model"]["vocab"]),
    }


def opened(site, mode="light", width=1280):
    return opened_widget(site, PAGE, "[data-scrubber]", mode, width)


def shown(root) -> dict:
    return root.evaluate(
        """r => ({index: r.scrubber.shown.index, step: r.scrubber.shown.step,
                  weights: r.scrubber.shown.weights,
                  slider: r.querySelector('input.scrub-slider').value,
                  valuetext: r.querySelector('input.scrub-slider').getAttribute('aria-valuetext'),
                  marker: r.querySelector('.scrub-marker').getAttribute('x1'),
                  status: r.querySelector('.scrub-status').textContent})"""
    )


def assert_recorded(now, recorded):
    """The weights shown at the step shown are the recorded ones, to the percent."""
    index = now["index"]
    assert now["step"] == recorded["steps"][index] and now["slider"] == str(index)
    assert np.allclose(np.array(now["weights"]), recorded["attention"][index], atol=1e-9)
    assert now["valuetext"] == f"step {now['step']}"
    assert now["status"].startswith(f"Step {now['step']}: loss on repeats ")


def test_the_scrubber_opens_at_the_phase_change_and_shows_the_recorded_weights(site, recorded):
    with opened(site) as (_, root):
        now = shown(root)
        assert now["index"] == recorded["opens_at"]
        assert now["step"] == recorded["phase_change"]
        assert_recorded(now, recorded)
        assert root.locator("canvas.scrub-head").count() == 8
        labels = root.locator("canvas.scrub-head").evaluate_all(
            "cs => cs.map((c) => c.getAttribute('aria-label'))"
        )
        assert labels[0].startswith(f"Layer 1, head 1 at step {now['step']}:")


def test_the_keyboard_and_the_slider_move_through_training(site, recorded):
    with opened(site) as (page, root):
        slider = root.locator("input.scrub-slider")
        slider.focus()
        page.keyboard.press("Home")
        first = shown(root)
        assert first["index"] == 0
        assert_recorded(first, recorded)
        page.keyboard.press("ArrowRight")
        assert_recorded(shown(root), recorded)
        assert shown(root)["index"] == 1
        assert float(shown(root)["marker"]) > float(first["marker"])
        for index in (10, 20, 21, 25, 40):
            slider.evaluate(
                "(s, i) => { s.value = String(i); s.dispatchEvent(new Event('input')); }", index
            )
            now = shown(root)
            assert now["index"] == index
            assert_recorded(now, recorded)
        page.keyboard.press("End")
        assert shown(root)["index"] == len(recorded["steps"]) - 1
        style, width = page.evaluate("""() => {
            const s = getComputedStyle(document.activeElement);
            return [s.outlineStyle, parseFloat(s.outlineWidth)];
        }""")
        assert style == "solid" and width >= 2


def test_the_heads_are_drawn_in_the_page_s_colours(site, recorded):
    """Each canvas pixel is a weight, the background mixed towards the theme's colour by it: a
    weight of 0 is the background, a weight of 1 the colour of the curve of repeats."""
    for mode in ("light", "dark"):
        with opened(site, mode) as (_, root):
            now = shown(root)
            pixels = root.locator("canvas.scrub-head").first.evaluate(
                """c => { const n = c.width, x = c.getContext('2d');
                    const at = (i, j) => Array.from(x.getImageData(i, j, 1, 1).data.slice(0, 3));
                    return [at(0, 0), at(n - 1, 0)]; }"""
            )
            background = css_rgb(root.evaluate("r => getComputedStyle(r).backgroundColor"))
            corner, above = (np.array(p, dtype=float) for p in pixels)
            assert np.allclose(above, background, atol=1.5)  # above the diagonal: weight 0
            assert now["weights"][0][0][0][0] == 1.0  # query 0 sees only itself: the theme's
            hot = css_rgb(root.evaluate("r => getComputedStyle(r.querySelector('.scrub-repeat'))"
                                        ".stroke"))  # fmt: skip
            assert np.allclose(corner, hot, atol=1.5)


@pytest.fixture(scope="module")
def axe_core():
    if not AXE.exists():
        pytest.fail(f"axe-core not found at {AXE}: `npm ci` installs it (make book does)")
    return AXE


@pytest.mark.parametrize("width", [390, 1280])
@pytest.mark.parametrize("mode", ["light", "dark"])
def test_text_contrasts_it_fits_and_axe_finds_nothing(site, axe_core, mode, width):
    with opened(site, mode, width) as (page, root):
        background = css_rgb(root.evaluate("r => getComputedStyle(r).backgroundColor"))
        if mode == "dark":
            assert luminance(background) < 0.05, "the scrubber takes the dark page's colours"
        texts = root.evaluate("""r => [...r.querySelectorAll(`.scrub-control > span,
            .scrub-value, .scrub-sequence, figcaption, .scrub-status, .scrub-legend > span`)]
            .map((e) => [e.className || e.tagName, getComputedStyle(e).color])""")
        assert len(texts) == 2 + 1 + 8 + 1 + 3
        for name, colour in texts:
            assert contrast(css_rgb(colour, background), background) >= 4.5, (name, colour)
        assert root.evaluate("r => r.scrollWidth <= r.clientWidth")
        assert page.evaluate("document.documentElement.scrollWidth") == width
        assert serious_violations(page, axe_core, "[data-scrubber]") == []
