"""Chapter 7's helpers (sliding windows, grouped-query attention, the online softmax, the
key-value cache) and its checks."""

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

from attnkit.core import (
    causal_mask,
    grouped_query_attention,
    padding_mask,
    scaled_dot_product_attention,
    sliding_window_mask,
)
from attnkit.decoding import KVCache, TinyDecoder, cached_self_attention, greedy_generate
from attnkit.exercises.attention_at_scale import (
    check_grouped_query_attention,
    check_online_softmax_attention,
)
from attnkit.modules import MultiHeadAttention
from attnkit.recorded import recorded_benchmark
from attnkit.streaming import online_softmax_attention

# --- the sliding window ------------------------------------------------------------------


def test_sliding_window_mask_is_a_causal_band():
    mask = sliding_window_mask(5, 2)
    assert mask.dtype == bool and mask.shape == (5, 5)
    assert mask.astype(int).tolist() == [
        [1, 0, 0, 0, 0],
        [1, 1, 0, 0, 0],
        [0, 1, 1, 0, 0],
        [0, 0, 1, 1, 0],
        [0, 0, 0, 1, 1],
    ]
    assert np.array_equal(sliding_window_mask(5, 1), np.eye(5, dtype=bool))
    for window in (5, 9):
        assert np.array_equal(sliding_window_mask(5, window), causal_mask(5))
    # n*w scores at most, n*w - w(w-1)/2 exactly
    assert sliding_window_mask(100, 8).sum() == 100 * 8 - 8 * 7 // 2


def test_sliding_window_mask_refuses_bad_sizes():
    with pytest.raises(ValueError, match="window must be a positive integer, got 0"):
        sliding_window_mask(4, 0)
    with pytest.raises(ValueError, match="n must be a positive integer"):
        sliding_window_mask(2.5, 2)


# --- grouped-query attention ---------------------------------------------------------------


@pytest.mark.parametrize("h, g", [(6, 2), (4, 4), (4, 1), (8, 4)])
def test_grouped_query_attention_is_torch_s_enable_gqa(h, g):
    rng = np.random.default_rng(h * 10 + g)
    q, k, v = (rng.normal(size=s) for s in [(2, h, 5, 4), (2, g, 7, 4), (2, g, 7, 3)])
    mask = causal_mask(7)[:5] & padding_mask(np.array([7, 4]), 7)  # (2, 5, 7)
    out, w = grouped_query_attention(q, k, v, mask=mask)
    theirs = F.scaled_dot_product_attention(
        *(torch.from_numpy(a) for a in (q, k, v)),
        attn_mask=torch.from_numpy(mask)[:, None],
        enable_gqa=True,
    )
    assert out.shape == (2, h, 5, 3) and w.shape == (2, h, 5, 7)
    assert np.allclose(out, theirs.numpy())
    assert np.all(w[1, ..., 4:] == 0)


def test_grouped_query_attention_is_multi_head_attention_with_repeated_keys_and_values():
    rng = np.random.default_rng(0)
    q, k, v = rng.normal(size=(6, 3, 4)), rng.normal(size=(3, 5, 4)), rng.normal(size=(3, 5, 2))
    out, w = grouped_query_attention(q, k, v)
    repeated = scaled_dot_product_attention(q, np.repeat(k, 2, axis=0), np.repeat(v, 2, axis=0))
    assert np.allclose(out, repeated[0]) and np.allclose(w, repeated[1])
    tiled = scaled_dot_product_attention(q, np.tile(k, (2, 1, 1)), np.tile(v, (2, 1, 1)))
    assert not np.allclose(out, tiled[0])  # heads 0, 1 share group 0; tiling pairs 0 with 3
    # g = h is multi-head attention, one key-value head per query head
    assert np.allclose(
        grouped_query_attention(q, q, q)[0], scaled_dot_product_attention(q, q, q)[0]
    )


