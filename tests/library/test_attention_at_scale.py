"""Chapter 7's helpers (sliding windows, grouped-query attention, the online softmax, the
key-value cache and its calculator, whose front end runs here in Node) and its checks. (The
calculator in Chromium, on the built page: tests/book/test_kv_calculator.py.)"""

import itertools
import re
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

import attnkit.kv_calculator
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
    check_merge_attention_states,
    check_online_softmax_attention,
)
from attnkit.kv_calculator import (
    INPUTS,
    PRESETS,
    KVCacheCalculator,
    decoding_budget,
    describe,
    format_bytes,
    kv_cache_bytes,
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
from tests.support.node import module_runner

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


# --- the key-value cache calculator ---------------------------------------------------------
# The numbers are worked out by hand from the chapter's formula, cache = 2 · layers · g · d_k · n ·
# b · (bytes per number), for the models the chapter uses.

GPT2 = dict(PRESETS["GPT-2 small"], batch=8, bytes_per_number=2, memory_gib=80)
LLAMA = dict(PRESETS["Llama 3.1 8B"], batch=1, bytes_per_number=2, memory_gib=80)


def test_kv_cache_bytes_is_the_chapter_s_formula():
    # GPT-2 small, 8 sequences of 1024 tokens in 16 bits: 2·12·12·64·1024·8·2
    assert kv_cache_bytes(12, 12, 64, 1024, 8, 2) == 301_989_888 == 288 * 2**20
    assert kv_cache_bytes(12, 1, 64, 1024, 8, 2) == 25_165_824 == 24 * 2**20  # multi-query
    # Llama 3.1 8B, one sequence of 131,072 tokens: 2·32·8·128·131072·2 = 16 GiB
    assert kv_cache_bytes(32, 8, 128, 131_072) == 17_179_869_184 == 16 * 2**30
    assert kv_cache_bytes(1, 1, 1, 1, 1, 1) == 2  # one key and one value


def test_decoding_budget_of_gpt2_small_by_hand():
    budget = decoding_budget(**GPT2)
    assert budget == dict(
        cache_per_token=36_864,  # 2·12·12·64·2
        cache_per_sequence=37_748_736,  # · 1024
        cache=301_989_888,  # · 8
        weights=248_879_616,  # 124,439,808 · 2
        step=550_869_504,  # weights + cache
        multi_head_cache=301_989_888,  # g = h already
        memory=85_899_345_920,  # 80 · 2**30
        largest_batch=2_268,  # (85,899,345,920 - 248,879,616) // 37,748,736 = 2268.9...
    )
    assert describe(budget) == dict(
        cache_per_token="36.00 KiB (36,864 bytes)",
        cache_per_sequence="36.00 MiB (37,748,736 bytes)",
        cache="288.00 MiB (301,989,888 bytes)",
        weights="237.35 MiB (248,879,616 bytes)",
        step="525.35 MiB (550,869,504 bytes)",
        cache_share="54.8 %",  # 301,989,888 / 550,869,504 = 0.5482...
        multi_head_cache="288.00 MiB (301,989,888 bytes)",
        largest_batch="2,268 sequences",
    )


def test_decoding_budget_of_llama_by_hand():
    budget = decoding_budget(**LLAMA)
    assert budget["cache_per_token"] == 131_072  # 2·32·8·128·2 = 128 KiB
    assert budget["weights"] == 16_060_522_496  # 8,030,261,248 · 2
    # (80 GiB - 16,060,522,496) / 16 GiB = 69,838,823,424 / 17,179,869,184 = 4.07
    assert budget["largest_batch"] == 4
    assert budget["multi_head_cache"] == 4 * 17_179_869_184  # h/g = 4 times the cache
    multi_head = decoding_budget(**(LLAMA | dict(kv_heads=32)))
    assert multi_head["largest_batch"] == 1  # 69,838,823,424 // 68,719,476,736
    assert describe(budget)["cache_share"] == "51.7 %"  # 17,179,869,184 / 33,240,391,680


@pytest.mark.parametrize(
    "n, text",
    [
        (0, "0 bytes"),
        (1023, "1,023 bytes"),
        (1024, "1.00 KiB (1,024 bytes)"),
        (1152, "1.13 KiB (1,152 bytes)"),  # 1.125: a half, rounded up
        (1_048_575, "1,024.00 KiB (1,048,575 bytes)"),  # 1023.999: rounded, still KiB
        (5 * 2**40, "5.00 TiB (5,497,558,138,880 bytes)"),
        (2**70, "1,024.00 EiB (1,180,591,620,717,411,303,424 bytes)"),
    ],
)
def test_format_bytes_by_hand(n, text):
    assert format_bytes(n) == text


def test_describe_says_when_nothing_fits():
    weights_too_large = decoding_budget(**(LLAMA | dict(memory_gib=8)))
    assert describe(weights_too_large)["largest_batch"] == "none: the weights alone do not fit"
    no_room = decoding_budget(**(LLAMA | dict(memory_gib=20)))  # 15 GiB of weights, 16 of cache
    assert describe(no_room)["largest_batch"] == (
        "none: one sequence's cache does not fit beside the weights"
    )
    one = decoding_budget(**(LLAMA | dict(memory_gib=31)))
    assert one["largest_batch"] == 1 and describe(one)["largest_batch"] == "1 sequence"


@pytest.mark.parametrize(
    "change, message",
    [
        (dict(kv_heads=5), "12 query heads cannot be shared equally by 5 key-value heads"),
        (dict(layers=0), "layers must be a positive integer, got 0"),
        (dict(batch=2.0), "batch must be a positive integer, got 2.0"),
        (dict(length=True), "length must be a positive integer, got True"),
        (dict(parameters=2**53), "parameters must be at most 9,007,199,254,740,991"),
    ],
)
def test_calculator_inputs_are_checked_with_the_rules(change, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        decoding_budget(**(GPT2 | change))
    calculator = KVCacheCalculator("GPT-2 small", batch=8)
    before = calculator.inputs()
    ((name, value),) = change.items()
    if not isinstance(value, float):  # traitlets' Int itself takes 2.0 as 2
        with pytest.raises(ValueError, match=re.escape(message)):
            setattr(calculator, name, value)
    assert calculator.inputs() == before  # a refused input changes nothing
    with pytest.raises(ValueError, match=re.escape(message)):
        KVCacheCalculator("GPT-2 small", **change)


def test_calculator_widget_starts_from_a_preset_and_computes_the_budget():
    calculator = KVCacheCalculator("Llama 3.1 8B", batch=8)
    assert calculator.inputs() == LLAMA | dict(batch=8)
    assert calculator.budget() == decoding_budget(**calculator.inputs())
    assert calculator.text() == describe(calculator.budget())
    assert calculator.presets == PRESETS
    with calculator.hold_trait_notifications():  # a preset from the front end: checked at the end
        calculator.query_heads, calculator.kv_heads = 12, 12
    assert calculator.kv_heads == 12
    with pytest.raises(ValueError, match="preset must be one of"):
        KVCacheCalculator("GPT-5")
    with pytest.raises(ValueError, match=r"unknown inputs \['heads'\]"):
        KVCacheCalculator(heads=4)
    assert KVCacheCalculator(None).inputs()["layers"] == 12  # the traits' defaults


def test_presets_parameters_follow_from_the_models_shapes():
    # GPT-2 small: token and position embeddings (the read-out shares the first), 12 layers of
    # LayerNorm, W_QKV, W_O, LayerNorm, two FFN matrices (biases everywhere), a final LayerNorm
    d, vocab, n_ctx = 768, 50_257, 1024
    layer = (
        2 * d + (d * 3 * d + 3 * d) + (d * d + d) + 2 * d + (d * 4 * d + 4 * d) + (4 * d * d + d)
    )
    assert vocab * d + n_ctx * d + 12 * layer + 2 * d == PRESETS["GPT-2 small"]["parameters"]
    # Llama 3.1 8B: embedding and read-out, 32 layers of W_Q, W_K, W_V (d_kv = 1024), W_O, a
    # gated FFN of 14,336 and two RMSNorms, a final RMSNorm; no biases
    d, d_kv, d_ff, vocab = 4096, 1024, 14_336, 128_256
    layer = 2 * d * d + 2 * d * d_kv + 3 * d * d_ff + 2 * d
    assert 2 * vocab * d + 32 * layer + d == PRESETS["Llama 3.1 8B"]["parameters"]


KV_JS = Path(attnkit.kv_calculator.__file__).with_name("kv_calculator.js")
CALCULATOR_TRAITS = set(KVCacheCalculator.class_own_traits(sync=True))


def test_calculator_front_end_ships_and_uses_only_the_widget_s_traits():
    calculator = KVCacheCalculator()
    assert "decodingBudget" in calculator._esm and ".kv-results" in calculator._css
    source = KV_JS.read_text()
    read = set(re.findall(r'model\.get\("(\w+)"\)', source))
    assert read and read <= CALCULATOR_TRAITS


@pytest.fixture(scope="module")
def kv_js(tmp_path_factory):
    """Evaluates a function of (the kv_calculator.js module, data) in Node; returns its JSON."""
    return module_runner(KV_JS, tmp_path_factory.mktemp("kv"))


def calculator_cases():
    """Inputs over the whole range: the presets, the cases above, and random ones up to numbers
    far beyond 2**53 bytes (which only exact integers get right)."""
    rng = np.random.default_rng(7)
    cases = [GPT2, LLAMA, LLAMA | dict(memory_gib=8), LLAMA | dict(memory_gib=20)]
    cases.append(
        dict(LLAMA, layers=200, query_heads=128, kv_heads=128, length=10**7, batch=1000)
    )  # 2·200·128·128·10**7·1000·2 bytes: about 2**57
    for _ in range(60):
        g = int(rng.choice([1, 2, 3, 8]))
        cases.append(
            dict(
                layers=int(rng.integers(1, 200)),
                query_heads=g * int(rng.integers(1, 17)),
                kv_heads=g,
                head_size=int(rng.choice([7, 64, 128, 256])),
                length=int(rng.choice([1, 1023, 131_072, 10**7])),
                batch=int(rng.choice([1, 3, 8, 1000])),
                bytes_per_number=int(rng.choice([1, 2, 4])),
                parameters=int(rng.choice([1, 124_439_808, 10**12, 2**53 - 1])),
                memory_gib=int(rng.choice([1, 80, 10**6])),
            )
        )
    return cases


def test_calculator_front_end_computes_and_writes_what_python_does(kv_js):
    cases = calculator_cases()
    shown = kv_js(
        "(kv, cases) => cases.map((c) => { const b = kv.decodingBudget(c); return ["
        "Object.fromEntries(Object.entries(b).map(([k, v]) => [k, v.toString()])),"
        " kv.describe(b), kv.checkInputs(c)]; })",
        cases,
    )
    for case, (budget, text, wrong) in zip(cases, shown):
        expected = decoding_budget(**case)
        assert budget == {name: str(value) for name, value in expected.items()}, case
        assert text == describe(expected), case
        assert wrong is None
    assert max(int(b["step"]) for b, _, _ in shown) > 2**56  # exact beyond a double's 2**53
    sizes = kv_js("(kv, ns) => ns.map((n) => kv.formatBytes(BigInt(n)))", [0, 1152, 2**70])
    assert sizes == [format_bytes(n) for n in (0, 1152, 2**70)]


def test_calculator_front_end_refuses_what_the_rules_refuse(kv_js):
    bad = [GPT2 | dict(kv_heads=5), GPT2 | dict(layers=0), GPT2 | dict(batch=2.5)]
    said = kv_js("(kv, cases) => cases.map((c) => kv.checkInputs(c))", bad)
    with pytest.raises(ValueError) as heads:
        decoding_budget(**bad[0])
    assert said[0] == str(heads.value)  # the same words
    assert said[1:] == [
        "layers must be a positive whole number",
        "batch b (sequences) must be a positive whole number",
    ]


def test_calculator_front_end_names_the_inputs_and_outputs_python_does(kv_js):
    names = kv_js("(kv) => [kv.INPUTS, kv.OUTPUTS.map(([name]) => name), kv.MODEL]")
    assert dict(names[0]) == INPUTS and list(dict(names[0])) == list(INPUTS)
    assert names[1] == list(describe(decoding_budget(**GPT2)))
    for preset in PRESETS.values():  # a preset is a model (what the menu matches) and its context
        assert set(preset) == set(names[2]) | {"length"}


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
        for what in ("your function held about", "this check allows")
    )
    n = int(re.search(r"n = (\d+)", result.message)[1])
    assert "m = 16," in result.message and held >= 16 * 8 * n > 3 * allowed
    assert "as much as the whole (m, n) matrix of scores" in result.message


def test_the_memory_bound_tells_a_copy_of_the_keys_from_the_scores_and_the_mask():
    m, n, block_size, d_k, d_v = 16, 128 * 1024, 250, 2, 3
    allowed = _allowed_bytes(m, n, block_size, d_k, d_v)
    for itemsize in (4, 8):
        assert 3 * allowed < m * n * itemsize  # the scores of every query
        assert allowed < n * d_k * itemsize  # a copy of K, in the inputs' dtype
    assert n * (d_k + d_v) * 8 < m * n * 4  # float64 copies of K and V: fewer than the scores
    # and no (n, n) boolean mask at m = n
    assert 3 * _allowed_bytes(1800, 1800, 5, 1, 1) < 1800 * 1800


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


# --- eq. scale-merge: partial results over blocks of keys, merged ----------------------------


def test_blocks_of_keys_merged_by_their_logsumexps_give_attention_over_all_keys():
    from tests.support.answers.attention_at_scale import merge_reference

    rng = np.random.default_rng(3)
    Q, K, V = rng.normal(size=(4, 8)), rng.normal(size=(50, 8)), rng.normal(size=(50, 3))
    cuts = [0, 7, 30, 50]
    states = [
        online_softmax_attention(Q, K[a:b], V[a:b], block_size=16)
        for a, b in itertools.pairwise(cuts)
    ]
    left = merge_reference(*merge_reference(*states[0], *states[1]), *states[2])
    right = merge_reference(*states[0], *merge_reference(*states[1], *states[2]))
    expected, _ = scaled_dot_product_attention(Q, K, V)
    scores = Q @ K.T / np.sqrt(8)
    top = scores.max(axis=1)
    lse = top + np.log(np.exp(scores - top[:, None]).sum(axis=1))
    for o, L in (left, right):
        assert np.allclose(o, expected, rtol=0, atol=1e-12)
        assert np.allclose(L, lse, rtol=0, atol=1e-12)


def test_check_merge_attention_states_takes_the_chapters_solution_and_names_an_average():
    from tests.support.answers.attention_at_scale import merge_averaged, merge_reference

    assert check_merge_attention_states(merge_reference).passed
    result = check_merge_attention_states(merge_averaged)
    assert not result.passed and "You averaged the two outputs" in result.message
