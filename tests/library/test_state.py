"""attnkit's state survives bad input.

Some objects of attnkit keep state from one call to the next: a key-value cache, and the
functions and decoders that append to it; the positional-encoding module's buffer; a model
that ``train`` changes; the interactive heatmap's traits. A call that raises must leave that
state exactly as it was, or the next valid call answers wrongly: a cache left one step longer
shifts every later position. Each test feeds one kind of bad input (shape, width, dtype,
NaN or inf, device, type, token ids, positions), asserts the raise (``ValueError`` or
``TypeError`` naming the argument, and the shapes where they do not fit), then that the
state is what it was (the same tensors, the same numbers, the same length) and that the next
valid call gives what it gives on an object that never saw the bad input. The meta device
stands for another device (there is no GPU here).
"""

import copy
import math

import numpy as np
import pytest
import torch
from torch import nn

from attnkit.decoding import (
    DecoderLayer,
    KVCache,
    TinyDecoder,
    cached_self_attention,
    greedy_generate,
)
from attnkit.heatmap import AttentionHeatmap
from attnkit.modules import MultiHeadAttention, SinusoidalPositionalEncoding
from attnkit.reversal import TinyTransformer, reverse, train


def with_value(t, value):
    """A copy of ``t`` with its first entry set to ``value`` (NaN, inf)."""
    t = t.clone()
    t.view(-1)[0] = value
    return t


class Raising(nn.Module):
    """Stands in for a part of a layer that fails after the cache has been appended to."""

    def forward(self, *args, **kwargs):
        raise RuntimeError("failed late")


# --- KVCache --------------------------------------------------------------------------------

B, H, T, D_K = 2, 2, 3, 4  # batch, heads, cached tokens, width
STEP = torch.ones(B, H, 1, D_K)  # one token's keys or values


def filled_cache():
    """A cache holding T tokens; every call gives the same numbers."""
    generator = torch.Generator().manual_seed(0)
    cache = KVCache()
    cache.append(*(torch.randn(B, H, T, D_K, generator=generator) for _ in range(2)))
    return cache


class Snapshot:
    """What a cache holds now: its two tensors, copies of their numbers, its length."""

    def __init__(self, cache: KVCache):
        self.cache, self.length = cache, len(cache)
        self.tensors = cache.keys, cache.values
        self.numbers = [None if t is None else t.clone() for t in self.tensors]

    def assert_unchanged(self):
        assert len(self.cache) == self.length
        assert self.cache.keys is self.tensors[0] and self.cache.values is self.tensors[1]
        for now, before in zip(self.tensors, self.numbers):
            assert before is None or torch.equal(now, before)


def assert_same_caches(caches, untouched):
    assert [len(c) for c in caches] == [len(c) for c in untouched]
    for cache, other in zip(caches, untouched):
        assert torch.equal(cache.keys, other.keys) and torch.equal(cache.values, other.values)


