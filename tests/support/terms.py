"""The Japanese edition's terms, from the one place that states them: the table of the
glossary's section "The Japanese edition's terms" (appendix/glossary.md, label glossary-terms).
Each row is an English term, the one Japanese term the edition writes for it, and the forms it
does not write (tests/library/test_terms.py)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from tests.support.book import ROOT

GLOSSARY = ROOT / "appendix" / "glossary.md"
LIST_TABLE = re.compile(r"```\{list-table\}\n(.*?)```", re.S)
ROW = re.compile(r"(?m)^\* - ")
JAPANESE = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]")


@dataclass(frozen=True)
class Term:
    english: str
    japanese: str
    variants: tuple[str, ...]

    def introduced(self, text: str, start: int, variant: str) -> bool:
        """Whether the variant at ``start`` is where a page introduces the term: an article's
        own form quoted (「記事001の表記ではマルチヘッド・アテンション」) or a long form just before
        the term's own (「キー・バリューキャッシュ（KVキャッシュ）」)."""
        before, after = text[:start], text[start + len(variant) :]
        return bool(re.search(r"表記では「?$", before)) or after.lstrip("*").startswith(
            f"（{self.japanese}"
        )


def table_rows(table: str) -> list[list[str]]:
    """The rows of a MyST list table's body, each a list of its cells' text."""
    rows = ROW.split(table)[1:]
    return [[cell.strip() for cell in re.split(r"(?m)^  - ", row)] for row in rows]


def terms() -> list[Term]:
    text = GLOSSARY.read_text(encoding="utf-8")
    section = text.split("(glossary-terms)=", 1)[1]
    header, *rows = table_rows(LIST_TABLE.search(section)[1])
    assert header == ["English", "Japanese", "not written"], header
    return [
        Term(english, japanese, tuple(v for v in variants.split(", ") if v != "—"))
        for english, japanese, variants in rows
    ]


def variants_in(text: str, table: list[Term]) -> list[tuple[str, Term]]:
    """Each variant of a term that ``text`` writes, but where it introduces the term; a form
    inside a longer one (サブレイヤ in サブレイヤー) counts once, as the longer, and is none
    inside a term's own form (ブラウザ in ブラウザー); emphasis marks do not hide one
    (**マルチクエリ**・アテンション)."""
    text = re.sub(r"\*+", "", text)
    matches = [
        (match.start(), match.end(), variant, term)
        for term in table
        for variant in term.variants
        for match in re.finditer(re.escape(variant), text)
    ]
    own = [
        (match.start(), match.end())
        for term in table
        for match in re.finditer(re.escape(term.japanese), text)
    ]
    spans = [(s, e) for s, e, *_ in matches] + own
    return [
        (variant, term)
        for start, end, variant, term in matches
        if not any(s <= start and end <= e and (s, e) != (start, end) for s, e in spans)
        and not term.introduced(text, start, variant)
    ]


def quotes_forms(english: str, japanese: str) -> bool:
    """Whether a message of the glossary quotes Japanese forms on purpose: a cell of the
    articles' terms (kept as written, or with the book's own term after "book:") or of the
    forms not written."""
    as_written = japanese in (english, english.replace(", ", "、"))  # a list in Japanese commas
    return bool(JAPANESE.search(english)) and (as_written or "(book: " in english)
