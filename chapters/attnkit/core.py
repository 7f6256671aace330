"""Attention in NumPy: pure functions with checked inputs.

Conventions (the book's, see the preface): vectors are rows. A set of ``n``
vectors of width ``d`` is an ``(n, d)`` array, queries attend over the rows of
the key matrix, and attention weights have shape ``(queries, keys)``.

dtype policy: float32 and float64 inputs keep their dtype (mixed inputs follow
NumPy's promotion, so float32 with float64 gives float64); integer and boolean
inputs are converted to float64. NaN and infinite inputs raise ``ValueError``.
"""

from __future__ import annotations

import numpy as np

from .rules import (
    apply_all_masked_policy,
    broadcast_batch,
    check_all_masked,
    check_axis,
    check_batch_ndim,
    check_floats,
    check_head_mask,
    check_heads_divide,
    check_mask_dtype,
    check_mask_fits,
    check_masks_combine,
    check_ndim,
    check_norm_input,
    check_qkv_shapes,
    check_tokens,
    optional_eps,
    positive_finite,
    positive_int,
)

__all__ = ["as_float_array", "softmax", "softmax_matrix_form", "attention"]


def as_float_array(x, name: str) -> np.ndarray:
    """Return ``x`` as a float32/float64 array, refusing NaN, inf and non-numbers.

    An array subclass is kept (a traced array, :mod:`attnkit.trace`, so that what is built on
    this function is traced inside), except those whose arithmetic differs from an array's:
    ``np.matrix`` (``*`` is a matrix product) and masked arrays (masked entries drop out)."""
    arr = np.asanyarray(x)
    if isinstance(arr, (np.matrix, np.ma.MaskedArray)):
        arr = np.asarray(x)
    if arr.dtype.kind in "biu":
        arr = arr.astype(np.float64)
    is_float = arr.dtype in (np.float32, np.float64)
    values = arr.view(np.ndarray)  # the check of the values is no step of the computation
    check_floats(
        name,
        arr.shape,
        arr.dtype,
        is_float=is_float,
        finite=is_float and bool(np.all(np.isfinite(values))),
    )
    return arr


def softmax(logits, axis: int = -1) -> np.ndarray:
    """Numerically stable softmax along ``axis``.

    Subtracting the maximum along ``axis`` changes nothing mathematically
    (softmax is invariant to adding a constant) but keeps every exponent
    ``<= 0``, so ``exp`` cannot overflow and the largest term is exactly 1, so
    the denominator cannot underflow to 0.
    """
    x = as_float_array(logits, "logits")
    axis = check_axis("logits", x.shape, axis)
    e = np.moveaxis(x, axis, -1).copy()  # the softmax axis last, in a fresh array
    return np.moveaxis(_softmax_in_place(e), -1, axis)


def _softmax_in_place(e: np.ndarray, mask=None) -> np.ndarray:
    """Softmax along the last axis, overwriting ``e`` (which the caller owns) and returning it.

    Working in place matters for speed: every fresh large array costs page faults.
    Masked entries (``mask`` False) become -inf, so exp gives exactly 0; a row with
    nothing left stays all zero.
    """
    if mask is not None:
        e[~mask] = -np.inf
    row_max = e.max(axis=-1, keepdims=True)
    if mask is not None:
        row_max[~np.isfinite(row_max)] = 0  # empty rows: nothing to shift
    e -= row_max  # every exponent <= 0: no overflow
    # exp of a very negative number underflows to 0; that is the right answer.
    with np.errstate(under="ignore"):
        np.exp(e, out=e)
    total = e.sum(axis=-1, keepdims=True)
    if mask is not None:
        total[total == 0] = 1  # empty rows stay all zero
    e /= total
    return e


