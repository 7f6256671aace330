"""Checks for the coding exercises of ``chapters/self-attention.md``."""

import numpy as np

from ..core import masked_softmax, softmax
from .harness import (
    ATTENTIONS,
    NUMPY_ONLY,
    SOFTMAXES,
    Failed,
    Raised,
    as_array,
    call,
    check,
    close,
    dtypes,
    keeps_dtype,
    ndarray,
    not_close,
    not_finite,
    random,
    shown,
    wrong_shape,
)
from .inputs import extreme_logits, spread
from .wording import _

__all__ = ["check_causal_mask", "check_masked_self_attention", "check_padding_mask"]


def _causal(n):
    """(n, n): True where key j <= query i."""
    return np.tril(np.ones((n, n), dtype=bool))


def _wrapped_past(first_wrong: int, what: str) -> str:
    """Advice for an answer right below ``first_wrong`` (128 or more) and wrong from it: it held
    ``what`` (a position or a length, in the student's language) in an integer type that wraps
    round there. Empty for any other answer."""
    if first_wrong < 128:
        return ""
    limit = 128 if first_wrong < 256 else 256
    return _(
        " The mask is right for every {what} below {first_wrong}: a {what} held in a small "
        "integer type wraps round past {largest} (np.int8 past 127, np.uint8 past 255); "
        "np.arange(n) and np.array(...) count in 64-bit integers",
        what=what,
        first_wrong=first_wrong,
        largest=limit - 1,
    )


def _causal_sizes():
    """The sizes n to try: the worked ones first (their messages name them), then random ones
    past int8's and uint8's range and past a table of 1024 rows, in random order."""
    rng = random()
    fresh = [
        int(rng.integers(3, 20)),
        int(rng.integers(129, 256)),
        int(rng.integers(257, 600)),
        int(rng.integers(1025, 1200)),
    ]
    rng.shuffle(fresh)
    return [4, 1, 6, 2, *fresh]


@check(forbids=("attnkit.core.causal_mask", "attnkit.core.sliding_window_mask"))
def check_causal_mask(fn):
    """Check ``fn(n)``: the ``(n, n)`` boolean causal mask, True = may attend (key ``j <= i``).

    It tries small sizes, then random ones past 127, 255 and 1024, with attnkit's causal
    masks made unavailable."""
    for n in _causal_sizes():
        expected = _causal(n)
        answer = call(fn, n, called_with=_("n = {n}", n=n), fresh_result=True)
        got = ndarray(answer, _("the mask"))
        if got.shape != (n, n):
            sliced = (
                _(
                    ". A mask sliced from one of fixed size {size} is too small past "
                    "it: build it for the n asked for",
                    size=got.shape[0],
                )
                if got.ndim == 2 and got.shape[0] == got.shape[1] < n
                else ""
            )
            raise Failed(
                _(
                    "for n = {n} you returned shape {shape}; the mask has one row "
                    "per query and one column per key, shape ({n}, {n}){sliced}",
                    n=n,
                    shape=got.shape,
                    sliced=sliced,
                )
            )
        if got.dtype != np.bool_:
            raise Failed(
                _(
                    "you returned dtype {dtype}; return booleans (True = may "
                    "attend), for example build from np.ones((n, n), dtype=bool)",
                    dtype=got.dtype,
                )
            )
        if np.array_equal(got, expected):
            continue
        if np.array_equal(got, ~expected):
            raise Failed(
                _(
                    "you marked the future keys True and the allowed ones False; in this "
                    "book (and in torch's F.scaled_dot_product_attention) True means "
                    "'may attend': flip the mask"
                )
            )
        if np.array_equal(got, expected.T):
            raise Failed(
                _(
                    "row i allows the keys j >= i (the future) instead of j <= i (the "
                    "past): you built the transpose; use np.tril, not np.triu"
                )
            )
        if np.array_equal(got, np.tril(expected, k=-1)):
            raise Failed(
                _(
                    "the diagonal is False: a token may attend to itself, and without "
                    "the diagonal row 0 would allow no key at all"
                )
            )
        if np.array_equal(got, np.tril(np.ones((n, n), dtype=bool), k=1)):
            raise Failed(
                _(
                    "row i also allows key i + 1, the next token: keep the diagonal and "
                    "below, np.tril with k=0"
                )
            )
        if got.all():
            raise Failed(_("every key is allowed: row i must hide the keys j > i"))
        wrong = np.argwhere(got != expected)  # (count, 2): query, key
        bad = wrong[0]
        raise Failed(
            _(
                "for n = {n}, entry [{query}, {key}] should be {value}: query {query} may "
                "attend exactly to the keys 0..{query}.",
                n=n,
                query=bad[0],
                key=bad[1],
                value=bool(expected[tuple(bad)]),
            )
            + _wrapped_past(int(wrong.max(axis=1).min()), _("position"))
        )
    return _(
        "correct: row i allows the keys 0..i, itself included, and hides every later key, "
        "at every size tried (up to n > 1024)"
    )


