"""Matplotlib figures of attention weights, and the book's one figure style.

Importing this module sets the style (``use_book_style``): every figure the chapters draw, on
the web page or in a downloaded notebook, is drawn for the book's content column. The helpers'
words (axis labels, colour bars) are in the reader's language: ``language`` ("en" or "ja"),
else the language the exercise checks answer in (``ATTNKIT_LANGUAGE``, which the Japanese
notebooks set), with a Japanese font first for Japanese figures.
"""

from __future__ import annotations

import importlib.util
import io
from binascii import b2a_base64
from pathlib import Path

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
from matplotlib import font_manager
from matplotlib.cm import ScalarMappable
from matplotlib.colors import Normalize
from matplotlib.figure import Figure
from PIL import Image

from attnkit import figure_text
from attnkit.translated import TRANSLATED_INTO, TRANSLATIONS, UNTRANSLATED

__all__ = [
    "COLUMN_INCHES",
    "attention_heatmap",
    "alignment_diagram",
    "finish_heatmap_grid",
    "use_book_style",
]

CMAP = "viridis"

# The helpers' words, in each language the book is written in
WORDS = {
    "en": {"key": "key (attended to)", "query": "query (attending)", "weight": "attention weight"},
    "ja": {
        "key": "キー（注意を向けられる側）",
        "query": "クエリ（注意を向ける側）",
        "weight": "注目度",
    },
}
JAPANESE_FONT = "IPAexGothic"  # shipped with japanize-matplotlib (see _use_japanese_fallback_font)

# The content column of a chapter page is 688 CSS px wide on a 1280 px screen. A figure drawn at
# 96 dpi, CSS's pixels per inch, shows at its drawn size: 1 point of text is 4/3 CSS px.
COLUMN_PX = 688
DPI = 96
COLUMN_INCHES = COLUMN_PX / DPI
# The smallest text a figure may use: 9 pt is 12 px in the column. On a narrow screen a figure
# shrinks to no less than MIN_SCALE of its size (then scrolls sideways in its box: _static/
# book.css), so the same text stays at 9 px or more on a 375 px phone.
MIN_FONT_PT = 9
MIN_SCALE = 0.75

BOOK_STYLE = {
    "figure.dpi": DPI,
    "figure.figsize": (COLUMN_INCHES, 0.55 * COLUMN_INCHES),
    # fits titles, labels and colour bars inside the figure, so its size is its width on the page
    "figure.constrained_layout.use": True,
    "font.size": 10,  # tick labels, axis labels and legends: 13.3 px
    "axes.titlesize": 11,
    "legend.fontsize": MIN_FONT_PT,
}


def _use_japanese_fallback_font():
    """Let figures show Japanese token labels (私は, 愛して …).

    The IPAexGothic font ships inside the japanize-matplotlib package. We register
    the file directly instead of importing that package, whose import prints
    deprecation warnings; DejaVu Sans stays first so Latin text looks as usual.
    """
    spec = importlib.util.find_spec("japanize_matplotlib")
    if spec is None or not spec.submodule_search_locations:
        return
    font = Path(spec.submodule_search_locations[0]) / "fonts" / "ipaexg.ttf"
    if font.exists():
        font_manager.fontManager.addfont(str(font))
        plt.rcParams["font.family"] = ["DejaVu Sans", "IPAexGothic"]


def figure_language(language: str | None = None) -> str:
    """``language`` if given, else the language of the exercise checks' messages."""
    if language is None:
        from attnkit.exercises.wording import language as checks_language

        language = checks_language()
    if language not in WORDS:
        raise ValueError(f"no figure words in language {language!r}; choose one of {list(WORDS)}")
    return language


def _font(language: str) -> dict:
    """Text properties for ``language``: a Japanese font before the Latin one in Japanese."""
    return {"fontfamily": [JAPANESE_FONT, "DejaVu Sans"]} if language == "ja" else {}


