"""Figures in the reader's language: a figure's own texts, translated by the catalogue of
figure labels (attnkit.figure_text), have no English label left; a label the catalogue lacks
is named; the English figure is drawn as before."""

import gettext
import re

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pytest

from attnkit import figure_text, plots
from tests.support.book import ROOT
from tests.support.catalogues import compiled_catalogue
from tests.support.figure_labels import english_left, shown_texts, translations

JAPANESE = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]")


def a_figure_with_every_kind_of_text():
    fig, (left, right) = plt.subplots(1, 2)
    plots.attention_heatmap(
        np.eye(3), ["I", "love", "you"], ["I", "love", "you"], ax=left, language="en"
    )
    right.plot([0, 1], [1, 0], label="encoder")
    right.legend()
    right.set_title("decoder")
    right.annotate("memory", (0.5, 0.5))
    right.set_xticks([0, 1], ["encoder", "decoder"])
    right.set_ylabel("$d_k$")  # mathtext: stays
    fig.suptitle("source tokens")
    return fig


def test_the_compiled_catalogue_lacks_what_is_not_a_translation(tmp_path, monkeypatch):
    """A fuzzy or empty entry is a label the catalogue lacks; one kept as it is is not."""
    compiled_catalogue(
        tmp_path,
        "figures",
        [
            'msgid ""',
            '"two lines, {} \\"quoted\\""',
            'msgstr "二行 {} \\"引用\\""',
            "",
            'msgid "kept as it is"',
            'msgstr "kept as it is"',
            "",
            "#, fuzzy",
            'msgid "changed"',
            'msgstr "古い"',
            "",
            'msgid "not yet"',
            'msgstr ""',
        ],
    )
    monkeypatch.setattr(figure_text, "LOCALES", tmp_path)
    figure_text.catalogue.cache_clear()
    try:
        fig, ax = plt.subplots()
        ax.set_title('two lines, 7 "quoted"')
        ax.set_xticks([0, 1, 2], ["kept as it is", "changed", "not yet"])
        with figure_text.in_language(fig, "ja") as missing:
            shown = shown_texts(fig)
        assert {'二行 7 "引用"', "kept as it is", "changed", "not yet"} <= set(shown)
        assert sorted(missing) == ["changed", "not yet"]
        plt.close(fig)
    finally:
        figure_text.catalogue.cache_clear()


def test_the_compiled_catalogue_is_read_with_gettext():
    """The standard library reads the committed ``.mo``, not a reader of ``.po`` files."""
    assert isinstance(figure_text.catalogue("ja"), gettext.GNUTranslations)
    assert figure_text.catalogue_path("ja").suffix == ".mo"


def test_the_japanese_catalogue_has_no_english_but_the_labels_it_keeps():
    for english, japanese in translations().items():
        assert english == japanese or not english_left([japanese]), (
            f"figures.po translates {english!r} as {japanese!r}, still English"
        )
        assert english == japanese or JAPANESE.search(japanese), (english, japanese)


def test_a_translated_figure_has_no_english_label_and_is_english_again_after():
    fig = a_figure_with_every_kind_of_text()
    english = shown_texts(fig)
    assert {"decoder", "memory", "encoder", "source tokens", "key (attended to)"} <= set(english)
    with figure_text.in_language(fig, "ja") as missing:
        japanese = shown_texts(fig)
        fonts = {tuple(t.get_fontfamily()) for t in figure_text._texts(fig)}
    assert missing == []
    assert english_left(japanese) == [], f"English left in the Japanese figure: {japanese}"
    assert {"デコーダー", "メモリ", "エンコーダー", "キー（注意を向けられる側）", "$d_k$"} <= set(
        japanese
    )
    assert fonts == {tuple(figure_text.FONTS["ja"])}
    assert shown_texts(fig) == english
    plt.close(fig)


def test_a_label_without_a_translation_is_named():
    fig, ax = plt.subplots()
    ax.set_xlabel("a label nobody translated")
    ax.set_xticks([0, 1], ["encoder", "tokens nobody translated"])
    with figure_text.in_language(fig, "ja") as missing:
        pass
    assert sorted(missing) == ["a label nobody translated", "tokens nobody translated"]
    with pytest.raises(ValueError, match="a label nobody translated"):
        figure_text.save_in_languages(fig, ROOT / "_build" / "never-written.svg")
    plt.close(fig)


def test_no_figure_language_but_those_with_a_catalogue():
    with pytest.raises(ValueError, match="'fr'"):
        figure_text.catalogue("fr")


def test_the_shown_figure_carries_its_japanese_and_its_english_is_unchanged(monkeypatch):
    fig = a_figure_with_every_kind_of_text()
    png, metadata = plots.retina_png(fig)
    monkeypatch.setattr(plots, "TRANSLATED_INTO", ())
    assert plots.retina_png(fig) == (
        png,
        {"width": metadata["width"], "height": metadata["height"]},
    )
    japanese = metadata[plots.TRANSLATIONS]["ja"]
    assert metadata[plots.UNTRANSLATED] == {"ja": []}
    assert japanese != png and japanese.startswith("iVBORw0KGgo")  # a PNG, another picture
    plt.close(fig)


def test_a_figure_without_words_carries_no_translation():
    fig, ax = plt.subplots()
    ax.plot([0, 1], [0, 1])
    _png, metadata = plots.retina_png(fig)
    assert plots.TRANSLATIONS not in metadata
    plt.close(fig)


def test_a_label_with_a_computed_number_is_found_by_its_template():
    fig, ax = plt.subplots()
    ax.plot([0, 1], [2.29, 2.29], label="validation loss: 2.29")
    ax.legend()
    ax.set_title("unknown loss: 1.5")
    with figure_text.in_language(fig, "ja") as missing:
        japanese = shown_texts(fig)
    assert "検証損失：2.29" in japanese
    assert missing == ["unknown loss: {}"]
    plt.close(fig)


def test_a_shown_figure_names_the_tick_labels_it_lacks():
    fig, ax = plt.subplots()
    ax.set_xticks([0, 1], ["encoder", "a tick nobody translated"])
    _png, metadata = plots.retina_png(fig)
    assert metadata[plots.UNTRANSLATED] == {"ja": ["a tick nobody translated"]}
    plt.close(fig)
