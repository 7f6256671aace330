"""Attention in PyTorch: the NumPy functions of ``core`` as ``nn.Module``s.

Conventions are the book's (see the preface): vectors are rows, a set of ``n``
vectors of width ``d`` is an ``(n, d)`` tensor (with optional leading batch
axes), and attention weights are ``(queries, keys)``.

Masks are BOOLEAN tensors in which True means "this query may attend to this
key", exactly like the boolean ``attn_mask`` of
``torch.nn.functional.scaled_dot_product_attention`` (and the opposite of
``nn.MultiheadAttention``, where True means "masked out"). A query row whose
mask is all False raises ``ValueError`` by default; with
``all_masked="zero"`` its weights and output are zero, which is what
``F.scaled_dot_product_attention`` returns. NaN is never returned.
"""

from __future__ import annotations

import math

import torch
from torch import nn

from .core import check_mask_fits, check_qkv_shapes

__all__ = ["ScaledDotProductAttention", "QKVAttention"]

_ALL_MASKED_CHOICES = ("raise", "zero")


class ScaledDotProductAttention(nn.Module):
    """``softmax(Q K^T * scale) V`` with an optional boolean mask (True = may attend).

    No parameters. ``forward(q, k, v, mask=None)`` takes ``q`` ``(..., m,
    d_k)``, ``k`` ``(..., n, d_k)``, ``v`` ``(..., n, d_v)`` and a boolean
    ``mask`` that broadcasts to ``(..., m, n)``; it returns ``(output,
    weights)`` of shapes ``(..., m, d_v)`` and ``(..., m, n)``. ``scale``
    defaults to ``1 / sqrt(d_k)``. Masked keys get weight exactly 0 (their
    scores are set to -inf before the softmax).
    """

    def __init__(self, scale: float | None = None, all_masked: str = "raise"):
        super().__init__()
        if all_masked not in _ALL_MASKED_CHOICES:
            raise ValueError(f"all_masked must be 'raise' or 'zero', got {all_masked!r}")
        if scale is not None and not (math.isfinite(scale) and scale > 0):
            raise ValueError(f"scale must be a positive finite number, got {scale}")
        self.scale = scale
        self.all_masked = all_masked

    def forward(self, q, k, v, mask=None):
        check_qkv_shapes(q.shape, k.shape, v.shape)
        scale = self.scale if self.scale is not None else 1.0 / math.sqrt(q.shape[-1])
        scores = q @ k.transpose(-2, -1) * scale  # (..., m, n)
        if mask is None:
            weights = torch.softmax(scores, dim=-1)
            return weights @ v, weights
        if mask.dtype != torch.bool:
            raise TypeError(
                f"mask must be a boolean tensor (True = may attend), got dtype {mask.dtype}. "
                "From 0/1 numbers use mask == 1; from an additive mask of 0 and -inf use mask == 0"
            )
        check_mask_fits(mask.shape, scores.shape)
        mask = mask.expand(scores.shape)
        empty = ~mask.any(dim=-1, keepdim=True)  # (..., m, 1): rows with no key left
        if bool(empty.any()) and self.all_masked == "raise":
            rows = [idx[0] if len(idx) == 1 else tuple(idx)
                    for idx in torch.nonzero(empty[..., 0]).tolist()]
            where = " (each index is (batch..., row))" if empty.dim() > 2 else ""
            raise ValueError(
                f"the mask hides every key from query row(s) {rows}{where}: softmax over no "
                "keys is 0/0. Allow at least one key in each row, or use all_masked='zero' "
                "to get zero weights and a zero output there"
            )
        # empty rows keep their finite scores (no -inf/-inf = NaN) and are zeroed after
        scores = scores.masked_fill(~mask & ~empty, float("-inf"))
        weights = torch.softmax(scores, dim=-1).masked_fill(empty, 0.0)
        return weights @ v, weights


