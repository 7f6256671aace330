"""Checks for the coding exercises of ``chapters/qkv-attention.md``."""

import numpy as np

from ..core import softmax
from .harness import Failed, as_array, call, check, close, shown

__all__ = ["check_scaled_dot_product_attention"]


@check
def check_scaled_dot_product_attention(fn):
    """Check ``fn(Q, K, V) -> (output, weights)``: ``softmax(Q K^T / sqrt(d_k)) V``."""
    rng = np.random.default_rng(3)
    # m = 3 queries, n = 5 keys, d_k = 9, d_v = 4: every size differs, so a
    # wrong transpose or a wrong scale (sqrt(d_v) = 2, d_k = 9, sqrt(n) ...) shows
    Q, K, V = rng.normal(size=(3, 9)), rng.normal(size=(5, 9)), rng.normal(size=(5, 4))
    scores = Q @ K.T  # (3, 5)
    expected_w = softmax(scores / 3.0)
    expected_out = expected_w @ V
    result = call(fn, Q, K, V)
    if not (isinstance(result, tuple) and len(result) == 2):
        raise Failed("return a pair (output, weights)")
    out = as_array(result[0], "output")
    w = as_array(result[1], "weights")
    if w.shape == (5, 3):
        raise Failed("the weights have shape (n, m) = (5, 3): compute Q @ K.T (one row per "
                     "query), not K @ Q.T")
    if w.shape != (3, 5):
        raise Failed(f"the weights have shape {w.shape}; with Q (m, d_k) = (3, 9) and K "
                     "(n, d_k) = (5, 9) they are (m, n) = (3, 5)")
    if close(w, softmax(scores)):
        raise Failed("the weights are softmax(Q K^T) without scaling: divide the scores by "
                     "sqrt(d_k) = 3 before the softmax")
    wrong_scales = {"d_k = 9 instead of sqrt(d_k) = 3": 9.0,
                    "sqrt(d_v) = 2, but the scale comes from d_k, the width of q and k": 2.0,
                    "sqrt(n) = sqrt(5), but the scale comes from d_k, not the number of "
                    "keys": np.sqrt(5.0)}
    for what, c in wrong_scales.items():
        if close(w, softmax(scores / c)):
            raise Failed(f"you divided the scores by {what}")
    if close(w, softmax(scores / 3.0, axis=0)):
        raise Failed("each column sums to 1: apply the softmax along the last axis, so that "
                     "each query's row of weights sums to 1")
    if not close(w.sum(axis=-1), 1.0) or np.any(w < 0):
        raise Failed(f"the rows of the weights sum to {shown(1.0, w.sum(axis=-1))[1]}, not 1; "
                     "weights are non-negative and each row sums to 1")
    if not close(w, expected_w):
        raise Failed("the weights should be softmax(Q K^T / 3) = {}, you returned {}".format(
            *shown(expected_w, w)))
    if out.shape == (3, 9):
        raise Failed("the output has width d_k = 9: you averaged the keys; the output is "
                     "weights @ V, of shape (m, d_v) = (3, 4)")
    if out.shape != (3, 4):
        raise Failed(f"the output has shape {out.shape}; it is weights @ V, of shape "
                     "(m, d_v) = (3, 4)")
    if not close(out, expected_out):
        raise Failed("the weights are right but the output is not weights @ V")
    return "correct: softmax(Q K^T / sqrt(d_k)) along each row, then a weighted sum of V"
