"""Checks for the coding exercises of ``chapters/self-attention.md``."""

import numpy as np

from ..core import causal_mask, masked_softmax, softmax
from .harness import DTYPES, Failed, Raised, as_array, call, check, close, keeps_dtype, near, shown

__all__ = ["check_causal_mask", "check_masked_self_attention", "check_padding_mask"]


@check
def check_causal_mask(fn):
    """Check ``fn(n)``: the ``(n, n)`` boolean causal mask, True = may attend (key ``j <= i``)."""
    for n in (4, 1, 6, 2):
        expected = causal_mask(n)
        got = np.asarray(call(fn, n, called_with=f"n = {n}"))
        if got.shape != (n, n):
            raise Failed(
                f"for n = {n} you returned shape {got.shape}; the mask has one row "
                f"per query and one column per key, shape ({n}, {n})"
            )
        if got.dtype != np.bool_:
            raise Failed(
                f"you returned dtype {got.dtype}; return booleans (True = may "
                "attend), for example build from np.ones((n, n), dtype=bool)"
            )
        if np.array_equal(got, expected):
            continue
        if np.array_equal(got, ~expected):
            raise Failed(
                "you marked the future keys True and the allowed ones False; in this "
                "book (and in torch's F.scaled_dot_product_attention) True means "
                "'may attend': flip the mask"
            )
        if np.array_equal(got, expected.T):
            raise Failed(
                "row i allows the keys j >= i (the future) instead of j <= i (the "
                "past): you built the transpose; use np.tril, not np.triu"
            )
        if np.array_equal(got, np.tril(expected, k=-1)):
            raise Failed(
                "the diagonal is False: a token may attend to itself, and without "
                "the diagonal row 0 would allow no key at all"
            )
        if np.array_equal(got, np.tril(np.ones((n, n), dtype=bool), k=1)):
            raise Failed(
                "row i also allows key i + 1, the next token: keep the diagonal and "
                "below, np.tril with k=0"
            )
        if got.all():
            raise Failed("every key is allowed: row i must hide the keys j > i")
        bad = np.argwhere(got != expected)[0]
        raise Failed(
            f"for n = {n}, entry [{bad[0]}, {bad[1]}] should be "
            f"{bool(expected[tuple(bad)])}: query {bad[0]} may attend exactly to the "
            f"keys 0..{bad[0]}"
        )
    return "correct: row i allows the keys 0..i, itself included, and hides every later key"


def _masked_cases():
    """(X, mask, what) triples; every mask keeps a key in each row and none is symmetric."""
    rng = np.random.default_rng(2)
    gap = causal_mask(4)
    gap[3, 1] = False  # a causal mask with one past key hidden too
    padded = np.ones((5, 5), dtype=bool)
    padded[:, 3:] = False  # keys 3, 4 hidden: columns, not rows
    scattered = np.array(
        [
            [True, False, True],
            [False, False, True],  # query 1 may read key 2 only
            [True, True, False],
        ]
    )
    # scores X X^T = [[1000, 1000, 2000], [1000, 1002.5, 2000], [2000, 2000, 4000]], exact in
    # float32 too. Under the causal mask, np.exp overflows unless each row's maximum is
    # subtracted, and a row's allowed keys all underflow to 0 if the maximum is taken over the
    # masked keys too (2000 hides 1000 and 1002.5)
    large = np.array([[30.0, 10.0], [29.5, 11.5], [60.0, 20.0]])
    return [
        (rng.normal(size=(4, 3)), gap, "a causal mask with a gap"),  # n = 4, d = 3
        (rng.normal(size=(5, 2)), padded, "a mask hiding the keys 3 and 4"),
        (rng.normal(size=(3, 6)), scattered, "a scattered mask"),  # n < d
        (rng.normal(size=(1, 2)), np.ones((1, 1), dtype=bool), "one token"),
        (large, causal_mask(3), "large scores"),
    ]


def _masked_self_attention_of(fn, X, mask):
    try:
        with np.errstate(all="ignore"):  # NaN and overflow are reported below, in words
            return call(fn, X, mask)
    except Raised as raised:
        if "NaN or infinite" not in raised.error:
            raise
        raise Failed(
            f"{raised}. attnkit's softmax refuses -inf scores on purpose; write "
            "the softmax out with np.exp (np.exp(-np.inf) is 0), after "
            "subtracting each row's maximum"
        ) from None