def test_grouped_query_attention_keeps_float32():
    rng = np.random.default_rng(1)
    q, k = (
        rng.normal(size=(4, 3, 2)).astype(np.float32),
        rng.normal(size=(2, 3, 2)).astype(np.float32),
    )
    out, w = grouped_query_attention(q, k, k)
    assert out.dtype == np.float32 and w.dtype == np.float32


def test_grouped_query_attention_errors_name_the_shapes():
    with pytest.raises(ValueError, match=r"h = 6 heads .* g = 4: h must be a multiple of g"):
        grouped_query_attention(np.ones((6, 2, 3)), np.ones((4, 2, 3)), np.ones((4, 2, 3)))
    with pytest.raises(ValueError, match=r"same number of key-value heads g \(2 != 1\)"):
        grouped_query_attention(np.ones((4, 2, 3)), np.ones((2, 2, 3)), np.ones((1, 2, 3)))
    with pytest.raises(ValueError, match=r"queries must have shape \(h, m, d_k\).*\(2, 3\)"):
        grouped_query_attention(np.ones((2, 3)), np.ones((1, 2, 3)), np.ones((1, 2, 3)))
    with pytest.raises(ValueError, match=r"same last dimension d_k \(3 != 4\)"):
        grouped_query_attention(np.ones((2, 2, 3)), np.ones((1, 2, 4)), np.ones((1, 2, 3)))
    with pytest.raises(ValueError, match=r"mask of shape \(3, 3\) does not fit one head's weights"):
        grouped_query_attention(
            np.ones((2, 2, 3)),
            np.ones((1, 3, 3)),
            np.ones((1, 3, 3)),
            mask=np.ones((3, 3), dtype=bool),
        )


# --- the online softmax ----------------------------------------------------------------------


@settings(deadline=None, max_examples=60)
@given(
    st.integers(1, 6),
    st.integers(1, 12),
    st.integers(1, 4),
    st.integers(1, 3),
    st.integers(1, 15),
    st.booleans(),
    st.integers(0, 2**16),
)
def test_online_softmax_attention_is_softmax_attention(m, n, d_k, d_v, block_size, causal, seed):
    m = n if causal else m
    rng = np.random.default_rng(seed)
    Q, K, V = rng.normal(size=(m, d_k)), rng.normal(size=(n, d_k)), rng.normal(size=(n, d_v))
    mask = causal_mask(n) if causal else None
    out, logsumexp = online_softmax_attention(Q, K, V, block_size=block_size, causal=causal)
    expected, weights = scaled_dot_product_attention(Q, K, V, mask=mask)
    assert out.shape == (m, d_v) and logsumexp.shape == (m,)
    assert np.allclose(out, expected)
    # the saved logsumexp gives the weights back: exp(S - L), masked entries 0
    scores = Q @ K.T / np.sqrt(d_k)
    if causal:
        scores = np.where(mask, scores, -np.inf)
    assert np.allclose(np.exp(scores - logsumexp[:, None]), weights)


def test_online_softmax_attention_with_batches_and_float32():
    rng = np.random.default_rng(0)
    Q = rng.normal(size=(2, 3, 6, 4)).astype(np.float32)  # (b, h, n, d_k)
    K, V = Q[::-1].copy(), rng.normal(size=(2, 3, 6, 2)).astype(np.float32)
    out, logsumexp = online_softmax_attention(Q, K, V, block_size=4, causal=True)
    expected, _ = scaled_dot_product_attention(Q, K, V, mask=causal_mask(6))
    assert out.dtype == np.float32 and logsumexp.dtype == np.float32
    assert np.allclose(out, expected, atol=1e-6)