class QKVAttention(nn.Module):
    """Query-key-value attention: learned projections, then scaled dot-product attention.

    ``Q = x_query W_Q``, ``K = x_source W_K``, ``V = x_source W_V`` with
    ``W_Q, W_K`` of shape ``(d_model, d_k)`` and ``W_V`` of shape ``(d_model,
    d_v)``. Each is an ``nn.Linear`` without bias, which stores the TRANSPOSE
    of the book's matrix: ``W_Q = self.w_q.weight.T``.

    ``forward(x_query, x_source=None, mask=None)``: ``x_query`` is ``(..., m,
    d_model)``; ``x_source`` (``(..., n, d_model)``) defaults to ``x_query``,
    which makes it self-attention; with an encoder's outputs as ``x_source`` it
    is encoder-decoder (cross-) attention. Returns ``(output, weights)`` of
    shapes ``(..., m, d_v)`` and ``(..., m, n)``; the mask is as in
    :class:`ScaledDotProductAttention`.
    """

    def __init__(self, d_model: int, d_k: int, d_v: int | None = None, *,
                 all_masked: str = "raise"):
        super().__init__()
        d_v = d_k if d_v is None else d_v
        self.w_q = nn.Linear(d_model, d_k, bias=False)
        self.w_k = nn.Linear(d_model, d_k, bias=False)
        self.w_v = nn.Linear(d_model, d_v, bias=False)
        self.attend = ScaledDotProductAttention(all_masked=all_masked)

    def forward(self, x_query, x_source=None, mask=None):
        x_source = x_query if x_source is None else x_source
        d_model = self.w_q.in_features
        for t, name in ((x_query, "x_query"), (x_source, "x_source")):
            if t.dim() < 2 or t.shape[-1] != d_model:
                raise ValueError(f"{name} of shape {tuple(t.shape)} must be (..., tokens, "
                                 f"d_model) with d_model = {d_model}")
        q = self.w_q(x_query)   # (..., m, d_k)
        k = self.w_k(x_source)  # (..., n, d_k)
        v = self.w_v(x_source)  # (..., n, d_v)
        return self.attend(q, k, v, mask)


# --- Chapter 5: positional encoding -------------------------------------------

__all__ += ["SinusoidalPositionalEncoding"]


class SinusoidalPositionalEncoding(nn.Module):
    """Add the Transformer's sinusoidal positional encoding to a sequence of vectors.

    The encoding of positions ``0 .. max_len - 1`` is computed once, in float64,
    and stored as the buffer ``pe`` of shape ``(max_len, d_model)``:
    ``pe[p, 2i] = sin(p / 10000^(2i/d_model))`` and ``pe[p, 2i+1] = cos(p /
    10000^(2i/d_model))``, the values of :func:`attnkit.core.
    sinusoidal_positional_encoding`. For odd ``d_model`` the last column is a
    sine, as there. The buffer is registered with ``persistent=False``: it
    moves and changes dtype with the module (``.to(...)``, ``.double()``) but is
    not saved in ``state_dict()``, since it can always be recomputed. It is not
    a parameter and is never trained.

    ``forward(x)`` takes ``x`` of shape ``(..., n, d_model)`` (the sequence
    axis is the second to last) and returns ``x + pe[:n]``, with ``pe`` cast to
    ``x``'s dtype, so the output has ``x``'s shape, dtype and device. A
    sequence longer than ``max_len`` raises ``ValueError`` naming both lengths.
    """

    def __init__(self, d_model: int, max_len: int = 5000):
        super().__init__()
        for value, name in ((d_model, "d_model"), (max_len, "max_len")):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive integer, got {value!r}")
        self.d_model, self.max_len = d_model, max_len
        positions = torch.arange(max_len, dtype=torch.float64)[:, None]      # (max_len, 1)
        pair = torch.arange(d_model, dtype=torch.float64) // 2                # (d,): 0, 0, 1, 1, ...
        angles = positions / 10000.0 ** (2 * pair / d_model)                 # (max_len, d)
        even = torch.arange(d_model) % 2 == 0                                 # sine columns
        pe = torch.where(even, torch.sin(angles), torch.cos(angles))
        self.register_buffer("pe", pe.to(torch.get_default_dtype()), persistent=False)

    def forward(self, x):
        if x.dim() < 2 or x.shape[-1] != self.d_model:
            raise ValueError(f"x of shape {tuple(x.shape)} must be (..., tokens, d_model) with "
                             f"d_model = {self.d_model}")
        n = x.shape[-2]
        if n > self.max_len:
            raise ValueError(f"the sequence has length {n}, longer than max_len = {self.max_len}: "
                             f"create the module with max_len >= {n}")
        return x + self.pe[:n].to(dtype=x.dtype)

    def extra_repr(self) -> str:
        return f"d_model={self.d_model}, max_len={self.max_len}"


# --- Chapter 4: multi-head attention and an encoder layer ----------------------

__all__ += ["MultiHeadAttention", "EncoderLayer"]


