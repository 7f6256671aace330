"""The book as one PDF (``make pdf``): every page of the table of contents is in it, in order,
with a bookmark for every chapter, every dropdown printed open, and its text is real text
(searchable, Japanese included).
(``booktools/print_pdf.py`` prints only once every heatmap is drawn; formulas are typeset at build
time, tests/book/test_prerendered_math.py.)

Printing 300 pages takes Chromium a minute or two, so this runs with ``make test-pdf``, not in
``make test``.
"""

import html
import re
import unicodedata

import pytest

from tests.support.book import ROOT, toc_files
from tests.support.built import built

pytestmark = pytest.mark.build


@pytest.fixture(scope="module")
def pdf():
    from pypdf import PdfReader

    return PdfReader(built("pdf/attention-step-by-step.pdf", "pdf-for-tests"))


@pytest.fixture(scope="module")
def text(pdf):
    return "\n".join(page.extract_text() for page in pdf.pages)


def titles():
    """Each page's title, as its Markdown source writes it (the first heading)."""
    from tests.support.book import ROOT

    found = []
    for name in toc_files():
        source = (ROOT / f"{name}.md").read_text(encoding="utf-8")
        body = re.sub(r"\A---\n.*?\n---\n", "", source, flags=re.S)  # front matter has # comments
        found.append(re.search(r"^# (.+)$", body, re.M).group(1).strip())
    return found


def flat(outline):
    for item in outline:
        yield from flat(item) if isinstance(item, list) else [item.title]


def squeezed(text):
    """Without white space: the PDF breaks a title's words over lines where the page did."""
    return re.sub(r"\s+", "", text)


def test_every_page_is_in_the_pdf_in_order(text):
    where = [squeezed(text).find(squeezed(title)) for title in titles()]
    assert -1 not in where, [t for t, w in zip(titles(), where) if w == -1]
    assert where == sorted(where)


def test_every_page_has_a_bookmark(pdf):
    bookmarks = squeezed(" ".join(flat(pdf.outline)))
    for title in titles():
        assert squeezed(title) in bookmarks, title


def test_the_text_is_text_japanese_included(text):
    assert "\ufffd" not in text
    assert "注意機構" in text


def plain_words(markup):
    """The longest run of six or more plain words in ``markup``'s prose (maths and code left out,
    whose text the PDF writes otherwise), or None."""
    prose = re.sub(r"<(math|pre|script)\b.*?</\1>", " | ", markup, flags=re.S)
    runs = re.findall(
        r"(?:[A-Za-z]+[ ,]+){5,}[A-Za-z]+", html.unescape(re.sub(r"<[^>]+>", " ", prose))
    )
    return max(runs, key=len, default=None)


def test_every_dropdown_is_printed_open(text):
    """The one-page build that was printed writes every dropdown (solutions, answers) open
    (_ext/dropdown_details.py), and the PDF holds their words (its ligatures read as letters)."""
    page = built("book/_build/singlehtml/intro.html", "pdf-for-tests").read_text(encoding="utf-8")
    dropdowns = re.findall(r"<details\b([^>]*)>.*?</summary>(.*?)</details>", page, re.S)
    sources = [(ROOT / f"{name}.md").read_text(encoding="utf-8") for name in toc_files()]
    assert len(dropdowns) == sum(source.count(":class: dropdown") for source in sources)
    assert [a for a, _ in dropdowns if 'open="open"' not in a] == []
    printed = squeezed(unicodedata.normalize("NFKC", text))
    runs = [plain_words(content) for _, content in dropdowns]  # an all-code solution has none
    assert sum(run is not None for run in runs) > len(runs) / 2
    assert [run for run in runs if run and squeezed(run) not in printed] == []