def test_online_softmax_attention_stays_finite_where_a_plain_running_sum_overflows():
    rng = np.random.default_rng(1)
    Q, K, V = rng.normal(size=(3, 2)), rng.normal(size=(8, 2)), rng.normal(size=(8, 2))
    K[:, 0] = np.linspace(0, 3000, 8)  # scores up to about 3000 / sqrt(2)
    Q[:, 0] = 1.0
    with np.errstate(over="ignore", invalid="ignore"):
        plain = np.exp(Q @ K.T / np.sqrt(2)).sum(axis=1)
    assert np.all(np.isinf(plain))
    out, logsumexp = online_softmax_attention(Q, K, V, block_size=3)
    assert np.allclose(out, scaled_dot_product_attention(Q, K, V)[0])
    assert np.all(np.isfinite(logsumexp)) and np.all(logsumexp > 2000)


def test_online_softmax_attention_errors():
    ones = np.ones((3, 2))
    with pytest.raises(ValueError, match="block_size must be a positive integer, got 0"):
        online_softmax_attention(ones, ones, ones, block_size=0)
    with pytest.raises(ValueError, match=r"causal=True is self-attention.*m = 2, n = 3"):
        online_softmax_attention(np.ones((2, 2)), ones, ones, block_size=2, causal=True)
    with pytest.raises(ValueError, match=r"same number of rows n \(3 != 4\)"):
        online_softmax_attention(ones, ones, np.ones((4, 2)), block_size=2)
    with pytest.raises(ValueError, match="overflowed to infinity"):
        online_softmax_attention(
            np.full((2, 2), 1e200), np.full((2, 2), 1e200), ones[:2], block_size=1
        )


# --- the key-value cache -----------------------------------------------------------------------


def test_kv_cache_appends_along_the_token_axis():
    cache = KVCache()
    assert len(cache) == 0 and cache.nbytes == 0
    k, v = torch.zeros(2, 4, 3, 5), torch.ones(2, 4, 3, 5)  # (b, h, t, d_k)
    keys, values = cache.append(k, v)
    assert keys is k and values is v and len(cache) == 3
    keys, _values = cache.append(k[:, :, :1] + 1, v[:, :, :1])
    assert keys.shape == (2, 4, 4, 5) and len(cache) == 4
    assert torch.equal(keys[:, :, 3], torch.ones(2, 4, 5))
    assert cache.nbytes == 2 * 2 * 4 * 4 * 5 * 4  # keys and values, float32


def test_kv_cache_refuses_keys_that_do_not_continue_it():
    cache = KVCache()
    cache.append(torch.zeros(1, 2, 3, 4), torch.zeros(1, 2, 3, 4))
    with pytest.raises(ValueError, match=r"new keys of shape \(1, 3, 1, 4\) do not continue"):
        cache.append(torch.zeros(1, 3, 1, 4), torch.zeros(1, 3, 1, 4))
    with pytest.raises(ValueError, match="same leading axes and tokens"):
        KVCache().append(torch.zeros(1, 2, 3, 4), torch.zeros(1, 2, 2, 4))


def test_cached_self_attention_gives_the_rows_of_causal_self_attention():
    torch.manual_seed(0)
    layer = MultiHeadAttention(8, 2).double()
    x = torch.randn(2, 6, 8, dtype=torch.float64)  # (b, n, d_model)
    full_out, full_w = layer(x, mask=torch.from_numpy(causal_mask(6)))
    cache = KVCache()
    out_prompt, _w_prompt = cached_self_attention(layer, x[:, :4], cache)  # 4 tokens at once
    assert torch.allclose(out_prompt, full_out[:, :4]) and len(cache) == 4
    for t in (4, 5):  # then one token at a time
        out, w = cached_self_attention(layer, x[:, t : t + 1], cache)
        assert w.shape == (2, 2, 1, t + 1)
        assert torch.allclose(out[:, 0], full_out[:, t], atol=1e-12)
        assert torch.allclose(w[..., 0, :], full_w[..., t, : t + 1], atol=1e-12)
    assert cache.keys.shape == (2, 2, 6, 4)


