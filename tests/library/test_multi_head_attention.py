"""Chapter 4's helpers: multi-head attention in NumPy and PyTorch, against torch's own."""

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from torch.nn import functional as F
from torch.utils.flop_counter import FlopCounterMode

from attnkit.core import (
    causal_mask,
    merge_heads,
    multi_head_attention,
    padding_mask,
    rms_norm,
    scaled_dot_product_attention,
    split_heads,
)
from attnkit.exercises.multi_head_attention import check_merge_heads, check_split_heads
from attnkit.modules import EncoderLayer, MultiHeadAttention, RMSNorm
from tests.support.answers.multi_head_attention import split_by_stacking

ENTRIES = st.floats(-2, 2, allow_nan=False)


def coded(b, n, h, d_k):
    """``(b, n, h*d_k)`` with entry ``100*batch + 10*token + head``."""
    s, t, i, _ = np.meshgrid(
        np.arange(b), np.arange(n), np.arange(h), np.arange(d_k), indexing="ij"
    )
    return (100 * s + 10 * t + i).reshape(b, n, h * d_k).astype(float)


def per_head_reference(Xq, Xs, W_Q, W_K, W_V, W_O, h, mask=None):
    """Eq. mha-head and mha-concat, one head at a time, for (m, d) and (n, d) inputs."""
    d_k, d_v = W_Q.shape[1] // h, W_V.shape[1] // h
    heads, weights = [], []
    for i in range(h):
        q = Xq @ W_Q[:, i * d_k : (i + 1) * d_k]
        k = Xs @ W_K[:, i * d_k : (i + 1) * d_k]
        v = Xs @ W_V[:, i * d_v : (i + 1) * d_v]
        scores = q @ k.T / np.sqrt(d_k)
        if mask is not None:
            scores = np.where(mask, scores, -np.inf)
        e = np.exp(scores - scores.max(axis=-1, keepdims=True))
        a = e / e.sum(axis=-1, keepdims=True)
        heads.append(a @ v)
        weights.append(a)
    return np.concatenate(heads, axis=1) @ W_O, np.stack(weights)


@st.composite
def layer_and_inputs(draw):
    """A random multi-head layer, inputs, and a mask that leaves a key in every row."""
    h = draw(st.integers(1, 4))
    d_k, d_v = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    m, n, d, d_s, d_out = (draw(st.integers(1, 5)) for _ in range(5))
    arrays = {
        name: draw(hnp.arrays(np.float64, shape, elements=ENTRIES))
        for name, shape in [
            ("Xq", (m, d)),
            ("Xs", (n, d_s)),
            ("W_Q", (d, h * d_k)),
            ("W_K", (d_s, h * d_k)),
            ("W_V", (d_s, h * d_v)),
            ("W_O", (h * d_v, d_out)),
        ]
    }
    mask = draw(hnp.arrays(np.bool_, (m, n)))
    mask[np.arange(m), draw(hnp.arrays(np.int64, m, elements=st.integers(0, n - 1)))] = True
    return arrays, h, mask


# --- NumPy: split and merge ------------------------------------------------------------


def test_split_heads_gives_each_head_its_block_of_every_token():
    X = coded(2, 3, 4, 2)  # (b, n, h*d_k)
    heads = split_heads(X, 4)
    assert heads.shape == (2, 4, 3, 2)
    for s in range(2):
        for i in range(4):
            for t in range(3):
                assert np.all(heads[s, i, t] == 100 * s + 10 * t + i)
    assert np.array_equal(heads, X.reshape(2, 3, 4, 2).transpose(0, 2, 1, 3))
    assert not np.array_equal(heads, X.reshape(2, 4, 3, 2))  # the view-only mistake


def test_split_heads_without_batch_and_with_one_head():
    X = np.arange(12.0).reshape(3, 4)
    assert np.array_equal(split_heads(X, 2)[1], X[:, 2:])
    assert np.array_equal(split_heads(X, 1), X[None])


@given(st.integers(1, 3), st.integers(1, 5), st.integers(1, 4), st.integers(1, 3))
def test_merge_undoes_split(b, n, h, d_k):
    X = coded(b, n, h, d_k)
    assert np.array_equal(merge_heads(split_heads(X, h)), X)
    Y = np.random.default_rng(b * n * h).normal(size=(b, h, n, d_k))
    assert np.array_equal(split_heads(merge_heads(Y), h), Y)


def test_split_and_merge_errors_name_the_shapes():
    with pytest.raises(
        ValueError, match=r"X of shape \(2, 3, 7\): width 7 is not divisible by h = 2"
    ):
        split_heads(np.ones((2, 3, 7)), 2)
    with pytest.raises(ValueError, match=r"X must have shape \(n, d_model\).*\(6,\)"):
        split_heads(np.ones(6), 2)
    with pytest.raises(ValueError, match="h must be a positive integer"):
        split_heads(np.ones((2, 4)), 0)
    with pytest.raises(ValueError, match=r"X must have shape \(h, n, d_v\).*\(3, 4\)"):
        merge_heads(np.ones((3, 4)))


