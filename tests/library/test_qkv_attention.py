"""Chapter 3's helpers: scaled dot-product attention in NumPy and PyTorch, against torch's own."""

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

from attnkit.core import attention, causal_mask, scaled_dot_product_attention, softmax
from attnkit.exercises.qkv_attention import check_mask_forms, check_scaled_dot_product_attention
from attnkit.modules import QKVAttention, ScaledDotProductAttention
from tests.support.answers.qkv_attention import (
    mask_forms_by_log,
    mask_forms_by_where,
    sdpa_by_hand,
    sdpa_in_torch,
    with_additive,
)

# --- NumPy: scaled dot-product attention ---------------------------------------------


def test_scaled_dot_product_attention_is_the_formula():
    rng = np.random.default_rng(0)
    Q, K, V = rng.normal(size=(3, 4)), rng.normal(size=(5, 4)), rng.normal(size=(5, 2))
    out, w = scaled_dot_product_attention(Q, K, V)
    expected = softmax(Q @ K.T / np.sqrt(4))
    assert w.shape == (3, 5) and out.shape == (3, 2)
    assert np.allclose(w, expected) and np.allclose(out, expected @ V)


def test_token_by_token_equals_the_matrix_form():
    rng = np.random.default_rng(1)
    Q, K, V = rng.normal(size=(3, 4)), rng.normal(size=(5, 4)), rng.normal(size=(5, 2))
    out, w = scaled_dot_product_attention(Q, K, V)
    for i in range(3):
        alpha = softmax(np.array([Q[i] @ K[j] / 2.0 for j in range(5)]))
        assert np.allclose(w[i], alpha)
        assert np.allclose(out[i], sum(alpha[j] * V[j] for j in range(5)))


def test_scale_one_is_chapter_one_attention():
    rng = np.random.default_rng(2)
    Q, K = rng.normal(size=(2, 3)), rng.normal(size=(4, 3))
    assert np.allclose(scaled_dot_product_attention(Q, K, K, scale=1.0)[0], attention(Q, K)[0])
    assert np.allclose(
        scaled_dot_product_attention(Q, K, K, scale=0.25)[1], attention(Q, K, temperature=4.0)[1]
    )


def test_batch_axes_broadcast():
    rng = np.random.default_rng(3)
    Q, K, V = rng.normal(size=(2, 3, 4)), rng.normal(size=(5, 4)), rng.normal(size=(5, 2))
    out, w = scaled_dot_product_attention(Q, K, V, mask=causal_mask(5)[:3])
    assert out.shape == (2, 3, 2) and w.shape == (2, 3, 5)
    for b in range(2):
        assert np.allclose(
            out[b], scaled_dot_product_attention(Q[b], K, V, mask=causal_mask(5)[:3])[0]
        )


def test_shape_errors_name_the_shapes():
    with pytest.raises(ValueError, match=r"queries of shape \(2, 4\) and keys of shape \(3, 5\)"):
        scaled_dot_product_attention(np.ones((2, 4)), np.ones((3, 5)), np.ones((3, 5)))
    with pytest.raises(ValueError, match=r"keys of shape \(3, 4\) and values of shape \(2, 4\)"):
        scaled_dot_product_attention(np.ones((2, 4)), np.ones((3, 4)), np.ones((2, 4)))
    with pytest.raises(ValueError, match=r"queries must have shape \(m, d_k\).*\(4,\)"):
        scaled_dot_product_attention(np.ones(4), np.ones((3, 4)), np.ones((3, 4)))
    with pytest.raises(ValueError, match=r"batch axes.*\(2, 1, 4\).*\(3, 1, 4\)"):
        scaled_dot_product_attention(np.ones((2, 1, 4)), np.ones((3, 1, 4)), np.ones((3, 1, 4)))
    with pytest.raises(ValueError, match=r"mask of shape \(2, 2\).*scores of shape \(1, 3\)"):
        scaled_dot_product_attention(
            np.ones((1, 4)), np.ones((3, 4)), np.ones((3, 4)), mask=np.ones((2, 2), dtype=bool)
        )


