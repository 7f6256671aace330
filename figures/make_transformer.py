"""Draw figures/transformer.svg: the encoder-decoder Transformer, post-norm (chapter 6).

Run from the repository root:  .venv/bin/python figures/make_transformer.py
The boxes are the sub-layers of attnkit.transformer.EncoderDecoderTransformer and of
nn.Transformer, bottom to top; a thin line beside each sub-layer is its residual connection.
"""

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch, Rectangle

from attnkit.figure_text import save_in_languages
from attnkit.plots import COLUMN_PX, DPI

HERE = Path(__file__).resolve().parent

ATTENTION, NORM, FFN, EDGE_COLOUR = "#dbe9f6", "#fdf1c8", "#dff0d8", "#333333"
PLAIN, GREY = "#f3f3f3", "#555555"
WIDTH, HEIGHT = 3.5, 0.52  # a box, in data units
ENCODER_X, DECODER_X = 2.8, 7.2  # the columns' centres

# (label, colour) from the bottom of each stack's repeated layer to its top
ENCODER_LAYER = [
    ("multi-head self-attention", ATTENTION),
    ("add & LayerNorm", NORM),
    ("feed-forward network", FFN),
    ("add & LayerNorm", NORM),
]
DECODER_LAYER = [
    ("masked multi-head self-attention", ATTENTION),
    ("add & LayerNorm", NORM),
    ("multi-head cross-attention", ATTENTION),
    ("add & LayerNorm", NORM),
    ("feed-forward network", FFN),
    ("add & LayerNorm", NORM),
]
STEP = 0.85  # from one box's centre to the next one's


def box(ax, x, y, text, colour, *, dashed=False):
    ax.add_patch(
        FancyBboxPatch(
            (x - WIDTH / 2, y - HEIGHT / 2),
            WIDTH,
            HEIGHT,
            boxstyle="round,pad=0.02,rounding_size=0.08",
            facecolor=colour,
            edgecolor=EDGE_COLOUR,
            linewidth=1,
            linestyle="--" if dashed else "-",
        )
    )
    ax.text(x, y, text, ha="center", va="center", fontsize=10)


def arrow(ax, start, end, color=EDGE_COLOUR):
    ax.add_patch(
        FancyArrowPatch(
            start,
            end,
            arrowstyle="-|>",
            mutation_scale=10,
            linewidth=1,
            color=color,
            shrinkA=0,
            shrinkB=0,
        )
    )


def up(ax, x, y_from, y_to):
    """An arrow from the box centred at ``y_from`` to the one at ``y_to``."""
    arrow(ax, (x, y_from + HEIGHT / 2), (x, y_to - HEIGHT / 2))


def stack(ax, x, bottom, layer, side):
    """Draw one repeated layer from ``bottom`` up; return each box's centre. The residual
    lines run on ``side`` (-1 left, +1 right) of the column."""
    ys = [bottom + i * STEP for i in range(len(layer))]
    for i, ((label, colour), y) in enumerate(zip(layer, ys)):
        box(ax, x, y, label, colour)
        if i:
            up(ax, x, ys[i - 1], y)
    # the frame around the repeated layer, and N
    pad = 0.28
    ax.add_patch(
        Rectangle(
            (x - WIDTH / 2 - pad, ys[0] - HEIGHT / 2 - pad),
            WIDTH + 2 * pad,
            ys[-1] - ys[0] + HEIGHT + 2 * pad,
            facecolor="none",
            edgecolor=GREY,
            linewidth=1,
        )
    )
    ax.text(
        x + side * (WIDTH / 2 + pad + 0.12),
        (ys[0] + ys[-1]) / 2,
        r"$N\times$",
        ha="left" if side > 0 else "right",
        va="center",
        fontsize=12,
    )
    # each sub-layer's input goes round it into the add & LayerNorm above it
    rail = x + side * (WIDTH / 2 + 0.12)
    edge = x + side * WIDTH / 2
    for i in range(0, len(layer), 2):
        branch = ys[i] - HEIGHT / 2 - 0.16  # below the sub-layer
        ax.plot([x, rail, rail], [branch, branch, ys[i + 1]], color=GREY, linewidth=1)
        arrow(ax, (rail, ys[i + 1]), (edge, ys[i + 1]), color=GREY)
    return ys