# --- masked self-attention ---------------------------------------------------------------------


def _keep_random_keys(mask, rows, keys):
    """Give each of ``rows`` of ``mask`` a random, non-empty choice of the ``keys``."""
    rng = random()
    keys = np.asarray(keys)
    for row in rows:
        kept = rng.random(len(keys)) < rng.uniform(0.3, 0.9)
        kept[rng.integers(len(keys))] = True
        mask[row, keys[kept]] = True


def _random_case():
    """Random real tokens ``(n, d)`` of random sizes and a random mask that is not symmetric."""
    rng = random()
    n, d = int(rng.integers(3, 10)), int(rng.integers(1, 9))
    mask = np.ones((n, n), dtype=bool)
    while np.array_equal(mask, mask.T):
        mask = np.zeros((n, n), dtype=bool)
        _keep_random_keys(mask, range(n), range(n))
    return spread((n, d), np.float64, decades=0.5), mask, _("random tokens and a random mask")


def _extreme_case():
    """Tokens whose allowed scores, in five query rows, are :func:`extreme_logits` exactly.

    Five query tokens and ``k`` key tokens: key ``j`` is a power of two on a coordinate of its
    own, so the score of query ``i`` and key ``j`` is one exact product, ``L[i, j]``, in float32
    too. A query row keeps every key and no query (whose scores are sums, not exact); a key row
    keeps random keys (scores 0 and the power of two squared). A masked query comes first and
    last, so that a shift by a row's first or last score meets -inf.
    """
    rng = random()
    L = extreme_logits(int(rng.integers(4, 9)), np.float64)  # (q, k)
    q, k = L.shape
    scale, extra = 2.0 ** rng.integers(-2, 3), int(rng.integers(0, 3))
    X = np.zeros((q + k, k + extra))
    X[q:, :k] = scale * np.eye(k)
    X[:q, :k] = L / scale
    X[:q, k:] = rng.normal(size=(q, extra))  # meets only the keys' zeros
    mask = np.zeros((q + k, q + k), dtype=bool)
    mask[:q, q:] = True
    _keep_random_keys(mask, range(q, q + k), range(q, q + k))
    queries = rng.permutation(q)
    middle = rng.permutation(np.concatenate([queries[2:], np.arange(q, q + k)]))
    order = np.concatenate([queries[:1], middle, queries[1:2]])
    return (
        X[order][:, rng.permutation(k + extra)],
        mask[np.ix_(order, order)],
        _("scores that only a softmax shifted by each row's own maximum survives"),
    )


def _low_row_case():
    """Tokens with a row whose allowed scores all lie near -1e38, below any finite fill.

    Token ``a`` is ``2**63`` on one coordinate and its keys ``-2**63 * c`` on the same one, so
    its allowed scores are ``-2**126 * c`` (c in 1, 1.25, 1.5): exact in float32, and below
    -1e30. Its masked keys score higher: itself ``2**126``, the other tokens 0. The keys' rows
    are one-hot whatever they keep; the other tokens keep only each other, since a weighted sum
    of ``±2**63`` would not be exact.
    """
    rng = random()
    c = rng.choice([1.0, 1.25, 1.5], size=int(rng.integers(2, 4)), replace=False)
    m, others, d = len(c), int(rng.integers(1, 4)), int(rng.integers(2, 5))
    n = 1 + m + others
    X = np.zeros((n, d))
    X[0, 0] = 2.0**63
    X[1 : 1 + m, 0] = -(2.0**63) * c
    X[1 + m :, 1:] = spread((others, d - 1), np.float64, decades=0.5)
    mask = np.zeros((n, n), dtype=bool)
    mask[0, 1 : 1 + m] = True
    _keep_random_keys(mask, range(1, 1 + m), range(n))
    _keep_random_keys(mask, range(1 + m, n), range(1 + m, n))
    order = rng.permutation(n)
    return (
        X[order][:, rng.permutation(d)],
        mask[np.ix_(order, order)],
        _("a query whose allowed scores are all near -1e38 (its masked keys score higher)"),
    )