def _png(fig) -> bytes:
    """``fig`` as a PNG of twice its pixels, in 256 colours."""
    drawn = io.BytesIO()
    fig.savefig(drawn, format="png", dpi=2 * fig.dpi)
    image = Image.open(drawn).convert("RGB").quantize(256, method=Image.Quantize.FASTOCTREE)
    png = io.BytesIO()
    image.save(png, format="png")
    return png.getvalue()


def _base64(data: bytes) -> str:
    return b2a_base64(data, newline=False).decode("ascii")


def retina_png(fig):
    """``fig`` as Jupyter shows it in the book's style: a PNG of twice its pixels, sharp on
    high-density screens, with its display size (the size it was drawn at) in the metadata,
    and, where it has words, the same figure in each of TRANSLATED_INTO's languages.

    In 256 colours: a third of the bytes of full colour, and no visible difference in plots
    of flat colours and text. Returns the PNG in base64 and the metadata, as IPython expects.
    """
    png = _png(fig)
    width, height = np.round(fig.get_size_inches() * fig.dpi).astype(int)
    metadata = {"width": int(width), "height": int(height)}
    if TRANSLATED_INTO and figure_text.labels(fig, drawn=True):
        metadata[TRANSLATIONS], metadata[UNTRANSLATED] = {}, {}
        for language in TRANSLATED_INTO:
            with figure_text.in_language(fig, language, drawn=True) as missing:
                metadata[TRANSLATIONS][language] = _base64(_png(fig))
            metadata[UNTRANSLATED][language] = missing
    return _base64(png), metadata


def use_book_style():
    """Draw figures for the book's column: its width, legible sizes, twice the pixels."""
    plt.rcParams.update(BOOK_STYLE)
    _use_japanese_fallback_font()
    try:
        from IPython import get_ipython
    except ImportError:  # plain Python: nothing is shown inline
        return
    shell = get_ipython()
    if shell is not None:
        # Jupyter's inline backend sets its own formatter when it starts, at the first figure
        # unless started now; then it keeps this one, which shows the whole figure (not its
        # bounding box, so that it keeps the width it was drawn for)
        plt.switch_backend(matplotlib.get_backend())
        shell.display_formatter.formatters["image/png"].for_type(Figure, retina_png)


use_book_style()


def _weights_and_labels(weights, query_labels, key_labels):
    """``weights`` as an ``(m, n)`` array that fits ``m`` query and ``n`` key labels."""
    w = np.atleast_2d(np.asarray(weights, dtype=float))
    query_labels, key_labels = list(query_labels), list(key_labels)
    if w.shape != (len(query_labels), len(key_labels)):
        raise ValueError(
            f"weights of shape {np.shape(weights)} do not fit {len(query_labels)} query labels "
            f"and {len(key_labels)} key labels"
        )
    return w, query_labels, key_labels


def _labels_too_wide(ax, labels):
    """Whether the widest of ``labels``, side by side along the x axis of ``ax``, is wider
    than its column of the heatmap.

    Estimated before layout: a Latin character is about 0.6 em wide, a Japanese one 1 em."""
    size = plt.rcParams["xtick.labelsize"]
    em = font_manager.FontProperties(size=size).get_size_in_points() / 72  # inches
    widest = max(
        (sum(1.0 if ord(c) > 0x2E80 else 0.6 for c in str(t)) * em for t in labels), default=0
    )
    fig_width = ax.figure.get_figwidth()
    column = 0.8 * ax.get_position().width * fig_width / len(labels)
    return widest > 0.9 * column