def main(path=HERE / "transformer.svg"):
    plt.rcParams["svg.fonttype"] = "path"  # glyphs as outlines: no font needed to view
    plt.rcParams["svg.hashsalt"] = (
        "transformer"  # stable ids: the file only changes with the figure
    )
    # drawn for the column (attnkit.plots), less the 8 px a side that the page's {figure} pads
    fig, ax = plt.subplots(figsize=((COLUMN_PX - 16) / DPI, 6.6), layout="none")
    fig.subplots_adjust(left=0, right=1, bottom=0, top=1)

    # the encoder (left), bottom to top
    ax.text(ENCODER_X, 0.0, "source tokens", ha="center", va="center", fontsize=10, color=GREY)
    box(ax, ENCODER_X, 0.75, "embedding + positional encoding", PLAIN)
    arrow(ax, (ENCODER_X, 0.18), (ENCODER_X, 0.75 - HEIGHT / 2))
    enc = stack(ax, ENCODER_X, 2.05, ENCODER_LAYER, side=-1)
    ax.plot([ENCODER_X, ENCODER_X], [0.75 + HEIGHT / 2, 2.05 - HEIGHT / 2], color=EDGE_COLOUR)
    arrow(ax, (ENCODER_X, 1.5), (ENCODER_X, 2.05 - HEIGHT / 2))
    memory_y = enc[-1] + 1.05
    box(ax, ENCODER_X, memory_y, "LayerNorm", "white", dashed=True)
    up(ax, ENCODER_X, enc[-1], memory_y)

    # the decoder (right)
    ax.text(
        DECODER_X,
        0.0,
        "target tokens, shifted right",
        ha="center",
        va="center",
        fontsize=10,
        color=GREY,
    )
    box(ax, DECODER_X, 0.75, "embedding + positional encoding", PLAIN)
    arrow(ax, (DECODER_X, 0.18), (DECODER_X, 0.75 - HEIGHT / 2))
    dec = stack(ax, DECODER_X, 2.05, DECODER_LAYER, side=1)
    ax.plot([DECODER_X, DECODER_X], [0.75 + HEIGHT / 2, 2.05 - HEIGHT / 2], color=EDGE_COLOUR)
    arrow(ax, (DECODER_X, 1.5), (DECODER_X, 2.05 - HEIGHT / 2))
    top = dec[-1] + 1.05
    box(ax, DECODER_X, top, "LayerNorm", "white", dashed=True)
    up(ax, DECODER_X, dec[-1], top)
    box(ax, DECODER_X, top + STEP, "linear + softmax", PLAIN)
    up(ax, DECODER_X, top, top + STEP)
    ax.text(
        DECODER_X,
        top + STEP + 0.62,
        "probabilities of the next token",
        ha="center",
        va="center",
        fontsize=10,
        color=GREY,
    )
    arrow(ax, (DECODER_X, top + STEP + HEIGHT / 2), (DECODER_X, top + STEP + 0.45))

    # the memory: the encoder's output enters every decoder layer's cross-attention
    cross = dec[2]
    turn_x = (ENCODER_X + DECODER_X) / 2
    out_y = memory_y + HEIGHT / 2 + 0.25
    ax.plot(
        [ENCODER_X, ENCODER_X, turn_x, turn_x],
        [memory_y + HEIGHT / 2, out_y, out_y, cross],
        color=EDGE_COLOUR,
        linewidth=1,
    )
    arrow(ax, (turn_x, cross), (DECODER_X - WIDTH / 2, cross))
    ax.text((ENCODER_X + turn_x) / 2, out_y + 0.08, "memory", ha="center", va="bottom", fontsize=10)
    ax.text(
        ENCODER_X,
        top + 0.3,
        "dashed: the final LayerNorm that\nnn.Transformer adds (the paper has none)",
        ha="center",
        va="center",
        fontsize=9,
        color=GREY,
    )

    ax.text(ENCODER_X, -0.5, "encoder", ha="center", va="center", fontsize=11)
    ax.text(DECODER_X, -0.5, "decoder", ha="center", va="center", fontsize=11)
    ax.set_xlim(0, 10)
    ax.set_ylim(-0.8, top + STEP + 0.9)
    ax.axis("off")
    for written in save_in_languages(fig, path, metadata={"Date": None}):
        print(f"wrote {written}")


if __name__ == "__main__":
    main()
