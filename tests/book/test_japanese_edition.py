"""The Japanese edition beside the English one (``make book``: ``_build/html/ja``): every page in
Japanese, the same numbers, the same sections, a switch between the two on every page, and one
Japanese page read in Chromium. (Its catalogues: tests/library/test_catalogues.py.)"""

import re
from html import unescape

import nbformat
import pytest
from myst_parser.config.main import MdParserConfig

from attnkit.exercises import stub
from booktools import translated_markdown as MARKDOWN
from booktools import translation
from tests.support.book import ROOT, SITE_URL, chapter_files, page, toc_files
from tests.support.browser import PageLog, wait_for_widgets
from tests.support.english_prose import (
    TRACE,
    bibliography_names,
    english_in,
    english_in_traces,
    english_prose,
    trace_texts,
)
from tests.support.markup import read

JAPANESE = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]")
SWITCH = re.compile(r'<a class="[^"]*language-switch"\s+href="([^"]+)"\s+hreflang="(\w+)"')
SECTION_ID = re.compile(r'<section id="([^"]+)"')
ALTERNATE = re.compile(r'<link rel="alternate" hreflang="(\w+)" href="([^"]+)" />')


@pytest.fixture(scope="module")
def editions(built_book):
    html_dir, _ = built_book
    return html_dir, html_dir / "ja"


VERDICT = "attnkit-verdict"  # an exercise check's verdict box (attnkit.exercises.harness)


def text_in(html: str, element_class: str, leaving_out: tuple[str, ...] = ()) -> list[str]:
    """The texts inside elements of the class (and not of any of ``leaving_out``), in page
    order."""
    return [
        text
        for text, enclosing in read(html).texts
        if any(element.has_class(element_class) for element in enclosing)
        and not any(element.has_class(name) for name in leaving_out for element in enclosing)
    ]


def paragraphs(html: str) -> list[str]:
    """The text of each paragraph and list item of the page's article; code, formulas and tables
    (of names, symbols and numbers) left out."""
    found: dict[int, str] = {}
    for text, enclosing in read(html).texts:
        if not any(element.has_class("bd-article") for element in enclosing) or any(
            element.tag in ("pre", "code", "math", "script", "table")
            or element.has_class("cell_output")
            or element.has_class("math")
            for element in enclosing
        ):
            continue
        blocks = [element for element in enclosing if element.tag in ("p", "li")]
        if blocks:
            found[id(blocks[-1])] = found.get(id(blocks[-1]), "") + text
    return list(found.values())


@pytest.mark.parametrize("name", toc_files())
def test_every_page_is_in_japanese(editions, name):
    _, japanese = editions
    html = page(japanese, name)
    assert '<html lang="ja"' in html
    title = re.search(r"<h1>(.*?)<", html, re.S)[1]
    assert JAPANESE.search(title) or name == "references", title
    if name == "references":  # the bibliography's entries are the works' own titles
        return
    texts = [text for text in paragraphs(html) if re.search(r"[^\W\d_]{3}", text)]
    english = [text for text in texts if not JAPANESE.search(text)]
    # a paragraph may be a name, a number or an English example sentence; few are
    assert len(english) <= 0.05 * len(texts), f"{name}: {english[:5]}"


# The attributes that name or describe a part of the page to a reader: its tooltip, its
# accessible name, the text shown in an empty field, a picture's alternative text.
INTERFACE_WORDS = re.compile(
    r'<(\w+)\b([^>]*?)\b(title|aria-label|placeholder|alt|data-bs-title)="([^"]*)"'
)


@pytest.mark.parametrize("name", toc_files())
def test_the_interface_speaks_japanese(editions, name):
    """Every word of the interface (the theme's buttons, Sphinx's links to headings and
    equations, the launch buttons, a shared link's picture) is Japanese; a link to the bibliography keeps the title of
    the work it cites, in the work's language."""
    _, japanese = editions
    html = re.sub(r"<script\b.*?</script>", " ", page(japanese, name), flags=re.S)
    english = {
        (tag, attribute, value)
        for tag, before, attribute, value in INTERFACE_WORDS.findall(html)
        if re.search(r"[A-Za-z]{3}", value)
        and not JAPANESE.search(value)
        and 'href="references.html#' not in before.replace("../", "")
    }
    assert english == set(), f"{name}: {sorted(english)[:8]}"
    card = re.search(r'<meta property="og:image:alt" content="([^"]*)"', html)[1]
    assert JAPANESE.search(card), card  # what a shared link's picture shows


# What in a paragraph is not prose: maths, roles and code
NOT_PROSE = re.compile(r"\$[^$]*\$|\{[\w:-]+\}`[^`]*`|`[^`]*`")
OPTION = re.compile(r"^:[\w-]+:")


