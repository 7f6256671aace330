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

__all__ = ["as_float_array", "softmax", "softmax_matrix_form", "attention"]


def as_float_array(x, name: str) -> np.ndarray:
    """Return ``x`` as a float32/float64 array, refusing NaN, inf and non-numbers."""
    arr = np.asarray(x)
    if arr.dtype.kind in "biu":
        arr = arr.astype(np.float64)
    elif arr.dtype not in (np.float32, np.float64):
        raise TypeError(f"{name} must hold float32 or float64 numbers, got dtype {arr.dtype}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} contains NaN or infinite values; attention needs finite inputs")
    return arr


def _check_axis(arr: np.ndarray, axis: int, name: str) -> int:
    if arr.ndim == 0:
        raise ValueError(f"{name} must have at least one dimension, got a scalar")
    if not -arr.ndim <= axis < arr.ndim:
        raise ValueError(f"axis {axis} is out of range for {name} of shape {arr.shape}")
    if arr.shape[axis] == 0:
        raise ValueError(f"{name} of shape {arr.shape} is empty along axis {axis}")
    return axis % arr.ndim


def softmax(logits, axis: int = -1) -> np.ndarray:
    """Numerically stable softmax along ``axis``.

    Subtracting the maximum along ``axis`` changes nothing mathematically
    (softmax is invariant to adding a constant) but keeps every exponent
    ``<= 0``, so ``exp`` cannot overflow and the largest term is exactly 1, so
    the denominator cannot underflow to 0.
    """
    x = as_float_array(logits, "logits")
    axis = _check_axis(x, axis, "logits")
    shifted = x - x.max(axis=axis, keepdims=True)
    # exp of a very negative number underflows to 0; that is the right answer.
    with np.errstate(under="ignore"):
        e = np.exp(shifted)
    return e / e.sum(axis=axis, keepdims=True)


def softmax_matrix_form(logits, axis: int = 0) -> np.ndarray:
    """Softmax written as in article 000: ``exp(A) ⊙ reciprocal(1 · exp(A))``.

    ``1`` is a matrix of ones; multiplying by it sums the exponentials along
    ``axis`` and copies each sum to every position. The default ``axis=0``
    normalises columns, the article's column-vector convention; ``axis=-1``
    normalises rows, the book's. There is no max-subtraction, so large logits
    overflow and very negative ones underflow: both raise ``FloatingPointError``
    instead of returning NaN.
    """
    a = as_float_array(logits, "logits")
    axis = _check_axis(a, axis, "logits")
    n = a.shape[axis]
    moved = np.moveaxis(a, axis, -1)  # the summed axis last, so `@ ones` sums it
    with np.errstate(over="raise"):
        try:
            e = np.exp(moved)
        except FloatingPointError:
            limit = np.log(np.finfo(a.dtype).max)
            raise FloatingPointError(
                f"exp overflowed: the largest logit {a.max():.4g} exceeds "
                f"log(max {a.dtype}) = {limit:.2f}; use softmax(), which subtracts the maximum"
            ) from None
    sums = e @ np.ones((n, n), dtype=a.dtype)
    if np.any(sums == 0):
        raise FloatingPointError(
            "every exp() along the axis underflowed to 0, so the sum is 0 and 0/0 would be NaN; "
            "use softmax(), which subtracts the maximum"
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
    if q.ndim not in (1, 2):
        raise ValueError(f"queries must have shape (d,) or (m, d), got {q.shape}")
    if k.ndim != 2:
        raise ValueError(f"keys must have shape (n, d), got {k.shape}")
    if v.ndim != 2:
        raise ValueError(f"values must have shape (n, d_v), got {v.shape}")
    if q.shape[-1] != k.shape[-1]:
        raise ValueError(
            f"queries of shape {q.shape} and keys of shape {k.shape} must have the same "
            f"last dimension d ({q.shape[-1]} != {k.shape[-1]})"
        )
    if v.shape[0] != k.shape[0]:
        raise ValueError(
            f"keys of shape {k.shape} and values of shape {v.shape} must have the same "
            f"number of rows n ({k.shape[0]} != {v.shape[0]})"
        )
    if not (np.isfinite(temperature) and temperature > 0):
        raise ValueError(f"temperature must be a positive finite number, got {temperature}")
    scores = (q @ k.T) / temperature  # (n,) or (m, n)
    weights = softmax(scores, axis=-1)
    return weights @ v, weights
