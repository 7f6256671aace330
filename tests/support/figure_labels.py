"""What the tests of figures in the reader's language share: the English left in a drawing's
texts, and the texts a figure shows."""

import re

from babel.messages.pofile import read_po

from attnkit import figure_text


def translations(language="ja"):
    """The catalogue of figure labels' translated entries, ``English: translation``, as its
    ``.mo`` has them (fuzzy and empty entries left out)."""
    with open(figure_text.catalogue_path(language).with_suffix(".po"), "rb") as file:
        catalogue = read_po(file)
    return {m.id: m.string for m in catalogue if m.id and m.string and not m.fuzzy}


# labels the catalogue keeps as they are (a token of an example sentence, which the cells print)
KEPT = {english for english, japanese in translations().items() if english == japanese}
# names and units the Japanese pages write in Latin letters too
NAMES = re.compile(r"(?<![A-Za-z])(LayerNorm|nn\.Transformer|NTK-aware|ms|MiB)(?![A-Za-z])")


def english_left(texts):
    """The texts that still have English words, but for the labels kept as they are and names."""
    return [t for t in texts if t not in KEPT and figure_text.has_words(NAMES.sub("", t))]


def shown_texts(fig):
    """The texts ``fig`` shows, drawn."""
    return [t.get_text() for t in figure_text._texts(fig)]