def prose(markdown: str, md) -> list[str]:
    """The paragraphs, headings and items of ``markdown`` that hold words once maths and code
    are out, directives' bodies included (as MyST reads them); tables, of names, symbols and
    numbers, left out."""
    found, previous = [], None
    for token in md.parse(markdown):
        words = re.search(r"[A-Za-z]{3}", NOT_PROSE.sub(" ", token.content))
        if token.type == "inline" and words and previous not in ("th_open", "td_open"):
            found.append(token.content)
        elif token.type in ("fence", "colon_fence") and token.info.startswith("{"):
            if not token.info.startswith("{math}"):
                body = [line for line in token.content.split("\n") if not OPTION.match(line)]
                found += prose("\n".join(body), md)
        previous = token.type
    return found


@pytest.mark.parametrize("name", chapter_files())
def test_the_japanese_notebook_is_the_chapter_in_japanese(editions, name):
    """The notebook a Japanese page offers: the English one's cells and code (its exercises'
    stubs raising in Japanese), its prose the page's Japanese (from the same catalogue), and a
    set-up cell that makes the exercise checks answer in Japanese."""
    notebooks = [
        nbformat.read(edition / "_sources" / f"{name}.ipynb", as_version=4) for edition in editions
    ]
    english, japanese = (list(notebook.cells) for notebook in notebooks)
    assert [c.cell_type for c in japanese] == [c.cell_type for c in english]
    code = [[c.source for c in cells if c.cell_type == "code"] for cells in (english, japanese)]
    assert [stub.in_language(source, "ja") for source in code[0][1:]] == code[1][1:]
    stubs = [sum(c.count(stub.stub_line(lang)) for c in cs) for cs, lang in zip(code, ("en", "ja"))]
    assert stubs[0] == stubs[1] == stub_count(name)
    language = 'os.environ["ATTNKIT_LANGUAGE"] = "ja"  # the exercise checks\' messages\n'
    assert code[1][0].replace(language, "") == code[0][0] != code[1][0]
    md = MARKDOWN.parser(MdParserConfig(enable_extensions={"colon_fence", "dollarmath"}))
    paragraphs = [
        p for cell in japanese if cell.cell_type == "markdown" for p in prose(cell.source, md)
    ]
    untranslated = [p for p in paragraphs if not JAPANESE.search(p)]
    if translation.strict() or name in translation.recorded():  # published, so translated
        assert len(untranslated) <= 0.05 * len(paragraphs), f"{name}: {untranslated[:5]}"
    assert f'href="../_sources/{name}.ipynb"' in page(editions[1], name)


@pytest.mark.parametrize("name", toc_files())
def test_each_page_links_to_itself_in_the_other_language(editions, name):
    english, japanese = editions
    for html_dir, other, other_dir in ((english, "ja", japanese), (japanese, "en", english)):
        found = SWITCH.search(page(html_dir, name))
        assert found, f"{name}: no language switch in {html_dir.name}"
        href, language = found.groups()
        assert language == other
        target = (html_dir / name).parent / href
        assert target.resolve() == (other_dir / f"{name}.html").resolve(), href
        # and for search engines, in the head: every edition, at its absolute address
        alternates = ALTERNATE.findall(page(html_dir, name))
        assert alternates == [("en", f"{SITE_URL}{name}.html"), ("ja", f"{SITE_URL}ja/{name}.html")]


def test_a_japanese_page_shared_shows_its_own_address(editions):
    _, japanese = editions
    found = re.search(r'<meta property="og:url" content="([^"]+)"', page(japanese, "intro"))
    assert found[1] == f"{SITE_URL}ja/intro.html"


@pytest.mark.parametrize("name", toc_files())
def test_sections_keep_their_ids(editions, name):
    """The switch keeps the reader's section: it is found by the same id in both editions."""
    english, japanese = editions
    assert SECTION_ID.findall(page(japanese, name)) == SECTION_ID.findall(page(english, name))


@pytest.mark.parametrize("name", toc_files())
def test_executed_cells_show_the_same_output(editions, name):
    english, japanese = editions
    # whitespace aside: the English edition marks runs of Japanese lang="ja", which splits its
    # texts elsewhere; the checks' verdicts and the traces are written in each edition's
    # language (below)
    outputs = [
        re.sub(r"\s+", "", "".join(text_in(page(folder, name), "cell_output", (VERDICT, TRACE))))
        for folder in (english, japanese)
    ]
    assert outputs[0] == outputs[1]


DISPLAY_FORMULA = re.compile(r'<div class="math notranslate nohighlight"[^>]*data-tex="([^"]*)"')


