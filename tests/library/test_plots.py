"""Tests of attnkit.plots: what the figures show, not how they look."""

import re

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pytest

from attnkit.exercises.wording import LANGUAGE_VARIABLE
from attnkit.plots import (
    COLUMN_PX,
    MIN_FONT_PT,
    alignment_diagram,
    attention_heatmap,
    finish_heatmap_grid,
    use_book_style,
)

WEIGHTS = np.array([[0.7, 0.2, 0.1], [0.05, 0.05, 0.9]])


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def test_heatmap_puts_queries_on_rows_and_keys_on_columns():
    ax = attention_heatmap(WEIGHTS, ["q1", "q2"], ["k1", "k2", "k3"])
    assert [t.get_text() for t in ax.get_yticklabels()] == ["q1", "q2"]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["k1", "k2", "k3"]
    image = ax.get_images()[0]
    assert np.array_equal(image.get_array(), WEIGHTS)


def test_heatmap_colour_scale_is_fixed_to_0_1():
    ax = attention_heatmap(np.full((2, 2), 0.5), ["a", "b"], ["c", "d"])
    assert ax.get_images()[0].get_clim() == (0.0, 1.0)


def test_heatmap_writes_each_weight_in_its_cell():
    ax = attention_heatmap(WEIGHTS, ["q1", "q2"], ["k1", "k2", "k3"])
    cells = {
        (round(t.get_position()[1]), round(t.get_position()[0])): t.get_text() for t in ax.texts
    }
    assert cells == {(r, c): f"{WEIGHTS[r, c]:.2f}" for r in range(2) for c in range(3)}
    assert (
        len(attention_heatmap(WEIGHTS, ["q1", "q2"], ["k1", "k2", "k3"], annotate=False).texts) == 0
    )


def test_heatmap_single_query_is_one_row():
    ax = attention_heatmap([0.2, 0.8], ["q"], ["a", "b"])
    assert ax.get_images()[0].get_array().shape == (1, 2)


def test_heatmaps_fill_a_figure_grid():
    _fig, axes = plt.subplots(1, 3)
    for ax in axes:
        assert (
            attention_heatmap(WEIGHTS, ["q1", "q2"], ["k1", "k2", "k3"], ax=ax, colorbar=False)
            is ax
        )
    assert all(len(ax.get_images()) == 1 for ax in axes)


@pytest.mark.parametrize("draw", [attention_heatmap, alignment_diagram])
def test_label_mismatch_names_the_shape(draw):
    with pytest.raises(ValueError, match=r"\(2, 3\).*3 query labels"):
        draw(WEIGHTS, ["a", "b", "c"], ["x", "y", "z"])


def test_alignment_diagram_draws_one_line_per_weight_thicker_for_larger_weights():
    ax = alignment_diagram(WEIGHTS, ["q1", "q2"], ["k1", "k2", "k3"])
    widths = [line.get_linewidth() for line in ax.get_lines()]
    assert len(widths) == WEIGHTS.size
    assert np.argmax(widths) == np.argmax(WEIGHTS.ravel())
    assert {t.get_text() for t in ax.texts} == {"q1", "q2", "k1", "k2", "k3"}


def test_japanese_labels_have_a_font():
    from matplotlib import font_manager

    family = plt.rcParams["font.family"]
    assert "IPAexGothic" in family
    path = font_manager.findfont(
        font_manager.FontProperties(family="IPAexGothic"), fallback_to_default=False
    )
    assert path.endswith("ipaexg.ttf")


def texts_drawn(fig):
    fig.canvas.draw()
    return [t for t in fig.findobj(plt.Text) if t.get_visible() and t.get_text()]


def test_a_figure_is_drawn_the_column_wide_with_its_content_inside():
    fig = plt.figure()
    assert fig.get_figwidth() * fig.dpi == pytest.approx(COLUMN_PX)
    assert fig.get_layout_engine() is not None  # constrained: labels stay inside the figure


@pytest.mark.parametrize("n_keys", [2, 8, 24])
def test_helper_figures_fit_the_column_with_no_text_below_the_minimum(n_keys):
    keys = [f"key {j}" for j in range(n_keys)]
    weights = np.full((3, n_keys), 1 / n_keys)
    for ax in [
        attention_heatmap(weights, ["a", "b", "c"], keys, title="$d_k = 4$"),
        alignment_diagram(weights, ["a", "b", "c"], keys, title="lines"),
    ]:
        fig = ax.figure
        assert fig.get_figwidth() * fig.dpi <= COLUMN_PX + 1e-9
        sizes = [t.get_fontsize() for t in texts_drawn(fig)]
        assert min(sizes) >= MIN_FONT_PT


