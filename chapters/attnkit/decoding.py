"""Causal decoding with a key-value cache, built on the book's ``MultiHeadAttention``.

A decoder generates one token at a time, and each new token attends to every earlier one.
Under a causal mask the earlier tokens' keys and values never change once computed, so a
:class:`KVCache` keeps them: a generation step projects only the new token and attends
with its one query over the cache. :class:`TinyDecoder` is a small decoder-only language
model whose forward pass runs either way, and :func:`greedy_generate` generates with or
without the cache, so the two can be compared token for token.

Each of them checks its input before any cache changes: a call that raises (``TypeError`` or
``ValueError``, naming the argument) leaves every cache exactly as it was, and a step that fails
after appending undoes the append (:meth:`KVCache.transaction`), so the next step's answer is
the one an untouched cache gives.
"""

from __future__ import annotations

from contextlib import ExitStack, contextmanager

import torch
from torch import nn

from . import rules
from .modules import MultiHeadAttention, _check_input, _check_joins, _dtype_name

__all__ = ["KVCache", "cached_self_attention", "DecoderLayer", "TinyDecoder", "greedy_generate"]

TOKEN_DTYPES = ("int64", "int32")  # the token ids nn.Embedding takes


class KVCache:
    """The keys and values one attention layer has computed so far.

    ``keys`` and ``values`` are ``(..., h, t, d_k)`` after ``t`` tokens (``None``
    before the first); ``len(cache)`` is ``t``. :meth:`append` adds the new tokens'
    keys and values along the token axis. ``torch.cat`` copies the cache at each
    step; serving systems allocate it once for the longest sequence instead.

    A call that raises leaves the cache as it was: :meth:`append` checks everything
    before it changes anything, and :meth:`transaction` undoes the appends of a step
    that fails later.
    """

    def __init__(self):
        self.keys = None
        self.values = None

    def __len__(self) -> int:
        return 0 if self.keys is None else self.keys.shape[-2]

    def append(self, keys, values):
        """Add ``(..., h, m, d_k)`` keys and values; return all, ``(..., h, t + m, d_k)``.

        Both must be finite floating-point tensors with the same leading axes and tokens,
        of one dtype and on one device; once the cache holds some, the new ones must
        continue them (see :meth:`check_next`). A call that raises leaves the cache as it was.
        """
        for t, name in ((keys, "keys"), (values, "values")):
            _check_input(t, name)
        check_keys_values(keys.shape, values.shape)
        _check_joins(values, "values", keys, "keys")
        self.check_next(keys.shape, values.shape, _dtype_name(keys), str(keys.device))
        if self.keys is None:
            self.keys, self.values = keys, values
        else:
            keys = torch.cat([self.keys, keys], dim=-2)
            values = torch.cat([self.values, values], dim=-2)
            self.keys, self.values = keys, values  # both at once, once both copies are made
        return self.keys, self.values

    def check_next(self, keys_shape, values_shape, dtype: str, device: str) -> None:
        """Raise unless new keys and values of these shapes, ``dtype`` (``"float32"``) and
        ``device`` (``"cpu"``) continue the cache: its dtype, device, leading axes and widths.

        Reads no numbers and changes nothing, so a model can check every layer's cache
        before the first one changes.
        """
        for name, shape in (("keys", keys_shape), ("values", values_shape)):
            cached = getattr(self, name)
            if cached is None:
                continue
            rules.check_joins(
                f"new {name}",
                shape,
                dtype,
                device,
                into=f"the cached {name}",
                dtype_there=_dtype_name(cached),
                device_there=str(cached.device),
            )
            check_continues(f"new {name}", shape, f"the cached {name}", cached.shape)

    @contextmanager
    def transaction(self):
        """Undo the appends made inside the ``with`` block if it raises: all or nothing."""
        saved = self.keys, self.values
        try:
            yield self
        except BaseException:
            self.keys, self.values = saved
            raise

    @property
    def nbytes(self) -> int:
        """The memory the cached keys and values take, in bytes."""
        if self.keys is None:
            return 0
        return sum(t.numel() * t.element_size() for t in (self.keys, self.values))