SPLIT = re.compile(r"\\begin\{split\}(.*)\\end\{split\}", re.S)  # Sphinx's, round many lines


def display_formulas(html: str) -> list[str]:
    """The TeX of each display formula of the page, as its source has it."""
    return [SPLIT.sub(r"\1", unescape(tex)).strip() for tex in DISPLAY_FORMULA.findall(html)]


@pytest.mark.parametrize("name", toc_files())
def test_display_formulas_are_the_english_ones_in_their_translation(editions, name):
    """Each display formula of a Japanese page is the English page's, with its words in
    Japanese where the catalogue translates them (\\text{射影}), never the text "::" that
    Sphinx's Locale transform once put in its place (_ext/translatable_text.py)."""
    english, japanese = editions
    catalogue = {m.id.strip(): m.string.strip() for m in translation.entries(name) or []}
    expected = [catalogue.get(tex) or tex for tex in display_formulas(page(english, name))]
    assert display_formulas(page(japanese, name)) == expected


@pytest.mark.parametrize("name", chapter_files())
def test_the_exercises_stubs_are_in_japanese_on_a_japanese_page(editions, name):
    """The line a stub raises, in its cell and quoted in its check's verdict
    (_ext/translated_verdicts.py)."""
    english, japanese = (
        "".join(t for t, _ in read(page(folder, name)).texts) for folder in editions
    )
    raised = [f"NotImplementedError: {stub.words(code)}" for code in ("en", "ja")]
    stubs = stub_count(name)
    assert stub.STUB not in japanese
    assert english.count(stub.STUB) == japanese.count(stub.words("ja")) == 2 * stubs
    assert english.count(raised[0]) == japanese.count(raised[1]) == stubs  # each verdict quotes it


def stub_count(name: str) -> int:
    """The stubs of the chapter ``name``'s coding exercises."""
    return (ROOT / f"{name}.md").read_text(encoding="utf-8").count(stub.stub_line("en"))


def verdicts(html: str) -> list[str]:
    """The text of each verdict box on a page."""
    found: dict[int, str] = {}
    for text, enclosing in read(html).texts:
        box = next((element for element in enclosing if element.has_class(VERDICT)), None)
        if box is not None:
            found[id(box)] = found.get(id(box), "") + text
    return list(found.values())


@pytest.mark.parametrize("name", chapter_files())
def test_the_checks_verdicts_are_in_japanese(editions, name):
    """The cells ran once, in English; a Japanese page shows each verdict as a student running
    the Japanese notebook reads it (_ext/translated_verdicts.py)."""
    english, japanese = (verdicts(page(folder, name)) for folder in editions)
    assert len(english) >= 2 and len(japanese) == len(english)
    assert all(v.startswith(("✓ correct", "✗ failed: ")) for v in english), english
    for text in japanese:
        assert text.startswith(("✓ 正解", "✗ 不合格: ")) and JAPANESE.search(text[10:]), text
    # the same verdicts, written from the same parts
    parts = [re.findall(r'data-attnkit-verdict="([^"]*)"', page(f, name)) for f in editions]
    assert len(parts[0]) == len(english) and parts[0] == parts[1]


# the chapters that show traces of the book's own functions (attnkit.trace)
TRACED = ("self-attention", "qkv-attention", "multi-head-attention", "attention-at-scale")
TRACE_FACTS = re.compile(r'data-(?:step|axis|size|flagged)="[^"]*"')


@pytest.mark.parametrize("name", chapter_files())
def test_traces_are_drawn_in_the_pages_language(editions, names, name):
    """The cells ran once, in English; a trace's output carries its Japanese drawing, which the
    Japanese page shows (_ext/translated_outputs.py): no English prose in it, the English page's
    in English as before, both of the same steps, axes and flags."""
    english, japanese = (page(folder, name) for folder in editions)
    drawn = [trace_texts(html) for html in (english, japanese)]
    assert len(drawn[0]) == len(drawn[1]) and (bool(drawn[0]) or not name.endswith(TRACED))
    assert english_in_traces(japanese, names) == [], name
    assert english.count(f'class="{TRACE}" lang="en"') == len(drawn[0])
    assert japanese.count(f'class="{TRACE}" lang="ja"') == len(drawn[1])
    assert all(english_in_traces(f'<div class="{TRACE}">{text}</div>') for text in drawn[0])
    assert TRACE_FACTS.findall(english) == TRACE_FACTS.findall(japanese)