def test_a_heatmap_grid_has_one_colour_bar_on_the_fixed_scale_and_labels_once():
    fig, axes = plt.subplots(2, 2)
    for ax in axes.flat:
        attention_heatmap(WEIGHTS, ["q1", "q2"], ["k1", "k2", "k3"], ax=ax, colorbar=False)
    bar = finish_heatmap_grid(axes)
    assert len(fig.axes) == 5  # four heatmaps and one colour bar
    assert bar.mappable.get_clim() == (0.0, 1.0)
    assert [ax.get_xlabel() != "" for ax in axes.flat] == [True, True, False, False]
    assert [ax.get_ylabel() != "" for ax in axes.flat] == [True, False, True, False]
    assert min(t.get_fontsize() for t in texts_drawn(fig)) >= MIN_FONT_PT


def test_long_key_labels_are_slanted_short_ones_are_not():
    short = attention_heatmap(WEIGHTS, ["q1", "q2"], ["a", "b", "c"])
    words = ["encoder", "attention", "transformer", "positional"] * 3
    long = attention_heatmap(np.full((2, 12), 1 / 12), ["q1", "q2"], words)
    assert short.get_xticklabels()[0].get_rotation() == 0
    assert long.get_xticklabels()[0].get_rotation() == 45


def test_in_jupyter_figures_are_shown_with_twice_the_pixels_at_their_drawn_size():
    import base64
    import io

    from IPython.core.interactiveshell import InteractiveShell
    from PIL import Image

    shell = InteractiveShell.instance()
    try:
        use_book_style()  # as importing attnkit.plots does in Jupyter
        fig, ax = plt.subplots(figsize=(4, 2))
        ax.plot([0, 1])
        data, metadata = shell.display_formatter.format(fig)
        assert metadata["image/png"] == {"width": 4 * 96, "height": 2 * 96}
        image = Image.open(io.BytesIO(base64.b64decode(data["image/png"])))
        assert image.size == (2 * 4 * 96, 2 * 2 * 96)
        assert image.mode == "P"  # 256 colours: light pages
    finally:
        InteractiveShell.clear_instance()


ENGLISH_WORD = re.compile(r"[A-Za-z]{2,}")


def words_drawn(fig) -> set[str]:
    """The English-looking words of every text the figure draws (its own text artists)."""
    return {word for t in texts_drawn(fig) for word in ENGLISH_WORD.findall(t.get_text())}


def japanese_grid(**language):
    fig, axes = plt.subplots(1, 2)
    for ax in axes:
        attention_heatmap(
            WEIGHTS, ["私は", "愛して"], ["I", "love", "you"], ax=ax, colorbar=False, **language
        )
    finish_heatmap_grid(axes, **language)
    return fig


def test_a_japanese_figure_has_no_english_label_and_a_japanese_font():
    fig = japanese_grid(language="ja")
    assert words_drawn(fig) == {"love", "you"}  # the tokens, which are data; no label
    labels = [t for t in texts_drawn(fig) if "注" in t.get_text()]
    assert {t.get_text() for t in labels} == {
        "キー（注意を向けられる側）",
        "クエリ（注意を向ける側）",
        "注目度",
    }
    assert all(t.get_fontname() == "IPAexGothic" for t in labels)


def test_the_language_of_the_figures_is_the_checks_language(monkeypatch):
    monkeypatch.setenv(LANGUAGE_VARIABLE, "ja")
    assert "attention" not in words_drawn(japanese_grid())
    monkeypatch.setenv(LANGUAGE_VARIABLE, "en")
    assert {"key", "attended", "query", "attending", "attention", "weight"} <= words_drawn(
        japanese_grid()
    )


def test_the_english_figure_is_unchanged():
    fig = japanese_grid(language="en")
    assert {t.get_text() for t in texts_drawn(fig)} >= {
        "key (attended to)",
        "query (attending)",
        "attention weight",
    }
    assert all(t.get_fontname() == "DejaVu Sans" for t in texts_drawn(fig) if "att" in t.get_text())


def test_a_language_without_words_is_refused():
    with pytest.raises(ValueError, match="no figure words in language 'fr'"):
        attention_heatmap(WEIGHTS, ["q1", "q2"], ["k1", "k2", "k3"], language="fr")