def _shared_head_mask(mask, x_query, x_source):
    """Check that ``mask`` fits one head's weights ``(..., m, n)``; add the head axis."""
    if mask.dtype != torch.bool:
        raise TypeError(f"mask must be a boolean tensor (True = may attend), got dtype "
                        f"{mask.dtype}")
    try:
        batch = torch.broadcast_shapes(x_query.shape[:-2], x_source.shape[:-2])
    except RuntimeError:
        raise ValueError(f"the batch axes of x_query {tuple(x_query.shape)} and x_source "
                         f"{tuple(x_source.shape)} do not broadcast") from None
    one_head = batch + (x_query.shape[-2], x_source.shape[-2])
    check_mask_fits(mask.shape, one_head, "one head's weights (every head uses the mask)")
    return mask.unsqueeze(-3)                   # (..., 1, m, n): shared by the heads


class MultiHeadAttention(nn.Module):
    """Multi-head attention with ``h`` heads of width ``d_k = d_model / h``.

    Four ``nn.Linear(d_model, d_model)`` layers hold the projections. Each
    stores the TRANSPOSE of the book's matrix: ``W_Q = w_q.weight.T`` is
    ``(d_model, h*d_k)`` and its columns ``i*d_k .. (i+1)*d_k - 1`` are head
    ``i``'s ``W_Q^i``; likewise ``W_K``, ``W_V``, and ``W_O = w_o.weight.T``
    of shape ``(h*d_v, d_model)``. ``bias`` adds a bias to all four, as
    ``nn.MultiheadAttention`` does by default.

    ``forward(x_query, x_source=None, mask=None, average_weights=False)``:
    ``x_query`` is ``(..., m, d_model)``; ``x_source`` (``(..., n,
    d_model)``) defaults to ``x_query`` (self-attention). ``mask`` is boolean,
    True = may attend, and broadcasts to one head's weights ``(..., m, n)``;
    every head uses it (a causal ``(m, n)`` mask and a padding ``(b, 1, n)``
    mask both fit). Returns ``(output, weights)``: output ``(..., m,
    d_model)``; weights ``(..., h, m, n)``, one matrix per head, or their mean
    over the heads ``(..., m, n)`` with ``average_weights=True`` (what
    ``nn.MultiheadAttention`` returns by default). A row with no allowed key
    raises ``ValueError``, or gives zero weights with ``all_masked="zero"``
    (``nn.MultiheadAttention`` returns NaN there).
    """

    def __init__(self, d_model: int, h: int, *, bias: bool = True, all_masked: str = "raise"):
        super().__init__()
        for value, name in ((d_model, "d_model"), (h, "h")):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive integer, got {value!r}")
        if d_model % h:
            raise ValueError(f"d_model = {d_model} is not divisible by h = {h}: every head "
                             "needs the same width d_k = d_model / h")
        self.d_model, self.h, self.d_k = d_model, h, d_model // h
        self.w_q = nn.Linear(d_model, d_model, bias=bias)
        self.w_k = nn.Linear(d_model, d_model, bias=bias)
        self.w_v = nn.Linear(d_model, d_model, bias=bias)
        self.w_o = nn.Linear(d_model, d_model, bias=bias)
        self.attend = ScaledDotProductAttention(all_masked=all_masked)

    def split_heads(self, x):
        """``(..., n, h*d_k) -> (..., h, n, d_k)``: view as ``(n, h, d_k)``, then swap."""
        return x.view(*x.shape[:-1], self.h, self.d_k).transpose(-3, -2)

    def merge_heads(self, x):
        """``(..., h, n, d_k) -> (..., n, h*d_k)``: swap back, then concatenate."""
        x = x.transpose(-3, -2)                  # (..., n, h, d_k), not contiguous
        return x.reshape(*x.shape[:-2], self.h * self.d_k)

    def forward(self, x_query, x_source=None, mask=None, average_weights: bool = False):
        x_source = x_query if x_source is None else x_source
        for t, name in ((x_query, "x_query"), (x_source, "x_source")):
            if t.dim() < 2 or t.shape[-1] != self.d_model:
                raise ValueError(f"{name} of shape {tuple(t.shape)} must be (..., tokens, "
                                 f"d_model) with d_model = {self.d_model}")
        if mask is not None:
            mask = _shared_head_mask(mask, x_query, x_source)   # (..., 1, m, n)
        q = self.split_heads(self.w_q(x_query))    # (..., h, m, d_k)
        k = self.split_heads(self.w_k(x_source))   # (..., h, n, d_k)
        v = self.split_heads(self.w_v(x_source))   # (..., h, n, d_k)
        heads, weights = self.attend(q, k, v, mask)   # (..., h, m, d_k), (..., h, m, n)
        out = self.w_o(self.merge_heads(heads))       # (..., m, d_model)
        if average_weights:
            weights = weights.mean(dim=-3)            # (..., m, n)
        return out, weights

    @classmethod
    def from_torch(cls, mha: nn.MultiheadAttention, *,
                   all_masked: str = "raise") -> "MultiHeadAttention":
        """A copy of ``mha``'s weights: the same function, in the book's conventions.

        ``mha.in_proj_weight`` ``(3*d_model, d_model)`` stacks the weights of
        the query, key and value projections (each acting as ``x @ W.T``);
        ``mha.out_proj`` is ``w_o``. Only plain layers are supported (no
        ``kdim``/``vdim``, ``add_bias_kv`` or ``add_zero_attn``).
        """
        if not mha._qkv_same_embed_dim or mha.bias_k is not None or mha.add_zero_attn:
            raise ValueError("only nn.MultiheadAttention without kdim/vdim, add_bias_kv and "
                             "add_zero_attn can be copied")
        d = mha.embed_dim
        bias = mha.in_proj_bias is not None
        ours = cls(d, mha.num_heads, bias=bias, all_masked=all_masked)
        ours = ours.to(mha.in_proj_weight.dtype)
        with torch.no_grad():
            for i, lin in enumerate((ours.w_q, ours.w_k, ours.w_v)):
                lin.weight.copy_(mha.in_proj_weight[i * d:(i + 1) * d])
                if bias:
                    lin.bias.copy_(mha.in_proj_bias[i * d:(i + 1) * d])
            ours.w_o.weight.copy_(mha.out_proj.weight)
            if bias:
                ours.w_o.bias.copy_(mha.out_proj.bias)
        return ours

    def extra_repr(self) -> str:
        return f"d_model={self.d_model}, h={self.h}, d_k={self.d_k}"