def test_cached_self_attention_checks_its_inputs():
    with pytest.raises(TypeError, match=r"must be an attnkit\.modules\.MultiHeadAttention"):
        cached_self_attention(torch.nn.MultiheadAttention(8, 2), torch.zeros(1, 2, 8), KVCache())
    with pytest.raises(ValueError, match="d_model = 8"):
        cached_self_attention(MultiHeadAttention(8, 2), torch.zeros(1, 2, 6), KVCache())


def test_decoder_with_a_cache_gives_the_logits_without_it():
    torch.manual_seed(1)
    model = TinyDecoder(vocab=20, d_model=16, h=4, layers=2, max_len=16).double().eval()
    tokens = torch.randint(0, 20, (3, 10))
    with torch.no_grad():
        full = model(tokens)  # (b, n, vocab)
        caches = model.new_caches()
        steps = [model(tokens[:, :6], caches)] + [
            model(tokens[:, t : t + 1], caches) for t in range(6, 10)
        ]
    assert full.shape == (3, 10, 20)
    assert torch.allclose(torch.cat(steps, dim=1), full, atol=1e-12)
    assert [len(c) for c in caches] == [10, 10]


def test_greedy_generation_is_the_same_with_and_without_the_cache():
    torch.manual_seed(2)
    model = TinyDecoder(vocab=30, d_model=32, h=4, layers=2, max_len=64).double().eval()
    prompt = torch.randint(0, 30, (2, 5))
    cached = greedy_generate(model, prompt, 25, use_cache=True)
    plain = greedy_generate(model, prompt, 25, use_cache=False)
    assert cached.shape == (2, 30) and torch.equal(cached[:, :5], prompt)
    assert torch.equal(cached, plain)
    assert len(set(cached[0, 5:].tolist())) > 1  # not one token repeated


def test_greedy_generation_is_the_model_s_argmax_step_by_step():
    torch.manual_seed(3)
    model = TinyDecoder(vocab=12, d_model=8, h=2, layers=1, max_len=8).eval()
    out = greedy_generate(model, torch.tensor([[3, 1]]), 3)
    with torch.no_grad():
        for t in range(2, 5):
            assert out[0, t] == model(out[:, :t])[0, -1].argmax()


def test_decoder_errors():
    model = TinyDecoder(vocab=5, d_model=8, h=2, layers=2, max_len=4)
    with pytest.raises(ValueError, match="positions up to 4 do not fit max_len = 4"):
        model(torch.zeros(1, 5, dtype=torch.long))
    with pytest.raises(ValueError, match="one KVCache per layer: 2, got 1"):
        model(torch.zeros(1, 2, dtype=torch.long), [KVCache()])
    with pytest.raises(ValueError, match="positions up to 4 do not fit max_len = 4"):
        greedy_generate(model, torch.zeros(1, 2, dtype=torch.long), 4)  # feeds positions 0..4
    with pytest.raises(ValueError, match=r"prompt must be integer tokens of shape \(b, n\)"):
        greedy_generate(model, torch.zeros(3, dtype=torch.long), 1)
    with pytest.raises(ValueError, match="steps must be a positive integer"):
        greedy_generate(model, torch.zeros(1, 1, dtype=torch.long), 0)


# --- the checks: online softmax attention ---------------------------------------------------


def online_reference(Q, K, V, block_size, causal):
    """The exercise's solution: running max, running sum, rescaled accumulator."""
    m, d_k = Q.shape
    r = np.full((m, 1), -np.inf, dtype=Q.dtype)
    s, acc = np.zeros((m, 1), dtype=Q.dtype), np.zeros((m, V.shape[1]), dtype=Q.dtype)
    for start in range(0, K.shape[0], block_size):
        S = Q @ K[start : start + block_size].T / np.sqrt(d_k).astype(Q.dtype)
        if causal:
            S = np.where(np.arange(start, start + S.shape[1]) <= np.arange(m)[:, None], S, -np.inf)
        new = np.maximum(r, S.max(axis=1, keepdims=True))
        P = np.exp(S - new)
        s = np.exp(r - new) * s + P.sum(axis=1, keepdims=True)
        acc = np.exp(r - new) * acc + P @ V[start : start + block_size]
        r = new
    return acc / s


