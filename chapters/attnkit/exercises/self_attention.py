"""Checks for the coding exercises of ``chapters/self-attention.md``."""

import numpy as np

from ..core import causal_mask, masked_softmax, softmax
from .harness import Failed, Raised, as_array, call, check, close, near, shown

__all__ = ["check_causal_mask", "check_masked_self_attention"]


@check
def check_causal_mask(fn):
    """Check ``fn(n)``: the ``(n, n)`` boolean causal mask, True = may attend (key ``j <= i``)."""
    for n in (4, 1, 6):
        expected = causal_mask(n)
        got = np.asarray(call(fn, n, called_with=f"n = {n}"))
        if got.shape != (n, n):
            raise Failed(f"for n = {n} you returned shape {got.shape}; the mask has one row "
                         f"per query and one column per key, shape ({n}, {n})")
        if got.dtype != np.bool_:
            raise Failed(f"you returned dtype {got.dtype}; return booleans (True = may "
                         "attend), for example build from np.ones((n, n), dtype=bool)")
        if np.array_equal(got, expected):
            continue
        if np.array_equal(got, ~expected):
            raise Failed("you marked the future keys True and the allowed ones False; in this "
                         "book (and in torch's F.scaled_dot_product_attention) True means "
                         "'may attend': flip the mask")
        if np.array_equal(got, expected.T):
            raise Failed("row i allows the keys j >= i (the future) instead of j <= i (the "
                         "past): you built the transpose; use np.tril, not np.triu")
        if np.array_equal(got, np.tril(expected, k=-1)):
            raise Failed("the diagonal is False: a token may attend to itself, and without "
                         "the diagonal row 0 would allow no key at all")
        if got.all():
            raise Failed("every key is allowed: row i must hide the keys j > i")
        bad = np.argwhere(got != expected)[0]
        raise Failed(f"for n = {n}, entry [{bad[0]}, {bad[1]}] should be "
                     f"{bool(expected[tuple(bad)])}: query {bad[0]} may attend exactly to the "
                     f"keys 0..{bad[0]}")
    return "correct: row i allows the keys 0..i, itself included, and hides every later key"


@check
def check_masked_self_attention(fn):
    """Check ``fn(X, mask) -> (output, weights)``: ``softmax(X X^T)`` with masked keys at 0.

    ``X`` is ``(n, d)`` and ``mask`` is an ``(n, n)`` boolean array, True = may
    attend; no row of the mask is all False. No scaling (chapter 2).
    """
    rng = np.random.default_rng(2)
    X = rng.normal(size=(4, 3))  # n = 4 tokens, d = 3: n != d exposes transposes
    mask = causal_mask(4)
    mask[3, 1] = False           # hide one past key too: a padding-like gap
    scores = X @ X.T             # (4, 4)
    expected_w = masked_softmax(scores, mask)
    expected_out = expected_w @ X
    try:
        result = call(fn, X, mask)
    except Raised as raised:
        if "NaN or infinite" not in raised.error:
            raise
        raise Failed(f"{raised}. attnkit's softmax refuses -inf scores on purpose; write "
                     "the softmax out with np.exp (np.exp(-np.inf) is 0), after "
                     "subtracting each row's maximum") from None
    if not (isinstance(result, tuple) and len(result) == 2):
        raise Failed("return a pair (output, weights)")
    out = as_array(result[0], "output")
    w = as_array(result[1], "weights")
    if w.shape != (4, 4):
        raise Failed(f"weights have shape {w.shape}; with X of shape (n, d) = (4, 3) they are "
                     "(n, n) = (4, 4), one row per query and one column per key")
    if not np.all(np.isfinite(w)):
        raise Failed("the weights contain NaN or inf: a row whose scores are all -inf gives "
                     "0/0; did you hide the allowed keys instead of the others?")
    if close(w, softmax(scores)):
        raise Failed("the weights ignore the mask: set the scores of masked keys to -np.inf "
                     "(np.where(mask, scores, -np.inf)) before the softmax")
    if close(w, softmax(scores) * mask):
        raise Failed(f"the rows sum to {shown(1.0, w.sum(axis=-1))[1]}, not 1: you zeroed the "
                     "masked weights after the softmax without renormalising; mask the "
                     "scores with -inf before the softmax instead")
    if close(w, softmax(np.where(mask, scores, 0.0))):
        raise Failed("masked keys still get weight: a score of 0 is not 'no weight', because "
                     "exp(0) = 1. Give masked keys the score -np.inf, whose exp is 0")
    if not close(w[~mask], 0) and close(w[mask], 0):
        raise Failed("your weights are non-zero exactly where the mask is False: True means "
                     "'may attend', so keep the True entries and hide the False ones")
    if close(w, masked_softmax(scores, mask.T)) or close(w, expected_w.T):
        raise Failed("your weights are transposed: row i belongs to query i and column j to "
                     "key j, and each row must sum to 1")
    if close(w, masked_softmax(scores / np.sqrt(3), mask)):
        raise Failed("you divided the scores by sqrt(d): this chapter's self-attention uses "
                     "the plain dot products X @ X.T (scaling comes in the next chapter)")
    if not close(w[~mask], 0):
        i, j = np.argwhere(~mask & ~near(w, 0))[0]
        raise Failed(f"query {i} gives weight {shown(0.0, w[i, j])[1]} to key {j}, which its mask "
                     "hides; masked keys must get weight exactly 0")
    if not close(w.sum(axis=-1), 1.0):
        raise Failed(f"the rows of the weights sum to {shown(1.0, w.sum(axis=-1))[1]}, not 1")
    if not close(w, expected_w):
        raise Failed("the weights should be {}, you returned {}".format(*shown(expected_w, w)))
    if out.shape != X.shape:
        raise Failed(f"the output has shape {out.shape}; it holds one new vector per token, "
                     f"shape (n, d) = {X.shape}: output = weights @ X")
    if not close(out, expected_out):
        raise Failed("the weights are right but the output is not weights @ X")
    return ("correct: masked keys get weight 0, every row sums to 1, and the output is "
            "weights @ X")
