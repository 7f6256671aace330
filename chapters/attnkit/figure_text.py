"""A finished matplotlib figure's words, written again in another language.

The chapters' cells run once, in English, and both editions read the same outputs; so when a
figure is shown (``attnkit.plots.retina_png``) it is also drawn in Japanese, and the Japanese
edition shows that picture (``_ext/translated_outputs.py``). Every text of the figure that has
words (titles, axis labels, tick labels, legends, annotations, colour-bar labels) is looked up
whole in the catalogue of figure labels, ``locales/<language>/LC_MESSAGES/figures.po`` beside
this module, and drawn in the language's font. The catalogue is read by the standard library's
:mod:`gettext` from the ``figures.mo`` compiled beside it (``make catalogues``, ``booktools/
compiled_catalogues.py``), which attnkit ships; an untranslated or fuzzy entry is left out of
it, so its label is one the catalogue lacks. A text has words when it has two Latin letters in
a row outside mathtext (``$...$``): numbers, symbols such as ``x`` or ``A`` and formulas stay
as they are. A token of an example sentence stays English by an entry that gives it
unchanged, as the cell's printed output shows it. A label with a number the code computes
("validation loss: 2.29") is found by its template, each number written ``{}`` ("validation
loss: {}"), where the label itself has no entry.
"""

from __future__ import annotations

import functools
import gettext
import re
from contextlib import contextmanager
from pathlib import Path

from matplotlib.category import StrCategoryFormatter
from matplotlib.text import Text
from matplotlib.ticker import FixedFormatter, FuncFormatter

LOCALES = Path(__file__).resolve().parent / "locales"
DOMAIN = "figures"
FONTS = {"ja": ["IPAexGothic", "DejaVu Sans"]}  # the language's font first, Latin after it
MATH = re.compile(r"(?<!\\)\$.*?(?<!\\)\$")
WORD = re.compile(r"[A-Za-z]{2}")
NUMBER = re.compile(r"(?<![\w.])\d+(?:\.\d+)?(?![\w.])")


def catalogue_path(language: str) -> Path:
    """The compiled catalogue of figure labels in ``language``."""
    return LOCALES / language / "LC_MESSAGES" / f"{DOMAIN}.mo"


class _Lacking(gettext.NullTranslations):
    """The last fallback of a catalogue: a label it lacks reads ``None``, not the label, so
    that a lacking label is told from one the catalogue keeps as it is."""

    def gettext(self, message):
        return None


@functools.cache
def catalogue(language: str) -> gettext.GNUTranslations:
    """The figure labels' translations into ``language``: its ``gettext(label)`` is the
    translation, or ``None`` where the catalogue has none."""
    if language not in FONTS or not catalogue_path(language).is_file():
        raise ValueError(f"no figure labels in language {language!r}; choose one of {list(FONTS)}")
    translations = gettext.translation(DOMAIN, LOCALES, languages=[language])
    translations.add_fallback(_Lacking())
    return translations


def has_words(text: str) -> bool:
    """Whether ``text`` has words to translate: two Latin letters in a row outside mathtext."""
    return bool(WORD.search(MATH.sub("", text)))


def _texts(fig, draw: bool = True) -> list[Text]:
    """The figure's visible texts, drawn first (unless it just was) so that its ticks exist."""
    if draw:
        fig.canvas.draw()
    return [t for t in fig.findobj(Text) if t.get_visible() and t.get_text()]


def labels(fig, drawn: bool = False) -> list[str]:
    """The texts of ``fig`` that have words, each once, in the order they are found (``drawn``:
    it was just drawn, as it is when saved)."""
    texts = _texts(fig, draw=not drawn)
    return list(dict.fromkeys(t.get_text() for t in texts if has_words(t.get_text())))


@contextmanager
def in_language(fig, language: str, drawn: bool = False):
    """Within the block, ``fig`` has its words in ``language`` and its language's font; after
    it, as it was (``drawn``: it was just drawn, so its ticks exist). Yields the labels the
    catalogue lacks (they stay English), each once after the block, all found by then."""
    lookup = catalogue(language).gettext
    missing: list[str] = []

    def translated(text: str) -> str:
        if not has_words(text):
            return text
        if (words := lookup(text)) is not None:
            return words
        # a label with a computed number ("validation loss: 2.29") by its template's entry
        template = NUMBER.sub("{}", text)
        if (words := lookup(template)) is not None:
            numbers = iter(NUMBER.findall(text))
            return re.sub(r"\{\}", lambda _: next(numbers), words)
        missing.append(template)
        return text

    # tick labels are written again by their formatter at each drawing: translate those
    formatters = []
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            for get, put in (
                (axis.get_major_formatter, axis.set_major_formatter),
                (axis.get_minor_formatter, axis.set_minor_formatter),
            ):
                original = get()
                # labels given as a list or by a function; numbers' formatters are left alone
                if not isinstance(original, (FixedFormatter, FuncFormatter, StrCategoryFormatter)):
                    continue
                replacement = FuncFormatter(lambda x, pos, f=original: translated(f(x, pos)))
                formatters.append((put, original))
                put(replacement)
    texts = _texts(fig, draw=not drawn)
    saved = [(t, t.get_text(), t.get_fontproperties().copy()) for t in texts]
    for t in texts:
        t.set_text(translated(t.get_text()))
        t.set_fontfamily(FONTS[language])
    try:
        yield missing  # filled as the figure is drawn: its tick labels too
    finally:
        missing[:] = dict.fromkeys(missing)
        for t, text, font in saved:
            t.set_text(text)
            t.set_fontproperties(font)
        for put, original in formatters:
            put(original)


def save_in_languages(fig, path: Path, **savefig) -> list[Path]:
    """Save ``fig`` at ``path`` and, translated, in each other language at
    ``<name>.<language><suffix>``, where Sphinx's ``figure_language_filename`` finds it.
    Raises ValueError naming the labels a catalogue lacks. Returns the paths written."""
    fig.savefig(path, **savefig)
    written = [path]
    for language in FONTS:
        translated = path.with_name(f"{path.stem}.{language}{path.suffix}")
        with in_language(fig, language) as missing:
            if missing:
                raise ValueError(
                    f"{catalogue_path(language).with_suffix('.po')} has no translation of the "
                    f"labels {missing}"
                )
            fig.savefig(translated, **savefig)
        written.append(translated)
    return written