@pytest.mark.parametrize("scale", [0.0, -1.0, np.inf, np.nan])
def test_bad_scale_raises(scale):
    with pytest.raises(ValueError, match="scale"):
        scaled_dot_product_attention(np.ones((1, 2)), np.ones((2, 2)), np.ones((2, 2)), scale=scale)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_dtype_is_kept(dtype):
    rng = np.random.default_rng(4)
    Q, K, V = (rng.normal(size=s).astype(dtype) for s in [(2, 3), (4, 3), (4, 5)])
    out, w = scaled_dot_product_attention(Q, K, V, mask=causal_mask(4)[:2])
    assert out.dtype == dtype and w.dtype == dtype


def test_variance_of_the_dot_product_grows_with_d_k():
    rng = np.random.default_rng(5)
    for d_k in (4, 64, 256):
        q, k = rng.normal(size=(2, 20_000, d_k))
        dots = np.einsum("sd,sd->s", q, k)
        assert abs(dots.var() / d_k - 1) < 0.05
        assert abs((dots / np.sqrt(d_k)).var() - 1) < 0.05


# --- PyTorch: equality with torch's built-ins (random cases: test_reference.py) ------


@pytest.mark.parametrize("scale", [1.0, 0.1])
def test_module_scale_equals_torch_scale(scale):
    torch.manual_seed(0)
    q, k, v = torch.randn(2, 3, 4), torch.randn(2, 5, 4), torch.randn(2, 5, 6)
    out, _ = ScaledDotProductAttention(scale=scale)(q, k, v)
    assert torch.allclose(out, F.scaled_dot_product_attention(q, k, v, scale=scale), atol=1e-6)


def test_all_masked_rows_raise_or_match_torch_zero_rows():
    torch.manual_seed(1)
    q, k, v = torch.randn(2, 3, 4), torch.randn(2, 5, 4), torch.randn(2, 5, 2)
    mask = torch.ones(2, 3, 5, dtype=torch.bool)
    mask[1, 2] = False
    with pytest.raises(ValueError, match=r"\[\(1, 2\)\]"):
        ScaledDotProductAttention()(q, k, v, mask)
    out, w = ScaledDotProductAttention(all_masked="zero")(q, k, v, mask)
    expected = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    assert torch.allclose(out, expected, atol=1e-6)
    assert torch.all(out[1, 2] == 0) and torch.all(w[1, 2] == 0)
    # the NumPy version agrees, and neither returns NaN
    out_np, _ = scaled_dot_product_attention(
        q.numpy(), k.numpy(), v.numpy(), mask=mask.numpy(), all_masked="zero"
    )
    assert np.allclose(out_np, expected.numpy(), atol=1e-6)


def test_all_masked_zero_rows_have_finite_gradients():
    torch.manual_seed(2)
    q = torch.randn(3, 4, requires_grad=True)
    k, v = torch.randn(5, 4), torch.randn(5, 2)
    mask = torch.ones(3, 5, dtype=torch.bool)
    mask[0] = False
    out, _ = ScaledDotProductAttention(all_masked="zero")(q, k, v, mask)
    out.sum().backward()
    assert torch.all(torch.isfinite(q.grad)) and torch.all(q.grad[0] == 0)


def test_module_refuses_non_boolean_masks_and_bad_shapes():
    q, k, v = torch.ones(2, 4), torch.ones(3, 4), torch.ones(3, 2)
    with pytest.raises(TypeError, match=r"boolean.*mask == 0"):
        ScaledDotProductAttention()(q, k, v, torch.zeros(2, 3))
    with pytest.raises(ValueError, match=r"mask of shape \(3, 3\).*scores of shape \(2, 3\)"):
        ScaledDotProductAttention()(q, k, v, torch.ones(3, 3, dtype=torch.bool))
    with pytest.raises(ValueError, match=r"queries of shape \(2, 4\) and keys of shape \(3, 5\)"):
        ScaledDotProductAttention()(q, torch.ones(3, 5), v)
    with pytest.raises(ValueError, match=r"keys of shape \(3, 4\) and values of shape \(2, 2\)"):
        ScaledDotProductAttention()(q, k, torch.ones(2, 2))
    with pytest.raises(ValueError, match="'raise' or 'zero'"):
        ScaledDotProductAttention(all_masked="nan")
    with pytest.raises(ValueError, match="scale"):
        ScaledDotProductAttention(scale=-1.0)