def softmax_matrix_form(logits, axis: int = 0) -> np.ndarray:
    """Softmax written as in article 000: ``exp(A) ⊙ reciprocal(1 · exp(A))``.

    ``1`` is a matrix of ones; multiplying by it sums the exponentials along
    ``axis`` and copies each sum to every position. The default ``axis=0``
    normalises columns, the article's column-vector convention; ``axis=-1``
    normalises rows, the book's. There is no max-subtraction, so large logits
    overflow and very negative ones underflow: a sum of exponentials that is
    infinite or below the dtype's smallest normal number raises
    ``FloatingPointError`` instead of returning NaN, zeros or infinities.
    """
    a = as_float_array(logits, "logits")
    axis = check_axis("logits", a.shape, axis)
    n = a.shape[axis]
    moved = np.moveaxis(a, axis, -1)  # the summed axis last, so `@ ones` sums it
    with np.errstate(over="ignore", invalid="ignore"):  # checked below, row by row
        e = np.exp(moved)
        sums = e @ np.ones((n, n), dtype=a.dtype)
    check_exp_sums(
        a.dtype,
        finite=bool(np.all(np.isfinite(sums))),
        # a sum below the smallest normal number has lost its digits (and 1/sum may be inf)
        normal=not np.any(sums < np.finfo(a.dtype).tiny),
        largest_logit=float(a.max()),
    )
    return np.moveaxis(e * np.reciprocal(sums), -1, axis)


def attention(queries, keys, values=None, *, temperature: float = 1.0):
    """Dot-product attention of one query or a matrix of queries.

    Shapes (row vectors):

    - ``queries``: ``(d,)`` for one query, or ``(m, d)`` for ``m`` queries
    - ``keys``: ``(n, d)``, one key per row
    - ``values``: ``(n, d_v)``; defaults to ``keys`` (chapter 1's ``H`` is both)

    Scores are ``keys @ q / temperature``; weights are their softmax over the
    ``n`` keys; the output is the weighted sum of the value rows.

    Returns ``(output, weights)`` with shapes ``(d_v,)`` and ``(n,)`` for one
    query, ``(m, d_v)`` and ``(m, n)`` for ``m`` queries.
    """
    q = as_float_array(queries, "queries")
    k = as_float_array(keys, "keys")
    v = k if values is None else as_float_array(values, "values")
    check_attention_shapes(q.shape, k.shape, v.shape)  # one query is a (1, d) batch
    temperature = positive_finite(temperature, "temperature")
    scores = (q @ k.T) / temperature  # (n,) or (m, n)
    weights = softmax(scores, axis=-1)
    return weights @ v, weights


# --- Masks and masked attention (chapters 2 and 3) ---------------------------
#
# Mask convention, used everywhere in attnkit: a mask is a BOOLEAN array in
# which True means "this query may attend to this key" (it takes part in the
# softmax) and False means "this key is hidden from this query" (its weight is
# exactly 0). This is the convention of torch.nn.functional.
# scaled_dot_product_attention's boolean ``attn_mask``. (nn.MultiheadAttention
# uses the opposite one: there, True means "masked out".) Masks are indexed
# like the weights: rows are queries, columns are keys, and they broadcast, so
# a ``(1, n)`` mask hides the same keys from every query.
#
# A row whose mask is all False leaves a query with no key to attend to: the
# softmax over an empty set is 0/0. With ``all_masked="raise"`` (the default)
# such rows raise ValueError naming them; with ``all_masked="zero"`` their
# weights are all 0 and their output is the zero vector, which is what torch's
# F.scaled_dot_product_attention returns. NaN is never returned.

__all__ += [
    "causal_mask",
    "padding_mask",
    "combine_masks",
    "masked_softmax",
    "scaled_dot_product_attention",
    "self_attention",
]


def _as_mask(mask, name: str = "mask") -> np.ndarray:
    m = np.asarray(mask)
    check_mask_dtype(name, m.dtype, is_bool=m.dtype == np.bool_)
    return m


def causal_mask(n: int) -> np.ndarray:
    """The decoder's causal mask: ``(n, n)`` booleans, True where key ``j <= i``.

    Row ``i`` (the query at position ``i``) may attend to positions ``0..i``,
    itself included, and never to a later position. The diagonal is True, so
    no row is ever all False.
    """
    n = positive_int(n, "n")
    return np.tril(np.ones((n, n), dtype=bool))