# --- NumPy: the layer ------------------------------------------------------------------


@settings(deadline=None)
@given(layer_and_inputs(), st.booleans())
def test_multi_head_attention_is_the_per_head_formula(data, use_mask):
    arrays, h, mask = data
    mask = mask if use_mask else None
    out, w = multi_head_attention(
        arrays["Xq"],
        arrays["Xs"],
        arrays["W_Q"],
        arrays["W_K"],
        arrays["W_V"],
        arrays["W_O"],
        h,
        mask=mask,
    )
    expected_out, expected_w = per_head_reference(*arrays.values(), h, mask=mask)
    m, n = arrays["Xq"].shape[0], arrays["Xs"].shape[0]
    assert w.shape == (h, m, n) and out.shape == (m, arrays["W_O"].shape[1])
    assert np.allclose(w, expected_w) and np.allclose(out, expected_out)
    assert np.allclose(w.sum(axis=-1), 1.0)
    if mask is not None:
        assert np.all(w[:, ~mask] == 0)


def test_one_head_is_scaled_dot_product_attention_then_w_o():
    rng = np.random.default_rng(0)
    X, W_Q, W_K, W_V, W_O = (rng.normal(size=s) for s in [(4, 5), (5, 3), (5, 3), (5, 2), (2, 5)])
    out, w = multi_head_attention(X, X, W_Q, W_K, W_V, W_O, 1)
    sdpa_out, sdpa_w = scaled_dot_product_attention(X @ W_Q, X @ W_K, X @ W_V)
    assert np.allclose(w[0], sdpa_w) and np.allclose(out, sdpa_out @ W_O)


def test_concat_times_w_o_is_the_sum_of_the_heads_contributions():
    rng = np.random.default_rng(1)
    h, d_v = 3, 2
    X = rng.normal(size=(4, 6))
    W_Q, W_K, W_V, W_O = (rng.normal(size=s) for s in [(6, 6), (6, 6), (6, 6), (6, 6)])
    out, _ = multi_head_attention(X, X, W_Q, W_K, W_V, W_O, h)
    total = 0
    for i in range(h):
        cols = slice(i * d_v, (i + 1) * d_v)
        head_out, _ = multi_head_attention(
            X, X, W_Q[:, cols], W_K[:, cols], W_V[:, cols], W_O[cols], 1
        )
        total = total + head_out
    assert np.allclose(out, total)  # pruning a head = dropping its term


def test_batched_inputs_with_a_padding_and_a_causal_mask():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(2, 5, 4))  # (b, n, d)
    W_Q, W_K, W_V, W_O = (rng.normal(size=(4, 4)) for _ in range(4))
    mask = causal_mask(5) & padding_mask(np.array([5, 3]), 5)  # (b, n, n)
    out, w = multi_head_attention(X, X, W_Q, W_K, W_V, W_O, 2, mask=mask)
    assert out.shape == (2, 5, 4) and w.shape == (2, 2, 5, 5)
    for s in range(2):
        expected_out, expected_w = per_head_reference(
            X[s], X[s], W_Q, W_K, W_V, W_O, 2, mask=mask[s]
        )
        assert np.allclose(out[s], expected_out) and np.allclose(w[s], expected_w)
    assert np.all(w[1, :, :, 3:] == 0)


@settings(deadline=None)
@given(st.integers(2, 6), st.integers(1, 3), st.integers(0, 2**16))
def test_self_attention_is_permutation_equivariant(n, h, seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2 * h))
    W_Q, W_K, W_V, W_O = (rng.normal(size=(2 * h, 2 * h)) for _ in range(4))
    P = np.eye(n)[rng.permutation(n)]
    out, w = multi_head_attention(X, X, W_Q, W_K, W_V, W_O, h)
    out_p, w_p = multi_head_attention(P @ X, P @ X, W_Q, W_K, W_V, W_O, h)
    assert np.allclose(out_p, P @ out) and np.allclose(w_p, P @ w @ P.T)


