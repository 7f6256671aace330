"""The book as one PDF (``make pdf``), and its Japanese edition's (``make pdf PDF_LANGUAGE=ja``):
every page of the table of contents is in each, in order, with a bookmark for every chapter,
every dropdown printed open (the English one), and its text is real text (searchable, Japanese
included).
(``booktools/print_pdf.py`` prints only once every heatmap is drawn; formulas are typeset at build
time, tests/book/test_prerendered_math.py.)

Printing 300 pages takes Chromium a minute or two, so this runs with ``make test-pdf``, not in
``make test``.
"""

import functools
import html
import re
import unicodedata

import pytest
from babel.messages.pofile import read_po

from tests.support.book import ROOT, toc_files
from tests.support.built import built

pytestmark = pytest.mark.build


# each edition's PDF (make pdf, make pdf PDF_LANGUAGE=ja)
PDFS = {"en": "attention-step-by-step.pdf", "ja": "attention-step-by-step.ja.pdf"}
JAPANESE = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]")


@functools.cache
def pdf(language="en"):
    from pypdf import PdfReader

    return PdfReader(built(f"pdf/{PDFS[language]}", "pdf-for-tests"))


@functools.cache
def text(language="en"):
    return "\n".join(page.extract_text() for page in pdf(language).pages)


def titles(language="en"):
    """Each page's title, as its Markdown source writes it (the first heading), or as its
    catalogue translates it."""
    found = []
    for name in toc_files():
        source = (ROOT / f"{name}.md").read_text(encoding="utf-8")
        body = re.sub(r"\A---\n.*?\n---\n", "", source, flags=re.S)  # front matter has # comments
        title = re.search(r"^# (.+)$", body, re.M).group(1).strip()
        if language != "en":
            catalogue = ROOT / "locales" / language / "LC_MESSAGES" / f"{name}.po"
            with open(catalogue, "rb") as file:
                title = read_po(file)[title].string
        found.append(title)
    return found


def flat(outline):
    for item in outline:
        yield from flat(item) if isinstance(item, list) else [item.title]


def squeezed(text):
    """Without white space, in one form: the PDF breaks a title's words over lines where the
    page did, and may write a full-width character in its compatibility form."""
    return re.sub(r"\s+", "", unicodedata.normalize("NFKC", text))


@pytest.mark.parametrize("language", PDFS)
def test_every_page_is_in_the_pdf_in_order(language):
    where = [squeezed(text(language)).find(squeezed(title)) for title in titles(language)]
    assert -1 not in where, [t for t, w in zip(titles(language), where) if w == -1]
    assert where == sorted(where)


@pytest.mark.parametrize("language", PDFS)
def test_every_page_has_a_bookmark(language):
    bookmarks = squeezed(" ".join(flat(pdf(language).outline)))
    for title in titles(language):
        assert squeezed(title) in bookmarks, title


def test_the_text_is_text_japanese_included():
    assert "\ufffd" not in text()
    assert "注意機構" in text()


def test_the_japanese_pdf_is_the_japanese_edition():
    """Its prose in Japanese: Japanese characters are about half of its letters (code and
    formulas are the rest; 49% measured), where the English PDF has a few (the articles'
    titles; 0.5%)."""
    assert "\ufffd" not in text("ja")
    share = {}
    for language in PDFS:
        japanese = len(JAPANESE.findall(text(language)))
        share[language] = japanese / (japanese + len(re.findall("[A-Za-z]", text(language))))
    assert share["ja"] > 0.4 and share["en"] < 0.02, share


def plain_words(markup):
    """The longest run of six or more plain words in ``markup``'s prose (maths and code left out,
    whose text the PDF writes otherwise), or None."""
    prose = re.sub(r"<(math|pre|script)\b.*?</\1>", " | ", markup, flags=re.S)
    runs = re.findall(
        r"(?:[A-Za-z]+[ ,]+){5,}[A-Za-z]+", html.unescape(re.sub(r"<[^>]+>", " ", prose))
    )
    return max(runs, key=len, default=None)


def test_every_dropdown_is_printed_open():
    """The one-page build that was printed writes every dropdown (solutions, answers) open
    (_ext/dropdown_details.py), and the PDF holds their words (its ligatures read as letters)."""
    page = built("book/_build/singlehtml/intro.html", "pdf-for-tests").read_text(encoding="utf-8")
    # (a trace's table is in a details element of its own, closed: its drawing shows the same)
    dropdowns = re.findall(
        r'<details\b([^>]*class="[^"]*\bdropdown\b[^>]*)>.*?</summary>(.*?)</details>', page, re.S
    )
    sources = [(ROOT / f"{name}.md").read_text(encoding="utf-8") for name in toc_files()]
    assert len(dropdowns) == sum(source.count(":class: dropdown") for source in sources)
    assert [a for a, _ in dropdowns if 'open="open"' not in a] == []
    printed = squeezed(text())
    runs = [plain_words(content) for _, content in dropdowns]  # an all-code solution has none
    assert sum(run is not None for run in runs) > len(runs) / 2
    assert [run for run in runs if run and squeezed(run) not in printed] == []