BAD_APPENDS = [
    pytest.param(
        torch.ones(B, D_K),
        torch.ones(B, D_K),
        ValueError,
        r"keys of shape \(2, 4\) and values of shape \(2, 4\) must both be \(\.\.\., h, tokens",
        id="rank",
    ),
    pytest.param(
        STEP,
        torch.ones(B, H, 2, D_K),
        ValueError,
        r"keys of shape \(2, 2, 1, 4\) and values of shape \(2, 2, 2, 4\).*same leading axes "
        "and tokens",
        id="token count",
    ),
    pytest.param(
        torch.ones(B, 3, 1, D_K),
        torch.ones(B, 3, 1, D_K),
        ValueError,
        r"new keys of shape \(2, 3, 1, 4\) do not continue the cached keys of shape \(2, 2, 3, 4\)",
        id="heads",
    ),
    pytest.param(
        torch.ones(1, H, 1, D_K),
        torch.ones(1, H, 1, D_K),
        ValueError,
        r"new keys of shape \(1, 2, 1, 4\) do not continue the cached keys of shape \(2, 2, 3, 4\)",
        id="batch",
    ),
    pytest.param(
        torch.ones(B, H, 1, 5),
        STEP,
        ValueError,
        r"new keys of shape \(2, 2, 1, 5\) do not continue the cached keys of shape \(2, 2, 3, 4\)",
        id="d_k",
    ),
    pytest.param(  # the keys fit: only the values' width is wrong
        STEP,
        torch.ones(B, H, 1, 5),
        ValueError,
        r"new values of shape \(2, 2, 1, 5\) do not continue the cached values of shape "
        r"\(2, 2, 3, 4\)",
        id="d_v",
    ),
    pytest.param(
        STEP.long(),
        STEP,
        TypeError,
        r"keys of shape \(2, 2, 1, 4\) must hold floating-point numbers.*int64",
        id="integer",
    ),
    pytest.param(
        STEP.half(),
        STEP.half(),
        TypeError,
        r"new keys of shape \(2, 2, 1, 4\) in dtype float16 cannot join the cached keys, in "
        "dtype float32",
        id="float16",
    ),
    pytest.param(
        STEP,
        STEP.double(),
        TypeError,
        r"values of shape \(2, 2, 1, 4\) in dtype float64 cannot join keys, in dtype float32",
        id="mixed dtypes",
    ),
    pytest.param(
        with_value(STEP, math.nan),
        STEP,
        ValueError,
        r"keys of shape \(2, 2, 1, 4\) contains NaN or infinite values",
        id="NaN",
    ),
    pytest.param(
        STEP,
        with_value(STEP, math.inf),
        ValueError,
        r"values of shape \(2, 2, 1, 4\) contains NaN or infinite values",
        id="inf",
    ),
    pytest.param(
        STEP.to("meta"),
        STEP.to("meta"),
        ValueError,
        r"new keys of shape \(2, 2, 1, 4\) on device meta cannot join the cached keys, on "
        "device cpu",
        id="device",
    ),
    pytest.param(
        STEP.numpy(), STEP, TypeError, "keys must be a torch.Tensor, got ndarray", id="NumPy"
    ),
    pytest.param(
        STEP, STEP.tolist(), TypeError, "values must be a torch.Tensor, got list", id="list"
    ),
]
# what an empty cache refuses too: everything but what only a filled cache can tell
REFUSED_WHEN_EMPTY = [
    "rank",
    "token count",
    "integer",
    "mixed dtypes",
    "NaN",
    "inf",
    "NumPy",
    "list",
]


@pytest.mark.parametrize("keys, values, error, message", BAD_APPENDS)
def test_a_refused_append_leaves_the_cache_as_it_was(keys, values, error, message):
    cache, untouched = filled_cache(), filled_cache()
    before = Snapshot(cache)
    with pytest.raises(error, match=message):
        cache.append(keys, values)
    before.assert_unchanged()
    cache.append(STEP, STEP)
    untouched.append(STEP, STEP)
    assert_same_caches([cache], [untouched])


@pytest.mark.parametrize(
    "keys, values, error, message", [p for p in BAD_APPENDS if p.id in REFUSED_WHEN_EMPTY]
)
def test_a_refused_first_append_leaves_the_cache_empty(keys, values, error, message):
    cache = KVCache()
    with pytest.raises(error, match=message):
        cache.append(keys, values)
    assert cache.keys is None and cache.values is None and len(cache) == 0 == cache.nbytes
    keys, values = cache.append(STEP, STEP)
    assert keys is STEP and values is STEP and len(cache) == 1


def test_a_transaction_undoes_every_append_of_a_block_that_raises():
    cache = filled_cache()
    before = Snapshot(cache)
    with pytest.raises(RuntimeError, match="failed late"), cache.transaction():
        cache.append(STEP, STEP)
        cache.append(STEP, STEP)
        raise RuntimeError("failed late")
    before.assert_unchanged()
    with cache.transaction():
        cache.append(STEP, STEP)
    assert len(cache) == T + 1


# --- cached_self_attention and DecoderLayer: one layer, one cache ---------------------------

D_MODEL = 8
X_NEW = torch.randn(B, 1, D_MODEL, generator=torch.Generator().manual_seed(1))  # one token


def attention_layer():
    return MultiHeadAttention(D_MODEL, H)


def decoder_layer():
    return DecoderLayer(D_MODEL, H, 16)


# each layer, how a step runs on it, and the name it gives the new tokens
STEPPERS = {
    "cached_self_attention": (attention_layer, cached_self_attention, "x_new"),
    "DecoderLayer": (decoder_layer, lambda layer, x, cache: layer(x, cache), "x"),
}


def layer_with_cache(kind: str):
    """A layer and a cache that it filled with T tokens; every call gives the same."""
    make, step, _name = STEPPERS[kind]
    torch.manual_seed(0)
    layer, cache = make(), KVCache()
    with torch.no_grad():
        step(layer, torch.randn(B, T, D_MODEL), cache)
    return layer, cache


def run_step(kind, layer, x, cache):
    """The step's output, ``(b, 1, d_model)``."""
    with torch.no_grad():
        out = STEPPERS[kind][1](layer, x, cache)
    return out[0] if kind == "cached_self_attention" else out