def test_torch_multihead_attention_uses_the_opposite_boolean_convention():
    """nn.MultiheadAttention: True = masked out; F.scaled_dot_product_attention: True = attend."""
    torch.manual_seed(3)
    d = 4
    mha = torch.nn.MultiheadAttention(d, num_heads=1, bias=False, batch_first=True)
    with torch.no_grad():  # identity projections: plain SDPA inside
        mha.in_proj_weight.copy_(torch.cat([torch.eye(d)] * 3))
        mha.out_proj.weight.copy_(torch.eye(d))
    x = torch.randn(1, 5, d)
    keep = torch.from_numpy(causal_mask(5))
    out_mha, _ = mha(x, x, x, attn_mask=~keep)
    out_ours, _ = ScaledDotProductAttention()(x, x, x, keep)
    assert torch.allclose(out_mha, out_ours, atol=1e-6)


def test_qkv_attention_equals_numpy_with_the_weights_copied_across():
    torch.manual_seed(4)
    layer = QKVAttention(d_model=6, d_k=4, d_v=3)
    Z, H = torch.randn(2, 6), torch.randn(5, 6)  # decoder (J, d), encoder (I, d)
    W_Q, W_K, W_V = (lin.weight.detach().T.numpy() for lin in (layer.w_q, layer.w_k, layer.w_v))
    assert W_Q.shape == (6, 4) and W_V.shape == (6, 3)
    out, _w = layer(Z, H)  # encoder-decoder attention
    out_np, _w_np = scaled_dot_product_attention(Z.numpy() @ W_Q, H.numpy() @ W_K, H.numpy() @ W_V)
    assert out.shape == (2, 3) and np.allclose(out.detach().numpy(), out_np, atol=1e-6)
    out_self, _ = layer(H, mask=torch.from_numpy(causal_mask(5)))  # self-attention
    X = H.numpy()
    expected, _ = scaled_dot_product_attention(X @ W_Q, X @ W_K, X @ W_V, mask=causal_mask(5))
    assert np.allclose(out_self.detach().numpy(), expected, atol=1e-6)
    with pytest.raises(ValueError, match=r"x_source of shape \(5, 4\).*d_model = 6"):
        layer(Z, torch.randn(5, 4))


@settings(deadline=None)
@given(st.integers(2, 6), st.integers(0, 2**16))
def test_module_leaks_nothing_past_a_causal_mask(n, seed):
    gen = torch.Generator().manual_seed(seed)
    layer = QKVAttention(d_model=3, d_k=2)
    x = torch.randn(n, 3, generator=gen)
    t_ = int(torch.randint(1, n, (1,), generator=gen))
    changed = x.clone()
    changed[t_:] = torch.randn(n - t_, 3, generator=gen) * 5
    keep = torch.from_numpy(causal_mask(n))
    with torch.no_grad():
        assert torch.equal(layer(x, mask=keep)[0][:t_], layer(changed, mask=keep)[0][:t_])


# --- the exercise checks ---------------------------------------------------------------


def sdpa_reference(Q, K, V):
    weights = softmax(Q @ K.T / K.shape[-1] ** 0.5)
    return weights @ V, weights


def sdpa_by_the_module(Q, K, V):
    out, weights = ScaledDotProductAttention()(*(torch.from_numpy(a) for a in (Q, K, V)))
    return out.numpy(), weights.numpy()


def _weights_then(fn):
    return lambda Q, K, V: (fn(Q, K) @ V, fn(Q, K))


def naive_softmax(x):
    return np.exp(x) / np.exp(x).sum(axis=-1, keepdims=True)


def sdpa_in_place(Q, K, V):
    Q /= K.shape[-1] ** 0.5
    weights = softmax(Q @ K.T)
    return weights @ V, weights


@pytest.mark.parametrize("fn", [sdpa_reference, sdpa_by_hand, sdpa_in_torch])
def test_check_sdpa_accepts_correct_answers_in_float32_and_float64(fn):
    result = check_scaled_dot_product_attention(fn)
    assert result.passed, result.message


