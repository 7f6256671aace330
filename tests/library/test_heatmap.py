"""The heatmap widget: inputs checked, its NumPy twin of the browser's maths, and its front end
(heatmap.js) held to the Python side's traits and controls, run in Node. (Drawn in Chromium:
tests/book/test_heatmap.py.)"""

import re
from pathlib import Path

import numpy as np
import pytest

import attnkit.heatmap
from attnkit.core import attention, causal_mask, masked_softmax, sinusoidal_positional_encoding
from attnkit.heatmap import CONTROLS, AttentionHeatmap
from tests.support.node import module_runner

RNG = np.random.default_rng(0)


X = RNG.normal(size=(5, 4))  # (n, d)


TOKENS = ["a", "b", "c", "d", "e"]


W_Q, W_K = RNG.normal(size=(4, 3)), RNG.normal(size=(4, 3))  # (d, d_k)


def test_plain_self_attention_is_softmax_of_x_xt():
    w = AttentionHeatmap(TOKENS, X)
    assert np.allclose(w.expected_weights(), attention(X, X)[1])
    assert np.allclose(w.weights, w.expected_weights())  # reported before any front end draws


def test_cross_attention_queries_over_keys():
    H = RNG.normal(size=(3, 4))
    w = AttentionHeatmap(TOKENS, X, key_tokens=["x", "y", "z"], keys=H, temperature=2.0)
    assert w.expected_weights().shape == (5, 3)
    assert np.allclose(w.expected_weights(), attention(X, H, temperature=2.0)[1])


def test_scale_temperature_and_head():
    w = AttentionHeatmap(
        TOKENS,
        X,
        heads=[(W_Q, W_K), {"W_Q": W_K, "W_K": W_Q, "name": "swap"}],
        scale=True,
        temperature=0.5,
    )
    Q, K = X @ W_Q, X @ W_K
    assert np.allclose(w.expected_weights(), attention(Q, K, temperature=0.5 * np.sqrt(3))[1])
    w.head = 1
    assert np.allclose(
        w.expected_weights(), attention(X @ W_K, X @ W_Q, temperature=0.5 * np.sqrt(3))[1]
    )
    assert w.heads[1]["name"] == "swap"


def test_causal_and_padding_masks():
    w = AttentionHeatmap(TOKENS, X, causal=True, padding=[True, False, False, False, False])
    weights = w.expected_weights()
    assert np.all(np.triu(weights, 1) == 0)  # nothing from the future
    assert np.all(weights[:, 0] == 0)  # the padded key gets no weight
    assert np.all(weights[0] == 0)  # row 0 may only see key 0, which is masked
    assert np.allclose(weights[1:].sum(axis=1), 1.0)
    expected = masked_softmax(
        X @ X.T, causal_mask(5) & np.array([0, 1, 1, 1, 1], bool), all_masked="zero"
    )
    assert np.allclose(weights, expected)


def test_permutation_moves_rows_and_columns_without_positional_encoding():
    w = AttentionHeatmap(TOKENS, X)
    before = w.expected_weights()
    p = [3, 0, 4, 1, 2]
    w.permutation = p
    assert np.allclose(w.expected_weights(), before[np.ix_(p, p)])


def test_positional_encoding_is_added_at_the_drawn_positions():
    w = AttentionHeatmap(TOKENS, X, positional=True)
    Xp = X + sinusoidal_positional_encoding(5, 4)
    assert np.allclose(w.expected_weights(), attention(Xp, Xp)[1])
    p = [3, 0, 4, 1, 2]
    w.permutation = p
    shuffled = X[p] + sinusoidal_positional_encoding(5, 4)
    assert np.allclose(w.expected_weights(), attention(shuffled, shuffled)[1])
    assert not np.allclose(w.expected_weights(), attention(Xp, Xp)[1][np.ix_(p, p)])


def test_d_k_keeps_the_first_coordinates():
    w = AttentionHeatmap(TOKENS, X, controls=["d_k", "scale"], d_k_choices=[2, 4], scale=True)
    assert w.d_k == 2
    assert np.allclose(
        w.expected_weights(), attention(X[:, :2], X[:, :2], temperature=np.sqrt(2))[1]
    )
    w.d_k = 4
    assert np.allclose(w.expected_weights(), attention(X, X, temperature=2.0)[1])


def test_set_data_replaces_inputs_and_resets_padding():
    w = AttentionHeatmap(TOKENS, X, padding=[True, False, False, False, False])
    w.set_data(["p", "q"], X[:2])
    assert w.query_tokens == ["p", "q"] and w.padding == [False, False]
    assert np.allclose(w.expected_weights(), attention(X[:2], X[:2])[1])