BAD_NEW_TOKENS = [  # NAME stands for the argument's name: x_new or x
    pytest.param(
        torch.ones(B, 1, 6),
        ValueError,
        r"NAME of shape \(2, 1, 6\) must have shape \(tokens, d_model\) with d_model = 8",
        id="width",
    ),
    pytest.param(
        torch.ones(D_MODEL),
        ValueError,
        r"NAME must have shape \(tokens, d_model\) \(or a batch of them\), got \(8,\)",
        id="rank",
    ),
    pytest.param(
        torch.ones(3, 1, D_MODEL),
        ValueError,
        r"cache cannot take NAME of shape \(3, 1, 8\): new keys of shape \(3, 2, 1, 4\) do not "
        r"continue the cached keys of shape \(2, 2, 3, 4\)",
        id="batch",
    ),
    pytest.param(
        torch.ones(B, 0, D_MODEL), ValueError, r"NAME of shape \(2, 0, 8\) is empty", id="no token"
    ),
    pytest.param(
        X_NEW.long(),
        TypeError,
        r"NAME of shape \(2, 1, 8\) must hold floating-point numbers.*int64",
        id="integer",
    ),
    pytest.param(
        X_NEW.half(),
        TypeError,
        r"NAME of shape \(2, 1, 8\) in dtype float16 cannot join the layer's weights, in dtype "
        "float32",
        id="float16",
    ),
    pytest.param(
        X_NEW.double(), TypeError, r"in dtype float64 cannot join the layer's weights", id="float64"
    ),
    pytest.param(
        with_value(X_NEW, math.nan),
        ValueError,
        r"NAME of shape \(2, 1, 8\) contains NaN or infinite values",
        id="NaN",
    ),
    pytest.param(
        with_value(X_NEW, -math.inf),
        ValueError,
        r"NAME of shape \(2, 1, 8\) contains NaN or infinite values",
        id="inf",
    ),
    pytest.param(
        X_NEW.to("meta"),
        ValueError,
        r"NAME of shape \(2, 1, 8\) on device meta cannot join the layer's weights, on device cpu",
        id="device",
    ),
    pytest.param(X_NEW.numpy(), TypeError, "NAME must be a torch.Tensor, got ndarray", id="NumPy"),
    pytest.param(X_NEW.tolist(), TypeError, "NAME must be a torch.Tensor, got list", id="list"),
]


@pytest.mark.parametrize("kind", STEPPERS)
@pytest.mark.parametrize("x, error, message", BAD_NEW_TOKENS)
def test_a_refused_step_leaves_the_layer_s_cache_as_it_was(kind, x, error, message):
    layer, cache = layer_with_cache(kind)
    _, untouched = layer_with_cache(kind)
    before = Snapshot(cache)
    with pytest.raises(error, match=message.replace("NAME", STEPPERS[kind][2])):
        run_step(kind, layer, x, cache)
    before.assert_unchanged()
    out = run_step(kind, layer, X_NEW, cache)
    assert torch.equal(out, run_step(kind, layer, X_NEW, untouched))
    assert_same_caches([cache], [untouched])


def cache_of(heads: int, width: int, dtype=torch.float32):
    """A cache filled by another layer: T tokens of ``heads`` heads of ``width``."""
    cache = KVCache()
    cache.append(*(torch.zeros(B, heads, T, width, dtype=dtype) for _ in range(2)))
    return cache


@pytest.mark.parametrize("kind", STEPPERS)
@pytest.mark.parametrize(
    "make_cache, error, message",
    [
        pytest.param(
            lambda: cache_of(4, 2),
            ValueError,
            r"cache cannot take NAME of shape \(2, 1, 8\): new keys of shape \(2, 2, 1, 4\) do "
            r"not continue the cached keys of shape \(2, 4, 3, 2\)",
            id="another h",
        ),
        pytest.param(
            lambda: cache_of(H, D_K, torch.float64),
            TypeError,
            r"cache cannot take NAME of shape \(2, 1, 8\): new keys of shape \(2, 2, 1, 4\) in "
            "dtype float32 cannot join the cached keys, in dtype float64",
            id="another dtype",
        ),
        pytest.param(
            lambda: [],
            TypeError,
            r"cache must be an attnkit\.decoding\.KVCache, got list",
            id="no cache",
        ),
    ],
)
def test_a_cache_the_layer_cannot_continue_is_refused_and_left_as_it_was(
    kind, make_cache, error, message
):
    layer, _ = layer_with_cache(kind)
    cache = make_cache()
    before = Snapshot(cache) if isinstance(cache, KVCache) else None
    with pytest.raises(error, match=message.replace("NAME", STEPPERS[kind][2])):
        run_step(kind, layer, X_NEW, cache)
    if before is not None:
        before.assert_unchanged()


