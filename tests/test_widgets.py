"""Tests of the chapter 1 explorer: moving a control recomputes with the helper."""

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from attnkit.core import attention  # noqa: E402
from attnkit.widgets import DecoderAttentionExplorer  # noqa: E402

H = np.array([[2.0, 0.0, 0.2], [0.0, 2.0, 0.4], [0.2, 0.0, 2.0]])
Z = np.array([[1.5, 0.0, 0.0], [0.0, 0.2, 1.5]])


@pytest.fixture
def explorer():
    return DecoderAttentionExplorer(H, ["I", "love", "you"], Z, ["私は", "貴方を"])


def test_starts_at_the_first_decoder_state(explorer):
    assert np.allclose(explorer.query, Z[0])
    assert np.allclose(explorer.compute()[1], attention(Z[0], H)[1])


def test_choosing_a_decoder_token_loads_its_state(explorer):
    explorer.position.value = 1
    assert np.allclose(explorer.query, Z[1])
    assert np.argmax(explorer.compute()[1]) == 2   # 貴方を attends to "you"


def test_sliders_and_temperature_change_the_weights(explorer):
    before = explorer.compute()[1]
    explorer.query_sliders[2].value = 2.0
    explorer.temperature.value = 0.5
    after = explorer.compute()[1]
    assert not np.allclose(before, after)
    expected = attention(np.array([1.5, 0.0, 2.0]), H, temperature=0.5)[1]
    assert np.allclose(after, expected)


def test_redraw_shows_the_current_weights(explorer, capsys):
    # Outside a kernel the Output widget does not capture, so the text reaches stdout.
    capsys.readouterr()
    explorer.temperature.value = 10.0
    shown = capsys.readouterr().out
    weights = explorer.compute()[1]
    assert np.array2string(weights, precision=3) in shown


def test_mismatched_inputs_raise():
    with pytest.raises(ValueError, match=r"\(3, 3\).*\(2, 2\)"):
        DecoderAttentionExplorer(H, ["I", "love", "you"], np.ones((2, 2)), ["a", "b"])
    with pytest.raises(ValueError, match="2 encoder"):
        DecoderAttentionExplorer(H, ["I", "love"], Z, ["a", "b"])
