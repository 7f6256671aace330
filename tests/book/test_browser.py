"""The built book in headless Chromium, with no network but 127.0.0.1.

Every page loads without errors or outside requests, math is typeset, every heatmap
draws, and every control of every heatmap changes the weights drawn to exactly what
the NumPy helper computes for the same settings.
"""

import json
import re

import numpy as np
import pytest

from attnkit.heatmap import AttentionHeatmap
from tests.support.book import chapter_files
from tests.support.browser import (
    PageLog,
    drawn_weights,
    move_slider,
    open_page,
    settle,
    wait_for_widgets,
)

pytestmark = pytest.mark.build

EVIL = "<img src=x onerror=alert(1)>"
TRAITS = sorted(AttentionHeatmap.class_own_traits(sync=True))


def heatmaps(page):
    widgets = page.locator("[data-attn-widget]")
    wait_for_widgets(page)
    return [widgets.nth(i) for i in range(widgets.count())]


def numpy_weights(widget):
    """What attnkit's NumPy code computes for the widget's current settings."""
    s = widget.evaluate(
        f"root => Object.fromEntries({json.dumps(TRAITS)}"
        ".map(n => [n, root.attnWidget.model.get(n)]))"
    )
    cross = not s["self_attention"]
    twin = AttentionHeatmap(
        s["query_tokens"],
        s["query_vectors"],
        heads=s["heads"],
        key_tokens=s["key_tokens"] if cross else None,
        keys=s["key_vectors"] if cross else None,
    )
    for name in [
        "head",
        "temperature",
        "scale",
        "causal",
        "padding",
        "positional",
        "permutation",
        "d_k",
    ]:
        setattr(twin, name, s[name])
    return twin.expected_weights()


def assert_matches_numpy(widget):
    drawn = drawn_weights(widget)
    expected = numpy_weights(widget)
    assert drawn.shape == expected.shape
    assert np.max(np.abs(drawn - expected)) < 1e-6
    reported = widget.evaluate("root => root.attnWidget.model.get('weights')")
    assert np.allclose(reported, drawn, atol=1e-12), "the weights reported to Python differ"
    return drawn


def exercise_controls(widget):
    """Use every control the widget shows; after each, the drawing must match NumPy."""
    before = assert_matches_numpy(widget)
    changed = []
    temperature = widget.locator("input.attn-temperature")
    if temperature.count():
        move_slider(temperature, -0.5)  # τ = 10^-0.5
        changed.append("temperature")
        temperature.focus()
        widget.page.keyboard.press("ArrowRight")  # a reader's keyboard works too
    d_k = widget.locator("input.attn-d_k")
    if d_k.count():
        move_slider(d_k, int(d_k.get_attribute("max")))
        changed.append("d_k")
        assert_matches_numpy(widget)
    for name in ["scale", "causal", "positional"]:
        box = widget.locator(f"input.attn-{name}")
        if box.count():
            box.click()
            changed.append(name)
            assert_matches_numpy(widget)
    head = widget.locator("select.attn-head")
    if head.count():
        head.select_option(index=1)
        changed.append("head")
        assert_matches_numpy(widget)
    if widget.locator("button.attn-shuffle").count():
        widget.locator("button.attn-shuffle").click()
        changed.append("shuffle")
        assert_matches_numpy(widget)
    keys = widget.locator(".attn-colhead.attn-clickable")
    if keys.count():
        keys.nth(0).click()
        changed.append("padding")
        assert_matches_numpy(widget)
    components = widget.locator("input.attn-query-component")
    if components.count():
        move_slider(components.nth(components.count() - 1), 2.0)
        changed.append("query")
    after = assert_matches_numpy(widget)
    assert changed, "a heatmap with no control"
    assert after.shape != before.shape or not np.allclose(after, before), (
        f"{changed} changed nothing"
    )