@pytest.mark.parametrize(
    "kind, part", [("cached_self_attention", "attend"), ("DecoderLayer", "ffn")]
)
def test_a_step_that_fails_after_appending_undoes_the_append(kind, part):
    layer, cache = layer_with_cache(kind)
    _, untouched = layer_with_cache(kind)
    before = Snapshot(cache)
    working = getattr(layer, part)
    setattr(layer, part, Raising())
    with pytest.raises(RuntimeError, match="failed late"):
        run_step(kind, layer, X_NEW, cache)
    before.assert_unchanged()
    setattr(layer, part, working)
    assert torch.equal(run_step(kind, layer, X_NEW, cache), run_step(kind, layer, X_NEW, untouched))
    assert_same_caches([cache], [untouched])


# --- TinyDecoder: one cache per layer, all appended to in one call ---------------------------

VOCAB, MAX_LEN = 10, 8
PROMPT = torch.tensor([[1, 2, 3], [4, 5, 6]])  # (b, n)
NEXT = torch.tensor([[7], [8]])  # (b, 1)


def decoder_with_caches():
    """A decoder and the caches it filled with PROMPT; every call gives the same."""
    torch.manual_seed(0)
    model = TinyDecoder(vocab=VOCAB, d_model=D_MODEL, h=H, layers=2, max_len=MAX_LEN).eval()
    caches = model.new_caches()
    with torch.no_grad():
        model(PROMPT, caches)
    return model, caches


def assert_next_step_as_untouched(model, caches):
    """The next valid step gives what it gives after caches that never saw the bad input."""
    other, untouched = decoder_with_caches()
    with torch.no_grad():
        assert torch.equal(model(NEXT, caches), other(NEXT, untouched))
    assert_same_caches(caches, untouched)


BAD_TOKENS = [
    pytest.param(
        NEXT.float(),
        TypeError,
        r"tokens of shape \(2, 1\) must be integer token ids \(int64 or int32\), got dtype float32",
        id="float",
    ),
    pytest.param(NEXT.short(), TypeError, "got dtype int16", id="int16"),
    pytest.param(NEXT.bool(), TypeError, "got dtype bool", id="bool"),
    pytest.param(
        torch.tensor([[7], [VOCAB]]),
        ValueError,
        r"tokens of shape \(2, 1\) holds token ids from 7 to 10, outside the vocabulary "
        r"0 \.\. 9 \(vocab = 10\)",
        id="id past the vocabulary",
    ),
    pytest.param(torch.tensor([[-1], [8]]), ValueError, "token ids from -1 to 8", id="negative id"),
    pytest.param(
        NEXT[0],
        ValueError,
        r"tokens must be integer tokens of shape \(b, n\) with b, n >= 1, got \(1,\)",
        id="rank",
    ),
    pytest.param(
        NEXT[:, :0], ValueError, r"shape \(b, n\) with b, n >= 1, got \(2, 0\)", id="no token"
    ),
    pytest.param(
        torch.tensor([[7], [8], [9]]),
        ValueError,
        r"caches\[0\] cannot take tokens of shape \(3, 1\): new keys of shape \(3, 2, 1, 4\) do "
        r"not continue the cached keys of shape \(2, 2, 3, 4\)",
        id="batch",
    ),
    pytest.param(
        torch.ones(2, MAX_LEN - 2, dtype=torch.long),  # 3 cached + 6 new = 9 positions
        ValueError,
        r"positions up to 8 do not fit max_len = 8",
        id="past max_len",
    ),
    pytest.param(
        NEXT.to("meta"),
        ValueError,
        r"tokens of shape \(2, 1\) on device meta cannot join the model, on device cpu",
        id="device",
    ),
    pytest.param(NEXT.numpy(), TypeError, "tokens must be a torch.Tensor, got ndarray", id="NumPy"),
    pytest.param(NEXT.tolist(), TypeError, "tokens must be a torch.Tensor, got list", id="list"),
]


@pytest.mark.parametrize("tokens, error, message", BAD_TOKENS)
def test_refused_tokens_leave_every_cache_as_it_was(tokens, error, message):
    model, caches = decoder_with_caches()
    before = [Snapshot(cache) for cache in caches]
    with pytest.raises(error, match=message):
        model(tokens, caches)
    for snapshot in before:
        snapshot.assert_unchanged()
    assert_next_step_as_untouched(model, caches)


def other_models_caches():
    """Caches filled by a decoder with another number of heads."""
    torch.manual_seed(1)
    other = TinyDecoder(vocab=VOCAB, d_model=D_MODEL, h=4, layers=2, max_len=MAX_LEN)
    caches = other.new_caches()
    with torch.no_grad():
        other(PROMPT, caches)
    return caches