def padding_mask(lengths, n: int) -> np.ndarray:
    """A key-padding mask for a batch of sequences padded on the right to length ``n``.

    ``lengths`` holds the number of real tokens of each sequence, shape
    ``(b,)``. Returns booleans of shape ``(b, 1, n)``: entry ``[s, 0, j]`` is
    True when position ``j`` is a real token of sequence ``s`` (``j <
    lengths[s]``). The middle axis of size 1 broadcasts over the query rows, so
    the mask hides padded *keys* (columns) from every query; padded *queries*
    (rows) keep attending to the real tokens, and their outputs are simply
    ignored downstream.
    """
    n = positive_int(n, "n")
    lengths = np.asarray(lengths)
    check_lengths(lengths.shape, lengths.dtype, is_int=lengths.dtype.kind in "iu")
    check_lengths_fit(lengths.tolist(), n)
    return (np.arange(n) < lengths[:, None])[:, None, :]


def combine_masks(*masks) -> np.ndarray:
    """Combine masks: a key may be attended to only if EVERY mask allows it.

    The masks are broadcast against each other (e.g. a ``(n, n)`` causal mask
    and a ``(b, 1, n)`` padding mask give ``(b, n, n)``) and combined with
    logical AND. Shapes that do not broadcast raise ``ValueError`` naming them.
    """
    arrays = [_as_mask(m, f"mask {k}") for k, m in enumerate(masks)]
    check_masks_combine([a.shape for a in arrays])
    return np.logical_and.reduce(np.broadcast_arrays(*arrays))


def _mask_for(mask, scores_shape: tuple) -> np.ndarray:
    """``mask`` broadcast to ``scores_shape``, or ValueError naming both shapes."""
    m = _as_mask(mask)
    check_mask_fits(m.shape, scores_shape)
    return np.broadcast_to(m, scores_shape)


def masked_softmax(scores, mask=None, *, all_masked: str = "raise") -> np.ndarray:
    """Softmax along the last axis (one row per query) in which masked keys get weight 0.

    ``mask`` is boolean and broadcasts to ``scores.shape``; True = the key
    takes part, False = its weight is exactly 0 and the other weights of the
    row are renormalised to sum to 1 (the same as setting its score to -inf).
    Without a mask this is :func:`softmax` over the last axis.

    A row with no True entry: ``all_masked="raise"`` (default) raises
    ``ValueError`` naming the row(s); ``all_masked="zero"`` returns a row of
    zeros (it sums to 0, not 1). The dtype (float32/float64) is kept.
    """
    x = as_float_array(scores, "scores")
    check_axis("scores", x.shape, -1)
    return _masked_softmax_in_place(x.copy(), mask, all_masked)


def _masked_softmax_in_place(x: np.ndarray, mask, all_masked: str) -> np.ndarray:
    """:func:`masked_softmax` of finite scores ``x``, overwriting ``x`` (the caller owns it)."""
    check_all_masked(all_masked)
    if mask is None:
        return _softmax_in_place(x)
    m = _mask_for(mask, x.shape)
    empty = ~m.any(axis=-1)  # (...,): rows with no key left
    if np.any(empty):
        apply_all_masked_policy(np.argwhere(empty).tolist(), all_masked)
    return _softmax_in_place(x, m)


def scaled_dot_product_attention(
    queries, keys, values, *, mask=None, scale=None, all_masked: str = "raise"
):
    """``softmax(Q K^T * scale) V`` with an optional boolean mask (True = may attend).

    Shapes (row vectors; leading batch axes ``...`` broadcast):

    - ``queries``: ``(..., m, d_k)``, one query per row
    - ``keys``: ``(..., n, d_k)``, one key per row
    - ``values``: ``(..., n, d_v)``, the value of key ``j`` in row ``j``
    - ``mask``: boolean, broadcasts to the weights' shape ``(..., m, n)``

    ``scale`` defaults to ``1 / sqrt(d_k)`` (the Transformer's); pass
    ``scale=1.0`` for plain dot-product attention. Returns ``(output,
    weights)`` of shapes ``(..., m, d_v)`` and ``(..., m, n)``. Rows that the
    mask empties completely follow ``all_masked`` (see :func:`masked_softmax`).
    An empty sequence (no query, no key) raises ``ValueError``, where
    ``F.scaled_dot_product_attention`` returns zeros for zero keys.
    """
    q = as_float_array(queries, "queries")
    k = as_float_array(keys, "keys")
    v = as_float_array(values, "values")
    check_qkv_shapes(q.shape, k.shape, v.shape)
    scale = 1.0 / np.sqrt(q.shape[-1]) if scale is None else positive_finite(scale, "scale")
    scores = q @ np.swapaxes(k, -1, -2)  # (..., m, n), a fresh array
    scores *= np.asarray(scale, dtype=scores.dtype)  # in place: see _softmax_in_place
    check_scores_finite(bool(np.all(np.isfinite(scores))))
    weights = _masked_softmax_in_place(scores, mask, all_masked)
    return weights @ v, weights