@settings(deadline=None)
@given(st.integers(2, 6), st.integers(0, 2**16))
def test_nothing_leaks_past_a_causal_mask(n, seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    W_Q, W_K, W_V, W_O = (rng.normal(size=(4, 4)) for _ in range(4))
    t = int(rng.integers(1, n))
    changed = X.copy()
    changed[t:] = rng.normal(size=(n - t, 4)) * 5
    args = (W_Q, W_K, W_V, W_O, 2)
    out, _ = multi_head_attention(X, X, *args, mask=causal_mask(n))
    out_changed, _ = multi_head_attention(changed, changed, *args, mask=causal_mask(n))
    assert np.array_equal(out[:t], out_changed[:t])


def test_shape_errors_name_the_shapes():
    X, W = np.ones((4, 6)), np.ones((6, 6))
    with pytest.raises(ValueError, match=r"W_O of shape \(18, 2\) must have h\*d_v = 6 rows"):
        multi_head_attention(X, X, W, W, W, np.ones((18, 2)), 3)  # article 000's W_O
    with pytest.raises(ValueError, match=r"W_Q of shape \(5, 6\).*d_model = 6.*\(4, 6\)"):
        multi_head_attention(X, X, np.ones((5, 6)), W, W, W, 3)
    with pytest.raises(ValueError, match=r"W_V of shape \(5, 6\).*X_source of shape \(4, 6\)"):
        multi_head_attention(X, X, W, W, np.ones((5, 6)), W, 3)
    with pytest.raises(ValueError, match=r"W_Q of shape \(6, 6\) and W_K of shape \(6, 4\)"):
        multi_head_attention(X, X, W, np.ones((6, 4)), W, W, 2)
    with pytest.raises(ValueError, match=r"W_Q of shape \(6, 6\) \(its columns\): width 6.*h = 4"):
        multi_head_attention(X, X, W, W, W, W, 4)
    with pytest.raises(ValueError, match=r"mask of shape \(3, 3\).*one head's.*\(4, 4\)"):
        multi_head_attention(X, X, W, W, W, W, 2, mask=np.ones((3, 3), dtype=bool))
    with pytest.raises(ValueError, match=r"batch axes.*\(2, 4, 6\).*\(3, 4, 6\)"):
        multi_head_attention(np.ones((2, 4, 6)), np.ones((3, 4, 6)), W, W, W, W, 2)
    with pytest.raises(ValueError, match=r"X_query must have shape.*\(6,\)"):
        multi_head_attention(np.ones(6), X, W, W, W, W, 2)
    with pytest.raises(TypeError, match="boolean"):
        multi_head_attention(X, X, W, W, W, W, 2, mask=np.ones((4, 4)))


def test_dtype_is_kept_and_empty_rows_follow_all_masked():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(3, 4)).astype(np.float32)
    W = rng.normal(size=(4, 4)).astype(np.float32)
    out, w = multi_head_attention(X, X, W, W, W, W, 2)
    assert out.dtype == np.float32 and w.dtype == np.float32
    mask = np.ones((3, 3), dtype=bool)
    mask[1] = False
    with pytest.raises(ValueError, match="hides every key"):
        multi_head_attention(X, X, W, W, W, W, 2, mask=mask)
    out, w = multi_head_attention(X, X, W, W, W, W, 2, mask=mask, all_masked="zero")
    assert np.all(w[:, 1] == 0) and np.all(out[1] == 0) and np.all(np.isfinite(out))


# --- PyTorch: the module against nn.MultiheadAttention ------------------------------------


@st.composite
def torch_case(draw):
    h = draw(st.integers(1, 4))
    d_model = h * draw(st.integers(1, 4))
    b, m, n = draw(st.integers(1, 3)), draw(st.integers(1, 5)), draw(st.integers(1, 5))
    cross = draw(st.booleans())
    n = n if cross else m
    kind = draw(st.sampled_from(["none", "causal", "padding", "both", "random"]))
    lengths = np.array(draw(st.lists(st.integers(1, n), min_size=b, max_size=b)))
    keep_random = draw(hnp.arrays(np.bool_, (m, n)))
    keep_random[np.arange(m), draw(hnp.arrays(np.int64, m, elements=st.integers(0, n - 1)))] = 1
    return dict(
        h=h,
        d_model=d_model,
        b=b,
        m=m,
        n=n,
        cross=cross,
        kind=kind,
        lengths=lengths,
        keep_random=keep_random,
        bias=draw(st.booleans()),
        seed=draw(st.integers(0, 999)),
    )


def masks_for(case):
    """The book's mask (True = attend) and nn.MultiheadAttention's (attn_mask, key_padding_mask)."""
    _m, n, kind = case["m"], case["n"], case["kind"]
    attn = None
    if kind in ("causal", "both") and not case["cross"]:
        attn = torch.from_numpy(causal_mask(n))
    elif kind == "random":
        attn = torch.from_numpy(case["keep_random"])
    pad = None
    if kind in ("padding", "both"):
        pad = torch.from_numpy(padding_mask(case["lengths"], n))  # (b, 1, n)
    ours = attn if pad is None else (pad if attn is None else attn & pad)
    return ours, (None if attn is None else ~attn), (None if pad is None else ~pad[:, 0])