BAD_CACHES = [  # each makes the caches argument from the model's own caches
    pytest.param(
        iter, TypeError, r"caches must be a list with one KVCache per layer", id="not a list"
    ),
    pytest.param(
        lambda caches: caches[:1], ValueError, "pass one KVCache per layer: 2, got 1", id="too few"
    ),
    pytest.param(
        lambda caches: [caches[0], caches[0]],
        ValueError,
        r"caches holds one KVCache more than once: each layer needs its own",
        id="one cache twice",
    ),
    pytest.param(
        lambda caches: [caches[0], None],
        TypeError,
        r"caches\[1\] must be an attnkit\.decoding\.KVCache, got NoneType",
        id="not a cache",
    ),
    pytest.param(
        lambda caches: [caches[0], KVCache()],
        ValueError,
        r"caches must hold as many tokens each, one sequence per layer, got \[3, 0\]",
        id="lengths differ",
    ),
    pytest.param(  # caches[0] fits: without the check up front it would be appended to
        lambda caches: [caches[0], other_models_caches()[1]],
        ValueError,
        r"caches\[1\] cannot take tokens of shape \(2, 1\): new keys of shape \(2, 2, 1, 4\) "
        r"do not continue the cached keys of shape \(2, 4, 3, 2\)",
        id="another model's cache",
    ),
]


@pytest.mark.parametrize("bad_caches, error, message", BAD_CACHES)
def test_refused_caches_are_left_as_they_were(bad_caches, error, message):
    model, caches = decoder_with_caches()
    argument = bad_caches(caches)
    given = list(argument) if isinstance(argument, (list, tuple)) else []
    before = [Snapshot(c) for c in caches + given if isinstance(c, KVCache)]
    with pytest.raises(error, match=message):
        model(NEXT, argument)
    for snapshot in before:
        snapshot.assert_unchanged()
    assert_next_step_as_untouched(model, caches)


@pytest.mark.parametrize(
    "convert, tokens, error, message",
    [
        pytest.param(
            lambda model: model.double(),
            NEXT,
            TypeError,
            r"caches\[0\] cannot take tokens of shape \(2, 1\): new keys of shape "
            r"\(2, 2, 1, 4\) in dtype float64 cannot join the cached keys, in dtype float32",
            id="the model in float64",
        ),
        pytest.param(
            lambda model: model.to("meta"),
            NEXT.to("meta"),
            ValueError,
            r"caches\[0\] cannot take tokens of shape \(2, 1\): new keys of shape "
            r"\(2, 2, 1, 4\) on device meta cannot join the cached keys, on device cpu",
            id="the model on another device",
        ),
    ],
)
def test_caches_of_another_dtype_or_device_are_refused(convert, tokens, error, message):
    model, caches = decoder_with_caches()
    converted = convert(copy.deepcopy(model))
    before = [Snapshot(cache) for cache in caches]
    with pytest.raises(error, match=message):
        converted(tokens, caches)
    for snapshot in before:
        snapshot.assert_unchanged()
    assert_next_step_as_untouched(model, caches)


def test_a_layer_that_fails_late_undoes_the_appends_of_every_layer():
    model, caches = decoder_with_caches()
    before = [Snapshot(cache) for cache in caches]
    working = model.layers[1].ffn
    model.layers[1].ffn = Raising()  # layer 0 has appended to caches[0] when this raises
    with pytest.raises(RuntimeError, match="failed late"):
        model(NEXT, caches)
    for snapshot in before:
        snapshot.assert_unchanged()
    model.layers[1].ffn = working
    assert_next_step_as_untouched(model, caches)


@pytest.mark.parametrize(
    "model, prompt, steps, error, message",
    [
        pytest.param(
            None, PROMPT.numpy(), 2, TypeError, "prompt must be a torch.Tensor", id="NumPy"
        ),
        pytest.param(None, PROMPT.float(), 2, TypeError, "prompt of shape .* dtype", id="float"),
        pytest.param(
            None,
            PROMPT + VOCAB,
            2,
            ValueError,
            "outside the vocabulary",
            id="id past the vocabulary",
        ),
        pytest.param(  # positions 0 .. 8 would be fed: refused before the first step
            None, PROMPT, 7, ValueError, "positions up to 8 do not fit max_len = 8", id="max_len"
        ),
        pytest.param(
            nn.Linear(2, 2),
            PROMPT,
            2,
            TypeError,
            r"model must be an attnkit\.decoding\.TinyDecoder, got Linear",
            id="not a decoder",
        ),
    ],
)
def test_greedy_generate_checks_everything_before_the_first_step(
    model, prompt, steps, error, message
):
    decoder, _ = decoder_with_caches()
    calls = []
    decoder.register_forward_hook(lambda *_: calls.append(1))
    with pytest.raises(error, match=message):
        greedy_generate(decoder if model is None else model, prompt, steps)
    assert calls == []


