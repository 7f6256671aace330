"""Checks for the coding exercises of ``chapters/__SLUG__.md``."""

import numpy as np

from .harness import (
    Failed,
    as_array,
    call,
    check,
    close,
    dtypes,
    keeps_dtype,
    not_close,
    not_finite,
    random,
    wrong_shape,
)
from .wording import _

__all__ = ["check___MODULE__"]

# What computes the answer: the library's attention, off limits in the exercise.
_ATTENTION = ("attnkit.core.scaled_dot_product_attention", "attnkit.core.softmax")


def _attend(Q, K, V, *, scale=True):
    """The answer in float64, or (``scale=False``) the mistake of an unscaled score."""
    S = Q.astype(np.float64) @ K.astype(np.float64).T
    if scale:
        S = S / np.sqrt(Q.shape[-1])
    E = np.exp(S - S.max(axis=-1, keepdims=True))
    return E / E.sum(axis=-1, keepdims=True) @ V.astype(np.float64)


def _cases(dtype):
    """(Q, K, V): one query and one key, more keys than queries, and scores in the hundreds."""
    rng = random()
    sizes = [(1, 1, 1, 1), (3, 5, 4, 2), (6, 2, 16, 3)]
    cases = [
        tuple(rng.normal(size=shape) for shape in ((m, d_k), (n, d_k), (n, d_v)))
        for m, n, d_k, d_v in sizes
    ]
    Q, K, V = cases[1]
    cases.append((Q * 30.0, K * 30.0, V))  # a softmax that does not shift overflows
    return [tuple(a.astype(dtype) for a in case) for case in cases]


@check(forbids=_ATTENTION)
def check___MODULE__(fn):
    """Check ``fn(Q, K, V) -> (m, d_v)``: ``softmax(Q K^T / sqrt(d_k)) V``, row by row.

    ``Q`` is ``(m, d_k)``, ``K`` ``(n, d_k)``, ``V`` ``(n, d_v)``; the answer is a NumPy array
    in the inputs' dtype. The check tries one query and one key, more keys than queries and
    scores large enough to overflow an unshifted softmax, with ``attnkit.core``'s attention
    made unavailable.
    """
    for dtype in dtypes():
        for Q, K, V in _cases(dtype):
            where = _(
                "for Q and K of shape {qk_shape} and V of shape {v_shape} in {dtype}",
                qk_shape=(Q.shape, K.shape),
                v_shape=V.shape,
                dtype=np.dtype(dtype).name,
            )
            result = call(fn, Q, K, V)
            got = as_array(result, _("the output"))
            want = _attend(Q, K, V)
            if got.shape != want.shape:
                raise wrong_shape(where, _("the output"), want.shape, got.shape)
            keeps_dtype(result, dtype, _("the output"))
            if close(got, _attend(Q, K, V, scale=False)) and not close(got, want):
                raise Failed(
                    _(
                        "{where}, you did not scale the scores: divide them by sqrt(d_k)",
                        where=where,
                    )
                )
            if not np.all(np.isfinite(got)):
                raise not_finite(where, _("the output"))
            if not close(got, want):
                raise not_close(where, _("the output"), want, got)
    return _(
        "correct: softmax(Q K^T / sqrt(d_k)) along each row, then a weighted sum of V, "
        "for any sizes and large scores, float32 staying float32"
    )