@pytest.mark.parametrize(
    "wrong, advice",
    [
        (_weights_then(lambda Q, K: softmax(Q @ K.T)), "softmax(Q K^T), without scaling"),
        (_weights_then(lambda Q, K: softmax(Q @ K.T / 3.0)), "3, the sqrt(d_k) of one example"),
        (
            _weights_then(lambda Q, K: softmax(Q @ K.T / K.shape[-1])),
            "you divided the scores by d_k = 9",
        ),
        (
            lambda Q, K, V: (
                softmax(Q @ K.T / np.sqrt(V.shape[-1])) @ V,
                softmax(Q @ K.T / np.sqrt(V.shape[-1])),
            ),
            "sqrt(d_v)",
        ),
        (_weights_then(lambda Q, K: softmax(Q @ K.T / K.shape[0] ** 0.5)), "number of keys"),
        (_weights_then(lambda Q, K: softmax(Q @ K.T / Q.shape[0] ** 0.5)), "number of queries"),
        (
            _weights_then(lambda Q, K: softmax(Q @ K.T * K.shape[-1] ** 0.5)),
            "you multiplied the scores by sqrt(d_k)",
        ),
        (
            _weights_then(lambda Q, K: softmax(Q @ K.T / K.shape[-1] ** 0.5, axis=0)),
            "each column sums to 1",
        ),
        (
            _weights_then(
                lambda Q, K: softmax((Q @ K.T / K.shape[-1] ** 0.5).ravel()).reshape(len(Q), len(K))
            ),
            "the rows of the weights sum to",
        ),
        (lambda Q, K, V: (None, softmax(K @ Q.T / 3.0)), "not K @ Q.T"),
        (lambda Q, K, V: (softmax(Q @ K.T / 3) @ K, softmax(Q @ K.T / 3)), "averaged the keys"),
        (
            lambda Q, K, V: (sdpa_reference(Q, K, V)[0] * 2, sdpa_reference(Q, K, V)[1]),
            "not weights @ V",
        ),
        (
            lambda Q, K, V: (sdpa_reference(Q, K, V)[1] @ V[:, :1], sdpa_reference(Q, K, V)[1]),
            "the output has shape (3, 1)",
        ),
        (
            _weights_then(lambda Q, K: softmax(-Q @ K.T / K.shape[-1] ** 0.5)),
            "should be softmax(Q K^T / sqrt(9))",
        ),
        (
            _weights_then(lambda Q, K: naive_softmax(Q @ K.T / K.shape[-1] ** 0.5)),
            "Subtract each row's own maximum",
        ),
        (
            lambda Q, K, V: (
                softmax(Q @ K.T / np.sqrt(K.shape[-1])) @ V,
                softmax(Q @ K.T / np.sqrt(K.shape[-1])),
            ),
            "for float32 inputs you returned the weights in float64",
        ),
        (lambda Q, K, V: softmax(Q @ K.T / 3) @ V, "return a pair"),
        (sdpa_in_place, "changed its input array in place"),
        (scaled_dot_product_attention, "uses `attnkit.core.scaled_dot_product_attention`"),
        (sdpa_by_the_module, "uses `attnkit.modules.ScaledDotProductAttention.forward`"),
    ],
)
def test_check_sdpa_rejects_typical_mistakes(wrong, advice):
    with np.errstate(all="ignore"):
        result = check_scaled_dot_product_attention(wrong)
    assert not result
    assert advice in result.message, result.message


def mask_forms_reference(keep, dtype):
    masked_out = ~keep
    return masked_out, torch.zeros(keep.shape, dtype=dtype).masked_fill(masked_out, float("-inf"))


@pytest.mark.parametrize("fn", [mask_forms_reference, mask_forms_by_where, mask_forms_by_log])
def test_check_mask_forms_accepts_correct_answers(fn):
    result = check_mask_forms(fn)
    assert result.passed, result.message