# --- SinusoidalPositionalEncoding: its buffer ------------------------------------------------


def encoding():
    return SinusoidalPositionalEncoding(4, max_len=8)


@pytest.mark.parametrize(
    "x, error, message",
    [
        pytest.param(
            np.zeros((3, 4)), TypeError, "x must be a torch.Tensor, got ndarray", id="NumPy"
        ),
        pytest.param([[0.0] * 4] * 3, TypeError, "x must be a torch.Tensor, got list", id="list"),
        pytest.param(
            torch.zeros(3, 4, dtype=torch.long),
            TypeError,
            r"x of shape \(3, 4\) must hold floating-point numbers",
            id="integer",
        ),
        pytest.param(
            torch.zeros(3, 4, device="meta"),
            ValueError,
            r"x of shape \(3, 4\) on device meta cannot join the buffer pe, on device cpu",
            id="device",
        ),
        pytest.param(
            torch.zeros(9, 4), ValueError, r"length 9, longer than max_len = 8", id="past max_len"
        ),
        pytest.param(
            torch.zeros(3, 5),
            ValueError,
            r"x of shape \(3, 5\) must have shape \(tokens, d_model\) with d_model = 4",
            id="width",
        ),
        pytest.param(
            torch.zeros(4), ValueError, r"x must have shape \(tokens, d_model\)", id="rank"
        ),
    ],
)
def test_refused_input_leaves_the_encoding_s_buffer_as_it_was(x, error, message):
    module = encoding()
    pe, numbers = module.pe, module.pe.clone()
    with pytest.raises(error, match=message):
        module(x)
    assert module.pe is pe and torch.equal(module.pe, numbers)
    x = torch.randn(2, 3, 4)
    assert torch.equal(module(x), encoding()(x))


@pytest.mark.filterwarnings("ignore:Complex modules:UserWarning")
@pytest.mark.parametrize(
    "convert",
    [
        pytest.param(lambda module: module.to(torch.complex64), id="complex"),
        pytest.param(lambda module: module.type(torch.int64), id="integer"),
    ],
)
def test_a_conversion_the_buffer_cannot_take_is_refused_and_undone(convert):
    module = encoding()
    pe, numbers = module.pe, module.pe.clone()
    with pytest.raises(TypeError, match=r"pe of shape \(8, 4\) must hold floating-point numbers"):
        convert(module)
    assert module.pe is pe and module.pe.dtype == torch.float32 and torch.equal(module.pe, numbers)
    assert torch.equal(module.double().pe, encoding().double().pe)  # and converts as before


# --- train: the model it changes -------------------------------------------------------------

TRAINING = dict(steps=3, batch_size=4, length=5, vocab=6)


def small_transformer():
    """A model in eval mode, which a training run that raises half way must put back."""
    torch.manual_seed(0)
    return TinyTransformer(6, 5, d_model=8, h=2, layers=1, d_ff=16).eval()


@pytest.fixture(scope="module")
def untouched_losses():
    """What a valid training run gives on a model that never saw a bad one."""
    return train(small_transformer(), **TRAINING)


def out_of_range_from(step: int):
    """A task whose targets leave the vocabulary at ``step``: training fails after step - 1."""
    calls = []

    def task(inputs):
        calls.append(1)
        return reverse(inputs) + (TRAINING["vocab"] if len(calls) >= step else 0)

    return task


BAD_TRAINING = [  # each gives the arguments that replace TRAINING's
    pytest.param(
        lambda: dict(vocab=7),
        ValueError,
        "vocab = 7 does not match the model, made for 6 tokens",
        id="vocab",
    ),
    pytest.param(
        lambda: dict(length=6),
        ValueError,
        "length = 6 is longer than the model's positional encoding, made for sequences of 5",
        id="length",
    ),
    pytest.param(lambda: dict(steps=0), ValueError, "steps must be a positive integer", id="steps"),
    pytest.param(
        lambda: dict(batch_size=2.5),
        ValueError,
        "batch_size must be a positive integer",
        id="batch_size",
    ),
    pytest.param(
        lambda: dict(lr=math.nan), ValueError, "lr must be a positive finite number", id="lr"
    ),
    pytest.param(
        lambda: dict(report_every=-1),
        ValueError,
        "report_every must be a positive integer",
        id="report_every",
    ),
    pytest.param(lambda: dict(task="reverse"), TypeError, "task must be a function", id="task"),
    pytest.param(
        lambda: dict(task=lambda inputs: inputs.tolist()),
        TypeError,
        "task must return a torch.Tensor of targets, got list",
        id="targets not a tensor",
    ),
    pytest.param(
        lambda: dict(task=lambda inputs: inputs.int()),
        TypeError,
        r"the task's targets of shape \(4, 5\) must be integer token ids \(int64\), got dtype "
        "int32",
        id="int32 targets",
    ),
    pytest.param(  # two steps of Adam have changed the weights when this raises
        lambda: dict(task=out_of_range_from(3)),
        ValueError,
        r"the task's targets of shape \(4, 5\) holds token ids from \d+ to \d+, outside the "
        r"vocabulary 0 \.\. 5",
        id="targets past the vocabulary at step 3",
    ),
]


