"""The heatmap and the cache calculator in Chromium speak the language of the page they are on:
Japanese on the Japanese edition's pages (<html lang="ja">) and inside any element whose lang is
"ja", English everywhere else; and they work the same in both. Each page is the widgets alone,
drawn by the book's widget host (tests/support/heatmap_page.py): no build. (Their tables of words
in Node: tests/library/test_widget_words.py.)"""

import contextlib
import json
import re

import numpy as np
import pytest

from attnkit.heatmap import CONTROLS, AttentionHeatmap
from attnkit.kv_calculator import INPUTS, KVCacheCalculator, decoding_budget, describe
from tests.support.browser import (
    PageLog,
    drawn_weights,
    move_slider,
    serve,
    wait_for_widgets,
)
from tests.support.heatmap_page import write_widgets
from tests.support.widget_words import (
    FRONT_ENDS,
    JAPANESE,
    ascii_words,
    english_words,
    fill,
    read_words,
)

RNG = np.random.default_rng(5)
X = RNG.normal(size=(5, 4))
W_Q, W_K = RNG.normal(size=(4, 3)), RNG.normal(size=(4, 3))
# Japanese tokens, so that any English on the page is the widget's; "{query}" is shown as it is
TOKENS = ["私", "は", "{query}", "猫", "好き"]
EVERY_CONTROL = dict(heads=[(W_Q, W_K), (W_K, W_Q)], controls=list(CONTROLS), d_k_choices=[1, 3])
SYNCED = sorted(AttentionHeatmap.class_own_traits(sync=True))


@pytest.fixture(scope="module")
def words(tmp_path_factory):
    """Each front end's WORDS, by widget: "heatmap", "kv_calculator"."""
    folder = tmp_path_factory.mktemp("words")
    return {name: read_words(source, folder) for name, source in FRONT_ENDS.items()}


@contextlib.contextmanager
def opened(chromium, folder, views, lang):
    """A page in the language ``lang`` with ``views`` (see write_widgets), once every widget is
    drawn; the page must have done nothing a reader would not want."""
    write_widgets(folder, views, lang)
    with serve(folder) as base:
        page = chromium.new_page(viewport={"width": 1280, "height": 1400})
        log = PageLog(page)
        page.goto(base + "index.html")
        wait_for_widgets(page)
        yield page
        assert log.problems() == {}
        page.close()


# Everything a widget says, seen or heard: its text (hidden text and every menu option
# included) and the attributes that name or describe its parts.
SAID = """r => [r.textContent, ...[r, ...r.querySelectorAll('*')].flatMap((e) =>
    ['aria-label', 'aria-valuetext', 'title', 'placeholder', 'alt']
        .map((name) => e.getAttribute(name)).filter(Boolean))].join('\\n')"""


def english_said(root, words) -> set[str]:
    """The words of the widget's English table that it says."""
    return ascii_words(root.evaluate(SAID)) & english_words(words)


def numpy_twin(widget, root):
    """``widget`` with the traits the page's model has now: its NumPy weights."""
    state = root.evaluate(
        f"r => Object.fromEntries({json.dumps(SYNCED)}.map(n => [n, r.attnWidget.model.get(n)]))"
    )
    for name, value in state.items():
        setattr(widget, name, value)
    return widget.expected_weights()