def self_attention(X, *, mask=None, scale: float = 1.0, all_masked: str = "raise"):
    """Parameter-free self-attention: every row of ``X`` attends to all rows of ``X``.

    ``X`` is ``(..., n, d)``; the queries, the keys and the values are all
    ``X`` itself, so the weights are ``softmax(X X^T * scale)`` (``(..., n,
    n)``) and the output is ``weights @ X`` (``(..., n, d)``). The default
    ``scale=1.0`` is chapter 2's plain dot product; ``mask`` and
    ``all_masked`` are as in :func:`scaled_dot_product_attention`.
    """
    x = as_float_array(X, "X")
    check_tokens("X", x.shape, "(n, d)")
    return scaled_dot_product_attention(x, x, x, mask=mask, scale=scale, all_masked=all_masked)


# --- Chapter 4: multi-head attention -------------------------------------------
#
# A layer with h heads projects its inputs with W_Q (d_model, h*d_k), W_K
# (d_source, h*d_k) and W_V (d_source, h*d_v). Columns i*d_k .. (i+1)*d_k - 1
# of W_Q are head i's own W_Q^i (and likewise for W_K and W_V), so one wide
# product computes every head's queries at once; split_heads then gives each
# head its slice. Each head attends on its own; merge_heads concatenates the
# heads' outputs side by side, (..., n, h*d_v), and W_O (h*d_v, d_out) mixes
# them. A mask is shared by every head and indexed like one head's weights.

__all__ += ["split_heads", "merge_heads", "multi_head_attention"]