@pytest.mark.parametrize("arguments, error, message", BAD_TRAINING)
def test_training_that_raises_leaves_the_model_as_it_was(
    arguments, error, message, untouched_losses
):
    model = small_transformer()
    parameters = list(model.parameters())
    weights = {name: value.clone() for name, value in model.state_dict().items()}
    with pytest.raises(error, match=message):
        train(model, **(TRAINING | arguments()))
    assert list(model.parameters()) == parameters and not model.training
    for name, value in model.state_dict().items():
        assert torch.equal(value, weights[name]), name
    assert train(model, **TRAINING) == untouched_losses


def test_train_refuses_a_model_that_is_no_tiny_transformer():
    model = nn.Linear(2, 2)
    weight = model.weight.clone()
    with pytest.raises(TypeError, match=r"model must be an attnkit\.reversal\.TinyTransformer"):
        train(model, **TRAINING)
    assert torch.equal(model.weight, weight) and model.training


# --- AttentionHeatmap: its traits --------------------------------------------------------------

RNG = np.random.default_rng(0)
X = RNG.normal(size=(5, 4))  # (n, d)
TOKENS = ["a", "b", "c", "d", "e"]
HEADS = [(RNG.normal(size=(4, 3)), RNG.normal(size=(4, 3))) for _ in range(2)]  # d_k = 3
SYNCED = sorted(AttentionHeatmap.class_own_traits(sync=True))


def heatmap(kind: str) -> AttentionHeatmap:
    if kind == "self":
        return AttentionHeatmap(
            TOKENS, X, heads=HEADS, controls=["d_k", "temperature"], d_k_choices=[1, 3], causal=True
        )
    return AttentionHeatmap(TOKENS, X, key_tokens=["x", "y", "z"], keys=X[:3], scale=True)


def traits(widget) -> dict:
    return {name: copy.deepcopy(getattr(widget, name)) for name in SYNCED}


def assert_as_untouched(widget, kind, before):
    assert traits(widget) == before
    assert np.array_equal(widget.expected_weights(), heatmap(kind).expected_weights())


def nan_rows():
    rows = X.tolist()
    rows[0][0] = math.nan
    return rows


BAD_TRAITS = [
    pytest.param(
        "self", "head", 2, r"head must be one of 0 \.\. 1 \(the heads\), got 2", id="head"
    ),
    pytest.param("self", "head", -1, "head must be one of 0 .. 1", id="negative head"),
    pytest.param(
        "self", "temperature", 0.0, "temperature must be a positive finite number", id="temperature"
    ),
    pytest.param(
        "self",
        "temperature",
        math.nan,
        "temperature must be a positive finite",
        id="NaN temperature",
    ),
    pytest.param(
        "self",
        "temperature",
        math.inf,
        "temperature must be a positive finite",
        id="inf temperature",
    ),
    pytest.param("self", "padding", [True], "padding has 1 entries for 5 keys", id="padding"),
    pytest.param(
        "self",
        "permutation",
        [0, 0, 1, 2, 3],
        r"permutation must list each query row 0 \.\. 4 once",
        id="permutation",
    ),
    pytest.param(
        "self", "permutation", [2, 1, 0], "permutation must list each", id="short permutation"
    ),
    pytest.param("self", "query_row", 5, r"query_row must be one of 0 \.\. 4", id="query_row"),
    pytest.param("self", "d_k", 2, r"d_k must be one of d_k_choices \[1, 3\], got 2", id="d_k"),
    pytest.param(
        "self",
        "d_k_choices",
        [1, 4],
        r"the d_k control needs d_k_choices between 1 and the width 3, got \[1, 4\]",
        id="d_k_choices",
    ),
    pytest.param("self", "controls", ["zoom"], "unknown controls", id="controls"),
    pytest.param(
        "self", "controls", ["temperature"], "the d_k control needs", id="controls without d_k"
    ),
    pytest.param("cross", "causal", True, "need self-attention", id="causal cross-attention"),
    pytest.param("cross", "positional", True, "need self-attention", id="positional"),
    pytest.param("cross", "controls", ["shuffle"], "need self-attention", id="shuffle"),
    pytest.param(
        "self",
        "query_vectors",
        X[:3].tolist(),
        r"query_vectors: X must have shape \(tokens, d\) = \(5, d\), got \(3, 4\)",
        id="query_vectors",
    ),
    pytest.param(
        "self",
        "query_vectors",
        nan_rows(),
        r"query_vectors: X of shape \(5, 4\) contains NaN",
        id="NaN query",
    ),
    pytest.param(
        "self",
        "heads",
        [{"W_Q": HEADS[0][0].tolist(), "W_K": HEADS[0][1][:, :2].tolist()}],
        r"heads: head 0: W_Q of shape \(4, 3\) and W_K of shape \(4, 2\) do not fit",
        id="heads",
    ),
    pytest.param(
        "self",
        "key_tokens",
        ["x"],
        "key_tokens: in self-attention the keys are the queries",
        id="key_tokens",
    ),
    pytest.param(
        "cross",
        "key_vectors",
        X[:2].tolist(),
        r"key_vectors: keys of shape \(2, 4\) need one key token per row",
        id="key_vectors",
    ),
]