def _masked_cases():
    """(X, mask, what) triples: the worked ones, whose masks are not symmetric (but for one
    token), then fresh random ones. Every mask keeps a key in each row."""
    rng = np.random.default_rng(2)
    gap = _causal(4)
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
        (rng.normal(size=(4, 3)), gap, _("a causal mask with a gap")),  # n = 4, d = 3
        (rng.normal(size=(5, 2)), padded, _("a mask hiding the keys 3 and 4")),
        (rng.normal(size=(3, 6)), scattered, _("a scattered mask")),  # n < d
        (rng.normal(size=(1, 2)), np.ones((1, 1), dtype=bool), _("one token")),
        (large, _causal(3), _("large scores")),
        _random_case(),
        _random_case(),
        _extreme_case(),
        _low_row_case(),
    ]


def _mask_mixed_up(w, scores, mask, bad_rows) -> str:
    """What is wrong with weights NaN in ``bad_rows`` and right elsewhere for ``~mask`` or
    ``mask.T``, which leave those rows empty; else empty."""
    for other, advice in (
        (
            ~mask,
            _(
                "you hid the allowed keys and kept the others, and a row that allows every key "
                "keeps none. True means 'may attend': keep the True entries, hide the False ones"
            ),
        ),
        (
            mask.T,
            _(
                "you used mask.T, which empties row i wherever column i of the mask is all "
                "False. Row i belongs to query i and column j to key j: mask[i, j], not "
                "mask[j, i]"
            ),
        ),
    ):
        if np.array_equal(bad_rows, ~other.any(axis=-1)):
            like = masked_softmax(scores, other, all_masked="zero")
            if close(w[~bad_rows], like[~bad_rows]):
                return advice
    return ""


def _tied(w, expected, mask):
    """(i, j, k): allowed keys j, k that query i weighs the same though their right weights
    differ, as clipping the scores or rounding does."""
    for i in range(len(w)):
        keys = np.flatnonzero(mask[i] & (w[i] > 0))
        got, want = w[i, keys], expected[i, keys]
        same = np.abs(got[:, None] - got[None, :]) <= 1e-3 * np.maximum(got[:, None], got)
        differ = ~np.isclose(want[:, None], want[None, :], rtol=0.1, atol=0.0)
        pairs = np.argwhere(same & differ)
        if len(pairs):
            return i, keys[pairs[0, 0]], keys[pairs[0, 1]]
    return None


def _wrong_rows_first(w, expected):
    """The queries, those whose weights are wrong first, then those right within rounding."""
    right = [close(w[i], expected[i]) for i in range(len(w))]
    return sorted(range(len(w)), key=lambda i: right[i])


def _filled(w, expected, mask):
    """(i, weight): a query that gives the keys its mask hides, two or more, one same non-zero
    weight, as one finite score for all of them does."""
    for i in _wrong_rows_first(w, expected):
        hidden = w[i, ~mask[i]]
        if len(hidden) > 1 and np.all(hidden > 0) and np.allclose(hidden, hidden[0], rtol=1e-3):
            return i, hidden[0]
    return None


