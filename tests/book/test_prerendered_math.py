"""Every formula of every page of the built book is typeset at build time (_ext/prerendered_math.py)."""

import re

import pytest

from tests.support.book import chapter_files, page, toc_files

FORMULA = re.compile(r'<(span|div) class="math notranslate nohighlight"[^>]*>(.*?)</\1>', re.S)


@pytest.mark.build
@pytest.mark.parametrize("name", toc_files())
def test_every_formula_of_every_page_is_typeset(built_book, name):
    html = page(built_book[0], name)
    formulas = FORMULA.findall(html)
    assert formulas or name not in chapter_files(), "a chapter without formulas"
    left_as_tex = [body for _, body in formulas if re.search(r"\\[(\[]|\\begin\{", body)]
    assert left_as_tex == []
    assert all(
        re.fullmatch(r"(<span class=\"eqno\">.*?</span>)?<math\b.*</math>", body.strip(), re.S)
        for _, body in formulas
    )
