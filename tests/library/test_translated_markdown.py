"""A chapter's Markdown in another language, block by block from a catalogue
(``booktools/translated_markdown.py``: the Japanese edition's notebooks)."""

import pytest
from myst_parser.config.main import MdParserConfig

from booktools import translated_markdown as MARKDOWN
from tests.support.book import ROOT, chapter_files

MD = MARKDOWN.parser(MdParserConfig(enable_extensions={"colon_fence", "dollarmath", "amsmath"}))
CATALOGUE = {
    "A paragraph over two lines, with $x$ and **bold**.": "二行の段落、$x$ と**太字**。",
    "The title": "題",
    "first item, whose text goes on": "最初の項目",
    "second item": "二番目の項目",
    "A quotation": "引用",
    "a cell": "セル",
    "(Properties of softmax)": "（ソフトマックスの性質）",
    "Proof. Every term is positive.": "証明。どの項も正です。",
    "A picture's text": "図の説明",
    "The caption.": "説明文。",
    "Inside the exercise.": "練習の中。",
}


def translated(text):
    return MARKDOWN.translate_markdown(text, MARKDOWN.proof_aware(CATALOGUE.get), MD)


def test_each_block_is_replaced_by_its_translation_keeping_its_marks():
    text = (
        "# The title\n\nA paragraph over two lines,\nwith $x$ and **bold**.\n\n"
        "1. first item, whose text\n   goes on\n2. second item\n\n> A quotation\n\n"
        "| a cell | $y$ |\n|---|---|\n| a cell | $z$ |\n"
    )
    assert translated(text) == (
        "# 題\n\n二行の段落、$x$ と**太字**。\n\n"
        "1. 最初の項目\n2. 二番目の項目\n\n> 引用\n\n"
        "| セル | $y$ |\n|---|---|\n| セル | $z$ |\n"
    )


def test_directives_keep_labels_options_and_code_and_translate_titles_bodies_and_alt_texts():
    text = (
        "```{prf:proposition} Properties of softmax\n:label: prop-softmax\n\n$$a = b$$\n```\n\n"
        "```{prf:proof}\nEvery term is positive.\n```\n\n"
        "```{figure} ../figures/a.svg\n:name: fig-a\n:alt: A picture's text\n\nThe caption.\n```\n\n"
        ":::{exercise} Not in the catalogue\n:label: ex-a\n\nInside the exercise.\n:::\n\n"
        "```python\nThe title\n```\n"
    )
    assert translated(text) == (
        "```{prf:proposition} ソフトマックスの性質\n:label: prop-softmax\n\n$$a = b$$\n```\n\n"
        "```{prf:proof}\nどの項も正です。\n```\n\n"
        "```{figure} ../figures/a.svg\n:name: fig-a\n:alt: 図の説明\n\n説明文。\n```\n\n"
        ":::{exercise} Not in the catalogue\n:label: ex-a\n\n練習の中。\n:::\n\n"
        "```python\nThe title\n```\n"
    )


@pytest.mark.parametrize("name", chapter_files())
def test_a_chapter_with_no_translation_comes_back_as_it_was(name):
    source = (ROOT / f"{name}.md").read_text(encoding="utf-8")
    assert MARKDOWN.translate_markdown(source, lambda message: None, MD) == source