@settings(deadline=None, max_examples=60)
@given(torch_case())
def test_module_equals_torch_multihead_attention(case):
    torch.manual_seed(case["seed"])
    theirs = torch.nn.MultiheadAttention(
        case["d_model"], case["h"], bias=case["bias"], batch_first=True
    )
    ours = MultiHeadAttention.from_torch(theirs)
    xq = torch.randn(case["b"], case["m"], case["d_model"])
    xs = torch.randn(case["b"], case["n"], case["d_model"]) if case["cross"] else xq
    mask, attn_mask, key_padding_mask = masks_for(case)
    if mask is not None and not bool(mask.any(-1).all()):
        return  # an empty row: torch gives NaN (tested below)
    out, w = ours(xq, xs, mask=mask)
    out_avg, w_avg = ours(xq, xs, mask=mask, average_weights=True)
    exp_out, exp_w = theirs(
        xq,
        xs,
        xs,
        attn_mask=attn_mask,
        key_padding_mask=key_padding_mask,
        average_attn_weights=False,
    )
    _, exp_avg = theirs(xq, xs, xs, attn_mask=attn_mask, key_padding_mask=key_padding_mask)
    assert w.shape == (case["b"], case["h"], case["m"], case["n"])
    assert torch.allclose(out, exp_out, atol=1e-5) and torch.allclose(out_avg, out)
    assert torch.allclose(w, exp_w, atol=1e-5)
    assert torch.allclose(w_avg, exp_avg, atol=1e-5)


def test_module_equals_the_numpy_helper():
    torch.manual_seed(0)
    layer = MultiHeadAttention(6, 3, bias=False)
    x, z = torch.randn(2, 4, 6), torch.randn(2, 5, 6)
    W = {n: getattr(layer, n).weight.detach().numpy().T for n in ["w_q", "w_k", "w_v", "w_o"]}
    mask = padding_mask(np.array([5, 2]), 5)  # (b, 1, n)
    out, w = layer(x, z, mask=torch.from_numpy(mask))  # cross-attention
    out_np, w_np = multi_head_attention(
        x.numpy(), z.numpy(), W["w_q"], W["w_k"], W["w_v"], W["w_o"], 3, mask=mask
    )
    assert np.allclose(out.detach().numpy(), out_np, atol=1e-6)
    assert np.allclose(w.detach().numpy(), w_np, atol=1e-6)
    heads = layer.split_heads(layer.w_q(x))  # (b, h, n, d_k)
    assert np.allclose(heads.detach().numpy(), split_heads(x.numpy() @ W["w_q"], 3), atol=1e-6)
    assert torch.equal(layer.merge_heads(heads), layer.w_q(x))


def test_empty_rows_torch_gives_nan_ours_raises_or_gives_zeros():
    torch.manual_seed(1)
    theirs = torch.nn.MultiheadAttention(4, 2, batch_first=True)
    x = torch.randn(1, 3, 4)
    keep = torch.ones(3, 3, dtype=torch.bool)
    keep[0] = False
    out_t, _ = theirs(x, x, x, attn_mask=~keep)
    assert torch.isnan(out_t[0, 0]).all() and not torch.isnan(out_t[0, 1:]).any()
    with pytest.raises(ValueError, match="hides every key"):
        MultiHeadAttention.from_torch(theirs)(x, mask=keep)
    out, w = MultiHeadAttention.from_torch(theirs, all_masked="zero")(x, mask=keep)
    assert torch.all(w[0, :, 0] == 0) and torch.isfinite(out).all()
    assert torch.allclose(out[0, 1:], out_t[0, 1:], atol=1e-6)


def test_module_errors_name_the_shapes():
    layer = MultiHeadAttention(6, 2)
    with pytest.raises(ValueError, match=r"d_model=6, h=4\): width 6 is not divisible by h = 4"):
        MultiHeadAttention(6, 4)
    with pytest.raises(ValueError, match="h must be a positive integer"):
        MultiHeadAttention(6, 0)
    with pytest.raises(ValueError, match=r"x_query of shape \(3, 5\).*d_model = 6"):
        layer(torch.ones(3, 5))
    with pytest.raises(ValueError, match=r"mask of shape \(2, 2\).*one head's.*\(3, 3\)"):
        layer(torch.ones(3, 6), mask=torch.ones(2, 2, dtype=torch.bool))
    with pytest.raises(ValueError, match=r"batch axes.*\(2, 3, 6\).*\(3, 3, 6\)"):
        layer(torch.ones(2, 3, 6), torch.ones(3, 3, 6), mask=torch.ones(3, 3, dtype=torch.bool))
    with pytest.raises(TypeError, match="boolean"):
        layer(torch.ones(3, 6), mask=torch.ones(3, 3))
    with pytest.raises(ValueError, match="kdim/vdim"):
        MultiHeadAttention.from_torch(torch.nn.MultiheadAttention(6, 2, kdim=4, vdim=4))


