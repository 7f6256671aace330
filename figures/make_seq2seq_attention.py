"""Draw figures/seq2seq-attention.svg: an encoder-decoder with attention (chapter 1).

Run from the repository root:  .venv/bin/python figures/make_seq2seq_attention.py
The weights on the arrows are computed with attnkit from chapter 1's hand-made vectors.
"""

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch

from attnkit.core import attention
from attnkit.figure_text import save_in_languages
from attnkit.plots import CMAP, COLUMN_PX, DPI

HERE = Path(__file__).resolve().parent

# chapter 1's example: H (I, d) and the decoder state of あなたを (d,)
H = np.array([[2.0, 0.0, 0.2], [0.0, 2.0, 0.4], [0.2, 0.0, 2.0]])
z = np.array([0.0, 0.2, 1.5])
_, weights = attention(z, H)

ENCODER = ["I", "love", "you"]
DECODER = ["私は", "あなたを", "愛して", "いる"]
FOCUS = 1  # the decoder position whose attention is drawn


def box(ax, x, y, text, colour):
    ax.add_patch(
        FancyBboxPatch(
            (x - 0.38, y - 0.22),
            0.76,
            0.44,
            boxstyle="round,pad=0.02",
            facecolor=colour,
            edgecolor="#333333",
            linewidth=1,
        )
    )
    ax.text(x, y, text, ha="center", va="center", fontsize=12)


def main(path=HERE / "seq2seq-attention.svg"):
    plt.rcParams["svg.fonttype"] = "path"  # glyphs as outlines: no font needed to view
    plt.rcParams["svg.hashsalt"] = "seq2seq"  # stable ids: the file only changes with the figure
    # drawn for the column (attnkit.plots), less the 8 px a side that the page's {figure}
    # pads its image with: shown at its drawn size, 1 pt of text is 4/3 CSS px
    fig, ax = plt.subplots(figsize=((COLUMN_PX - 16) / DPI, 2.9), layout="none")
    fig.subplots_adjust(left=0, right=1, bottom=0, top=1)
    enc_x = np.arange(len(ENCODER)) * 1.1
    dec_x = 4.6 + np.arange(len(DECODER)) * 1.1
    for i, (x, token) in enumerate(zip(enc_x, ENCODER)):
        ax.text(x, -0.1, token, ha="center", va="top", fontsize=13)
        box(ax, x, 0.6, f"$\\mathbf{{h}}_{i + 1}$", "#dbe9f6")
    for j, (x, token) in enumerate(zip(dec_x, DECODER)):
        box(ax, x, 0.6, f"$\\mathbf{{z}}_{j + 1}$", "#fde3c8" if j == FOCUS else "#f3f3f3")
        ax.text(x, -0.1, token, ha="center", va="top", fontsize=13)
    colours = plt.get_cmap(CMAP)
    # information flows from every encoder output into the decoder state,
    # through an arrow as thick as its attention weight
    for i, (x, w) in enumerate(zip(enc_x, weights)):
        ax.text(x, 0.95, f"$a_{i + 1}$ = {w:.2f}", ha="center", fontsize=11)
        ax.add_patch(
            FancyArrowPatch(
                (x, 1.2),
                (dec_x[FOCUS], 0.85),
                connectionstyle=f"arc3,rad={-0.25 - 0.05 * i}",
                arrowstyle="-|>",
                mutation_scale=14,
                linewidth=1 + 7 * w,
                color=colours(0.15 + 0.8 * w),
            )
        )
    ax.text(
        dec_x[FOCUS] + 0.45,
        1.05,
        "$\\hat{\\mathbf{z}}_2 = \\sum_i a_i \\mathbf{h}_i$",
        ha="left",
        fontsize=12,
    )
    ax.text(
        enc_x.mean(), -0.75, "encoder (reads the input)", ha="center", fontsize=11, color="#555555"
    )
    ax.text(
        dec_x.mean(),
        -0.75,
        "decoder (writes the output)",
        ha="center",
        fontsize=11,
        color="#555555",
    )
    ax.set_xlim(-0.6, dec_x[-1] + 0.6)
    ax.set_ylim(-1.0, 2.0)
    ax.axis("off")
    for written in save_in_languages(fig, path, metadata={"Date": None}):
        print(f"wrote {written}")


if __name__ == "__main__":
    main()