def _wrong_masked_weights(w, X, mask, what, where):
    """Say what is wrong with weights ``w`` that are not the masked softmax of ``X X^T``."""
    scores = X @ X.T
    if not np.all(np.isfinite(w)):
        if what == "large scores":
            raise Failed(
                f"{where} the weights contain NaN or inf: np.exp(1000) overflows, and "
                "np.exp(1000 - 2000) underflows to 0. Give the masked keys -np.inf "
                "first, then subtract each row's maximum, which is then the largest "
                "score the row may attend to, before np.exp"
            )
        raise Failed(
            f"{where} the weights contain NaN or inf: a row whose scores are all -inf "
            "gives 0/0. Did you hide the allowed keys instead of the others, or use "
            "mask.T, which hides rows instead of columns?"
        )
    if close(w, softmax(scores)):
        raise Failed(
            "the weights ignore the mask: set the scores of masked keys to -np.inf "
            "(np.where(mask, scores, -np.inf)) before the softmax"
        )
    if close(w, softmax(scores) * mask):
        raise Failed(
            f"{where} the rows sum to {shown(1.0, w.sum(axis=-1))[1]}, not 1: you "
            "zeroed the masked weights after the softmax without renormalising; mask "
            "the scores with -inf before the softmax instead"
        )
    if close(w, softmax(np.where(mask, scores, 0.0))):
        raise Failed(
            "masked keys still get weight: a score of 0 is not 'no weight', because "
            "exp(0) = 1. Give masked keys the score -np.inf, whose exp is 0"
        )
    if not close(w[~mask], 0) and close(w[mask], 0):
        raise Failed(
            "your weights are non-zero exactly where the mask is False: True means "
            "'may attend', so keep the True entries and hide the False ones"
        )
    expected = masked_softmax(scores, mask)
    if close(w, masked_softmax(scores, mask.T, all_masked="zero")) or close(w, expected.T):
        raise Failed(
            f"{where} your weights are transposed: row i belongs to query i and column "
            "j to key j (mask[i, j], not mask[j, i]), and each row must sum to 1"
        )
    if close(w, masked_softmax(scores / np.sqrt(X.shape[1]), mask)):
        raise Failed(
            "you divided the scores by sqrt(d): this chapter's self-attention uses the "
            "plain dot products X @ X.T (scaling comes in the next chapter)"
        )
    if not close(w[~mask], 0):
        i, j = np.argwhere(~mask & ~near(w, 0))[0]
        raise Failed(
            f"{where} query {i} gives weight {shown(0.0, w[i, j])[1]} to key {j}, "
            "which its mask hides; masked keys must get weight exactly 0"
        )
    if not close(w.sum(axis=-1), 1.0):
        raise Failed(
            f"{where} the rows of the weights sum to {shown(1.0, w.sum(axis=-1))[1]}, "
            "not 1: normalise each row, e.sum(axis=-1, keepdims=True)"
        )
    raise Failed("{} the weights should be {}, you returned {}".format(where, *shown(expected, w)))


@check
def check_masked_self_attention(fn):
    """Check ``fn(X, mask) -> (output, weights)``: ``softmax(X X^T)`` with masked keys at 0.

    ``X`` is ``(n, d)`` and ``mask`` is an ``(n, n)`` boolean array, True = may
    attend; no row of the mask is all False. No scaling (chapter 2). The answers keep the
    dtype of ``X``, float32 or float64.
    """
    for dtype in DTYPES:
        for tokens, mask, what in _masked_cases():
            X = tokens.astype(dtype)
            X64 = X.astype(float)  # the values the student's function sees
            n = len(X)
            scores = X64 @ X64.T  # (n, n)
            expected_w = masked_softmax(scores, mask)
            expected_out = expected_w @ X64
            where = f"for X of shape (n, d) = {X.shape} and {what}"
            result = _masked_self_attention_of(fn, X, mask)
            if not (isinstance(result, tuple) and len(result) == 2):
                raise Failed("return a pair (output, weights)")
            out = as_array(result[0], "output")
            w = as_array(result[1], "weights")
            if w.shape != (n, n):
                raise Failed(
                    f"{where} the weights have shape {w.shape}; they are (n, n) = "
                    f"{(n, n)}, one row per query and one column per key"
                )
            keeps_dtype(result[1], dtype, "the weights")
            keeps_dtype(result[0], dtype, "the output")
            if not close(w, expected_w):
                _wrong_masked_weights(w, X64, mask, what, where)
            if out.shape != X.shape:
                raise Failed(
                    f"{where} the output has shape {out.shape}; it holds one new "
                    f"vector per token, shape (n, d) = {X.shape}: output = weights @ X"
                )
            if not close(out, expected_out):
                raise Failed(f"{where} the weights are right but the output is not weights @ X")
    return (
        "correct: masked keys get weight 0, every row sums to 1, the output is weights @ X, "
        "and float32 stays float32"
    )