def _check_is_cache(cache, name: str) -> None:
    if not isinstance(cache, KVCache):
        raise TypeError(f"{name} must be an attnkit.decoding.KVCache, got {type(cache).__name__}")


def _check_layer_input(layer, x, name: str) -> None:
    """``x`` for ``layer``: finite floats ``(..., m, d_model)`` of its dtype, on its device."""
    if not isinstance(layer, MultiHeadAttention):
        raise TypeError(
            f"layer must be an attnkit.modules.MultiHeadAttention, got {type(layer).__name__}"
        )
    _check_input(x, name)
    _check_joins(x, name, layer.w_q.weight, "the layer's weights")
    rules.check_tokens(name, x.shape, "(tokens, d_model)", layer.d_model)


def _check_cache_takes(cache: KVCache, name: str, layer, batch: tuple, m: int, fed: str) -> None:
    """Raise, naming the cache and what it is ``fed``, unless ``layer``'s keys and values of
    ``m`` new tokens, ``batch + (h, m, d_k)``, continue it."""
    new = tuple(batch) + (layer.h, m, layer.d_k)
    weight = layer.w_k.weight
    try:
        cache.check_next(new, new, _dtype_name(weight), str(weight.device))
    except (TypeError, ValueError) as error:
        raise type(error)(f"{name} cannot take {fed}: {error}") from None


def _check_step(layer, x, name: str, cache) -> None:
    """Everything a cached step of ``layer`` on ``x`` needs, checked before ``cache`` changes."""
    _check_layer_input(layer, x, name)
    _check_is_cache(cache, "cache")
    fed = f"{name} of shape {tuple(x.shape)}"
    _check_cache_takes(cache, "cache", layer, x.shape[:-2], x.shape[-2], fed)


def cached_self_attention(layer: MultiHeadAttention, x_new, cache: KVCache):
    """Causal self-attention of ``m`` new tokens over the ``t`` cached ones and themselves.

    ``x_new`` ``(..., m, d_model)`` holds the tokens at positions ``t .. t + m - 1``.
    Only they are projected: their keys and values go into ``cache``, and the new
    token at position ``t + i`` attends to keys ``0 .. t + i``. Returns ``(output,
    weights)`` of shapes ``(..., m, d_model)`` and ``(..., h, m, t + m)``: the rows
    ``t ..`` of ``layer(x, mask=causal)`` on the whole sequence ``x``. A call that
    raises leaves ``cache`` as it was.
    """
    _check_step(layer, x_new, "x_new", cache)  # before the cache changes
    t, m = len(cache), x_new.shape[-2]
    q = layer.split_heads(layer.w_q(x_new))  # (..., h, m, d_k)
    with cache.transaction():  # an error after the append undoes it
        k, v = cache.append(
            layer.split_heads(layer.w_k(x_new)),  # (..., h, t + m, d_k)
            layer.split_heads(layer.w_v(x_new)),
        )
        mask = torch.ones(m, t + m, dtype=torch.bool, device=x_new.device).tril(diagonal=t)
        heads, weights = layer.attend(q, k, v, mask)  # (..., h, m, d_k)
    return layer.w_o(layer.merge_heads(heads)), weights


