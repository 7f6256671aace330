"""The Japanese edition's citations and bibliography names (_ext/bibliography_language.py): a
Japanese name cited by its family name and listed family name first, three or more authors as
the first and ほか or ら, two joined by と, and the English edition's styles unchanged."""

import pybtex.plugin
import pytest
from bibliography_language import (
    JapaneseBibliographyStyle,
    JapaneseLabelStyle,
    japanese,
    translated_entry,
)
from pybtex.database import Person, parse_file
from sphinxcontrib.bibtex.plugin import find_plugin

from tests.support.book import ROOT


@pytest.fixture(scope="module")
def entries():
    data = parse_file(str(ROOT / "references.bib"), "bibtex")
    for entry in data.entries.values():
        translated_entry(entry, "ja")
    return data.entries


def cited(entry, style) -> str:
    names = style.person.author_or_editor_or_title(full=False)
    return names.format_data({"entry": entry, "style": style}).render_as("text")


@pytest.mark.parametrize(
    ("key", "japanese_citation"),
    [
        ("sato2023attention", "佐藤"),  # one Japanese author: the family name
        ("okazaki2022nlp", "岡崎ほか"),  # five: the first, and ほか
        ("vaswani2017attention", "Vaswani ら"),  # eight with Latin names: the first, and ら
        ("glorot2010understanding", "Glorot と Bengio"),  # two, joined by と
        ("omurice2023sdpa", "オムライスの備忘録（yhayato1320）"),  # a pen name, whole
    ],
)
def test_a_japanese_page_cites_as_a_japanese_text_does(entries, key, japanese_citation):
    assert cited(entries[key], JapaneseLabelStyle()) == japanese_citation


def test_the_english_edition_cites_as_before():
    english = parse_file(str(ROOT / "references.bib"), "bibtex").entries
    style = find_plugin("sphinxcontrib.bibtex.style.referencing", "label")()
    assert cited(english["sato2023attention"], style) == "佐藤拓真 (Takuma Sato)"
    assert cited(english["vaswani2017attention"], style) == "Vaswani et al."


def listed(entry, style=None) -> str:
    style = style or JapaneseBibliographyStyle()
    return style.format_entry("1", entry).text.render_as("text")


def test_the_japanese_bibliography_writes_japanese_names_family_name_first(entries):
    assert listed(entries["sato2023attention"]).startswith("佐藤拓真. ")
    assert listed(entries["okazaki2022nlp"]).startswith(
        "岡崎直観、荒瀬由紀、鈴木潤、鶴岡慶雅、宮尾祐介. "
    )
    assert listed(entries["glorot2010understanding"]).startswith(
        "Xavier Glorot and Yoshua Bengio. "
    )
    english = parse_file(str(ROOT / "references.bib"), "bibtex").entries
    plain = pybtex.plugin.find_plugin("pybtex.style.formatting", "plain")()
    assert listed(english["sato2023attention"], plain).startswith("佐藤拓真 (Takuma Sato). ")


def test_a_name_is_japanese_by_its_script():
    assert japanese(Person("佐藤, 拓真"))
    assert japanese(Person("{オムライスの備忘録（yhayato1320）}"))
    assert not japanese(Person("Vaswani, Ashish"))
    assert not japanese(Person("Kaiser, {\\L}ukasz"))
