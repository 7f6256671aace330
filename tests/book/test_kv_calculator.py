"""Chapter 7's key-value cache calculator on the built page, in headless Chromium with no network.

Its inputs are typed, chosen from its menu and stepped with the keyboard, and every time the
numbers it shows (the exact integers and the text) must be what ``attnkit.kv_calculator``
computes for the inputs its fields hold: the formula of the chapter. A wrong input is said and
changes nothing; its colours contrast in light and dark mode; axe-core finds nothing serious.
(Its arithmetic in Node, against the same functions: tests/library/test_attention_at_scale.py.)
"""

import pytest

from attnkit.kv_calculator import INPUTS, PRESETS, decoding_budget, describe
from tests.support.book import ROOT
from tests.support.browser import opened_widget, serious_violations
from tests.support.colours import contrast, css_rgb, luminance

pytestmark = pytest.mark.build

PAGE = "chapters/attention-at-scale"  # the page of the book that shows the calculator
AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"
NAMES = list(INPUTS)


def opened(site, mode="light", width=1280):
    return opened_widget(site, PAGE, "[data-kv-calculator]", mode, width)


def shown(root) -> dict:
    """What the calculator shows: its fields' text, its model's inputs, its outputs' text and
    the exact numbers behind them, and its status line."""
    return root.evaluate(
        """(r, names) => ({
        fields: Object.fromEntries([...r.querySelectorAll('input.kv-input')]
            .map((i) => [i.dataset.name, i.value])),
        model: Object.fromEntries(names.map((n) => [n, r.kvCalculator.model.get(n)])),
        text: Object.fromEntries([...r.querySelectorAll('.kv-output')]
            .map((o) => [o.dataset.name, o.textContent])),
        budget: r.kvCalculator.shown.budget,
        status: r.querySelector('.kv-status').textContent,
        preset: r.querySelector('select.kv-preset').value,
    })""",
        NAMES,
    )


def assert_matches_python(root) -> dict:
    """The outputs are attnkit's for the inputs the fields hold; returns those inputs."""
    now = shown(root)
    inputs = {name: int(text) for name, text in now["fields"].items()}
    assert list(inputs) == NAMES and now["model"] == inputs
    expected = decoding_budget(**inputs)
    assert now["budget"] == {name: str(value) for name, value in expected.items()}
    assert now["text"] == describe(expected)
    assert now["status"].startswith("A decoding step reads ")
    return inputs


def field(root, name):
    return root.locator(f'input.kv-input[data-name="{name}"]')


def test_calculator_opens_with_the_chapter_s_numbers(site):
    with opened(site) as (_, root):
        inputs = assert_matches_python(root)
        assert inputs == PRESETS["GPT-2 small"] | dict(batch=8, bytes_per_number=2, memory_gib=80)
        now = shown(root)
        assert now["preset"] == "GPT-2 small"
        assert now["text"]["cache"] == "288.00 MiB (301,989,888 bytes)"  # exercise scale-ex-kv
        assert now["text"]["largest_batch"] == "2,268 sequences"
        labels = root.locator("label.kv-field > span").all_text_contents()
        assert labels == ["model", *INPUTS.values()]  # every field has its label


TYPED = [
    dict(batch=1, length=4096),
    dict(kv_heads=4, bytes_per_number=1, memory_gib=24),
    dict(parameters=1_000_000, length=10_000_000, batch=1000),  # far beyond 2**53 bytes
    dict(memory_gib=1),  # the weights alone do not fit
]
MODEL = {"layers", "query_heads", "kv_heads", "head_size", "parameters"}  # what a preset names


def test_typed_inputs_recompute_what_python_computes(site):
    with opened(site) as (_, root):
        start = shown(root)["fields"]
        for typed in TYPED:
            for name, value in typed.items():
                field(root, name).fill(str(value))
                inputs = assert_matches_python(root)
                assert inputs[name] == value
            # the menu names the model while its shape and parameters are a preset's, any length
            assert shown(root)["preset"] == ("" if MODEL & set(typed) else "GPT-2 small")
            for name, text in start.items():  # back to where it started
                field(root, name).fill(text)
            assert shown(root)["fields"] == start and shown(root)["preset"] == "GPT-2 small"


def test_presets_set_the_model_and_keep_the_rest(site):
    with opened(site) as (_, root):
        field(root, "batch").fill("3")
        root.locator("select.kv-preset").select_option("Llama 3.1 8B")
        inputs = assert_matches_python(root)
        assert inputs == PRESETS["Llama 3.1 8B"] | dict(batch=3, bytes_per_number=2, memory_gib=80)
        assert shown(root)["text"]["cache_per_sequence"] == "16.00 GiB (17,179,869,184 bytes)"
        field(root, "kv_heads").fill("32")  # multi-head attention: one sequence fits
        assert assert_matches_python(root)["kv_heads"] == 32
        assert shown(root)["text"]["largest_batch"] == "1 sequence"
        assert shown(root)["preset"] == ""
        root.locator("select.kv-preset").select_option("GPT-2 small")
        assert assert_matches_python(root)["layers"] == 12
        assert shown(root)["preset"] == "GPT-2 small"


