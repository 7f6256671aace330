"""Draw _static/card.png: the picture a shared link to the book shows (its Open Graph image).

Run from the repository root:  .venv/bin/python figures/make_card.py
1200 x 630 px, the size link previews expect: the book's title on the left and, on the right,
chapter 1's heatmap, the weights with which each word of the Japanese translation attends to
"I love you", computed by attnkit from the chapter's own vectors.
"""

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

from attnkit.core import attention
from attnkit.plots import attention_heatmap

ROOT = Path(__file__).resolve().parent.parent
WIDTH_PX, HEIGHT_PX, DPI = 1200, 630, 100
INK, MUTED = "#1a1a1a", "#4d4d4d"

# chapter 1 (chapters/attention.md): encoder outputs H and decoder states Z, one token per row
ENCODER_TOKENS = ["I", "love", "you"]
DECODER_TOKENS = ["私は", "あなたを", "愛して", "いる"]
H = np.array([[2.0, 0.0, 0.2], [0.0, 2.0, 0.4], [0.2, 0.0, 2.0]])  # (3, 3)
Z = np.array([[1.5, 0.0, 0.0], [0.0, 0.2, 1.5], [0.0, 1.5, 0.5], [0.3, 0.8, 0.3]])  # (4, 3)


def main(out: Path = ROOT / "_static" / "card.png") -> Path:
    _, weights = attention(Z, H)  # (4, 3): each decoder token's weights over the encoder's
    with plt.rc_context({"figure.constrained_layout.use": False, "font.size": 16}):
        fig = plt.figure(figsize=(WIDTH_PX / DPI, HEIGHT_PX / DPI), dpi=DPI, facecolor="white")
        fig.text(
            0.06,
            0.70,
            "Attention,\nstep by step",
            fontsize=44,
            weight="bold",
            family="DejaVu Sans",
            color=INK,
            va="center",
            linespacing=1.1,
        )
        fig.text(
            0.06,
            0.40,
            "The attention mechanism of the\nTransformer, derived, coded and\n"
            "checked, one step at a time.",
            fontsize=20,
            color=MUTED,
            va="center",
            linespacing=1.35,
        )
        fig.text(0.06, 0.14, "Formulas, runnable code and heatmaps", fontsize=16, color=MUTED)
        ax = fig.add_axes((0.64, 0.12, 0.30, 0.66))
        attention_heatmap(weights, DECODER_TOKENS, ENCODER_TOKENS, ax=ax, colorbar=False)
        for text in ax.texts:
            text.set_fontsize(15)
        ax.tick_params(labelsize=15)
        ax.xaxis.label.set_fontsize(13)
        ax.yaxis.label.set_fontsize(13)
        out.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(out, dpi=DPI, metadata={"Software": None})
        plt.close(fig)
    return out


if __name__ == "__main__":
    print(main())