def test_a_heatmap_on_a_japanese_page_speaks_japanese_and_works(chromium, tmp_path, words):
    ja = words["heatmap"]["ja"]
    widget = AttentionHeatmap(TOKENS, X, **EVERY_CONTROL)
    with opened(chromium, tmp_path, [widget], "ja") as page:
        root = page.locator("[data-attn-widget]")

        def label(control):
            return root.locator(f"label:has({control})").text_content().strip()

        assert label("input.attn-temperature").startswith(ja["temperature"] + " ")
        assert label("input.attn-d_k").startswith("d_k ")
        for name in ["scale", "causal", "positional"]:
            assert label(f"input.attn-{name}") == ja[name]
        assert label("select.attn-head").startswith(ja["head"])
        assert root.locator("select.attn-head option").all_text_contents() == [
            fill(ja["headNumber"], n=1),
            fill(ja["headNumber"], n=2),
        ]
        assert root.locator("button.attn-shuffle").text_content() == ja["shuffle"]
        assert root.locator("button.attn-reset").text_content() == ja["restore"]
        assert root.locator(".attn-hint").text_content() == ja["paddingHint"]
        assert label("select.attn-query-row").startswith(ja["query"])
        assert root.locator(".attn-corner").text_content() == ja["corner"]
        assert root.locator(".attn-legend").inner_text().split() == [
            ja["weight"],
            *["0", "0.25", "0.5", "0.75", "1"],
            ja["masked"],
        ]
        assert page.get_by_role("img", name=ja["colourScale"]).count() == 1
        assert root.locator(".attn-readout").text_content() == ja["readoutHint"]
        assert root.locator(".attn-hint").evaluate("e => getComputedStyle(e).fontStyle") == "normal"
        buttons = root.locator(".attn-colhead button")
        assert [b.get_attribute("aria-label") for b in buttons.all()] == [
            fill(ja["maskKey"], key=token) for token in TOKENS
        ]
        grid = root.locator(".attn-grid")
        name, (before, after) = grid.get_attribute("aria-label"), ja["grid"].split("{settings}")
        assert name.startswith(fill(before, rows=5, columns=5)) and name.endswith(after), name
        assert fill(ja["gridTemperature"], t="1.00") + ja["gridSeparator"] in name, name
        assert fill(ja["headNumber"], n=1) in name, name
        assert english_said(root, words["heatmap"]) == set()

        # it works: the slider moves the weights, a key's button masks it, the readout reads
        before = drawn_weights(root)
        move_slider(root.locator("input.attn-temperature"), -0.5)
        after = drawn_weights(root)
        assert np.max(np.abs(after - before)) > 0.01
        assert np.max(np.abs(after - numpy_twin(widget, root))) < 1e-12
        page.get_by_role("button", name=fill(ja["maskKey"], key="{query}")).click()
        root.locator("input.attn-causal").check()
        drawn = drawn_weights(root)
        assert np.all(drawn[:, 2] == 0) and np.all(np.triu(drawn, 1) == 0)
        assert np.max(np.abs(drawn - numpy_twin(widget, root))) < 1e-12
        name = grid.get_attribute("aria-label")
        for said in [fill(ja["gridTemperature"], t="0.32"), ja["gridCausal"], ja["gridKeyMasked"]]:
            assert said.replace("{n}", "1") in name, name
        root.locator('.attn-cell[data-row="3"][data-col="1"]').hover()
        assert root.locator(".attn-readout").text_content() == fill(
            ja["readout"], query="猫", key="は", weight=f"{drawn[3, 1]:.6f}"
        )
        root.locator('.attn-cell[data-row="3"][data-col="2"]').hover()
        assert root.locator(".attn-readout").text_content() == fill(
            ja["readout"], query="猫", key="{query}", weight=ja["maskedWeight"]
        )
        root.locator("button.attn-shuffle").click()
        assert english_said(root, words["heatmap"]) == set()


def shown(root) -> dict:
    """What the calculator shows: its labels, its outputs' text and the exact numbers behind
    them, and its status line."""
    return root.evaluate("""r => ({
        labels: [...r.querySelectorAll('label.kv-field > span')].map((e) => e.textContent),
        rows: [...r.querySelectorAll('th')].map((e) => e.textContent),
        text: Object.fromEntries([...r.querySelectorAll('.kv-output')]
            .map((o) => [o.dataset.name, o.textContent])),
        budget: r.kvCalculator.shown.budget,
        status: r.querySelector('.kv-status').textContent,
    })""")


def typed(page, words, name):
    """The calculator's field of input ``name``, found by its label in ``words``."""
    return page.get_by_role("spinbutton", name=words["inputs"][name], exact=True)