@pytest.mark.parametrize("chapter", chapter_files())
def test_every_control_recomputes_the_weights_numpy_computes(site, chapter):
    page, log = open_page(site, chapter)
    for widget in heatmaps(page):
        widget.scroll_into_view_if_needed()
        exercise_controls(widget)
    assert log.problems() == {}
    page.close()


def test_chapter_1_heatmap_follows_its_sliders(site, tmp_path):
    page, log = open_page(site, "chapters/attention")
    (widget,) = heatmaps(page)
    A = drawn_weights(widget)
    assert A.shape == (4, 3) and np.argmax(A[1]) == 2  # あなたを attends to "you"
    move_slider(widget.locator("input.attn-query-component").nth(2), 2.0)  # 私は: q[2] = 2
    moved = assert_matches_numpy(widget)
    assert np.argmax(moved[0]) == 2 and np.allclose(moved[1:], A[1:])  # only row 0 moved
    move_slider(widget.locator("input.attn-temperature"), -1)  # τ = 0.1
    assert np.allclose(assert_matches_numpy(widget).max(axis=1), 1.0, atol=1e-3)
    widget.hover()
    widget.locator(".attn-cell").nth(0).hover()
    assert widget.locator(".attn-readout").text_content().startswith("私は attends to I: 0.")
    shot = tmp_path / "attention-heatmap-after-slider.png"
    widget.screenshot(path=str(shot))
    print(f"screenshot: {shot}")  # pytest shows it with a failure
    assert log.problems() == {}
    page.close()


def test_new_data_and_settings_from_python_redraw(site):
    """A kernel changes traits through the same model; the page redraws and reports."""
    page, log = open_page(site, "chapters/attention")
    (widget,) = heatmaps(page)
    widget.evaluate("""root => {
        const m = root.attnWidget.model;
        m.set('query_vectors', [[1, 0, 0], [0, 1, 0]]);
        m.set('query_tokens', ['x', 'y']);
        m.set('padding', [false, true, false]);
        m.set('scale', true);
    }""")
    weights = assert_matches_numpy(widget)
    assert weights.shape == (2, 3) and np.all(weights[:, 1] == 0)
    column = widget.locator('.attn-cell[data-col="1"]').all_text_contents()
    assert column == ["–", "–"]  # masked, not merely small
    widget.evaluate("root => root.attnWidget.model.set('padding', [true, true, true])")
    assert np.all(assert_matches_numpy(widget) == 0)  # all keys masked: zero rows
    assert log.problems() == {}
    page.close()


def test_search_snippets_show_formulas_as_text_not_tex(site):
    tabs, base = site
    page = tabs.new_page(viewport={"width": 1280, "height": 900})
    log = PageLog(page)
    page.goto(f"{base}search.html?q=temperature")
    snippets = page.locator("ul.search li p.context")
    snippets.first.wait_for()
    page.wait_for_load_state("networkidle")
    texts = snippets.all_text_contents()
    assert any("τ" in text for text in texts)  # the formulas are there, read from their MathML
    assert [text for text in texts if re.search(r"\\[(\[]|\\(tau|sqrt|mathbf)\b", text)] == []
    assert log.problems() == {}
    page.close()


def test_token_labels_are_text_never_html(site):
    page, log = open_page(site, "chapters/attention")
    (widget,) = heatmaps(page)
    widget.evaluate(f"""root => {{
        const m = root.attnWidget.model;
        m.set('key_tokens', [{json.dumps(EVIL)}, 'b', 'c']);
        m.set('query_tokens', [{json.dumps(EVIL)}, 'q', 'r', 's']);
    }}""")
    labels = widget.locator(".attn-colhead, .attn-rowhead").all_text_contents()
    assert labels.count(EVIL) == 2
    assert widget.locator("select.attn-query-row option").all_text_contents()[0] == EVIL
    assert widget.locator("img").count() == 0
    settle(page)  # an image made from a label would fail to load, then run its onerror
    assert log.dialogs == [] and log.problems() == {}
    page.close()
