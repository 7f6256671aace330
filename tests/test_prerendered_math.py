"""Formulas typeset when the book is built (_ext/prerendered_math.py): MathJax's CommonHTML with
MathML for screen readers, in every page, and a build that stops on a formula it cannot read."""

import re

import pytest
from sphinx.errors import ExtensionError

from tests.support.book import chapter_files, load_extension, page, toc_files

prerendered_math = load_extension("prerendered_math")
FORMULA = re.compile(r'<(span|div) class="math notranslate nohighlight"[^>]*>(.*?)</\1>', re.S)


def test_a_formula_becomes_commonhtml_with_mathml_beside_it():
    (inline, display), css = prerendered_math.typeset(
        [(r"Q K^\top / \sqrt{d_k}", False), (r"\begin{align} a &= b \\ c &= d \end{align}", True)]
    )
    assert inline.startswith('<mjx-container class="MathJax" jax="CHTML"')
    assert "<mi>Q</mi>" in inline and "<msqrt>" in inline  # MathML, read by screen readers
    assert "tabindex" not in inline
    assert 'display="true"' in display and 'tabindex="0"' in display  # a wide one scrolls by keys
    assert "mjx-c.mjx-c1D444.TEX-I::before" in css  # the glyphs used, Q among them
    assert 'url("mathjax-fonts/MathJax_Main-Regular.woff")' in css


def test_a_formula_mathjax_cannot_read_stops_the_build():
    with pytest.raises(
        ExtensionError, match=r"cannot typeset .*\\\\foo.*Undefined control sequence"
    ):
        prerendered_math.typeset([(r"x + \foo", False)])


def test_numbered_equations_keep_their_number_and_link():
    text = (
        '<div class="math notranslate nohighlight" id="equation-e">\n<span class="eqno">(1.2)'
        '<a class="headerlink" href="#equation-e">#</a></span>\\[a &lt; b\\]</div>'
    )
    match = prerendered_math.FORMULA.search(text)
    assert match["number"].strip().startswith('<span class="eqno">(1.2)')
    assert prerendered_math.DELIMITERS.match(match["tex"])["tex"] == "a &lt; b"


@pytest.mark.build
@pytest.mark.parametrize("name", toc_files())
def test_every_formula_of_every_page_is_typeset(built_book, name):
    html = page(built_book[0], name)
    formulas = FORMULA.findall(html)
    assert formulas or name not in chapter_files(), "a chapter without formulas"
    left_as_tex = [body for _, body in formulas if re.search(r"\\[(\[]|\\begin\{", body)]
    assert left_as_tex == []
    assert all("<mjx-container" in body and "<mjx-assistive-mml" in body for _, body in formulas)