def test_parameters_and_flops_do_not_depend_on_the_number_of_heads():
    torch.manual_seed(2)
    n, d = 16, 64
    x = torch.randn(1, n, d)
    for h in (1, 4, 64):
        layer = MultiHeadAttention(d, h)
        assert sum(p.numel() for p in layer.parameters()) == 4 * d * d + 4 * d
        with FlopCounterMode(display=False) as counter:
            layer(x)
        assert counter.get_total_flops() == 8 * n * d * d + 4 * n * n * d


# --- PyTorch: the encoder layer -------------------------------------------------------


def test_encoder_layer_is_residual_plus_layer_norm():
    torch.manual_seed(3)
    layer = EncoderLayer(8, 2, 16)
    x = torch.randn(2, 4, 8)
    out, _ = layer(x)
    attended, _ = layer.self_attn(x)
    x1 = torch.nn.functional.layer_norm(x + attended, (8,))
    ffn = layer.linear2(torch.relu(layer.linear1(x1)))
    assert torch.allclose(out, torch.nn.functional.layer_norm(x1 + ffn, (8,)), atol=1e-6)
    assert torch.allclose(out.mean(-1), torch.zeros(2, 4), atol=1e-6)
    with pytest.raises(ValueError, match="ReLU"):
        EncoderLayer.from_torch(torch.nn.TransformerEncoderLayer(8, 2, activation="gelu"))
    with pytest.raises(ValueError, match="eps = 1e-5"):
        EncoderLayer.from_torch(torch.nn.TransformerEncoderLayer(8, 2, layer_norm_eps=1e-6))
    with pytest.raises(ValueError, match="norm must be 'layer'"):
        EncoderLayer(8, 2, 16, norm="batch")


def dropout_records(module):
    """Every output of ``module``'s ``nn.Dropout`` layers, in the order they are computed."""
    seen = []
    for child in module.modules():
        if isinstance(child, torch.nn.Dropout):
            child.register_forward_hook(lambda _m, _args, out: seen.append(out))
    return seen


@pytest.mark.parametrize("norm_first", [False, True], ids=["post-norm", "pre-norm"])
def test_encoder_layer_in_training_mode_drops_what_torch_drops(norm_first):
    """Chapter 4's dropout: the same seed drops the same entries at the four sites, so the
    outputs agree to rounding, while another seed drops others and eval mode drops nothing."""
    torch.manual_seed(0)
    theirs = torch.nn.TransformerEncoderLayer(
        8, 2, 16, dropout=0.25, batch_first=True, norm_first=norm_first, dtype=torch.float64
    )
    ours = EncoderLayer.from_torch(theirs)
    assert ours.norm_first == norm_first and ours.training and theirs.training
    x = torch.randn(3, 5, 8, dtype=torch.float64)
    dropped_theirs, dropped_ours = dropout_records(theirs), dropout_records(ours)
    torch.manual_seed(11)
    expected = theirs(x)
    torch.manual_seed(11)
    got, weights = ours(x)
    assert torch.allclose(got, expected, rtol=0, atol=1e-12)
    assert torch.allclose(weights.sum(-1), torch.ones(3, 2, 5, dtype=torch.float64))
    # theirs: the weights inside F.multi_head_attention_forward (no module), then dropout1
    # (attention output), dropout (inside the FFN), dropout2 (FFN output); ours: the weights'
    # nn.Dropout, then one nn.Dropout for the other three, the attention output drawn
    # sequence-first
    dropped_weights, attention_out, inner, ffn_out = dropped_ours
    assert len(dropped_theirs) == 3 and dropped_weights.shape == (3, 2, 5, 5)
    assert torch.equal(dropped_theirs[0] == 0, attention_out.transpose(0, 1) == 0)
    assert torch.equal(dropped_theirs[1] == 0, inner == 0)
    assert torch.equal(dropped_theirs[2] == 0, ffn_out == 0)
    assert 0 < (ffn_out == 0).double().mean() < 0.5  # about p = 0.25 of them
    torch.manual_seed(12)
    assert not torch.allclose(ours(x)[0], expected, atol=1e-3)  # another seed, other entries
    ours.eval(), theirs.eval()
    assert torch.equal(ours(x)[0], ours(x)[0])  # evaluation: nothing random
    assert torch.allclose(ours(x)[0], theirs(x), rtol=0, atol=1e-12)


def test_dropout_zeroes_with_probability_p_and_scales_the_rest_by_one_over_one_minus_p():
    drop = torch.nn.Dropout(0.25)
    torch.manual_seed(0)
    out = drop(torch.ones(100_000, dtype=torch.float64))
    kept = out[out != 0]
    assert torch.all(kept == 1 / (1 - 0.25))
    assert abs((out == 0).double().mean().item() - 0.25) < 0.01
    assert abs(out.mean().item() - 1) < 0.02  # the expectation is unchanged
    assert torch.equal(drop.eval()(torch.ones(4)), torch.ones(4))