def _wrong_masked_weights(w, X, mask, where):
    """Say what is wrong with weights ``w`` that are not the masked softmax of ``X X^T``; return
    only where they are right within rounding."""
    scores = X @ X.T
    expected = masked_softmax(scores, mask)

    def allowed_range(i):
        return _(
            "{low:.4g} to {high:.4g}", low=scores[i, mask[i]].min(), high=scores[i, mask[i]].max()
        )

    bad_rows = ~np.all(np.isfinite(w), axis=-1)
    if bad_rows.any():
        mixed_up = _mask_mixed_up(w, scores, mask, bad_rows)
        if mixed_up:
            hint = _(
                " A row whose scores are all -inf gives 0/0, and {mixed_up}.", mixed_up=mixed_up
            )
            raise not_finite(where, _("the weights"), hint)
        i = int(np.argmax(bad_rows))
        tame = np.abs(scores[i, mask[i]]).max() < 80  # exp neither overflows nor underflows
        cause = (
            _(
                "np.exp handles those, so the NaN comes from the masked scores: -inf minus "
                "-inf is NaN, so never shift by a score the mask hides (a row's first, last, "
                "smallest or mean score)"
            )
            if tame
            else _(
                "np.exp overflows above about 709 (88 in float32), so np.exp(1000) "
                "overflows, and rounds to 0 below about -745, which leaves 0/0 where every "
                "term of a row rounds to 0"
            )
        )
        raise not_finite(
            where,
            _("the weights of query {i}", i=i),
            _(
                " The scores it may attend to run from {allowed}: {cause}. Give the masked keys "
                "-np.inf first, then subtract each row's maximum, which is then the largest "
                "score the row may attend to, before np.exp.",
                allowed=allowed_range(i),
                cause=cause,
            ),
        )
    if close(w, softmax(scores)):
        raise Failed(
            _(
                "the weights ignore the mask: set the scores of masked keys to -np.inf "
                "(np.where(mask, scores, -np.inf)) before the softmax"
            )
        )
    if close(w, softmax(scores) * mask):
        raise Failed(
            _(
                "{where} the rows sum to {totals}, not 1: you "
                "zeroed the masked weights after the softmax without renormalising; mask "
                "the scores with -inf before the softmax instead",
                where=where,
                totals=shown(1.0, w.sum(axis=-1))[1],
            )
        )
    zero_filled = softmax(np.where(mask, scores, 0.0)).astype(w.dtype)
    # where every allowed score lies below -1e30, a fill of 0 and one of -1e30 look alike
    if close(w, zero_filled) and not close(zero_filled, softmax(np.where(mask, scores, -1e30))):
        raise Failed(
            _(
                "masked keys still get weight: a score of 0 is not 'no weight', because "
                "exp(0) = 1. Give masked keys the score -np.inf, whose exp is 0"
            )
        )
    if not close(w[~mask], 0) and close(w[mask], 0):
        raise Failed(
            _(
                "your weights are non-zero exactly where the mask is False: True means "
                "'may attend', so keep the True entries and hide the False ones"
            )
        )
    if close(w, masked_softmax(scores, mask.T, all_masked="zero")) or close(w, expected.T):
        raise Failed(
            _(
                "{where} your weights are transposed: row i belongs to query i and column "
                "j to key j (mask[i, j], not mask[j, i]), and each row must sum to 1",
                where=where,
            )
        )
    if close(w, masked_softmax(scores / np.sqrt(X.shape[1]), mask)):
        raise Failed(
            _(
                "you divided the scores by sqrt(d): this chapter's self-attention uses the "
                "plain dot products X @ X.T (scaling comes in the next chapter)"
            )
        )
    tie = _tied(w, expected, mask)
    if tie is not None:
        i, j, k = tie
        raise Failed(
            _(
                "{where} query {i} gives keys {j} and {k} the same weight {weight}, though "
                "their scores {score_j:.6g} and {score_k:.6g} differ: the weights must follow "
                "the scores exactly. Subtract each row's maximum over the keys it may attend "
                "to and change the scores in no other way: clipping them (to ±30, say), "
                "rounding, or a shift that differs from key to key (a column's maximum) makes "
                "different scores look equal",
                where=where,
                i=i,
                j=j,
                k=k,
                weight=shown(expected[i, j], w[i, j])[1],
                score_j=scores[i, j],
                score_k=scores[i, k],
            )
        )
    filled = _filled(w, expected, mask)
    if filled is not None:
        i, weight = filled
        raise Failed(
            _(
                "{where} query {i} gives each key its mask hides the same weight "
                "{weight:.3g}: did you give the masked keys one finite score (a fill such as "
                "-1e9, or -inf clipped to a finite number)? The scores query {i} may attend to "
                "run from {allowed}, so that score is not far enough below them, and the "
                "masked keys take weight. Give masked keys the score -np.inf, whose exp is "
                "exactly 0",
                where=where,
                i=i,
                weight=weight,
                allowed=allowed_range(i),
            )
        )
    if np.any(w[~mask] != 0):
        i = next(i for i in _wrong_rows_first(w, expected) if np.any(w[i, ~mask[i]] != 0))
        j = np.flatnonzero(~mask[i] & (w[i] != 0))[0]
        raise Failed(
            _(
                "{where} query {i} gives weight {weight:.3g} to key {j}, "
                "which its mask hides; masked keys must get weight exactly 0",
                where=where,
                i=i,
                weight=w[i, j],
                j=j,
            )
        )
    if not close(w.sum(axis=-1), 1.0):
        raise Failed(
            _(
                "{where} the rows of the weights sum to {totals}, "
                "not 1: normalise each row, e.sum(axis=-1, keepdims=True)",
                where=where,
                totals=shown(1.0, w.sum(axis=-1))[1],
            )
        )
    i = next((i for i in range(len(w)) if not close(w[i], expected[i])), None)
    if i is None:
        return  # right within rounding: the caller looks further
    hint = _(
        " Subtract each row's maximum over the keys it may attend to and change the scores "
        "and the weights in no other way (no clipping, no rounding)."
    )
    raise not_close(where, _("the weights of query {i}", i=i), expected[i], w[i], hint)