@pytest.mark.parametrize("shape", [(3, 4), (2, 3, 5)])
def test_the_forms_of_one_mask_agree_in_pytorch(shape):
    """What the exercise teaches, checked: every form gives the same attention."""
    generator = torch.Generator().manual_seed(0)
    keep = torch.rand(shape, generator=generator) < 0.6
    keep[..., 0] = True  # every query keeps a key
    masked_out, additive = mask_forms_reference(keep, torch.float32)
    q = torch.randn(*shape[:-1], 8, generator=generator)
    k = torch.randn(*shape[:-2], shape[-1], 8, generator=generator)
    v = torch.randn(*shape[:-2], shape[-1], 4, generator=generator)
    by_keep = F.scaled_dot_product_attention(q, k, v, attn_mask=keep)
    by_additive = F.scaled_dot_product_attention(q, k, v, attn_mask=additive)
    by_masked_out = F.scaled_dot_product_attention(q, k, v, attn_mask=~masked_out)
    assert torch.allclose(by_keep, by_additive, atol=1e-6)
    assert torch.equal(by_keep, by_masked_out)
    assert torch.equal(additive != float("-inf"), keep)  # and back again


def keep_not_negated(keep, dtype):
    return keep, mask_forms_reference(keep, dtype)[1]


def negated_in_place(keep, dtype):
    return keep.logical_not_(), mask_forms_reference(~keep, dtype)[1]


@pytest.mark.parametrize(
    "wrong, advice",
    [
        (keep_not_negated, "masked_out equals keep"),
        (
            lambda keep, dtype: ((~keep).int(), mask_forms_reference(keep, dtype)[1]),
            "return booleans",
        ),
        (
            lambda keep, dtype: (~keep.transpose(-1, -2), mask_forms_reference(keep, dtype)[1]),
            "masked_out is the transpose of ~keep",
        ),
        (
            lambda keep, dtype: (
                ~keep.transpose(-1, -2) if keep.shape[-1] == keep.shape[-2] else ~keep,
                mask_forms_reference(keep, dtype)[1],
            ),
            "masked_out is the transpose",
        ),
        (
            lambda keep, dtype: (
                ~keep ^ (torch.arange(keep.shape[-1]) == 1),
                mask_forms_reference(keep, dtype)[1],
            ),
            "masked_out[0, 1] should be",
        ),
        (with_additive(lambda keep, dtype: keep.to(dtype)), "keep as 0.0/1.0"),
        (with_additive(lambda keep, dtype: (~keep).to(dtype) * float("-inf")), "0 * (-inf) is NaN"),
        (
            with_additive(
                lambda keep, dtype: torch.zeros(keep.shape, dtype=dtype).masked_fill(
                    keep, float("-inf")
                )
            ),
            "-inf where keep is True",
        ),
        (
            with_additive(
                lambda keep, dtype: torch.zeros(keep.shape, dtype=dtype).masked_fill(~keep, -1e9)
            ),
            "-1e9",
        ),
        (
            with_additive(
                lambda keep, dtype: torch.ones(keep.shape, dtype=dtype).masked_fill(
                    ~keep, float("-inf")
                )
            ),
            "exactly 0 where keep allows",
        ),
        (
            with_additive(
                lambda keep, dtype: torch.zeros(keep.shape).masked_fill(~keep, float("-inf"))
            ),
            "for a (4, 4) causal mask and dtype = torch.float64 additive has dtype torch.float32",
        ),
        (
            with_additive(
                lambda keep, dtype: torch.zeros(keep.shape, dtype=dtype).masked_fill(
                    ~keep.transpose(-1, -2), float("-inf")
                )
            ),
            "additive is the transpose of the right mask",
        ),
        (
            with_additive(
                lambda keep, dtype: mask_forms_reference(keep, dtype)[1][..., :1, :].expand(
                    keep.shape
                )
            ),
            "gives query 1 the weight",
        ),
        (
            with_additive(lambda keep, dtype: mask_forms_reference(keep, dtype)[1].numpy()),
            "return two torch tensors",
        ),
        (lambda keep, dtype: mask_forms_reference(keep, dtype)[1], "return a pair"),
        (negated_in_place, "changed its input array in place"),
    ],
)
def test_check_mask_forms_rejects_typical_mistakes(wrong, advice):
    result = check_mask_forms(wrong)
    assert not result
    assert advice in result.message, result.message