# --- RMSNorm, QK-norm and the pre-norm layer --------------------------------------------------


@settings(deadline=None, max_examples=40)
@given(
    st.sampled_from([np.float32, np.float64]),
    st.tuples(st.integers(1, 3), st.integers(1, 4), st.integers(1, 9)),
    st.sampled_from([None, 1e-6, 0.5]),
    st.booleans(),
    st.integers(0, 999),
)
def test_rms_norm_equals_torch_rms_norm(dtype, shape, eps, with_weight, seed):
    rng = np.random.default_rng(seed)
    x = (rng.normal(size=shape) * rng.choice([1e-3, 1.0, 1e3])).astype(dtype)
    w = rng.normal(size=shape[-1]).astype(dtype) if with_weight else None
    ours = rms_norm(x, w, eps=eps)
    expected = F.rms_norm(
        torch.from_numpy(x), (shape[-1],), None if w is None else torch.from_numpy(w), eps=eps
    ).numpy()
    assert ours.dtype == dtype and ours.shape == x.shape
    tol = 1e-5 if dtype == np.float32 else 1e-12
    assert np.allclose(ours, expected, rtol=tol, atol=tol)
    eps_used = np.finfo(dtype).eps if eps is None else eps  # the formula written out
    written = x / np.sqrt(np.mean(x.astype(np.float64) ** 2, axis=-1, keepdims=True) + eps_used)
    assert np.allclose(ours, written * (1 if w is None else w), rtol=tol, atol=tol)


def test_rms_norm_sets_the_root_mean_square_to_one_and_does_not_overflow():
    x = np.array([[3.0, -4.0, 0.0, 5.0], [1e300, -1e300, 3e299, 0.0]])  # (2, 4)
    out = rms_norm(x, eps=1e-300)
    assert np.allclose(np.sqrt(np.mean(out**2, axis=-1)), 1.0)
    assert np.allclose(out[1], x[1] / np.sqrt(np.mean((x[1] / 1e300) ** 2)) / 1e300)
    assert np.array_equal(rms_norm(np.zeros((2, 3))), np.zeros((2, 3)))  # eps keeps 0/0 away
    zeros32 = rms_norm(np.zeros(3, dtype=np.float32), eps=1e-300)  # eps is 0 in float32
    assert zeros32.dtype == np.float32 and np.array_equal(zeros32, np.zeros(3))
    tiny = np.array([1e-40, 0.0], dtype=np.float32)  # a subnormal: its square underflows
    assert np.allclose(rms_norm(tiny, eps=1e-300), [np.sqrt(2), 0.0])
    big = np.array([3e20, -4e20], dtype=np.float32)  # squares overflow float32
    assert np.allclose(rms_norm(big), [3 / np.sqrt(12.5), -4 / np.sqrt(12.5)])
    # a row with mean 0 and no eps: RMSNorm is LayerNorm
    row = np.array([[1.0, -2.0, 4.0, -3.0]])
    assert np.allclose(
        rms_norm(row, eps=1e-300), F.layer_norm(torch.from_numpy(row), (4,), eps=0.0).numpy()
    )


def test_rms_norm_module_equals_nn_rms_norm_and_the_numpy_twin():
    torch.manual_seed(0)
    for dtype, eps in [(torch.float32, None), (torch.float64, None), (torch.float64, 1e-5)]:
        theirs = torch.nn.RMSNorm(6, eps=eps, dtype=dtype)
        torch.nn.init.normal_(theirs.weight)
        ours = RMSNorm(6, eps=eps).to(dtype)
        ours.load_state_dict(theirs.state_dict())
        x = torch.randn(2, 3, 6, dtype=dtype)
        tol = 1e-6 if dtype == torch.float32 else 1e-13
        assert torch.allclose(ours(x), theirs(x), rtol=tol, atol=tol)
        assert torch.allclose(ours(x), F.rms_norm(x, (6,), theirs.weight, eps), atol=tol)
        twin = rms_norm(x.numpy(), theirs.weight.detach().numpy(), eps=eps)
        assert np.allclose(ours(x).detach().numpy(), twin, rtol=tol, atol=tol)


def test_rms_norm_errors_name_the_shapes():
    with pytest.raises(
        ValueError, match=r"weight of shape \(4,\) does not fit x of shape \(2, 3\)"
    ):
        rms_norm(np.ones((2, 3)), np.ones(4))
    with pytest.raises(ValueError, match=r"x of shape \(2, 0\) is empty"):
        rms_norm(np.ones((2, 0)))
    with pytest.raises(ValueError, match="at least one dimension"):
        rms_norm(np.float64(3.0))
    with pytest.raises(ValueError, match="eps must be a positive finite number"):
        rms_norm(np.ones(3), eps=0.0)
    with pytest.raises(ValueError, match=r"x of shape \(2, 5\) must have a last axis of 4"):
        RMSNorm(4)(torch.ones(2, 5))
    with pytest.raises(ValueError, match="NaN"):
        RMSNorm(2)(torch.tensor([1.0, float("nan")]))
    with pytest.raises(TypeError, match=r"x must be a torch\.Tensor, got ndarray"):
        RMSNorm(2)(np.ones(2))


