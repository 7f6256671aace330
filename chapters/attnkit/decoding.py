"""Causal decoding with a key-value cache, built on the book's ``MultiHeadAttention``.

A decoder generates one token at a time, and each new token attends to every earlier one.
Under a causal mask the earlier tokens' keys and values never change once computed, so a
:class:`KVCache` keeps them: a generation step projects only the new token and attends
with its one query over the cache. :class:`TinyDecoder` is a small decoder-only language
model whose forward pass runs either way, and :func:`greedy_generate` generates with or
without the cache, so the two can be compared token for token.
"""

from __future__ import annotations

import torch
from torch import nn

from . import rules
from .modules import MultiHeadAttention

__all__ = ["KVCache", "cached_self_attention", "DecoderLayer", "TinyDecoder", "greedy_generate"]


class KVCache:
    """The keys and values one attention layer has computed so far.

    ``keys`` and ``values`` are ``(..., h, t, d_k)`` after ``t`` tokens (``None``
    before the first); ``len(cache)`` is ``t``. :meth:`append` adds the new tokens'
    keys and values along the token axis. ``torch.cat`` copies the cache at each
    step; serving systems allocate it once for the longest sequence instead.
    """

    def __init__(self):
        self.keys = None
        self.values = None

    def __len__(self) -> int:
        return 0 if self.keys is None else self.keys.shape[-2]

    def append(self, keys, values):
        """Add ``(..., h, m, d_k)`` keys and values; return all, ``(..., h, t + m, d_k)``."""
        if keys.dim() < 3 or keys.shape[:-1] != values.shape[:-1]:
            raise ValueError(
                f"keys of shape {tuple(keys.shape)} and values of shape "
                f"{tuple(values.shape)} must both be (..., h, tokens, d_k) with "
                "the same leading axes and tokens"
            )
        if self.keys is None:
            self.keys, self.values = keys, values
        else:
            if keys.shape[:-2] != self.keys.shape[:-2] or keys.shape[-1] != self.keys.shape[-1]:
                raise ValueError(
                    f"new keys of shape {tuple(keys.shape)} do not continue the "
                    f"cached keys of shape {tuple(self.keys.shape)}"
                )
            self.keys = torch.cat([self.keys, keys], dim=-2)
            self.values = torch.cat([self.values, values], dim=-2)
        return self.keys, self.values

    @property
    def nbytes(self) -> int:
        """The memory the cached keys and values take, in bytes."""
        if self.keys is None:
            return 0
        return sum(t.numel() * t.element_size() for t in (self.keys, self.values))


def cached_self_attention(layer: MultiHeadAttention, x_new, cache: KVCache):
    """Causal self-attention of ``m`` new tokens over the ``t`` cached ones and themselves.

    ``x_new`` ``(..., m, d_model)`` holds the tokens at positions ``t .. t + m - 1``.
    Only they are projected: their keys and values go into ``cache``, and the new
    token at position ``t + i`` attends to keys ``0 .. t + i``. Returns ``(output,
    weights)`` of shapes ``(..., m, d_model)`` and ``(..., h, m, t + m)``: the rows
    ``t ..`` of ``layer(x, mask=causal)`` on the whole sequence ``x``.
    """
    if not isinstance(layer, MultiHeadAttention):
        raise TypeError(
            f"layer must be an attnkit.modules.MultiHeadAttention, got {type(layer).__name__}"
        )
    rules.check_tokens("x_new", tuple(x_new.shape), "(tokens, d_model)", layer.d_model)
    t, m = len(cache), x_new.shape[-2]
    q = layer.split_heads(layer.w_q(x_new))  # (..., h, m, d_k)
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
    holds only the tokens after the cached ones (see :func:`cached_self_attention`).
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
        y = self.norm1(x)
        if cache is None:
            n = x.shape[-2]
            causal = torch.ones(n, n, dtype=torch.bool, device=x.device).tril()
            attended, _ = self.attn(y, mask=causal)
        else:
            attended, _ = cached_self_attention(self.attn, y, cache)
        x = x + attended
        return x + self.ffn(self.norm2(x))


class TinyDecoder(nn.Module):
    """A decoder-only language model: token and position embeddings, decoder layers, read-out.

    ``forward(tokens, caches=None)`` takes integer tokens ``(b, n)`` and returns the
    next-token logits at every position, ``(b, n, vocab)``. With ``caches`` (one
    :class:`KVCache` per layer, from :meth:`new_caches`) the tokens continue the cached
    sequence: they sit at positions ``len(caches[0]) ..``, and only they are computed.
    Sequences longer than ``max_len`` raise ``ValueError``.
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
        if caches is not None and len(caches) != len(self.layers):
            raise ValueError(f"pass one KVCache per layer: {len(self.layers)}, got {len(caches)}")
        start = 0 if caches is None else len(caches[0])
        n = tokens.shape[-1]
        if start + n > self.max_len:
            raise ValueError(
                f"positions up to {start + n - 1} do not fit max_len = "
                f"{self.max_len}: create the model with max_len >= {start + n}"
            )
        positions = torch.arange(start, start + n, device=tokens.device)
        x = self.embed(tokens) + self.position(positions)  # (b, n, d_model)
        for i, layer in enumerate(self.layers):
            x = layer(x, None if caches is None else caches[i])
        return self.read_out(self.norm(x))  # (b, n, vocab)


def greedy_generate(model: TinyDecoder, prompt, steps: int, *, use_cache: bool = True):
    """``prompt`` ``(b, n)`` followed by ``steps`` tokens, each the most likely next one.

    Without the cache every step runs the model on the whole sequence so far and keeps
    the last position's logits. With it, the prompt is run once to fill the caches and
    every later step feeds only the token just generated. Returns ``(b, n + steps)``.
    """
    steps = rules.positive_int(steps, "steps")
    if prompt.dim() != 2 or prompt.shape[1] == 0:
        raise ValueError(
            f"prompt must be integer tokens of shape (b, n) with n >= 1, got {tuple(prompt.shape)}"
        )
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
