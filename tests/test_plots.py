"""Tests of attnkit.plots: what the figures show, not how they look."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pytest

from attnkit.plots import alignment_diagram, attention_heatmap

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
