"""English prose left on a page of the Japanese edition: what is neither code, a formula,
program output, an example in italics, an English term given beside its Japanese one, nor a
proper name (tests/book/test_japanese_edition.py; the scanner itself:
tests/library/test_english_prose.py)."""

from __future__ import annotations

import functools
import re

from bibliography_language import translated_entry
from pybtex.database import parse_file
from pybtex.richtext import Text

from tests.support.book import ROOT
from tests.support.markup import read

# elements whose text is not prose: code, formulas, program output, scripts, and examples,
# set apart (I love you → 私は あなたを 愛して いる) or in italics (*cats chase mice*)
NOT_PROSE_TAGS = {"pre", "code", "kbd", "samp", "math", "script", "style", "em", "svg"}
NOT_PROSE_TAGS |= {"blockquote"}
NOT_PROSE_CLASSES = {"cell_output", "output", "math", "highlight", "caption-number"}
BLOCKS = {"p", "li", "td", "th", "h1", "h2", "h3", "h4", "dt", "dd", "summary", "figcaption"}
# three English words in a row (a hyphenated word is one), or an English label before
# Japanese, "(book: 交差注意)"; a run with fewer than two words of two letters or more is a list
# of symbols or names, not prose (b, h, n, d_k)
RUN = re.compile(r"[A-Za-z][\w'’-]*(?:[ ,;]+[A-Za-z][\w'’-]*){2,}")
WORD = re.compile(r"(?<![\w'’-])[A-Za-z][A-Za-z'’-]+(?![\w'’-])")
LABEL = re.compile(r"\b[A-Za-z]+: ?(?=[\u3040-\u30ff\u4e00-\u9fff])")
# an English term beside its Japanese one: **注意機構**（attention mechanism）, or with the
# article's form after it, （multi-head attention。記事001の表記では…）
GLOSS = re.compile(r"（[\"“]?[A-Za-z][^（）\u3040-\u30ff\u4e00-\u9fff]*?(?=[）、。])")
# an English example quoted in Japanese: 「dog bites man」
EXAMPLE = re.compile(r"「[^「」\u3040-\u30ff\u4e00-\u9fff]*」")
TABLE = re.compile(r"<table\b.*?</table>", re.S)
ROW = re.compile(r"<tr\b.*?</tr>", re.S)
CELL = re.compile(r"<t[hd]\b.*?</t[hd]>", re.S)
ENGLISH_HEADER = "英語"  # a glossary's column of English terms


def without_english_columns(html: str) -> str:
    """``html`` without the cells of each table column headed 英語 (English terms, on purpose)."""

    def table(found):
        rows = ROW.findall(found[0])
        if not rows:
            return found[0]
        header = [re.sub(r"<[^>]+>", "", cell).strip() for cell in CELL.findall(rows[0])]
        if ENGLISH_HEADER not in header:
            return found[0]
        column = header.index(ENGLISH_HEADER)
        text = found[0]
        for row in rows:
            cells = CELL.findall(row)
            if len(cells) > column:
                text = text.replace(row, row.replace(cells[column], "", 1), 1)
        return text

    return TABLE.sub(table, html)


def blocks(html: str) -> list[str]:
    """The prose of each paragraph, item, cell, heading and caption of the page's article (or
    of the whole page, if it has none), with code, formulas and output left out."""
    has_article = "bd-article" in html
    found: dict[int, str] = {}
    for text, enclosing in read(without_english_columns(html)).texts:
        if has_article and not any(element.has_class("bd-article") for element in enclosing):
            continue
        if any(
            element.tag in NOT_PROSE_TAGS
            or any(element.has_class(name) for name in NOT_PROSE_CLASSES)
            for element in enclosing
        ):
            continue
        block = [element for element in enclosing if element.tag in BLOCKS]
        key = id(block[-1]) if block else id(text)
        found[key] = found.get(key, "") + text
    return list(found.values())


@functools.lru_cache(maxsize=4)
def names_pattern(names: tuple[str, ...]) -> re.Pattern:
    """One pattern for all the proper ``names``, the longest first: compiled once per set of
    names, where a pattern a name compiled in each block cost seconds a page (726 names)."""
    alternatives = "|".join(re.escape(name) for name in sorted(set(names), key=len, reverse=True))
    return re.compile(rf"(?<!\w)(?:{alternatives or '(?!)'})(?!\w)")


def english_in(text: str, names: tuple[str, ...] = ()) -> list[str]:
    """The English prose of one block of text: its runs of English words and its English
    labels, once the proper ``names`` and the glosses are out."""
    text = names_pattern(names).sub(" ", text)
    text = EXAMPLE.sub("「」", GLOSS.sub("（", text))
    runs = [run.group().strip() for run in RUN.finditer(text)]
    return [run for run in runs if len(WORD.findall(run)) >= 2] + [
        label.group() for label in LABEL.finditer(text)
    ]


def english_prose(html: str, names: tuple[str, ...] = ()) -> list[str]:
    return [found for block in blocks(html) for found in english_in(block, names)]


TRACE = "attn-trace"  # a trace's drawing and table (attnkit/trace/draw.py)


def trace_texts(html: str) -> list[str]:
    """The words of each trace drawn on a page (its drawing, its table and their advice), code
    and the axes' labels left out: a trace is program output, but one written for the page's
    reader, in the page's language."""
    found: dict[int, str] = {}
    for text, enclosing in read(html).texts:
        root = next((element for element in enclosing if element.has_class(TRACE)), None)
        if root is None or any(
            element.tag == "code" or "data-axis" in element.attrs for element in enclosing
        ):
            continue
        found[id(root)] = found.get(id(root), "") + " " + text
    return list(found.values())


def english_in_traces(html: str, names: tuple[str, ...] = ()) -> list[str]:
    """The English prose of the page's traces (a name of the code, or of a library's function,
    alone is not prose), and any step placed at an English "line 12"."""
    return [
        found
        for text in trace_texts(html)
        for found in english_in(text, names) + re.findall(r"\bline \d+", text)
    ]


WORKS = ("title", "booktitle", "journal", "publisher", "howpublished", "series", "institution")


def bibliography_names(language: str) -> tuple[str, ...]:
    """The proper names of the bibliography as the edition in ``language`` prints it: its
    people's names, the works' titles and where they appeared (_ext/bibliography_language.py)."""
    names = set()
    for entry in parse_file(str(ROOT / "references.bib"), "bibtex").entries.values():
        translated_entry(entry, language)
        names |= {entry.fields[field] for field in WORKS if field in entry.fields}
        for person in (person for people in entry.persons.values() for person in people):
            names |= {*person.first_names, *person.middle_names, *person.prelast_names}
            names |= set(person.last_names)
    # LaTeX ({\\L}ukasz) as printed; the rest only loses its braces (from_latex takes 20 ms)
    return tuple(
        Text.from_latex(name).render_as("text")
        if "\\" in name or "--" in name
        else re.sub(r"[{}]", "", name)
        for name in names
        if name
    )