@pytest.mark.parametrize("kind, name, value, message", BAD_TRAITS)
def test_a_refused_trait_leaves_the_heatmap_as_it_was(kind, name, value, message):
    widget = heatmap(kind)
    before = traits(widget)
    with pytest.raises(ValueError, match=message):
        setattr(widget, name, value)
    assert_as_untouched(widget, kind, before)


BAD_DATA = [
    pytest.param(
        "self",
        dict(tokens=TOKENS[:3], X=X),
        ValueError,
        r"X must have shape \(tokens, d\) = \(3, d\), got \(5, 4\)",
        id="tokens",
    ),
    pytest.param(
        "self",
        dict(tokens=TOKENS, X=np.array(nan_rows())),
        ValueError,
        r"X of shape \(5, 4\) contains NaN",
        id="NaN",
    ),
    pytest.param(
        "self",
        dict(tokens=TOKENS, X=[["one"] * 4] * 5),
        TypeError,
        r"X of shape \(5, 4\) must hold floating-point numbers",
        id="strings",
    ),
    pytest.param(
        "self",
        dict(tokens=[], X=np.zeros((0, 4))),
        ValueError,
        r"X of shape \(0, 4\) is empty",
        id="empty",
    ),
    pytest.param(
        "self",
        dict(tokens=TOKENS, X=X, keys=X[:2], key_tokens=["x", "y"]),
        ValueError,
        "the new inputs do not fit the heatmap's settings: causal masks, positional encoding "
        "and shuffling need self-attention",
        id="keys under a causal mask",
    ),
    pytest.param(
        "self",
        dict(tokens=TOKENS, X=X, heads=[(h[0][:, :2], h[1][:, :2]) for h in HEADS]),
        ValueError,
        r"the new inputs do not fit the heatmap's settings: the d_k control needs d_k_choices "
        r"between 1 and the width 2, got \[1, 3\]",
        id="narrower than a d_k choice",
    ),
    pytest.param(
        "cross",
        dict(tokens=TOKENS, X=X, keys=X[:3]),
        ValueError,
        r"keys of shape \(3, 4\) need one key token per row",
        id="keys without tokens",
    ),
]


@pytest.mark.parametrize("kind, data, error, message", BAD_DATA)
def test_refused_new_data_leaves_the_heatmap_as_it_was(kind, data, error, message):
    widget = heatmap(kind)
    before = traits(widget)
    data = dict(data)
    with pytest.raises(error, match=message):
        widget.set_data(data.pop("tokens"), data.pop("X"), **data)
    assert_as_untouched(widget, kind, before)


def test_a_refused_message_from_the_front_end_is_undone_whole():
    """The front end sends several traits at once; one that does not fit undoes them all."""
    widget = heatmap("self")
    before = traits(widget)
    with pytest.raises(ValueError, match="padding has 2 entries for 5 keys"):
        widget.set_state({"temperature": 2.0, "padding": [True, False]})
    assert_as_untouched(widget, "self", before)
    widget.set_state({"temperature": 2.0})
    untouched = heatmap("self")
    untouched.temperature = 2.0
    assert np.array_equal(widget.expected_weights(), untouched.expected_weights())