def online_with(mistake):
    """``online_reference`` with one typical mistake."""

    def fn(Q, K, V, block_size, causal):
        m, d_k = Q.shape
        dtype = np.float64 if mistake == "float64 arrays" else Q.dtype
        r = np.full((m, 1), -np.inf, dtype=dtype)
        s, acc = np.zeros((m, 1), dtype=dtype), np.zeros((m, V.shape[1]), dtype=dtype)
        stop = (
            K.shape[0] - K.shape[0] % block_size if mistake == "whole blocks only" else K.shape[0]
        )
        outputs = []
        for start in range(0, stop, block_size):
            S = Q @ K[start : start + block_size].T
            if mistake != "no scale":
                S = S / np.sqrt(d_k).astype(Q.dtype)
            cols = np.arange(start, start + S.shape[1])
            if mistake == "local positions":
                cols = np.arange(S.shape[1])
            if causal and mistake != "no mask":
                keep = (
                    cols >= np.arange(m)[:, None]
                    if mistake == "future kept"
                    else cols < np.arange(m)[:, None]
                    if mistake == "strict mask"
                    else cols <= np.arange(m)[:, None]
                )
                S = np.where(keep, S, -np.inf)
            if mistake == "plain sum":
                P = np.exp(S)
                s, acc = s + P.sum(axis=1, keepdims=True), acc + P @ V[start : start + block_size]
                continue
            new = (
                r
                if (mistake == "max never updated" and start > 0)
                else S.max(axis=1, keepdims=True)
                if mistake == "block max only"
                else np.maximum(r, S.max(axis=1, keepdims=True))
            )
            P = np.exp(S - new)
            if mistake == "each block normalised":
                outputs.append(P @ V[start : start + block_size] / P.sum(axis=1, keepdims=True))
                continue
            s = (s if mistake == "sum not rescaled" else np.exp(r - new) * s) + P.sum(
                axis=1, keepdims=True
            )
            acc = (acc if mistake == "accumulator not rescaled" else np.exp(r - new) * acc) + P @ V[
                start : start + block_size
            ]
            r = new
        if mistake == "each block normalised":
            return np.mean(outputs, axis=0)
        if mistake == "tuple":
            return acc / s, r
        if mistake == "weights":
            return np.ones((m, K.shape[0]))
        return acc / s

    return fn


def test_check_online_softmax_attention_accepts_correct_answers():
    assert check_online_softmax_attention(online_reference).passed
    full = lambda Q, K, V, b, c: scaled_dot_product_attention(  # noqa: E731
        Q, K, V, mask=causal_mask(K.shape[0]) if c else None
    )[0]
    assert check_online_softmax_attention(full).passed
    helper = lambda Q, K, V, b, c: online_softmax_attention(  # noqa: E731
        Q, K, V, block_size=b, causal=c
    )[0]
    assert check_online_softmax_attention(helper).passed


@pytest.mark.parametrize(
    "mistake, advice",
    [
        ("no scale", "did not scale the scores"),
        ("whole blocks only", "the last block has only n mod block_size = 2 keys"),
        ("each block normalised", "normalised each block on its own"),
        ("accumulator not rescaled", "exp(s - r) v accumulated so far must be multiplied"),
        ("sum not rescaled", "the running sum of exp(s - r) must be multiplied"),
        ("no mask", "you ignored causal"),
        ("future kept", "keep keys j <= i, not j < i"),
        ("strict mask", "queries [0] came out NaN or inf"),
        ("local positions", "the key's position in the sequence, start + column"),
        ("plain sum", "exp overflowed"),
        ("max never updated", "exp overflowed"),
        ("block max only", "never the block's alone"),
        ("float64 arrays", "keep the inputs' dtype"),
        ("tuple", "return only the output array"),
        ("weights", "That is the shape of the weights"),
    ],
)
def test_check_online_softmax_attention_rejects_typical_mistakes(mistake, advice):
    result = check_online_softmax_attention(online_with(mistake))
    assert not result.passed and advice in result.message, result.message