class DecoderLayer(nn.Module):
    """A pre-norm decoder layer (GPT-2's arrangement), causal self-attention and a feed-forward net.

    ``x -> x + MultiHeadAttention(LayerNorm(x))`` with a causal mask, then ``x -> x +
    FFN(LayerNorm(x))`` with ``FFN(x) = GELU(x W_1 + b_1) W_2 + b_2``. ``forward(x,
    cache=None)`` takes ``x`` ``(..., n, d_model)``; with a :class:`KVCache`, ``x``
    holds only the tokens after the cached ones (see :func:`cached_self_attention`),
    and a call that raises leaves the cache as it was.
    """

    def __init__(self, d_model: int, h: int, d_ff: int):
        super().__init__()
        self.norm1 = nn.LayerNorm(d_model)
        self.attn = MultiHeadAttention(d_model, h)
        self.norm2 = nn.LayerNorm(d_model)
        self.ffn = nn.Sequential(
            nn.Linear(d_model, rules.positive_int(d_ff, "d_ff")),
            nn.GELU(),
            nn.Linear(d_ff, d_model),
        )

    def forward(self, x, cache: KVCache | None = None):
        if cache is None:
            _check_layer_input(self.attn, x, "x")
            n = x.shape[-2]
            causal = torch.ones(n, n, dtype=torch.bool, device=x.device).tril()
            attended, _ = self.attn(self.norm1(x), mask=causal)
            return self._feed_forward(x + attended)
        _check_step(self.attn, x, "x", cache)  # before the cache changes
        with cache.transaction():  # an error after the append undoes it
            attended, _ = cached_self_attention(self.attn, self.norm1(x), cache)
            return self._feed_forward(x + attended)

    def _feed_forward(self, x):
        return x + self.ffn(self.norm2(x))


class TinyDecoder(nn.Module):
    """A decoder-only language model: token and position embeddings, decoder layers, read-out.

    ``forward(tokens, caches=None)`` takes integer tokens ``(b, n)`` and returns the
    next-token logits at every position, ``(b, n, vocab)``. With ``caches`` (one
    :class:`KVCache` per layer, from :meth:`new_caches`) the tokens continue the cached
    sequence: they sit at positions ``len(caches[0]) ..``, and only they are computed.

    Everything is checked before any cache changes: token ids (int64 or int32, in
    ``range(vocab)``, on the model's device), the caches (one per layer, each its own, all
    as long, each continued by this model's keys and values) and the positions (a
    sequence longer than ``max_len`` raises ``ValueError``). A call that raises leaves
    every cache as it was; a layer that fails late undoes the appends of all of them.
    """

    def __init__(
        self,
        vocab: int,
        d_model: int = 64,
        h: int = 4,
        layers: int = 2,
        d_ff: int | None = None,
        max_len: int = 1024,
    ):
        super().__init__()
        vocab, d_model = rules.positive_int(vocab, "vocab"), rules.positive_int(d_model, "d_model")
        self.max_len = rules.positive_int(max_len, "max_len")
        self.embed = nn.Embedding(vocab, d_model)
        self.position = nn.Embedding(self.max_len, d_model)
        self.layers = nn.ModuleList(
            DecoderLayer(d_model, h, d_ff or 4 * d_model)
            for _ in range(rules.positive_int(layers, "layers"))
        )
        self.norm = nn.LayerNorm(d_model)
        self.read_out = nn.Linear(d_model, vocab)

    def new_caches(self) -> list[KVCache]:
        return [KVCache() for _ in self.layers]

    def forward(self, tokens, caches: list[KVCache] | None = None):
        self._check_tokens(tokens, "tokens")
        start = self._check_caches(caches)
        b, n = tokens.shape
        rules.check_max_len(start + n, self.max_len, "model")
        fed = f"tokens of shape {(b, n)}"
        for i, cache in enumerate(caches or ()):
            _check_cache_takes(cache, f"caches[{i}]", self.layers[i].attn, (b,), n, fed)
        positions = torch.arange(start, start + n, device=tokens.device)
        x = self.embed(tokens) + self.position(positions)  # (b, n, d_model)
        with ExitStack() as undo:  # all or nothing: an error in any layer undoes every append
            for i, layer in enumerate(self.layers):
                cache = None if caches is None else undo.enter_context(caches[i].transaction())
                x = layer(x, cache)
            return self.read_out(self.norm(x))  # (b, n, vocab)

    def _check_tokens(self, tokens, name: str) -> None:
        """Token ids ``(b, n)``, int64 or int32, in ``range(vocab)``, on the model's device."""
        if not isinstance(tokens, torch.Tensor):
            raise TypeError(f"{name} must be a torch.Tensor, got {type(tokens).__name__}")
        rules.check_token_ids(name, tokens.shape, _dtype_name(tokens), TOKEN_DTYPES)
        _check_joins(tokens, name, self.embed.weight, "the model", same_dtype=False)
        if not tokens.is_meta:  # a meta tensor holds no ids to read
            low, high = int(tokens.min()), int(tokens.max())
            rules.check_token_range(name, tokens.shape, low, high, self.embed.num_embeddings)

    def _check_caches(self, caches) -> int:
        """How many tokens ``caches`` hold: one KVCache per layer, each its own, all as long."""
        if caches is None:
            return 0
        if not isinstance(caches, (list, tuple)):
            raise TypeError(
                "caches must be a list with one KVCache per layer (see new_caches()), "
                f"got {type(caches).__name__}"
            )
        if len(caches) != len(self.layers):
            raise ValueError(f"pass one KVCache per layer: {len(self.layers)}, got {len(caches)}")
        for i, cache in enumerate(caches):
            _check_is_cache(cache, f"caches[{i}]")
        if len({id(cache) for cache in caches}) < len(caches):
            raise ValueError(
                "caches holds one KVCache more than once: each layer needs its own "
                "(see new_caches())"
            )
        lengths = [len(cache) for cache in caches]
        if len(set(lengths)) > 1:
            raise ValueError(
                f"caches must hold as many tokens each, one sequence per layer, got {lengths}"
            )
        return lengths[0]


