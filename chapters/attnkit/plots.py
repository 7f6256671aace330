"""Matplotlib figures of attention weights."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
from matplotlib import font_manager

__all__ = ["attention_heatmap", "alignment_diagram"]

CMAP = "viridis"


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


_use_japanese_fallback_font()


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


def attention_heatmap(
    weights, query_labels, key_labels, *, ax=None, title=None, annotate=True, colorbar=True
):
    """Draw attention weights: query tokens on rows, key tokens on columns.

    ``weights`` is ``(m, n)`` (or ``(n,)`` for a single query, drawn as one
    row). The colour scale is fixed to [0, 1] so that heatmaps side by side
    compare. Pass ``ax`` to draw into a cell of a figure grid. Returns the axes.
    """
    w, query_labels, key_labels = _weights_and_labels(weights, query_labels, key_labels)
    if ax is None:
        _, ax = plt.subplots(figsize=(0.9 * len(key_labels) + 1.8, 0.6 * len(query_labels) + 1.2))
    image = ax.imshow(w, cmap=CMAP, vmin=0.0, vmax=1.0, aspect="auto")
    ax.set_xticks(range(len(key_labels)), key_labels)
    ax.set_yticks(range(len(query_labels)), query_labels)
    ax.set_xlabel("key (attended to)")
    ax.set_ylabel("query (attending)")
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
                fontsize=9,
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
        _, ax = plt.subplots(figsize=(1.3 * max(w.shape) + 1, 2.4))
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
