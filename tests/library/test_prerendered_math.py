"""Formulas typeset when the book is built (_ext/prerendered_math.py): MathML Core, made by
Temml, typeset in place and again alike, a font cut to what they draw, and a build that stops on a
formula it cannot read. (Every page of the built book: tests/book/test_prerendered_math.py.)"""

import prerendered_math
import pytest
from fontTools.ttLib import TTFont
from sphinx.errors import ExtensionError


def test_a_formula_becomes_mathml_core():
    inline, display = prerendered_math.typeset(
        [
            (r"\mathbf W^Q K^\top / \sqrt{d_k}", False),
            (r"\begin{aligned} a &= b \\ c &= d \end{aligned}", True),
        ]
    )
    assert inline.startswith("<math>") and "<msqrt>" in inline
    # bold as its own characters: MathML Core draws no mathvariant but "normal"
    assert "<mi>𝐖</mi>" in inline and "mathvariant" not in inline
    assert "tabindex" not in inline
    assert display.startswith('<math display="block" tabindex="0"')  # a wide one scrolls by keys
    assert 'class="tml-right"' in display and 'class="tml-left"' in display  # aligned at &


def test_the_font_holds_what_formulas_draw_letters_in_italic_too():
    markup = prerendered_math.typeset([(r"h_\theta \in \mathbb R", False)])
    drawn = {chr(c) for c in prerendered_math.characters(markup)}
    assert {"h", "ℎ", "θ", "𝜃", "∈", "ℝ"} <= drawn
    assert "<" not in drawn and "m" not in drawn  # the markup's own characters are not drawn


def test_a_formula_temml_cannot_read_stops_the_build():
    with pytest.raises(ExtensionError, match=r"cannot typeset .*\\\\foo.*Unsupported function"):
        prerendered_math.typeset([(r"x + \foo", False)])


PAGE = """<link rel="stylesheet" href="_static/jsdeps/math.css">
<p>Scores <span class="math notranslate nohighlight">\\(s_i = q \\cdot k_i\\)</span> are
compared with <span class="math notranslate nohighlight">\\(a &lt; b\\)</span>.</p>
<div class="math notranslate nohighlight" id="equation-e">
<span class="eqno">(1.2)<a class="headerlink" href="#equation-e">#</a></span>\\[\\sqrt{d_k}\\]</div>
"""


def test_pages_are_typeset_in_place_keeping_numbers_and_tex_and_again_alike(tmp_path):
    (tmp_path / "page.html").write_text(PAGE, encoding="utf-8")
    prerendered_math.typeset_folder(tmp_path)
    once = (tmp_path / "page.html").read_text(encoding="utf-8")
    assert once.count("<math") == 3 and "\\(" not in once and "\\[" not in once
    assert 'data-tex="a &lt; b"' in once  # the TeX kept, escaped, for the next build
    assert (
        '<span class="eqno">(1.2)<a class="headerlink" href="#equation-e">#</a></span><math' in once
    )
    jsdeps = tmp_path / "_static/jsdeps"
    assert 'src: url("math-fonts/noto-sans-math.woff")' in (jsdeps / "math.css").read_text()
    font = TTFont(jsdeps / "math-fonts/noto-sans-math.woff")
    assert {ord("√"), ord("𝑑"), ord("𝑘")} <= set(font.getBestCmap()) and "MATH" in font
    assert len(font.getBestCmap()) < 40  # cut: the whole font has 3,000 characters
    assert (jsdeps / "licenses/noto-sans-math.txt").exists()
    prerendered_math.typeset_folder(tmp_path)  # an incremental build leaves this page as it was
    assert (tmp_path / "page.html").read_text(encoding="utf-8") == once


def test_a_page_with_formulas_but_not_their_stylesheet_stops_the_build(tmp_path):
    (tmp_path / "page.html").write_text(PAGE.split("\n", 1)[1], encoding="utf-8")
    with pytest.raises(ExtensionError, match=r"page\.html has formulas but no"):
        prerendered_math.typeset_folder(tmp_path)