def greedy_generate(model: TinyDecoder, prompt, steps: int, *, use_cache: bool = True):
    """``prompt`` ``(b, n)`` followed by ``steps`` tokens, each the most likely next one.

    Without the cache every step runs the model on the whole sequence so far and keeps
    the last position's logits. With it, the prompt is run once to fill the caches and
    every later step feeds only the token just generated. Returns ``(b, n + steps)``.
    The prompt is checked as :class:`TinyDecoder` checks tokens, and the whole generation
    must fit ``max_len``, before the first step.
    """
    if not isinstance(model, TinyDecoder):
        raise TypeError(
            f"model must be an attnkit.decoding.TinyDecoder, got {type(model).__name__}"
        )
    steps = rules.positive_int(steps, "steps")
    model._check_tokens(prompt, "prompt")
    rules.check_max_len(prompt.shape[1] + steps - 1, model.max_len, "model")  # the last is not fed
    tokens = prompt
    with torch.no_grad():
        caches = model.new_caches() if use_cache else None
        logits = model(prompt, caches)  # (b, n, vocab)
        for step in range(steps):
            next_token = logits[:, -1].argmax(dim=-1, keepdim=True)  # (b, 1)
            tokens = torch.cat([tokens, next_token], dim=1)
            if step == steps - 1:
                break
            logits = model(next_token, caches) if use_cache else model(tokens)
    return tokens


# --- input rules only this module applies


def check_keys_values(keys_shape, values_shape) -> None:
    """ValueError naming both shapes unless keys ``(..., h, m, d_k)`` and values ``(..., h, m,
    d_v)`` have the same leading axes and tokens."""
    keys_shape, values_shape = tuple(keys_shape), tuple(values_shape)
    if len(keys_shape) < 3 or keys_shape[:-1] != values_shape[:-1]:
        raise ValueError(
            f"keys of shape {keys_shape} and values of shape {values_shape} must both be "
            "(..., h, tokens, d_k) with the same leading axes and tokens"
        )


def check_continues(name: str, shape, cached_name: str, cached_shape) -> None:
    """ValueError naming both shapes unless ``shape`` can follow ``cached_shape`` on the token
    axis (the second to last): every other axis must agree."""
    shape, cached_shape = tuple(shape), tuple(cached_shape)
    if shape[:-2] != cached_shape[:-2] or shape[-1:] != cached_shape[-1:]:
        raise ValueError(
            f"{name} of shape {shape} do not continue {cached_name} of shape {cached_shape}: "
            "every axis but the tokens (the second to last) must agree"
        )