def test_a_wrong_input_is_said_and_changes_nothing(site):
    with opened(site) as (_, root):
        before = shown(root)
        field(root, "kv_heads").fill("5")  # 12 query heads cannot share 5 key-value heads
        with pytest.raises(ValueError) as python_says:
            decoding_budget(**(before["model"] | dict(kv_heads=5)))
        now = shown(root)
        assert now["status"].startswith(str(python_says.value))
        assert "last valid inputs" in now["status"]
        assert now["model"] == before["model"] and now["text"] == before["text"]
        assert "kv-stale" in root.get_attribute("class")
        for typed in ["0", "2.5", ""]:
            field(root, "layers").fill(typed)
            assert field(root, "layers").get_attribute("aria-invalid") == "true"
            assert shown(root)["model"] == before["model"]
        assert shown(root)["status"].startswith("layers must be a positive whole number")
        field(root, "layers").fill("24")
        field(root, "kv_heads").fill("6")
        inputs = assert_matches_python(root)
        assert (inputs["layers"], inputs["kv_heads"]) == (24, 6)
        assert field(root, "layers").get_attribute("aria-invalid") is None
        assert "kv-stale" not in root.get_attribute("class")


# --- colours and the keyboard ---------------------------------------------------------------


def test_keyboard_alone_reaches_every_field_and_steps_it(site):
    with opened(site) as (page, root):
        root.locator("select.kv-preset").focus()
        reached = [page.evaluate("document.activeElement.className")]
        for _ in NAMES:
            page.keyboard.press("Tab")
            reached.append(page.evaluate("document.activeElement.dataset.name"))
        assert reached == ["kv-preset", *NAMES], "each field once, in the order shown"
        field(root, "batch").focus()
        page.keyboard.press("ArrowUp")  # a number field steps by 1
        page.keyboard.press("ArrowUp")
        assert assert_matches_python(root)["batch"] == 10
        page.keyboard.press("Shift+Tab")
        page.keyboard.press("ArrowDown")
        assert assert_matches_python(root)["length"] == 1023
        style, width, colour, background = page.evaluate("""() => {
            const s = getComputedStyle(document.activeElement);
            const b = getComputedStyle(document.querySelector('.kv-widget')).backgroundColor;
            return [s.outlineStyle, parseFloat(s.outlineWidth), s.outlineColor, b];
        }""")
        assert style == "solid" and width >= 2
        assert contrast(css_rgb(colour, css_rgb(background)), css_rgb(background)) >= 3


@pytest.fixture(scope="module")
def axe_core():
    if not AXE.exists():
        pytest.fail(f"axe-core not found at {AXE}: `npm ci` installs it (make book does)")
    return AXE


@pytest.mark.parametrize("mode", ["light", "dark"])
def test_text_and_fields_contrast_with_the_page_and_axe_finds_nothing(site, axe_core, mode):
    with opened(site, mode) as (page, root):
        root.locator("select.kv-preset").select_option("Llama 3.1 8B")
        field(root, "kv_heads").fill("5")  # a field marked wrong, the status line saying why
        background = css_rgb(root.evaluate("r => getComputedStyle(r).backgroundColor"))
        if mode == "dark":
            assert luminance(background) < 0.05, "the calculator takes the dark page's colours"
        texts = root.evaluate("""r => [...r.querySelectorAll(
            'label > span, input, select, .kv-hint, .kv-status, caption, th, td, .kv-legend > span')]
            .map((e) => [e.tagName + '.' + e.className, getComputedStyle(e).color,
                         getComputedStyle(e).backgroundColor, getComputedStyle(e).borderTopColor])""")
        assert len(texts) == (1 + len(NAMES)) * 2 + 1 + 1 + 1 + 2 * 8 + 2
        for name, colour, own_background, border in texts:
            under = css_rgb(own_background, background)
            assert contrast(css_rgb(colour, under), under) >= 4.5, (name, colour, own_background)
            if name.startswith(("INPUT", "SELECT")):  # the field's edge shows (WCAG 1.4.11)
                assert contrast(css_rgb(border, background), background) >= 3, (name, border)
        assert serious_violations(page, axe_core, "[data-kv-calculator]") == []


def test_calculator_fits_a_phone(site):
    with opened(site, "dark", width=375) as (page, root):
        box = root.bounding_box()
        assert box["width"] <= 375
        assert root.evaluate("r => r.scrollWidth <= r.clientWidth")
        assert page.evaluate("document.documentElement.scrollWidth") == 375
        field(root, "length").fill("131072")
        assert_matches_python(root)