class EncoderLayer(nn.Module):
    """One Transformer encoder layer, post-norm as in Vaswani et al. (2017).

    ``x -> LayerNorm(x + MultiHeadAttention(x))`` (self-attention and a
    residual connection), then ``x -> LayerNorm(x + FFN(x))`` with the
    position-wise feed-forward network ``FFN(x) = ReLU(x W_1 + b_1) W_2 +
    b_2`` of inner width ``d_ff``. ``dropout`` (default 0) is applied where
    ``nn.TransformerEncoderLayer`` applies it: to the attention output, inside
    the FFN and to its output. ``attention_bias=False`` drops the biases of
    the four attention projections, so that each head's weights are exactly
    ``softmax(X W_Q^i (X W_K^i)^T / sqrt(d_k))``.

    ``forward(x, mask=None)`` takes ``x`` ``(..., n, d_model)`` and a mask as
    in :class:`MultiHeadAttention`; returns ``(output, weights)`` of shapes
    ``(..., n, d_model)`` and ``(..., h, n, n)``.
    """

    def __init__(self, d_model: int, h: int, d_ff: int, *, dropout: float = 0.0,
                 attention_bias: bool = True, all_masked: str = "raise"):
        super().__init__()
        self.self_attn = MultiHeadAttention(d_model, h, bias=attention_bias, all_masked=all_masked)
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model)
        self.norm1 = nn.LayerNorm(d_model)
        self.norm2 = nn.LayerNorm(d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x, mask=None):
        attended, weights = self.self_attn(x, mask=mask)       # (..., n, d), (..., h, n, n)
        x = self.norm1(x + self.dropout(attended))              # residual, then LayerNorm
        inner = self.dropout(torch.relu(self.linear1(x)))       # (..., n, d_ff)
        x = self.norm2(x + self.dropout(self.linear2(inner)))  # (..., n, d)
        return x, weights

    @classmethod
    def from_torch(cls, layer: nn.TransformerEncoderLayer, *,
                   all_masked: str = "raise") -> "EncoderLayer":
        """A copy of a post-norm, ReLU ``nn.TransformerEncoderLayer``'s weights.

        The dropout probability is copied too; LayerNorm's eps must be the
        default 1e-5.
        """
        if layer.norm_first or layer.activation_relu_or_gelu != 1:
            raise ValueError("only post-norm (norm_first=False) layers with ReLU can be copied")
        attn = layer.self_attn
        if layer.norm1.eps != 1e-5 or layer.norm2.eps != 1e-5:
            raise ValueError("only layers with LayerNorm eps = 1e-5 can be copied")
        ours = cls(attn.embed_dim, attn.num_heads, layer.linear1.out_features,
                   dropout=layer.dropout.p, all_masked=all_masked)
        ours.self_attn = MultiHeadAttention.from_torch(attn, all_masked=all_masked)
        for name in ("linear1", "linear2", "norm1", "norm2"):
            getattr(ours, name).load_state_dict(getattr(layer, name).state_dict())
        return ours.to(attn.in_proj_weight.dtype)