def qk_norm_reference(layer, x):
    """Multi-head attention with QK-norm, written out with torch's own functions."""
    b, n, d = x.shape
    h, d_k = layer.h, layer.d_k

    def heads(lin):  # (b, n, d) -> (b, h, n, d_k)
        return lin(x).view(b, n, h, d_k).transpose(1, 2)

    q = F.rms_norm(heads(layer.w_q), (d_k,), layer.q_norm.weight)
    k = F.rms_norm(heads(layer.w_k), (d_k,), layer.k_norm.weight)
    out = F.scaled_dot_product_attention(q, k, heads(layer.w_v))  # (b, h, n, d_k)
    return layer.w_o(out.transpose(1, 2).reshape(b, n, d))


def test_qk_norm_normalises_each_heads_queries_and_keys():
    torch.manual_seed(4)
    layer = MultiHeadAttention(12, 3, qk_norm=True).double()
    with torch.no_grad():
        layer.q_norm.weight.normal_(), layer.k_norm.weight.normal_()
    x = torch.randn(2, 5, 12, dtype=torch.float64)
    out, weights = layer(x)
    assert torch.allclose(out, qk_norm_reference(layer, x), atol=1e-12)
    assert layer.q_norm.weight.shape == (4,)  # one gain of width d_k, shared by the heads
    # scaling W_Q and W_K changes nothing (up to eps): the scores cannot grow with them
    with torch.no_grad():
        layer.w_q.weight.mul_(100), layer.w_q.bias.mul_(100), layer.w_k.weight.mul_(0.01)
        layer.w_k.bias.mul_(0.01)
    _, weights_scaled = layer(x)
    assert torch.allclose(weights_scaled, weights, atol=1e-9)
    # with unit gains every |score| is at most sqrt(d_k): |q.k| <= |q||k| = d_k, over sqrt(d_k)
    plain = MultiHeadAttention(12, 3, qk_norm=True).double()
    with torch.no_grad():
        plain.w_q.weight.mul_(1e3)
    q = plain.q_norm(plain.split_heads(plain.w_q(x)))
    k = plain.k_norm(plain.split_heads(plain.w_k(x)))
    scores = q @ k.transpose(-2, -1) / 4**0.5
    assert scores.abs().max() <= 4**0.5 + 1e-9
    assert "q_norm" not in dict(MultiHeadAttention(12, 3).named_children())


def test_pre_norm_rms_layer_is_the_formula_written_out():
    torch.manual_seed(5)
    layer = EncoderLayer(8, 2, 16, norm_first=True, norm="rms", qk_norm=True).double()
    assert isinstance(layer.norm1, RMSNorm) and layer.self_attn.q_norm is not None
    x = torch.randn(2, 4, 8, dtype=torch.float64)
    out, _ = layer(x)
    x1 = x + layer.self_attn(F.rms_norm(x, (8,), layer.norm1.weight))[0]
    ffn = layer.linear2(torch.relu(layer.linear1(F.rms_norm(x1, (8,), layer.norm2.weight))))
    assert torch.allclose(out, x1 + ffn, atol=1e-12)
    # pre-norm with LayerNorm is nn.TransformerEncoderLayer(norm_first=True)
    theirs = torch.nn.TransformerEncoderLayer(
        8, 2, 16, dropout=0.0, batch_first=True, norm_first=True, dtype=torch.float64
    )
    ours = EncoderLayer.from_torch(theirs)
    assert ours.norm_first and isinstance(ours.norm1, torch.nn.LayerNorm)
    keep = torch.ones(4, 4, dtype=torch.bool).tril()
    assert torch.allclose(ours(x, mask=keep)[0], theirs(x, src_mask=~keep), atol=1e-12)


# --- the exercise checks ----------------------------------------------------------------


