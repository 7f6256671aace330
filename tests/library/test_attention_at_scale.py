"""Chapter 7's helpers (sliding windows, grouped-query attention, the online softmax, the
key-value cache) and its checks."""

import re

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
    _allowed_bytes,
    check_grouped_query_attention,
    check_online_softmax_attention,
)
from attnkit.modules import MultiHeadAttention
from attnkit.recorded import recorded_benchmark
from attnkit.streaming import online_softmax_attention
from tests.support.answers.attention_at_scale import (
    GQA,
    GQA_MISTAKES,
    ONLINE,
    ONLINE_MISTAKES,
    online_whole_matrix,
    online_with,
)

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


def test_check_online_softmax_attention_accepts_the_reference_on_fresh_inputs():
    # every right answer, on fixed seeds: tests/library/test_answers.py
    result = check_online_softmax_attention(ONLINE.right["reference"])
    assert result.passed, result.message


@pytest.mark.parametrize("mistake, advice", ONLINE_MISTAKES.items())
def test_check_online_softmax_attention_rejects_typical_mistakes(mistake, advice):
    result = check_online_softmax_attention(online_with(mistake))
    assert not result.passed and advice in result.message, result.message


def test_check_online_softmax_attention_names_a_transposed_causal_mask():
    def future(Q, K, V, block_size, causal):  # the whole matrix, mask upside down
        S = Q @ K.T / np.sqrt(Q.shape[1]).astype(Q.dtype)
        if causal:
            S = np.where(causal_mask(len(K)).T, S, -np.inf)
        P = np.exp(S - S.max(axis=1, keepdims=True))
        return P / P.sum(axis=1, keepdims=True) @ V

    result = check_online_softmax_attention(future)
    assert not result.passed and "you kept the keys j >= i, the future" in result.message


def test_check_online_softmax_attention_reports_an_unfinished_exercise():
    def unfinished(Q, K, V, block_size, causal):
        raise NotImplementedError("replace this line with your code")

    result = check_online_softmax_attention(unfinished)
    assert not result.passed and "raised NotImplementedError" in result.message
    assert "block_size = 4, causal = False" in result.message


@pytest.mark.parametrize(
    "helper, name",
    [
        (
            lambda Q, K, V, b, c: online_softmax_attention(Q, K, V, block_size=b, causal=c)[0],
            "attnkit.streaming.online_softmax_attention",
        ),
        (
            lambda Q, K, V, b, c: scaled_dot_product_attention(
                Q, K, V, mask=causal_mask(len(K)) if c else None
            )[0],
            "attnkit.core.scaled_dot_product_attention",
        ),
    ],
)
def test_check_online_softmax_attention_refuses_attnkit_s_attention(helper, name):
    result = check_online_softmax_attention(helper)
    assert not result.passed and f"your function uses `{name}`" in result.message


def test_check_online_softmax_attention_says_how_much_memory_it_measured():
    result = check_online_softmax_attention(online_whole_matrix, seed=0, dtypes=(np.float64,))
    assert not result.passed
    held, allowed = (
        int(re.search(rf"{what} ([\d,]+) bytes", result.message)[1].replace(",", ""))
        for what in ("your function held", "this check allows")
    )
    n = int(re.search(r"n = (\d+)", result.message)[1])
    assert "m = 1," in result.message and held >= 8 * n > 3 * allowed
    assert "as much as the whole (m, n) matrix of scores" in result.message


def test_the_memory_bound_is_a_third_of_what_not_streaming_costs_at_least():
    # the smallest memory cases the check draws: no (m, n) scores at m = 1 in float32, ...
    assert 3 * _allowed_bytes(1, 96 * 1024, 1024, 4, 4) < 96 * 1024 * 4
    # ... and no (n, n) boolean mask at m = n
    assert 3 * _allowed_bytes(1792, 1792, 5, 1, 1) < 1792 * 1792


# --- the checks: grouped-query attention ----------------------------------------------------


def test_check_grouped_query_attention_accepts_correct_answers():
    assert "attnkit.core.scaled_dot_product_attention" not in check_grouped_query_attention.forbids
    for right in GQA.right.values():
        result = check_grouped_query_attention(right)
        assert result.passed, result.message


@pytest.mark.parametrize("wrong, advice", GQA_MISTAKES.items())
def test_check_grouped_query_attention_rejects_typical_mistakes(wrong, advice):
    result = check_grouped_query_attention(wrong)
    assert not result.passed and advice in result.message, result.message


def test_check_grouped_query_attention_refuses_attnkit_s_own():
    result = check_grouped_query_attention(lambda Q, K, V: grouped_query_attention(Q, K, V)[0])
    assert not result.passed
    assert "your function uses `attnkit.core.grouped_query_attention`" in result.message


def test_the_recorded_cost_ships_with_attnkit():
    record = recorded_benchmark("attention_cost")
    assert record["machine"] and {r["method"] for r in record["results"]} == {
        "materialised",
        "fused",
    }
    with pytest.raises(ValueError, match="no recorded benchmark named 'nope'"):
        recorded_benchmark("nope")