@check(forbids=SOFTMAXES + ATTENTIONS + NUMPY_ONLY)
def check_masked_self_attention(fn):
    """Check ``fn(X, mask) -> (output, weights)``: ``softmax(X X^T)`` with masked keys at 0.

    ``X`` is ``(n, d)`` and ``mask`` is an ``(n, n)`` boolean array, True = may
    attend; no row of the mask is all False. No scaling (chapter 2). The answers keep the
    dtype of ``X``, float32 or float64. Besides worked examples it tries random tokens and
    masks, rows of scores that only a softmax shifted by each row's own maximum over its
    allowed keys survives, and a row whose allowed scores lie below any finite fill, with
    attnkit's softmaxes and attention functions made unavailable.
    """
    for dtype in dtypes():
        for tokens, mask, what in _masked_cases():
            X = tokens.astype(dtype)
            X64 = X.astype(float)  # the values the student's function sees
            n = len(X)
            scores = X64 @ X64.T  # (n, n)
            expected_w = masked_softmax(scores, mask)
            expected_out = expected_w @ X64
            where = _("for X of shape (n, d) = {shape} and {what}", shape=X.shape, what=what)
            with np.errstate(all="ignore"):  # NaN and overflow are reported below, in words
                result = call(fn, X, mask)
            if not (isinstance(result, tuple) and len(result) == 2):
                raise Failed(_("return a pair (output, weights)"))
            out = as_array(result[0], "output")
            w = as_array(result[1], "weights")
            if w.shape != (n, n):
                raise Failed(
                    _(
                        "{where} the weights have shape {shape}; they are (n, n) = "
                        "{square}, one row per query and one column per key",
                        where=where,
                        shape=w.shape,
                        square=(n, n),
                    )
                )
            keeps_dtype(result[1], dtype, _("the weights"))
            keeps_dtype(result[0], dtype, _("the output"))
            if not close(w, expected_w):
                with np.errstate(all="ignore"):
                    _wrong_masked_weights(w, X64, mask, where)
            if out.shape != X.shape:
                raise Failed(
                    _(
                        "{where} the output has shape {shape}; it holds one new "
                        "vector per token, shape (n, d) = {tokens}: output = weights @ X",
                        where=where,
                        shape=out.shape,
                        tokens=X.shape,
                    )
                )
            if not close(out, expected_out):
                if close(out, w.astype(float) @ X64):  # the weights' small errors carried on
                    with np.errstate(all="ignore"):
                        _wrong_masked_weights(w, X64, mask, where)
                raise Failed(
                    _(
                        "{where} the weights are right but the output is not weights @ X",
                        where=where,
                    )
                )
    return _(
        "correct: masked keys get weight 0, every row sums to 1 even where the scores are "
        "huge, the output is weights @ X, and float32 stays float32"
    )


# --- padding mask ------------------------------------------------------------------------------

