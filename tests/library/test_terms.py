"""One term for one idea in the Japanese edition: every Japanese catalogue (the pages', the
theme's and the exercise checks') and the widgets' Japanese words write each term of the
glossary's table "The Japanese edition's terms" as the table does (tests/support/terms.py), and
a page's English term comes out as its Japanese one."""

import re

import pytest
from babel.messages.pofile import read_po

from tests.support.book import ROOT
from tests.support.terms import Term, quotes_forms, terms, variants_in
from tests.support.widget_words import FRONT_ENDS, flat, read_words

TERMS = terms()
# the pages', the figures' labels (attnkit.figure_text), the checks' messages
CATALOGUES = sorted((ROOT / "locales" / "ja").rglob("*.po")) + [
    ROOT / "chapters" / "attnkit" / "locales" / "ja" / "LC_MESSAGES" / "figures.po",
    ROOT / "chapters" / "attnkit" / "exercises" / "locales" / "ja" / "LC_MESSAGES" / "checks.po",
]
GLOSSARY = ROOT / "locales" / "ja" / "LC_MESSAGES" / "appendix" / "glossary.po"
# English words the prose also uses in their everyday sense ("the point of the exercise"): their
# Japanese term is not asked of every message that has them
EVERYDAY = {"exercise"}
CODE_OR_MATH = re.compile(r"\$\$.*?\$\$|\$[^$]+\$|\{[\w:+-]+\}`[^`]*`|``?[^`]+``?", re.S)


def named(path) -> str:
    return str(path.relative_to(ROOT))


def breaches(path, name: str | None = None) -> list[str]:
    """Each message of the catalogue ``path`` that writes a form the table does not, named by
    the catalogue (``name``, else its path) and the start of its English."""
    name = name or named(path)
    with open(path, "rb") as file:
        catalogue = read_po(file)
    found = []
    for message in catalogue:
        if not message.id or not message.string:
            continue
        if name == named(GLOSSARY) and quotes_forms(message.id, message.string):
            continue  # the glossary's cells that quote the articles' and the unused forms
        for variant, term in variants_in(message.string, TERMS):
            found.append(f"{name}: {message.id[:60]!r} writes {variant}, not {term.japanese}")
    return found


def test_the_table_gives_each_idea_one_term():
    englishes = [term.english for term in TERMS]
    assert len(set(englishes)) == len(englishes) > 20
    every_variant = {variant for term in TERMS for variant in term.variants}
    for term in TERMS:
        assert term.japanese not in every_variant, term


@pytest.mark.parametrize("path", CATALOGUES, ids=named)
def test_each_catalogue_writes_the_tables_terms(path):
    found = breaches(path)
    assert not found, "\n".join(found)


@pytest.mark.parametrize("front_end", list(FRONT_ENDS))
def test_the_widgets_write_the_tables_terms(front_end, tmp_path):
    japanese = flat(read_words(FRONT_ENDS[front_end], tmp_path)["ja"])
    found = [
        (key, variant) for key, text in japanese.items() for variant, _ in variants_in(text, TERMS)
    ]
    assert not found, found


@pytest.mark.parametrize("variant", [v for term in TERMS for v in term.variants])
def test_a_variant_in_a_catalogue_fails_by_name(variant, tmp_path):
    """Each form the table forbids, written into a catalogue, is found, named by the catalogue
    and the message; the two ways of introducing a term are not."""
    term = next(term for term in TERMS if variant in term.variants)
    catalogue = tmp_path / "attention.po"
    catalogue.write_text(
        f'msgid "The term in a sentence."\nmsgstr "この文では{variant}を使います。"\n\n'
        f'msgid "The term introduced."\n'
        f'msgstr "{term.japanese}（記事001の表記では{variant}）と、{variant}（{term.japanese}）。"\n',
        encoding="utf-8",
    )
    found = breaches(catalogue, "locales/ja/LC_MESSAGES/chapters/attention.po")
    assert len(found) >= 1 and all("The term in a sentence." in line for line in found), found
    assert all(line.startswith("locales/ja/LC_MESSAGES/chapters/attention.po:") for line in found)
    assert any(f"writes {variant}," in line for line in found), found


def english_prose(text: str) -> str:
    return CODE_OR_MATH.sub(" ", text).lower()


@pytest.mark.parametrize("path", CATALOGUES[:-1], ids=named)
def test_an_english_term_comes_out_as_the_tables_japanese(path):
    with open(path, "rb") as file:
        catalogue = read_po(file)
    wrong = []
    for message in catalogue:
        if not message.id or (path == GLOSSARY and quotes_forms(message.id, message.string)):
            continue
        english, japanese = english_prose(message.id), message.string.lower()
        for term in (term for term in TERMS if term.english not in EVERYDAY):
            if re.search(rf"(?<![\w-]){re.escape(term.english)}", english) and not (
                term.japanese.lower() in japanese or term.english in japanese
            ):
                wrong.append(f"{term.english!r} not as {term.japanese} in {message.string[:70]!r}")
    assert not wrong, f"{named(path)}:\n" + "\n".join(wrong)


def test_an_introduction_is_not_a_variant():
    cache = next(term for term in TERMS if term.english == "key-value cache")
    assert variants_in("キー・バリューキャッシュ（KVキャッシュ）を使います", [cache]) == []
    assert variants_in("キー・バリューキャッシュを使います", [cache]) == [
        ("キー・バリューキャッシュ", cache)
    ]
    assert variants_in("（記事007の表記ではキー・バリューキャッシュ）", [cache]) == []
    assert isinstance(cache, Term)


def test_emphasis_does_not_hide_a_variant():
    gqa = next(term for term in TERMS if term.english == "grouped-query attention")
    assert variants_in("**グループ化クエリ**・アテンションでは", [gqa]) == [
        ("グループ化クエリ・アテンション", gqa)
    ]


def test_a_variant_inside_the_terms_own_form_is_not_one():
    browser = next(term for term in TERMS if term.english == "browser")
    assert variants_in("ブラウザーの中で計算します", [browser]) == []
    assert variants_in("ブラウザの中で計算します", [browser]) == [("ブラウザ", browser)]


def test_an_articles_quoted_term_is_not_a_bare_variant():
    """アテンション is not written, but inside an article's own term, quoted where a page
    introduces the book's, it is part of that quotation."""
    found = variants_in("マルチヘッド注意（記事001の表記ではマルチヘッド・アテンション）", TERMS)
    assert found == []
    assert [variant for variant, _ in variants_in("アテンションを計算します", TERMS)] == [
        "アテンション"
    ]