# (lengths, n, left): b != n, left padding, b == n (where a mask of shape (b, n) would
# broadcast against the (b, n, n) scores without an error, wrongly), and no padding at all
_PADDING_CASES = [
    ([3, 5, 1], 5, False),
    ([2, 4], 6, True),
    ([4, 1, 2, 4], 4, True),
    ([4, 1, 2, 4], 4, False),
    ([5, 5], 5, False),
]


def _real_tokens(lengths, n, left):
    """(b, n): True at the real tokens, the last ``length`` positions when ``left``."""
    positions = np.arange(n)
    lengths = np.asarray(lengths)[:, None]
    return positions >= n - lengths if left else positions < lengths


@check
def check_padding_mask(fn):
    """Check ``fn(lengths, n, left=False)``: the ``(b, 1, n)`` key mask of a padded batch.

    Entry ``[s, 0, j]`` is True (may attend) when position ``j`` holds a real token of
    sequence ``s``: the first ``lengths[s]`` positions, or the last ones when ``left`` is True.
    Padded keys are hidden from every query; padded queries are not masked.
    """
    for lengths, n, left in _PADDING_CASES:
        b = len(lengths)
        real = _real_tokens(lengths, n, left)  # (b, n)
        expected = real[:, None, :]  # (b, 1, n)
        args = (np.array(lengths), n, True) if left else (np.array(lengths), n)
        called_with = f"lengths = np.array({lengths}), n = {n}" + (", left = True" * left)
        where = f"for {called_with}" + ("" if left else " (right padding, the default)")
        got = np.asarray(call(fn, *args, called_with=called_with))
        if got.dtype != np.bool_:
            raise Failed(
                f"{where} you returned dtype {got.dtype}; return booleans, True = may "
                "attend (a real token)"
            )
        if got.shape == (b, n):
            raise Failed(
                f"{where} you returned shape {got.shape} = (b, n). Add a middle axis "
                f"of size 1, shape (b, 1, n) = {expected.shape}: against scores of "
                "shape (b, n, n) it broadcasts over the query rows, whereas a (b, n) "
                "mask would be lined up with the last two axes, queries and keys"
            )
        if got.shape == (b, n, 1):
            raise Failed(
                f"{where} you returned shape (b, n, 1), which hides query rows; a "
                "padding mask hides the padded KEYS, the columns: shape (b, 1, n)"
            )
        if got.shape == (b, n, n) and np.array_equal(got, real[:, :, None] & real[:, None, :]):
            raise Failed(
                f"{where} you hid the padded queries (rows) as well as the padded "
                "keys. A padded query's row is then empty: its softmax is 0/0, which "
                "self_attention refuses with a ValueError. As the chapter says, only "
                "the keys are hidden; padded queries keep attending to the real tokens "
                "and their outputs are ignored. Return shape (b, 1, n)"
            )
        if got.shape != expected.shape:
            raise Failed(
                f"{where} the mask should have shape (b, 1, n) = {expected.shape}, "
                f"you returned {got.shape}"
            )
        if np.array_equal(got, expected):
            continue
        if np.array_equal(got, ~expected):
            raise Failed(
                f"{where} your mask is True on the padding and False on the real "
                "tokens; in this book True means 'may attend': flip it"
            )
        if left and np.array_equal(got, _real_tokens(lengths, n, False)[:, None, :]):
            raise Failed(
                f"{where} you padded on the right: with left=True the padding comes "
                "first, so the real tokens are the LAST lengths[s] positions"
            )
        if left and np.array_equal(got[:, 0], np.arange(n) >= np.array(lengths)[:, None]):
            raise Failed(
                f"{where} position j is real when j >= n - lengths[s] (the last "
                "lengths[s] positions), not when j >= lengths[s]"
            )
        if not left and np.array_equal(got[:, 0], np.arange(n) <= np.array(lengths)[:, None]):
            raise Failed(
                f"{where} you let one padded key through: positions count from 0, so "
                "the real tokens are j < lengths[s], not j <= lengths[s]"
            )
        s, _, j = np.argwhere(got != expected)[0]
        raise Failed(
            f"{where} entry [{s}, 0, {j}] should be {bool(expected[s, 0, j])}: "
            f"position {j} of sequence {s} is "
            f"{'a real token' if expected[s, 0, j] else 'padding'}"
        )
    return (
        "correct: (b, 1, n) booleans, True on each sequence's real tokens (the last ones "
        "with left=True), so padded keys get weight 0 and padded queries still attend to "
        "the real tokens"
    )
