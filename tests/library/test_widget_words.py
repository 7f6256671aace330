"""The widgets' words, run in Node: each front end (heatmap.js, kv_calculator.js) has one table,
WORDS, whose English and Japanese have the same entries and fill in the same values; its
Japanese is Japanese, and the calculator says the same numbers in both. (The words on a page,
in Chromium: tests/book/test_widget_words.py.)"""

import re

import pytest

from attnkit.kv_calculator import INPUTS
from tests.support.node import module_runner
from tests.support.widget_words import (
    FRONT_ENDS,
    JAPANESE,
    KEPT_IN_JAPANESE,
    ascii_words,
    english_words,
    flat,
    placeholders,
    read_words,
)


@pytest.fixture(scope="module", params=list(FRONT_ENDS))
def words(request, tmp_path_factory):
    return read_words(FRONT_ENDS[request.param], tmp_path_factory.mktemp(request.param))


def test_every_english_word_has_its_japanese_and_every_japanese_its_english(words):
    assert set(words) == {"en", "ja"}
    en, ja = flat(words["en"]), flat(words["ja"])
    assert set(en) == set(ja), {"no ja": set(en) - set(ja), "no en": set(ja) - set(en)}
    for key, text in en.items():
        assert isinstance(text, str) and isinstance(ja[key], str), key
        assert placeholders(text) == placeholders(ja[key]), (key, text, ja[key])


def test_the_japanese_words_are_japanese(words):
    for key, text in flat(words["ja"]).items():
        assert ascii_words(text) <= KEPT_IN_JAPANESE, (key, text)
        if ascii_words(flat(words["en"])[key]):  # math alone, such as "d_k", stays as it is
            assert JAPANESE.search(text), (key, text)
    assert english_words(words), "the English table has English words"


def test_the_calculator_s_english_is_python_s(tmp_path):
    run = module_runner(FRONT_ENDS["kv_calculator"], tmp_path)
    labels = run("(kv) => kv.WORDS.en.inputs")
    assert labels == INPUTS and list(labels) == list(INPUTS)
    assert run("(kv) => kv.INPUTS") == [list(pair) for pair in INPUTS.items()]


CASES = [  # GPT-2 small as chapter 7 opens it; and too little memory; and one sequence
    dict(
        layers=12,
        query_heads=12,
        kv_heads=12,
        head_size=64,
        length=1024,
        batch=8,
        bytes_per_number=2,
        parameters=124_439_808,
        memory_gib=80,
    ),
    dict(
        layers=32,
        query_heads=32,
        kv_heads=8,
        head_size=128,
        length=131_072,
        batch=1,
        bytes_per_number=2,
        parameters=8_030_261_248,
        memory_gib=8,
    ),
    dict(
        layers=2,
        query_heads=4,
        kv_heads=2,
        head_size=4,
        length=3,
        batch=1,
        bytes_per_number=1,
        parameters=1_000,
        memory_gib=1,
    ),
]


def test_the_calculator_says_the_same_numbers_in_japanese(tmp_path):
    run = module_runner(FRONT_ENDS["kv_calculator"], tmp_path)
    said = run(
        "(kv, cases) => cases.map((c) => { const b = kv.decodingBudget(c);"
        " return [kv.describe(b), kv.describe(b, kv.WORDS.ja), kv.formatBytes(500n, kv.WORDS.ja),"
        " kv.checkInputs({ ...c, kv_heads: 5 }, kv.WORDS.ja)]; })",
        CASES,
    )
    numbers = re.compile(r"\d[\d,.]*")
    for english, japanese, small, wrong in said:
        assert english.keys() == japanese.keys()
        for name, text in japanese.items():
            assert numbers.findall(text) == numbers.findall(english[name]), (name, text)
            assert JAPANESE.search(text) or text.endswith(" %"), (name, text)
        assert small == "500 バイト"
        assert wrong.startswith("クエリヘッド") and "5個" in wrong
    assert said[0][1]["cache"] == "288.00 MiB（301,989,888 バイト）"
    assert said[0][1]["largest_batch"] == "2,268 系列"
    assert said[1][1]["largest_batch"].startswith("なし")