def attention_heatmap(
    weights,
    query_labels,
    key_labels,
    *,
    ax=None,
    title=None,
    annotate=True,
    colorbar=True,
    language=None,
):
    """Draw attention weights: query tokens on rows, key tokens on columns.

    ``weights`` is ``(m, n)`` (or ``(n,)`` for a single query, drawn as one
    row). The colour scale is fixed to [0, 1] so that heatmaps side by side
    compare. Pass ``ax`` to draw into a cell of a figure grid. The axes are
    labelled in ``language`` (see the module's docstring). Returns the axes.
    """
    words = WORDS[language := figure_language(language)]
    w, query_labels, key_labels = _weights_and_labels(weights, query_labels, key_labels)
    if ax is None:
        width = min(COLUMN_INCHES, 0.8 * len(key_labels) + 2.6)
        _, ax = plt.subplots(figsize=(width, 0.45 * len(query_labels) + 1.5))
    image = ax.imshow(w, cmap=CMAP, vmin=0.0, vmax=1.0, aspect="auto")
    ax.set_xticks(range(len(key_labels)), key_labels)
    if _labels_too_wide(ax, key_labels):  # slanted, so that neighbours do not run together
        ax.tick_params(axis="x", labelrotation=45)
        plt.setp(ax.get_xticklabels(), ha="left", rotation_mode="anchor")
    ax.set_yticks(range(len(query_labels)), query_labels)
    ax.set_xlabel(words["key"], **_font(language))
    ax.set_ylabel(words["query"], **_font(language))
    ax.tick_params(top=True, labeltop=True, bottom=False, labelbottom=False)
    ax.xaxis.set_label_position("top")
    if annotate:
        for (row, col), value in np.ndenumerate(w):
            # dark text on the bright end of viridis, light text elsewhere
            ax.text(
                col,
                row,
                f"{value:.2f}",
                ha="center",
                va="center",
                fontsize=MIN_FONT_PT,
                color="black" if value > 0.6 else "white",
            )
    if title:
        ax.set_title(title, pad=12)
    if colorbar:
        ax.figure.colorbar(image, ax=ax, fraction=0.046, pad=0.04)
    return ax


def alignment_diagram(weights, query_labels, key_labels, *, ax=None, title=None):
    """Draw attention as lines between two rows of tokens.

    Keys (e.g. the encoder's input tokens) sit on the top row, queries (e.g.
    the decoder's output tokens) on the bottom row; the line from query ``j``
    to key ``i`` is as thick and as dark as ``weights[j, i]``. Returns the axes.
    """
    w, query_labels, key_labels = _weights_and_labels(weights, query_labels, key_labels)
    if ax is None:
        _, ax = plt.subplots(figsize=(min(COLUMN_INCHES, 1.3 * max(w.shape) + 1), 2.4))
    # spread both rows over the same width so that lines do not all lean one way
    width = max(w.shape) - 1
    key_x = np.linspace(0, width, len(key_labels)) if len(key_labels) > 1 else [width / 2]
    query_x = np.linspace(0, width, len(query_labels)) if len(query_labels) > 1 else [width / 2]
    for (row, col), value in np.ndenumerate(w):
        ax.plot(
            [query_x[row], key_x[col]],
            [0, 1],
            color=plt.get_cmap(CMAP)(value),
            linewidth=0.5 + 6 * value,
            alpha=0.25 + 0.75 * value,
            solid_capstyle="round",
        )
    for x, label in zip(key_x, key_labels):
        ax.text(x, 1.08, label, ha="center", va="bottom", fontsize=11)
    for x, label in zip(query_x, query_labels):
        ax.text(x, -0.08, label, ha="center", va="top", fontsize=11)
    ax.set_xlim(-0.6, width + 0.6)
    ax.set_ylim(-0.45, 1.45)
    ax.axis("off")
    if title:
        ax.set_title(title)
    return ax


def finish_heatmap_grid(axes, label=None, language=None):
    """Finish a grid of heatmaps drawn with ``colorbar=False``: one colour bar for all (they
    share attention_heatmap's fixed scale, [0, 1]), below them so that the cells keep the
    column's width, labelled ``label`` (the attention weight, in ``language``, by default),
    and the axis labels once, over the top row
    and beside the left column, to leave the cells room. Returns the colour bar."""
    language = figure_language(language)
    label = WORDS[language]["weight"] if label is None else label
    axes = list(np.ravel(axes))
    for ax in axes:
        place = ax.get_subplotspec()
        if place.rowspan.start > 0:
            ax.set_xlabel("")
        if place.colspan.start > 0:
            ax.set_ylabel("")
    scale = ScalarMappable(Normalize(0.0, 1.0), CMAP)
    bar = axes[0].figure.colorbar(scale, ax=axes, location="bottom", fraction=0.04, aspect=50)
    bar.set_label(label, **_font(language))
    return bar
