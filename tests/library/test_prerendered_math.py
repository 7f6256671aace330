"""Formulas typeset when the book is built (_ext/prerendered_math.py): MathJax's CommonHTML with
MathML for screen readers, typeset in place and again alike, and a build that stops on a formula it
cannot read. (Every page of the built book: tests/book/test_prerendered_math.py.)"""

import pytest
from sphinx.errors import ExtensionError

from tests.support.book import load_extension

prerendered_math = load_extension("prerendered_math")


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


PAGE = """<link rel="stylesheet" href="_static/jsdeps/mathjax-chtml.css">
<p>Scores <span class="math notranslate nohighlight">\\(s_i = q \\cdot k_i\\)</span> are
compared with <span class="math notranslate nohighlight">\\(a &lt; b\\)</span>.</p>
<div class="math notranslate nohighlight" id="equation-e">
<span class="eqno">(1.2)<a class="headerlink" href="#equation-e">#</a></span>\\[\\sqrt{d_k}\\]</div>
"""


def test_pages_are_typeset_in_place_keeping_numbers_and_tex_and_again_alike(tmp_path):
    (tmp_path / "page.html").write_text(PAGE, encoding="utf-8")
    prerendered_math.typeset_folder(tmp_path)
    once = (tmp_path / "page.html").read_text(encoding="utf-8")
    assert once.count("<mjx-container") == 3 and "\\(" not in once and "\\[" not in once
    assert 'data-tex="a &lt; b"' in once  # the TeX kept, escaped, for the next build
    assert (
        '<span class="eqno">(1.2)<a class="headerlink" href="#equation-e">#</a></span><mjx' in once
    )
    assert "mjx-c221A" in (tmp_path / "_static/jsdeps/mathjax-chtml.css").read_text()  # the √
    assert (tmp_path / "_static/jsdeps/mathjax-fonts/MathJax_Main-Regular.woff").exists()
    prerendered_math.typeset_folder(tmp_path)  # an incremental build leaves this page as it was
    assert (tmp_path / "page.html").read_text(encoding="utf-8") == once


def test_a_page_with_formulas_but_not_their_stylesheet_stops_the_build(tmp_path):
    (tmp_path / "page.html").write_text(PAGE.split("\n", 1)[1], encoding="utf-8")
    with pytest.raises(ExtensionError, match=r"page\.html has formulas but no"):
        prerendered_math.typeset_folder(tmp_path)