# (lengths, n, left): b != n, left padding, b == n (where a mask of shape (b, n) would
# broadcast against the (b, n, n) scores without an error, wrongly), no padding at all, and a
# batch of one on either side
_PADDING_CASES = [
    ([3, 5, 1], 5, False),
    ([2, 4], 6, True),
    ([4, 1, 2, 4], 4, True),
    ([4, 1, 2, 4], 4, False),
    ([5, 5], 5, False),
    ([3], 5, False),
    ([2], 6, True),
]


def _padding_cases():
    """(lengths, n, left): the worked cases, then random batches, padded on either side to an
    n longer than every sequence: small, past 127 and 255 (positions in int8, lengths in
    uint8 wrap round there) and past 1024, in random order."""
    rng = random()
    fresh = []
    for low, high in ((5, 40), (129, 256), (257, 600), (1025, 1200)):
        for left in (False, True):
            n, b = int(rng.integers(low, high)), int(rng.integers(2, 7))
            lengths = np.full(b, 1)
            while np.all(lengths == lengths[0]):  # lengths that differ
                lengths = rng.integers(1, n, size=b)
            if n > 256:
                lengths[rng.integers(b)] = rng.integers(256, n)
            fresh.append((lengths, n, left))
    rng.shuffle(fresh)
    return [(np.array(lengths), n, left) for lengths, n, left in _PADDING_CASES] + fresh


def _real_tokens(lengths, n, left):
    """(b, n): True at the real tokens, the last ``length`` positions when ``left``."""
    positions = np.arange(n)
    lengths = np.asarray(lengths)[:, None]
    return positions >= n - lengths if left else positions < lengths


def _padding_mask_of(fn, lengths, n, left):
    """The answer to ``fn(lengths, n[, True])``; an integer type too small is explained."""
    args = (lengths, n, True) if left else (lengths, n)
    called_with = (
        _("lengths = np.array({lengths}), n = {n}, left = True", lengths=lengths.tolist(), n=n)
        if left
        else _("lengths = np.array({lengths}), n = {n}", lengths=lengths.tolist(), n=n)
    )
    try:
        answer = call(fn, *args, called_with=called_with, fresh_result=True)
        return ndarray(answer, _("the mask")), called_with
    except Raised as raised:
        if "out of bounds for" not in raised.error:
            raise
        raise Failed(
            _(
                "{raised}: a position or a length held in a small integer type (np.int8, "
                "np.uint8) cannot count past 127 or 255; keep them in the 64-bit integers that "
                "np.arange(n) and lengths come in",
                raised=raised.args[0],  # the message, which can change language
            )
        ) from None