def test_a_calculator_on_a_japanese_page_speaks_japanese_and_computes(chromium, tmp_path, words):
    ja = words["kv_calculator"]["ja"]
    calculator = KVCacheCalculator("GPT-2 small", batch=8)
    with opened(chromium, tmp_path, [calculator], "ja") as page:
        root = page.locator("[data-kv-calculator]")
        now = shown(root)
        assert now["labels"] == [ja["model"], *ja["inputs"].values()]
        assert now["rows"] == list(ja["outputs"].values())
        assert root.locator("caption").text_content() == ja["caption"]
        assert root.locator(".kv-hint").text_content() == ja["hint"]
        assert root.locator(".kv-legend").inner_text().split() == [
            ja["legendWeights"],
            ja["legendCache"],
        ]
        assert root.locator("select.kv-preset option").last.text_content() == ja["custom"]
        field = page.get_by_role("spinbutton", name=ja["inputs"]["batch"], exact=True)
        assert field.input_value() == "8"  # a field is named by its Japanese label
        budget = decoding_budget(**calculator.inputs())
        assert now["budget"] == {name: str(value) for name, value in budget.items()}
        assert now["text"]["cache"] == "288.00 MiB（301,989,888 バイト）"
        assert now["text"]["largest_batch"] == fill(ja["sequences"], n="2,268")
        step = now["text"]["step"].split("（")[0]
        assert now["status"] == fill(
            ja["summary"],
            step=step,
            share=now["text"]["cache_share"],
            fits=fill(
                ja["fitsAtMost"], length="1,024", memory=80, batch=fill(ja["sequences"], n="2,268")
            ),
        )
        assert english_said(root, words["kv_calculator"]) == set()

        field.fill("1")
        now = shown(root)
        budget = decoding_budget(**(calculator.inputs() | dict(batch=1)))
        assert now["budget"] == {name: str(value) for name, value in budget.items()}
        english = describe(budget)
        digits = re.compile(r"\d[\d,.]*")
        for name, text in now["text"].items():  # the same numbers as Python's English
            assert digits.findall(text) == digits.findall(english[name]), (name, text)

        typed(page, ja, "kv_heads").fill("5")
        heads = fill(ja["heads"], h=12, g=5)
        assert shown(root)["status"] == fill(ja["stale"], wrong=heads)
        assert english_said(root, words["kv_calculator"]) == set()
        typed(page, ja, "layers").fill("0")
        wrong = fill(ja["positive"], label=ja["inputs"]["layers"])
        assert shown(root)["status"] == fill(ja["stale"], wrong=wrong)
        typed(page, ja, "layers").fill("12")
        typed(page, ja, "kv_heads").fill("1")
        typed(page, ja, "parameters").fill("1000000000")  # 2 GB of weights: none fits in 1 GiB
        typed(page, ja, "memory_gib").fill("1")
        now = shown(root)
        assert now["text"]["largest_batch"] == ja["noneWeights"]
        assert now["status"].endswith(fill(ja["fitsNone"], memory=1) + "。")
        assert english_said(root, words["kv_calculator"]) == set()


def test_widgets_on_an_english_page_keep_their_english(chromium, tmp_path, words):
    en = words["heatmap"]["en"]
    views = [
        AttentionHeatmap(TOKENS, X, **EVERY_CONTROL),
        KVCacheCalculator("GPT-2 small", batch=8),
    ]
    with opened(chromium, tmp_path, views, "en") as page:
        heatmap, calculator = (
            page.locator("[data-attn-widget]"),
            page.locator("[data-kv-calculator]"),
        )
        label = heatmap.locator("label:has(input.attn-temperature)").text_content()
        assert label.startswith("temperature τ ")
        assert heatmap.locator("select.attn-head option").all_text_contents() == [
            "head 1",
            "head 2",
        ]
        assert heatmap.locator(".attn-readout").text_content() == en["readoutHint"]
        assert (
            heatmap.locator(".attn-colhead button").first.get_attribute("aria-label") == "mask 私"
        )
        assert (
            heatmap.locator(".attn-hint").evaluate("e => getComputedStyle(e).fontStyle") == "italic"
        )
        now = shown(calculator)
        assert now["labels"] == ["model", *INPUTS.values()]
        assert now["text"] == describe(decoding_budget(**views[1].inputs()))
        assert now["status"].startswith("A decoding step reads 525.")
        for root in (heatmap, calculator):
            said = root.evaluate(SAID)
            for token in TOKENS:
                said = said.replace(token, "")
            assert not JAPANESE.search(said), said


@pytest.mark.parametrize(
    "page_lang, view_lang, expected",
    [("en", "ja", "ja"), ("ja", "en-GB", "en"), ("en", "ja-JP", "ja"), ("ja", None, "ja")],
)
def test_widgets_speak_the_language_of_the_element_around_them(
    chromium, tmp_path, words, page_lang, view_lang, expected
):
    views = [(AttentionHeatmap(TOKENS, X), view_lang), (KVCacheCalculator(), view_lang)]
    with opened(chromium, tmp_path, views, page_lang) as page:
        heatmap, calculator = (
            page.locator("[data-attn-widget]"),
            page.locator("[data-kv-calculator]"),
        )
        corner = heatmap.locator(".attn-corner").text_content()
        assert corner == words["heatmap"][expected]["corner"]
        caption = calculator.locator("caption").text_content()
        assert caption == words["kv_calculator"][expected]["caption"]
