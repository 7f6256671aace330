"""The scanner of English prose on the Japanese edition's pages (tests/support/english_prose.py),
which tests/book/test_japanese_edition.py runs on every built page: it finds what the review of
the edition found left in English, and leaves code, formulas, output, examples, glosses and
proper names alone."""

import pytest

from tests.support.english_prose import bibliography_names, english_prose

NAMES = bibliography_names("ja")


def article(body: str) -> str:
    return f'<main><article class="bd-article">{body}</article></main>'


@pytest.mark.parametrize(
    "left_in_english",
    [
        # the bibliography's notes, as the Japanese edition printed them
        "<p>佐藤拓真. 数式を追う!Transformerにおけるattention. 2023. "
        "Article 000 of the book's sources; in Japanese.</p>",
        "<p>Web article, n.d. Article 004 of the book's sources; in Japanese.</p>",
        # the glossary's cells
        "<table><tr><th>日本語</th><th>英語</th></tr>"
        "<tr><td>一般的な注意機構 (book: 交差注意)</td><td>attention</td></tr></table>",
        "<p>記事000の節に沿って、the query is compared with every key を確かめます。</p>",
    ],
)
def test_what_was_left_in_english_is_found(left_in_english):
    assert english_prose(article(left_in_english), NAMES)


def test_code_formulas_output_examples_glosses_and_names_are_not_prose():
    page = article(
        "<p>**注意機構**（attention mechanism）と<strong>マルチヘッド注意</strong>"
        "（multi-head attention。記事001の表記ではマルチヘッド・アテンション）。</p>"
        "<p><code>torch.nn.functional.scaled_dot_product_attention</code> を使います。</p>"
        '<div class="cell_output"><pre>matches the loops and the helper</pre></div>'
        "<blockquote><p>I love you → 私は あなたを 愛して いる</p></blockquote>"
        "<p>文 <em>cats chase mice and mice fear cats</em> を見ます。「dog bites man」。</p>"
        "<p>Ashish Vaswani, Noam Shazeer, and others. Attention Is All You Need.</p>"
        "<table><tr><th>日本語</th><th>英語</th></tr>"
        "<tr><td>注目度</td><td>attention weight of a query</td></tr></table>"
    )
    assert english_prose(page, NAMES) == []


def test_a_trace_drawn_in_english_is_found_and_in_japanese_is_not():
    """A trace's drawing is output, but written for the reader: the Japanese edition's pages
    show it in Japanese (attnkit.trace, _ext/translated_outputs.py)."""
    import attnkit
    from attnkit.trace.draw import html
    from tests.support.answers.multi_head_attention import split_mixing_tokens
    from tests.support.english_prose import english_in_traces

    wrong = attnkit.trace(split_mixing_tokens, "B T d_model", 3, expect="B H T d_k")
    in_a_cell = html(wrong, "en").replace("multi_head_attention.py:", "line ")
    assert len(english_in_traces(article(in_a_cell))) >= 4  # headings, summary, advice, line
    japanese = html(wrong, "ja").replace("multi_head_attention.py:59", "59 行目")
    assert english_in_traces(article(japanese)) == []