def split_heads(X, h: int) -> np.ndarray:
    """Cut the last axis of ``X`` into ``h`` heads: ``(..., n, h*d_k) -> (..., h, n, d_k)``.

    Head ``i`` receives the consecutive columns ``i*d_k .. (i+1)*d_k - 1`` of
    every token. This is PyTorch's ``x.view(b, n, h, d_k).transpose(1, 2)``:
    reshape the last axis into ``(h, d_k)``, then move the head axis in front
    of the token axis. (Reshaping straight to ``(b, h, n, d_k)`` would give a
    head whole rows of several tokens instead.) The width must be divisible by
    ``h``; otherwise ``ValueError`` names the shape.
    """
    x = as_float_array(X, "X")
    h = positive_int(h, "h")
    check_tokens("X", x.shape, "(n, d_model)")
    width = x.shape[-1]
    check_heads_divide(f"X of shape {x.shape}", width, h)
    heads = x.reshape(*x.shape[:-1], h, width // h)  # (..., n, h, d_k)
    return np.swapaxes(heads, -3, -2)  # (..., h, n, d_k)


def merge_heads(X) -> np.ndarray:
    """Concatenate the heads side by side: ``(..., h, n, d_v) -> (..., n, h*d_v)``.

    The inverse of :func:`split_heads`: token ``t``'s row of the result is
    ``[head 0's row t | head 1's row t | ... ]``, article 000's
    ``Concat(head_1, ..., head_h)``.
    """
    x = as_float_array(X, "X")
    check_batch_ndim("X", x.shape, "(h, n, d_v)", 3)
    tokens_first = np.swapaxes(x, -3, -2)  # (..., n, h, d_v)
    return tokens_first.reshape(*tokens_first.shape[:-2], -1)


def multi_head_attention(
    X_query, X_source, W_Q, W_K, W_V, W_O, h: int, *, mask=None, all_masked: str = "raise"
):
    """Multi-head attention: ``Concat(head_1, ..., head_h) W_O``.

    ``head_i = softmax(Q_i K_i^T / sqrt(d_k)) V_i`` with ``Q_i = X_query
    W_Q^i``, ``K_i = X_source W_K^i``, ``V_i = X_source W_V^i``, where
    ``W_Q^i`` is columns ``i*d_k .. (i+1)*d_k - 1`` of ``W_Q``. Shapes:

    - ``X_query``: ``(..., m, d_model)``; ``X_source``: ``(..., n, d_source)``
      (pass ``X_query`` again for self-attention)
    - ``W_Q``: ``(d_model, h*d_k)``; ``W_K``: ``(d_source, h*d_k)``;
      ``W_V``: ``(d_source, h*d_v)``; ``W_O``: ``(h*d_v, d_out)``
    - ``mask``: boolean, True = may attend, broadcasting to ``(..., m, n)``
      (one head's weights); every head uses the same mask. A
      :func:`padding_mask` ``(b, 1, n)`` or a :func:`causal_mask` fits.

    Returns ``(output, weights)`` of shapes ``(..., m, d_out)`` and ``(...,
    h, m, n)`` (one weight matrix per head). Rows the mask empties follow
    ``all_masked`` as in :func:`masked_softmax`. Shape mismatches raise
    ``ValueError`` naming the shapes.
    """
    h = positive_int(h, "h")
    xq, xs = as_float_array(X_query, "X_query"), as_float_array(X_source, "X_source")
    wq, wk = as_float_array(W_Q, "W_Q"), as_float_array(W_K, "W_K")
    wv, wo = as_float_array(W_V, "W_V"), as_float_array(W_O, "W_O")
    for arr, name in ((xq, "X_query"), (xs, "X_source")):
        check_tokens(name, arr.shape, "(tokens, width)")
    check_projections(xq.shape, xs.shape, wq.shape, wk.shape, wv.shape, wo.shape, h)
    broadcast_batch({"X_query": xq.shape, "X_source": xs.shape})
    q = split_heads(xq @ wq, h)  # (..., h, m, d_k)
    k = split_heads(xs @ wk, h)  # (..., h, n, d_k)
    v = split_heads(xs @ wv, h)  # (..., h, n, d_v)
    if mask is not None:
        mask = _as_mask(mask)
        check_head_mask(mask.shape, ("X_query", xq.shape), ("X_source", xs.shape))
        mask = mask.reshape(mask.shape[:-2] + (1,) + mask.shape[-2:])  # (..., 1, m, n): every head
    heads, weights = scaled_dot_product_attention(q, k, v, mask=mask, all_masked=all_masked)
    return merge_heads(heads) @ wo, weights  # (..., m, d_out), (..., h, m, n)


# --- Chapter 4: RMSNorm, the normalisation of current language models --------------------------
#
# LayerNorm (nn.LayerNorm) subtracts each row's mean and divides by its standard deviation;
# RMSNorm (Zhang and Sennrich, 2019) only divides by the root mean square. Pre-norm layers of
# current models normalise every sub-layer's input with it, and QK-norm normalises each head's
# queries and keys with it (attnkit.modules.RMSNorm and MultiHeadAttention(qk_norm=True)).

__all__ += ["rms_norm"]


def rms_norm(x, weight=None, *, eps=None) -> np.ndarray:
    """RMSNorm along the last axis: ``x / sqrt(mean(x**2) + eps) * weight``.

    ``x`` is ``(..., d)``; ``weight`` (the learned gain, ``(d,)``) defaults to ones; ``eps``
    defaults to the machine epsilon of ``x``'s dtype, as in ``torch.nn.functional.rms_norm``.
    Unlike LayerNorm nothing is subtracted: a row keeps its mean, and only its root mean
    square is set to 1 (with ``eps`` = 0 and unit gains).

    Each row is first divided by ``s = max(max|x|, sqrt(eps))``, which changes nothing on
    paper (``x/s / sqrt(mean((x/s)**2) + eps/s**2)`` is the same number) but keeps every
    square at most 1, so that ``x**2`` cannot overflow, as subtracting the maximum keeps
    :func:`softmax` from overflowing. The dtype (float32/float64) is kept.
    """
    a = as_float_array(x, "x")
    check_norm_input("x", a.shape)
    eps = optional_eps(eps)
    eps = float(np.finfo(a.dtype).eps) if eps is None else eps
    scale = np.maximum(np.abs(a).max(axis=-1, keepdims=True), np.sqrt(eps)).astype(a.dtype)
    scale[scale == 0] = 1  # a zero row whose sqrt(eps) underflowed in the dtype: it stays 0
    y = a / scale  # (..., d), every entry in [-1, 1]
    with np.errstate(under="ignore"):  # eps / s**2 may underflow to 0: the right answer
        root = np.sqrt(np.mean(y * y, axis=-1, keepdims=True) + eps / scale / scale)
    root[root == 0] = 1  # only a zero row can get here: 0 / 1, not 0 / 0
    out = y / root
    if weight is None:
        return out
    w = as_float_array(weight, "weight")
    check_norm_weight(w.shape, a.shape)
    return out * w


# --- Chapter 5: positional encoding ---------------------------------------------

__all__ += ["sinusoidal_positional_encoding"]


def sinusoidal_positional_encoding(n: int, d: int) -> np.ndarray:
    """The Transformer's sinusoidal positional encoding, shape ``(n, d)``.

    Row ``p`` encodes position ``p``: ``PE[p, 2i] = sin(p / 10000^(2i/d))`` and
    ``PE[p, 2i+1] = cos(p / 10000^(2i/d))``. For odd ``d`` the last column is a
    sine (there are ``ceil(d/2)`` sine and ``floor(d/2)`` cosine columns).
    """
    n, d = positive_int(n, "n"), positive_int(d, "d")
    positions = np.arange(n)[:, None]  # (n, 1)
    pair = np.arange(d) // 2  # (d,): 0, 0, 1, 1, 2, ...
    angles = positions / 10000.0 ** (2 * pair / d)  # (n, d)
    return np.where(np.arange(d) % 2 == 0, np.sin(angles), np.cos(angles))


# --- Chapter 7: attention at scale -----------------------------------------------
#
# A sliding window limits each query to the last `window` tokens, so a layer costs
# n*window scores instead of n^2. Grouped-query attention lets h query heads share
# g <= h key-value heads: head i reads group i // (h/g), the layout of
# F.scaled_dot_product_attention(..., enable_gqa=True). g = h is multi-head attention,
# g = 1 multi-query attention.

__all__ += ["sliding_window_mask", "grouped_query_attention"]


def sliding_window_mask(n: int, window: int) -> np.ndarray:
    """A causal band: ``(n, n)`` booleans, True where ``i - window < j <= i``.

    Query ``i`` may attend to itself and the ``window - 1`` tokens before it, so
    no row holds more than ``window`` True entries. ``window >= n`` gives
    :func:`causal_mask`.
    """
    n, window = positive_int(n, "n"), positive_int(window, "window")
    offset = np.arange(n)[:, None] - np.arange(n)[None, :]  # (n, n): i - j
    return (offset >= 0) & (offset < window)


def grouped_query_attention(
    queries, keys, values, *, mask=None, scale=None, all_masked: str = "raise"
):
    """Scaled dot-product attention in which groups of query heads share a key-value head.

    Shapes (leading batch axes ``...`` broadcast):

    - ``queries``: ``(..., h, m, d_k)``, ``h`` query heads
    - ``keys``: ``(..., g, n, d_k)`` and ``values``: ``(..., g, n, d_v)``, ``g``
      key-value heads; ``h`` must be a multiple of ``g``
    - ``mask``: boolean, True = may attend, broadcasting to one head's weights
      ``(..., m, n)``; every head uses it

    Query head ``i`` attends with key-value head ``i // (h // g)``: consecutive
    query heads form a group, as in ``F.scaled_dot_product_attention(...,
    enable_gqa=True)``. The keys and values are broadcast to the group, never
    copied. Returns ``(output, weights)`` of shapes ``(..., h, m, d_v)`` and
    ``(..., h, m, n)``; ``scale`` and ``all_masked`` are as in
    :func:`scaled_dot_product_attention`.
    """
    q = as_float_array(queries, "queries")
    k = as_float_array(keys, "keys")
    v = as_float_array(values, "values")
    batch = check_grouped_qkv_shapes(q.shape, k.shape, v.shape)
    h, g = q.shape[-3], k.shape[-3]
    m, n = q.shape[-2], k.shape[-2]
    grouped_q = q.reshape(q.shape[:-3] + (g, h // g) + q.shape[-2:])  # (..., g, h/g, m, d_k)
    shared_k, shared_v = k[..., None, :, :], v[..., None, :, :]  # (..., g, 1, n, d)
    if mask is not None:
        mask = _as_mask(mask)
        check_mask_fits(mask.shape, batch + (m, n), "one head's weights (every head uses the mask)")
        mask = mask.reshape(mask.shape[:-2] + (1, 1) + mask.shape[-2:])  # (..., 1, 1, m, n)
    out, weights = scaled_dot_product_attention(
        grouped_q, shared_k, shared_v, mask=mask, scale=scale, all_masked=all_masked
    )
    return (
        out.reshape(out.shape[:-4] + (h, m, v.shape[-1])),  # (..., h, m, d_v)
        weights.reshape(weights.shape[:-4] + (h, m, n)),
    )  # (..., h, m, n)


# --- input rules only this module applies


def check_lengths(shape, dtype, *, is_int: bool) -> None:
    """A padding mask's ``lengths``: ValueError unless a 1-D array of integers (``is_int``)."""
    shape = tuple(shape)
    if len(shape) != 1 or not is_int:
        raise ValueError(
            f"lengths must be a 1-D array of integers, got shape {shape} and dtype {dtype}"
        )


def check_lengths_fit(values: list, n: int) -> None:
    """ValueError unless every sequence length in ``values`` lies in ``1 .. n``."""
    if any(length < 1 or length > n for length in values):
        raise ValueError(f"every length must lie between 1 and n = {n}, got {values}")


def check_attention_shapes(q_shape, k_shape, v_shape) -> None:
    """Chapter 1's attention, without batch axes: ValueError naming the shapes unless one query
    ``(d,)`` or queries ``(m, d)``, keys ``(n, d)`` and values ``(n, d_v)`` fit together."""
    check_ndim("queries", q_shape, "(d,) or (m, d)", (1, 2))
    check_ndim("keys", k_shape, "(n, d)", (2,))
    check_ndim("values", v_shape, "(n, d_v)", (2,))
    q_shape = tuple(q_shape)
    check_qkv_shapes(q_shape if len(q_shape) == 2 else (1,) + q_shape, k_shape, v_shape)


def check_grouped_qkv_shapes(q_shape, k_shape, v_shape) -> tuple:
    """ValueError naming the shapes unless queries ``(..., h, m, d_k)``, keys ``(..., g, n,
    d_k)`` and values ``(..., g, n, d_v)`` fit together, ``h`` a multiple of ``g``; returns
    their broadcast batch shape (without the head axis)."""
    q_shape, k_shape, v_shape = tuple(q_shape), tuple(k_shape), tuple(v_shape)
    for shape, name, form in (
        (q_shape, "queries", "(h, m, d_k)"),
        (k_shape, "keys", "(g, n, d_k)"),
        (v_shape, "values", "(g, n, d_v)"),
    ):
        check_batch_ndim(name, shape, form, 3)
    h, g = q_shape[-3], k_shape[-3]
    if v_shape[-3] != g:
        raise ValueError(
            f"keys of shape {k_shape} and values of shape {v_shape} must have the "
            f"same number of key-value heads g ({g} != {v_shape[-3]})"
        )
    if g == 0 or h % g:
        raise ValueError(
            f"queries of shape {q_shape} have h = {h} heads and keys of shape "
            f"{k_shape} g = {g}: h must be a multiple of g, so that each key-value "
            "head serves the same number of query heads"
        )
    return check_qkv_shapes(
        q_shape[:-3] + q_shape[-2:], k_shape[:-3] + k_shape[-2:], v_shape[:-3] + v_shape[-2:]
    )


def check_projections(query_shape, source_shape, W_Q, W_K, W_V, W_O, h: int) -> None:
    """ValueError naming the shapes unless the matrices of a multi-head layer with ``h`` heads
    fit its inputs ``X_query`` ``(..., m, d_model)`` and ``X_source`` ``(..., n, d_source)``:
    ``W_Q`` ``(d_model, h*d_k)``, ``W_K`` ``(d_source, h*d_k)``, ``W_V`` ``(d_source, h*d_v)``,
    ``W_O`` ``(h*d_v, d_out)``. ``W_Q`` .. ``W_O`` are the matrices' shapes."""
    query_shape, source_shape = tuple(query_shape), tuple(source_shape)
    W_Q, W_K, W_V, W_O = tuple(W_Q), tuple(W_K), tuple(W_V), tuple(W_O)
    for shape, name in ((W_Q, "W_Q"), (W_K, "W_K"), (W_V, "W_V"), (W_O, "W_O")):
        if len(shape) != 2:
            raise ValueError(f"{name} must be a matrix, got shape {shape}")
    if W_Q[0] != query_shape[-1]:
        raise ValueError(
            f"W_Q of shape {W_Q} must have d_model = {query_shape[-1]} rows to "
            f"project X_query of shape {query_shape}"
        )
    for shape, name in ((W_K, "W_K"), (W_V, "W_V")):
        if shape[0] != source_shape[-1]:
            raise ValueError(
                f"{name} of shape {shape} must have {source_shape[-1]} rows to "
                f"project X_source of shape {source_shape}"
            )
    if W_K[1] != W_Q[1]:
        raise ValueError(
            f"W_Q of shape {W_Q} and W_K of shape {W_K} must have the "
            "same number of columns h*d_k: queries and keys are compared"
        )
    for shape, name in ((W_Q, "W_Q"), (W_V, "W_V")):
        check_heads_divide(f"{name} of shape {shape} (its columns)", shape[1], h)
    if W_O[0] != W_V[1]:
        raise ValueError(
            f"W_O of shape {W_O} must have h*d_v = {W_V[1]} rows, one per column of "
            f"the concatenated heads (W_V has shape {W_V}); "
            f"W_O is (h*d_v, d_out)"
        )


def check_exp_sums(dtype, *, finite: bool, normal: bool, largest_logit: float) -> None:
    """The sums of exponentials of chapter 1's matrix form, which subtracts no maximum:
    FloatingPointError unless every sum is ``finite`` and, ``normal``, at least the smallest
    normal number of ``dtype`` (below it the sum has lost its digits, and 1/sum may be inf)."""
    dtype = np.dtype(dtype)
    finfo = np.finfo(dtype)
    if not finite:
        raise FloatingPointError(
            f"exp overflowed: a sum of exp(logits) exceeds the largest {dtype}, "
            f"{finfo.max:.4g} (the largest logit is {largest_logit:.6g}; exp alone overflows "
            f"above log(max {dtype}) = {np.log(finfo.max):.2f}); use softmax(), which subtracts "
            "the maximum"
        )
    if not normal:
        raise FloatingPointError(
            "every exp() along the axis underflowed to 0 or to a subnormal number, so the sum "
            "has lost its precision (and 0/0 would be NaN); use softmax(), which subtracts "
            "the maximum"
        )


def check_scores_finite(finite: bool) -> None:
    """ValueError unless the scores ``Q K^T * scale`` of finite queries and keys are ``finite``."""
    if not finite:
        raise ValueError("the scores overflowed to infinity: the queries and keys are too large")


def check_norm_weight(weight_shape, x_shape) -> None:
    """ValueError naming both shapes unless the gain has one entry per entry of ``x``'s last
    axis, ``(d,)``."""
    weight_shape, x_shape = tuple(weight_shape), tuple(x_shape)
    if weight_shape != x_shape[-1:]:
        raise ValueError(
            f"weight of shape {weight_shape} does not fit x of shape {x_shape}: give one gain "
            f"per entry of the last axis, shape ({x_shape[-1]},)"
        )