@check(forbids=("attnkit.core.padding_mask",))
def check_padding_mask(fn):
    """Check ``fn(lengths, n, left=False)``: the ``(b, 1, n)`` key mask of a padded batch.

    Entry ``[s, 0, j]`` is True (may attend) when position ``j`` holds a real token of
    sequence ``s``: the first ``lengths[s]`` positions, or the last ones when ``left`` is True.
    Padded keys are hidden from every query; padded queries are not masked. Besides worked
    examples it tries random batches padded to an n longer than every sequence, past 127,
    255 and 1024, with attnkit's padding_mask made unavailable.
    """
    for lengths, n, left in _padding_cases():
        b = len(lengths)
        real = _real_tokens(lengths, n, left)  # (b, n)
        expected = real[:, None, :]  # (b, 1, n)
        got, called_with = _padding_mask_of(fn, lengths, n, left)
        where = (
            _("for {called_with}", called_with=called_with)
            if left
            else _("for {called_with} (right padding, the default)", called_with=called_with)
        )
        if got.dtype != np.bool_:
            raise Failed(
                _(
                    "{where} you returned dtype {dtype}; return booleans, True = may "
                    "attend (a real token)",
                    where=where,
                    dtype=got.dtype,
                )
            )
        if got.shape == (b, n):
            raise Failed(
                _(
                    "{where} you returned shape {shape} = (b, n). Add a middle axis "
                    "of size 1, shape (b, 1, n) = {expected}: against scores of "
                    "shape (b, n, n) it broadcasts over the query rows, whereas a (b, n) "
                    "mask would be lined up with the last two axes, queries and keys",
                    where=where,
                    shape=got.shape,
                    expected=expected.shape,
                )
            )
        if got.shape == (b, n, 1):
            raise Failed(
                _(
                    "{where} you returned shape (b, n, 1), which hides query rows; a "
                    "padding mask hides the padded KEYS, the columns: shape (b, 1, n)",
                    where=where,
                )
            )
        if got.shape == (b, n, n) and np.array_equal(got, real[:, :, None] & real[:, None, :]):
            raise Failed(
                _(
                    "{where} you hid the padded queries (rows) as well as the padded "
                    "keys. A padded query's row is then empty: its softmax is 0/0, which "
                    "self_attention refuses with a ValueError. As the chapter says, only "
                    "the keys are hidden; padded queries keep attending to the real tokens "
                    "and their outputs are ignored. Return shape (b, 1, n)",
                    where=where,
                )
            )
        longest = int(lengths.max())
        if longest < n and got.shape[1:] in ((1, longest), (longest,), (longest, 1)):
            raise Failed(
                _(
                    "{where} your mask has {longest} positions, the longest sequence's "
                    "length: the batch is padded to n = {n}, longer than every sequence, so "
                    "the mask has n positions, shape (b, 1, n) = {expected}",
                    where=where,
                    longest=longest,
                    n=n,
                    expected=expected.shape,
                )
            )
        if got.shape != expected.shape:
            sliced = (
                _(
                    " Positions sliced from a table of fixed size {size} run out past "
                    "it: count them for the n asked for, np.arange(n).",
                    size=got.shape[-1],
                )
                if got.shape[:-1] == (b, 1) and got.shape[-1] < n
                else ""
            )
            raise wrong_shape(
                where, _("the mask"), f"(b, 1, n) = {expected.shape}", got.shape, sliced
            )
        if np.array_equal(got, expected):
            continue
        if np.array_equal(got, ~expected):
            raise Failed(
                _(
                    "{where} your mask is True on the padding and False on the real "
                    "tokens; in this book True means 'may attend': flip it",
                    where=where,
                )
            )
        if left and np.array_equal(got, _real_tokens(lengths, n, False)[:, None, :]):
            raise Failed(
                _(
                    "{where} you padded on the right: with left=True the padding comes "
                    "first, so the real tokens are the LAST lengths[s] positions",
                    where=where,
                )
            )
        if left and np.array_equal(got[:, 0], np.arange(n) >= lengths[:, None]):
            raise Failed(
                _(
                    "{where} position j is real when j >= n - lengths[s] (the last "
                    "lengths[s] positions), not when j >= lengths[s]",
                    where=where,
                )
            )
        if left and longest < n:
            start = np.arange(n) >= longest - lengths[:, None]  # (b, n)
            if any(np.array_equal(got[:, 0], a) for a in (start, start & (np.arange(n) < longest))):
                raise Failed(
                    _(
                        "{where} you counted the padding from the longest sequence's end, "
                        "position {longest}: the batch is padded to n = {n}, so the real "
                        "tokens are the last lengths[s] of n positions, j >= n - lengths[s]",
                        where=where,
                        longest=longest,
                        n=n,
                    )
                )
        if not left and np.array_equal(got[:, 0], np.arange(n) <= lengths[:, None]):
            raise Failed(
                _(
                    "{where} you let one padded key through: positions count from 0, so "
                    "the real tokens are j < lengths[s], not j <= lengths[s]",
                    where=where,
                )
            )
        wrong = np.argwhere(got != expected)  # (count, 3): sequence, 0, position
        s, j = wrong[0, 0], wrong[0, 2]
        raise Failed(
            (
                _(
                    "{where} entry [{s}, 0, {j}] should be True: position {j} of sequence {s} "
                    "is a real token.",
                    where=where,
                    s=s,
                    j=j,
                )
                if expected[s, 0, j]
                else _(
                    "{where} entry [{s}, 0, {j}] should be False: position {j} of sequence {s} "
                    "is padding.",
                    where=where,
                    s=s,
                    j=j,
                )
            )
            + (
                _wrapped_past(int(wrong[:, 2].min()), _("position"))
                or _wrapped_past(int(lengths[wrong[:, 0]].min()), _("length"))
            )
        )
    return _(
        "correct: (b, 1, n) booleans, True on each sequence's real tokens (the last ones "
        "with left=True), so padded keys get weight 0 and padded queries still attend to "
        "the real tokens, at every n tried (up to n > 1024)"
    )