def split_reference(X, h):
    b, n, width = X.shape
    return X.reshape(b, n, h, width // h).transpose(0, 2, 1, 3)


def split_torch(X, h):
    x = torch.from_numpy(X)
    b, n, width = x.shape
    return x.view(b, n, h, width // h).transpose(1, 2).numpy()


def split_in_place(X, h):
    X += 0
    X[0, 0, 0] = -1.0
    return split_reference(X, h)


def split_by_loops_in_float64(X, h):
    b, n, width = X.shape
    out = np.zeros((b, h, n, width // h))
    for i in range(h):
        out[:, i] = X[:, :, i * (width // h) : (i + 1) * (width // h)]
    return out


@pytest.mark.parametrize("fn", [split_reference, split_torch, split_by_stacking])
def test_check_split_heads_accepts_correct_solutions_in_float32_and_float64(fn):
    result = check_split_heads(fn)
    assert result.passed, result.message


@pytest.mark.parametrize(
    "wrong, advice",
    [
        (lambda X, h: X.reshape(X.shape[0], h, X.shape[1], -1), "without the transpose"),
        (
            lambda X, h: torch.from_numpy(X).view(X.shape[0], h, X.shape[1], -1).numpy(),
            "mix tokens and heads",
        ),
        (lambda X, h: X.reshape(X.shape[0], X.shape[1], h, -1), "= (b, n, h, d_k)"),
        (
            lambda X, h: X.reshape(X.shape[0], X.shape[1], -1, h).transpose(0, 3, 1, 2),
            "every h-th column",
        ),
        (lambda X, h: split_reference(X, h).transpose(0, 1, 3, 2), "= (b, h, d_k, n)"),
        (lambda X, h: split_reference(X, h)[..., ::-1], "the columns of each head are in reverse"),
        (
            lambda X, h: np.repeat(split_reference(X, h)[..., :1], X.shape[-1] // h, axis=-1),
            "every column of a head repeats its first column",
        ),
        (
            lambda X, h: split_reference(X, h)[:, ::-1],
            "entry [0, 0, 0, 0] (batch, head, token, "
            "column) should be 0 (batch 0, token 0, head 0, column 0), you have 30 (batch 0, token 0, "
            "head 3, column 0)",
        ),
        (
            lambda X, h: (
                X.reshape(-1, h, X.shape[-1] // h)
                .transpose(1, 0, 2)
                .reshape(X.shape[0], h, X.shape[1], -1)
            ),
            "should be 10 (batch 0, token 0, head 1",
        ),
        (lambda X, h: split_reference(X, h)[:, :, :, :1], "should have shape (b, h, n, d_k)"),
        (lambda X, h: split_reference(X, 2), "should have shape (b, h, n, d_k)"),
        (split_by_loops_in_float64, "for float32 inputs you returned the result in float64"),
        (lambda X, h: 1 / 0, "ZeroDivisionError"),
        (split_in_place, "changed its input array in place"),
        (split_heads, "uses `attnkit.core.split_heads`"),
    ],
)
def test_check_split_heads_rejects_typical_mistakes(wrong, advice):
    result = check_split_heads(wrong)
    assert not result
    assert advice in result.message, result.message


def merge_reference(Y):
    b, h, n, d_v = Y.shape
    return Y.transpose(0, 2, 1, 3).reshape(b, n, h * d_v)


@pytest.mark.parametrize(
    "fn",
    [
        merge_reference,
        lambda Y: np.concatenate(list(Y.transpose(1, 0, 2, 3)), axis=-1),
        lambda Y: (
            torch.from_numpy(Y)
            .transpose(1, 2)
            .contiguous()
            .view(Y.shape[0], Y.shape[2], -1)
            .numpy()
        ),
    ],
)
def test_check_merge_heads_accepts_correct_solutions_in_float32_and_float64(fn):
    result = check_merge_heads(fn)
    assert result.passed, result.message


@pytest.mark.parametrize(
    "wrong, advice",
    [
        (lambda Y: Y.reshape(Y.shape[0], Y.shape[2], -1), "without moving the head axis back"),
        (lambda Y: Y.transpose(0, 2, 3, 1).reshape(Y.shape[0], Y.shape[2], -1), "interleaved"),
        (lambda Y: merge_reference(Y[..., ::-1]), "the columns of each head are reversed"),
        (lambda Y: merge_reference(Y[:, ::-1]), "the heads are in reverse order"),
        (
            lambda Y: merge_reference(np.repeat(Y[..., :1], Y.shape[-1], axis=-1)),
            "should be 1 (batch 0, token 0, head 0, column 1), you have 0 (batch 0, token 0, head 0, "
            "column 0)",
        ),
        (lambda Y: Y.transpose(0, 2, 1, 3), "now concatenate the heads"),
        (lambda Y: Y.reshape(Y.shape[0], -1, Y.shape[-1]), "should have shape (b, n, h*d_v)"),
        (lambda Y: merge_reference(Y) + 0.5, "0.5, which is no entry of the input"),
        (lambda Y: merge_reference(Y).astype(np.float64), "you returned the result in float64"),
        (lambda Y: "not an array", "should be a NumPy array"),
        (merge_heads, "uses `attnkit.core.merge_heads`"),
    ],
)
def test_check_merge_heads_rejects_typical_mistakes(wrong, advice):
    result = check_merge_heads(wrong)
    assert not result
    assert advice in result.message, result.message
