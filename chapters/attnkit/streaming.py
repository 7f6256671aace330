"""Attention that streams over the keys block by block: the online softmax.

``softmax(Q K^T * scale) V`` needs every score of a query before its first weight is
known, so the usual computation holds the whole ``(m, n)`` matrix of scores. Walking over
the keys in blocks instead, each query keeps three running quantities: the largest score
seen so far ``r``, the sum of ``exp(score - r)`` and the sum of ``exp(score - r)`` times
the values. When a block brings a larger score, the two sums are multiplied by
``exp(r_old - r_new)``, which turns every earlier term into what it would have been with
the new maximum. After the last block, dividing the two sums gives exactly the softmax
average, while no more than one ``(m, block_size)`` block of scores existed at a time.
This is the arithmetic inside FlashAttention (Dao et al., 2022).
"""

from __future__ import annotations

import numpy as np

from .core import as_float_array
from .rules import check_qkv_shapes, positive_finite, positive_int

__all__ = ["online_softmax_attention"]


def online_softmax_attention(
    queries, keys, values, *, block_size: int, causal: bool = False, scale=None
):
    """``softmax(Q K^T * scale) V``, computed over blocks of ``block_size`` keys at a time.

    Shapes (leading batch axes ``...`` broadcast): ``queries`` ``(..., m, d_k)``,
    ``keys`` ``(..., n, d_k)``, ``values`` ``(..., n, d_v)``. ``scale`` defaults to
    ``1 / sqrt(d_k)``. With ``causal=True`` (self-attention, ``m == n``) query ``i``
    attends to keys ``0 .. i`` only.

    Returns ``(output, logsumexp)`` of shapes ``(..., m, d_v)`` and ``(..., m)``:
    the output equals :func:`attnkit.core.scaled_dot_product_attention`'s, and
    ``logsumexp[i] = log(sum_j exp(s_ij))`` over query ``i``'s allowed scores, from
    which any block of weights can be recomputed as ``exp(S_block - logsumexp)``
    (what FlashAttention's backward pass does instead of storing the weights). The
    dtype of the inputs is kept. The weights themselves are never formed.
    """
    q = as_float_array(queries, "queries")
    k = as_float_array(keys, "keys")
    v = as_float_array(values, "values")
    batch = check_qkv_shapes(q.shape, k.shape, v.shape)
    block_size = positive_int(block_size, "block_size")
    m, n = q.shape[-2], k.shape[-2]
    if causal and m != n:
        raise ValueError(
            f"causal=True is self-attention: queries of shape {q.shape} and keys "
            f"of shape {k.shape} must have as many rows (m = {m}, n = {n})"
        )
    dtype = np.result_type(q, k, v)
    scale = 1.0 / np.sqrt(q.shape[-1]) if scale is None else positive_finite(scale, "scale")
    scale = np.asarray(scale, dtype=dtype)
    query_position = np.arange(m)[:, None]  # (m, 1)

    running_max = np.full(batch + (m, 1), -np.inf, dtype=dtype)  # r: largest score so far
    running_sum = np.zeros(batch + (m, 1), dtype=dtype)  # sum of exp(s - r)
    accumulator = np.zeros(batch + (m, v.shape[-1]), dtype=dtype)  # sum of exp(s - r) v
    for start in range(0, n, block_size):
        stop = min(start + block_size, n)
        with np.errstate(over="ignore"):  # checked just below
            scores = q @ np.swapaxes(k[..., start:stop, :], -1, -2)  # (..., m, B)
            scores *= scale
        if not np.all(np.isfinite(scores)):
            raise ValueError(
                "the scores overflowed to infinity: the queries and keys are too large"
            )
        if causal:
            scores = np.where(np.arange(start, stop) <= query_position, scores, -np.inf)
        # key 0 is in the first block and visible to every query, so new_max is finite
        new_max = np.maximum(running_max, scores.max(axis=-1, keepdims=True))
        rescale = np.exp(running_max - new_max)  # exp(r_old - r_new) <= 1; 0 at first
        weights = np.exp(scores - new_max)  # (..., m, B), every entry <= 1
        running_sum = rescale * running_sum + weights.sum(axis=-1, keepdims=True)
        accumulator = rescale * accumulator + weights @ v[..., start:stop, :]
        running_max = new_max
    output = accumulator / running_sum  # (..., m, d_v)
    logsumexp = (running_max + np.log(running_sum))[..., 0]
    return output, logsumexp