def test_float32_inputs_are_sent_with_float32_digits():
    """A model's float32 weights reach the page with float32's own digits (the page carries
    them as JSON text), each reading back as the same float32; float64 is sent as it is."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((4, 6)).astype(np.float32)
    W = rng.standard_normal((6, 3)).round(4).astype(np.float32)
    widget = AttentionHeatmap(list("abcd"), X, heads=[(W, W)])
    assert (np.array(widget.query_vectors, dtype=np.float32) == X).all()
    assert (np.array(widget.heads[0]["W_Q"], dtype=np.float32) == W).all()
    assert widget.heads[0]["W_K"][0] == [float(str(w)) for w in W[0]]  # e.g. -1.7867, not ...0102
    assert max(len(repr(v)) for row in widget.heads[0]["W_Q"] for v in row) <= 8
    # the weights from the float32 numbers exactly, to within float32's own precision
    Q = X.astype(np.float64) @ W.astype(np.float64)
    assert np.allclose(widget.expected_weights(), attention(Q, Q)[1], rtol=0, atol=1e-7)
    X64 = rng.standard_normal((4, 6))
    assert AttentionHeatmap(list("abcd"), X64).query_vectors == X64.tolist()


def test_labels_are_kept_verbatim():
    evil = "<img src=x onerror=alert(1)>"
    w = AttentionHeatmap([evil, "b"], X[:2])
    assert w.query_tokens[0] == evil == w.key_tokens[0]


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(tokens=TOKENS[:3], X=X), r"\(3, d\), got \(5, 4\)"),
        (
            dict(tokens=TOKENS, X=X, keys=np.ones((2, 4)), key_tokens=["x"]),
            r"keys of shape \(2, 4\)",
        ),
        (
            dict(tokens=TOKENS, X=X, heads=[(np.ones((3, 2)), np.ones((4, 2)))]),
            r"W_Q of shape \(3, 2\) and W_K of shape \(4, 2\) do not fit queries of shape \(5, 4\)",
        ),
        (dict(tokens=TOKENS, X=X, controls=["zoom"]), "unknown controls"),
        (
            dict(tokens=TOKENS, X=X, keys=np.ones((2, 4)), key_tokens=["x", "y"], causal=True),
            "self-attention",
        ),
        (dict(tokens=TOKENS, X=X, padding=[True]), "1 entries for 5 keys"),
        (dict(tokens=TOKENS, X=X, temperature=0.0), "temperature"),
        (
            dict(tokens=TOKENS, X=X, controls=["d_k"], d_k_choices=[2, 8]),
            r"between 1 and the width 4",
        ),
        (dict(tokens=TOKENS, X=X, controls=["d_k"]), "d_k control needs"),
    ],
)
def test_bad_input_raises_a_clear_error(kwargs, message):
    tokens, data = kwargs.pop("tokens"), kwargs.pop("X")
    with pytest.raises(ValueError, match=message):
        AttentionHeatmap(tokens, data, **kwargs)


def test_nan_input_raises():
    bad = X.copy()
    bad[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        AttentionHeatmap(TOKENS, bad)


def test_front_end_files_are_shipped_with_the_widget():
    widget = AttentionHeatmap(TOKENS, X)
    assert "export default" in widget._esm and ".attn-cell" in widget._css


HEATMAP_JS = Path(attnkit.heatmap.__file__).with_name("heatmap.js")


SYNCED = set(AttentionHeatmap.class_own_traits(sync=True))  # the one list of the widget's traits


def test_front_end_reads_and_writes_only_synced_traits():
    source = HEATMAP_JS.read_text()
    read = set(re.findall(r'model\.get\("(\w+)"\)', source))
    written = set(re.findall(r'\bset\("(\w+)",', source))
    assert read and written
    assert read | written <= SYNCED, (
        f"not traits of AttentionHeatmap: {sorted((read | written) - SYNCED)}"
    )
    assert "weights" in written  # the front end reports what it draws


@pytest.fixture(scope="module")
def js(tmp_path_factory):
    """Evaluates a function of (the heatmap.js module, data) in Node; returns its JSON result."""
    return module_runner(HEATMAP_JS, tmp_path_factory.mktemp("heatmap"))


def test_front_end_follows_every_trait_but_the_weights_it_writes(js):
    effects = js("(m) => m.TRAIT_EFFECTS")
    assert set(effects) == SYNCED - {"weights"}
    assert {e for trait in effects.values() for e in trait} == {
        "controls",
        "values",
        "grid",
        "redraw",
    }


def test_front_end_builds_every_control_and_no_other(js):
    assert set(js("(m) => Object.keys(m.CONTROLS)")) == set(CONTROLS)


def twin_cases():
    """Widgets whose settings exercise every input of the weights, as drawn by the front end."""
    rng = np.random.default_rng(1)
    heads = [(rng.normal(size=(4, 3)), rng.normal(size=(4, 3))) for _ in range(2)]
    plain = AttentionHeatmap(TOKENS, X, temperature=0.7)
    headed = AttentionHeatmap(TOKENS, X, heads=heads, scale=True, causal=True)
    headed.head = 1
    shuffled = AttentionHeatmap(
        TOKENS, X, positional=True, padding=[False, True, False, False, True]
    )
    shuffled.permutation = [3, 0, 4, 1, 2]
    cross = AttentionHeatmap(
        TOKENS,
        X,
        key_tokens=["x", "y", "z"],
        keys=rng.normal(size=(3, 4)),
        padding=[False, True, False],
        controls=["d_k"],
        d_k_choices=[2, 4],
        scale=True,
    )
    blind = AttentionHeatmap(TOKENS, X, causal=True, padding=[True, False, False, False, False])
    narrow = AttentionHeatmap(
        TOKENS, X, heads=heads, controls=["d_k"], d_k_choices=[1, 3], temperature=3.0
    )
    return [plain, headed, shuffled, cross, blind, narrow]


def test_front_end_weights_are_numpys(js):
    cases = twin_cases()
    states = [{name: getattr(w, name) for name in SYNCED} for w in cases]
    drawn = js(
        "(m, states) => states.map((s) => { const { weights, masked } = m.computeWeights(s);"
        " return [weights, masked.map((row) => Array.from(row))]; })",
        states,
    )
    for widget, (weights, masked) in zip(cases, drawn):
        expected = widget.expected_weights()
        assert np.allclose(weights, expected, rtol=0, atol=1e-12)
        assert np.all(np.array(weights)[np.array(masked, bool)] == 0)
    assert np.all(np.array(drawn[4][0])[0] == 0)  # every key of row 0 masked: zeros


def test_front_end_positional_encoding_is_numpys(js):
    pe = js("(m) => m.positionalEncoding(7, 6)")
    assert np.allclose(pe, sinusoidal_positional_encoding(7, 6), rtol=0, atol=1e-12)