def test_check_online_softmax_attention_names_a_transposed_causal_mask():
    def future(Q, K, V, block_size, causal):  # the whole matrix, mask upside down
        return scaled_dot_product_attention(
            Q, K, V, mask=causal_mask(K.shape[0]).T if causal else None
        )[0]

    result = check_online_softmax_attention(future)
    assert not result.passed and "you kept the keys j >= i, the future" in result.message


def test_check_online_softmax_attention_reports_an_unfinished_exercise():
    def unfinished(Q, K, V, block_size, causal):
        raise NotImplementedError("replace this line with your code")

    result = check_online_softmax_attention(unfinished)
    assert not result.passed and "raised NotImplementedError" in result.message
    assert "block_size = 4, causal = False" in result.message


# --- the checks: grouped-query attention ----------------------------------------------------


def gqa_reference(Q, K, V):
    r = Q.shape[0] // K.shape[0]
    return scaled_dot_product_attention(Q, np.repeat(K, r, axis=0), np.repeat(V, r, axis=0))[0]


def test_check_grouped_query_attention_accepts_correct_answers():
    assert check_grouped_query_attention(gqa_reference).passed

    def by_reshape(Q, K, V):
        return scaled_dot_product_attention(
            Q.reshape(K.shape[0], -1, *Q.shape[1:]), K[:, None], V[:, None]
        )[0].reshape(Q.shape[0], Q.shape[1], V.shape[-1])

    assert check_grouped_query_attention(by_reshape).passed


def tiled(Q, K, V):
    r = Q.shape[0] // K.shape[0]
    return scaled_dot_product_attention(Q, np.tile(K, (r, 1, 1)), np.tile(V, (r, 1, 1)))[0]


def per_group(Q, K, V):
    return scaled_dot_product_attention(Q[:: Q.shape[0] // K.shape[0]], K, V)[0]


def unscaled(Q, K, V):
    r = Q.shape[0] // K.shape[0]
    return scaled_dot_product_attention(
        Q, np.repeat(K, r, axis=0), np.repeat(V, r, axis=0), scale=1.0
    )[0]


def no_softmax(Q, K, V):
    r = Q.shape[0] // K.shape[0]
    return (Q @ np.repeat(K, r, axis=0).transpose(0, 2, 1)) @ np.repeat(V, r, axis=0)


def keys_tiled_values_repeated(Q, K, V):
    r = Q.shape[0] // K.shape[0]
    return scaled_dot_product_attention(Q, np.tile(K, (r, 1, 1)), np.repeat(V, r, axis=0))[0]


def last_group_for_all(Q, K, V):
    return scaled_dot_product_attention(Q, K[-1:], V[-1:])[0]


@pytest.mark.parametrize(
    "wrong, advice",
    [
        (tiled, "read key-value head i % g ([0, 1, 0, 1, 0, 1])"),
        (per_group, "one output per key-value head"),
        (unscaled, "did not scale the scores"),
        (no_softmax, "Apply the softmax over the keys"),
        (keys_tiled_values_repeated, "query heads [1, 4] are wrong, the others right"),
        (last_group_for_all, "read key-value heads [1, 1, 1, 1, 1, 1]"),
    ],
)
def test_check_grouped_query_attention_rejects_typical_mistakes(wrong, advice):
    result = check_grouped_query_attention(wrong)
    assert not result.passed and advice in result.message, result.message


def test_the_recorded_cost_ships_with_attnkit():
    record = recorded_benchmark("attention_cost")
    assert record["machine"] and {r["method"] for r in record["results"]} == {
        "materialised",
        "fused",
    }
    with pytest.raises(ValueError, match="no recorded benchmark named 'nope'"):
        recorded_benchmark("nope")