def test_a_japanese_page_reads_and_switches_in_chromium(site):
    tabs, base = site
    page_ = tabs.new_page(viewport={"width": 1280, "height": 800})
    log = PageLog(page_)
    page_.goto(f"{base}ja/chapters/attention.html")
    wait_for_widgets(page_)
    # a glyph the fonts lack is drawn as the same empty box as a character no font has
    tofu = page_.evaluate("""() => {
        const font = getComputedStyle(document.querySelector('article p')).font;
        const draw = (text) => {
            const canvas = document.createElement('canvas');
            canvas.width = 40; canvas.height = 40;
            const context = canvas.getContext('2d');
            context.font = font.replace(/\\d+(\\.\\d+)?px/, '32px');
            context.fillText(text, 2, 32);
            return Array.from(context.getImageData(0, 0, 40, 40).data).join();
        };
        const missing = draw('\\u{10FFFD}');
        return [...'注意機構の重みを計算します'].filter((c) => draw(c) === missing);
    }""")
    assert tofu == [], f"drawn as missing glyphs: {tofu}"
    # twice: the sections below the window are laid out only as they come near it
    for _ in range(2):
        page_.evaluate(
            "id => document.getElementById(id).scrollIntoView()", "the-quantities-and-their-shapes"
        )
        page_.wait_for_timeout(300)
    # clicked where it is: Playwright's click would first scroll the link, and so the page, into view
    page_.evaluate("() => document.querySelector('a.language-switch').click()")
    page_.wait_for_url(re.compile(r"/chapters/attention\.html#the-quantities-and-their-shapes$"))
    assert "/ja/" not in page_.url
    assert page_.locator("html").get_attribute("lang") == "en"
    assert log.problems() == {}
    page_.close()


EXERCISE_TITLE = re.compile(r'<span class="caption-number">([^<]*)</span>([^<]*)</p>')
SUMMARY = re.compile(r'<summary class="admonition-title">([^<]*)')
REFERENCE = re.compile(r'<span class="std std-numref">([^<]*)</span>')


@pytest.mark.parametrize("name", chapter_files())
def test_exercises_are_labelled_as_a_japanese_textbook_labels_them(editions, name):
    """「演習 1.1（形状）」 on an exercise, 「演習 1.1 の解答」 on its solution, 「演習 1.1」 where
    the text refers to it (_ext/exercise_labels.py), and never sphinx-exercise's 練習; the
    English keeps "Exercise 1.1 (Shapes)" and "Solution to Exercise 1.1 (Shapes)"."""
    english, japanese = (page(edition, name) for edition in editions)
    titles = EXERCISE_TITLE.findall(japanese)  # the exercises', and the definitions' and others'
    exercises = [number for number, _ in titles if number.startswith("演習")]
    in_english = [n for n, _ in EXERCISE_TITLE.findall(english) if n.startswith("Exercise")]
    assert exercises and len(exercises) == len(in_english)
    assert all(re.fullmatch(r"演習 \d+\.\d+", number) for number in exercises), exercises
    for _, title in titles:
        assert not title or re.fullmatch(r"（[^()（）]*(?:（[^）]*）[^()（）]*)*）", title), title
    solutions = [s for s in SUMMARY.findall(japanese) if s.startswith("演習")]
    assert solutions and all(re.fullmatch(r"演習 \d+\.\d+ の解答", s) for s in solutions), solutions
    assert all(re.fullmatch(r"演習 \d+\.\d+", r) for r in REFERENCE.findall(japanese))
    assert "練習" not in japanese
    assert all(re.fullmatch(r"Exercise \d+\.\d+ ", number) for number in in_english)
    assert not re.search(r"[Ee]xercise <a [^>]*><span class=\"std std-numref\">Exercise", english)


# proper names the Japanese pages write in English, beside the bibliography's own
PROPER_NAMES = ("Native Sparse Attention", "Scaled Dot-Product Attention")
CITATION_TOOLTIP = re.compile(
    r'<a [^>]*href="(?:\.\./)*references\.html#[^"]*"[^>]*title="([^"]*)"'
)


@pytest.fixture(scope="module")
def names():
    return bibliography_names("ja") + PROPER_NAMES


@pytest.mark.parametrize("name", toc_files())
def test_no_english_prose_on_a_japanese_page(editions, names, name):
    """Nothing in English but code, formulas, program output, examples, English terms given
    beside their Japanese and proper names: not a bibliography's note, in the list or in a
    citation's tooltip, nor a glossary's "(book: …)" (tests/support/english_prose.py)."""
    html = page(editions[1], name)
    found = english_prose(html, names)
    tooltips = [unescape(title) for title in CITATION_TOOLTIP.findall(html)]
    found += [run for title in tooltips for run in english_in(title, names)]
    assert found == [], f"{name}: {found[:8]}"
