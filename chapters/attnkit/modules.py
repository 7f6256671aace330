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

__all__ = ["ScaledDotProductAttention", "QKVAttention"]

_ALL_MASKED_CHOICES = ("raise", "zero")


def _check_shapes(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> None:
    for t, name, form in ((q, "queries", "(m, d_k)"), (k, "keys", "(n, d_k)"),
                          (v, "values", "(n, d_v)")):
        if t.dim() < 2:
            raise ValueError(f"{name} must have shape {form} (or a batch of them), "
                             f"got {tuple(t.shape)}")
    if q.shape[-1] != k.shape[-1]:
        raise ValueError(
            f"queries of shape {tuple(q.shape)} and keys of shape {tuple(k.shape)} must have "
            f"the same last dimension d_k ({q.shape[-1]} != {k.shape[-1]})"
        )
    if k.shape[-2] != v.shape[-2]:
        raise ValueError(
            f"keys of shape {tuple(k.shape)} and values of shape {tuple(v.shape)} must have "
            f"the same number of rows n ({k.shape[-2]} != {v.shape[-2]})"
        )


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
        _check_shapes(q, k, v)
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
        try:
            fits = torch.broadcast_shapes(mask.shape, scores.shape) == scores.shape
        except RuntimeError:
            fits = False
        if not fits:
            raise ValueError(
                f"mask of shape {tuple(mask.shape)} does not fit scores of shape "
                f"{tuple(scores.shape)} (queries on rows, keys on columns): it must broadcast "
                "to the scores' shape"
            )
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
