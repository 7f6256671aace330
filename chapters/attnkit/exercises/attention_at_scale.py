"""Checks for the coding exercises of ``chapters/attention-at-scale.md``."""

import numpy as np

from ..core import causal_mask, grouped_query_attention, scaled_dot_product_attention
from .harness import (
    ATTENTIONS,
    NUMPY_ONLY,
    SOFTMAXES,
    Failed,
    as_array,
    call,
    check,
    close,
    dtypes,
    keeps_dtype,
    near,
    not_close,
    not_finite,
    random,
    shown,
    wrong_shape,
)
from .inputs import extreme_logits, scores_from_queries_and_keys, spread
from .wording import _

__all__ = ["check_online_softmax_attention", "check_grouped_query_attention"]


# --- the online softmax ---------------------------------------------------------------------

# What streaming may hold at once: a few arrays of shape (m, B), (m, d_k), (m, d_v) and
# (m, 1), the output included. The bound counts ARRAYS of each at 8 bytes an entry (the
# positions of a causal mask are int64 whatever the dtype), PER_BLOCK bytes for each block's
# views (np.split makes them all up front) and SLACK bytes for Python's own objects. Right
# answers hold at most about 60% of it; the (m, n) scores at m = 1, or an (n, n) boolean mask
# at m = n, are at least three times as much.
ARRAYS = 8
PER_BLOCK = 320
SLACK = 16 * 1024


def _allowed_bytes(m, n, block_size, d_k, d_v):
    """The most memory a streamed answer may allocate at once for these sizes."""
    blocks = -(-n // block_size)
    return ARRAYS * m * (block_size + d_k + d_v + 1) * 8 + PER_BLOCK * blocks + SLACK


def _digits_lost(got, expected) -> str:
    """Advice for an answer whose entries have two decimals at most, where the right ones
    have every digit: it was rounded, or went through an integer array."""
    if np.all(got == np.round(got, 2)) and not np.all(expected == np.round(expected, 2)):
        return _(
            " Your output has two decimals at most: keep every digit, in a float array of "
            "the inputs' dtype (no rounding, no integer array such as np.zeros(shape, "
            "dtype=int))."
        )
    return ""


def _scores_rising_by_block(m, n, d_k, d_v, offsets, block_size, dtype, seed):
    """``Q, K, V`` whose scores get ``offsets[b]`` added in key block ``b``.

    Coordinate 0 of every query is 1 and of every key in block ``b`` is ``offsets[b] *
    sqrt(d_k)``, so the scaled score of key ``j`` is its block's offset plus a small
    random part. Rising offsets put each query's largest score in the last block: the
    running maximum must grow, and whatever was summed before must be rescaled.
    """
    rng = np.random.default_rng(seed)
    Q, K, V = rng.normal(size=(m, d_k)), rng.normal(size=(n, d_k)), rng.normal(size=(n, d_v))
    Q[:, 0] = 1.0
    K[:, 0] = np.repeat(offsets, block_size)[:n] * np.sqrt(d_k)
    return Q.astype(dtype), K.astype(dtype), V.astype(dtype)


def _blockwise(Q, K, V, block_size, mistake):
    """A streamed attention with one deliberate ``mistake``, to name what a wrong answer did."""
    n, d_k = K.shape
    scores_all = Q @ K.T / np.sqrt(d_k)
    if mistake == "last block dropped":
        keep = n - n % block_size if n % block_size else n
        return scaled_dot_product_attention(Q, K[:keep], V[:keep])[0]
    blocks = [slice(s, min(s + block_size, n)) for s in range(0, n, block_size)]
    if mistake == "each block normalised":
        return np.mean([scaled_dot_product_attention(Q, K[b], V[b])[0] for b in blocks], axis=0)
    running_max = np.full((Q.shape[0], 1), -np.inf)
    running_sum, acc = np.zeros((Q.shape[0], 1)), np.zeros((Q.shape[0], V.shape[1]))
    for b in blocks:
        s = scores_all[:, b]
        new_max = np.maximum(running_max, s.max(axis=1, keepdims=True))
        rescale = np.exp(running_max - new_max)
        p = np.exp(s - new_max)
        sum_kept = mistake in ("sum not rescaled", "nothing rescaled")
        running_sum = (1.0 if sum_kept else rescale) * running_sum + p.sum(axis=1, keepdims=True)
        acc_kept = mistake in ("accumulator not rescaled", "nothing rescaled")
        acc = (1.0 if acc_kept else rescale) * acc + p @ V[b]
        running_max = new_max
    return acc / running_sum


def _attention64(Q, K, V, causal=False, rows=None):
    """The expected output, computed in float64 from the inputs as given: of the queries
    ``rows`` only, if given (each query's output depends on its own scores only)."""
    Q, K, V = (a.astype(np.float64) for a in (Q, K, V))
    rows = np.arange(len(Q)) if rows is None else np.asarray(rows)
    mask = np.arange(len(K)) <= rows[:, None] if causal else None
    return scaled_dot_product_attention(Q[rows], K, V, mask=mask)[0]


def _online_answer(fn, Q, K, V, block_size, causal, where, measure=False):
    """The student's output for these inputs, as an array, after the checks every case shares;
    with ``measure``, also the most memory the call held at once."""
    with np.errstate(all="ignore"):  # overflow shows as inf or NaN, reported below
        result = call(
            fn,
            Q,
            K,
            V,
            block_size,
            causal,
            called_with=_(
                "Q {q}, K {k}, V {v}, block_size = {block_size}, causal = {causal}",
                q=Q.shape,
                k=K.shape,
                v=V.shape,
                block_size=block_size,
                causal=causal,
            ),
            measure=measure,
        )
    result, peak = result if measure else (result, None)
    if isinstance(result, tuple):
        raise Failed(_("return only the output array, shape (m, d_v), not a tuple"))
    got = as_array(result, _("the output"))
    m, d_v = Q.shape[0], V.shape[1]
    if got.shape != (m, d_v):
        hint = (
            _(
                " That is the shape of the weights: the point of streaming is never to form "
                "them; return the output, weights @ V."
            )
            if got.shape == (m, K.shape[0])
            else ""
        )
        raise wrong_shape(where, _("the output"), f"(m, d_v) = {(m, d_v)}", got.shape, hint)
    if got.dtype != Q.dtype:
        raise Failed(
            _(
                "{where}, your output is {got}: keep the dtype of the {dtype} inputs (create "
                "the running arrays with dtype=Q.dtype, and scale by a Python number such as "
                "d_k ** 0.5 or by np.sqrt(d_k).astype(Q.dtype))",
                where=where,
                dtype=Q.dtype,
                got=got.dtype,
            )
        )
    return (got, peak) if measure else got


def _wrong_output(where, expected, got, hint="", rows=None):
    """Fail, showing the first query whose output is wrong; ``got`` holds the queries ``rows``
    only, if given."""
    i = int(np.argmin(np.all(near(got, expected), axis=1)))
    query = i if rows is None else int(rows[i])
    what = _("the output of query {query}", query=query)
    raise not_close(where, what, expected[i], got[i], _digits_lost(got, expected) + hint)


def _block_sizes(n, rng):
    """1, a size that does not divide ``n`` (the last block is shorter) and one above ``n``."""
    uneven = [b for b in range(2, n) if n % b]
    return 1, int(rng.choice(uneven)), n + int(rng.integers(1, 9))


def _coded_cases(fn, dtype):
    """The worked cases, whose inputs are built so that each typical mistake can be named."""
    # m = 4 queries, n = 10 keys in blocks of 4 (the last block has 2), largest scores last
    Q, K, V = _scores_rising_by_block(4, 10, 3, 2, [0.0, 1.0, 2.0], 4, dtype, seed=0)
    expected = _attention64(Q, K, V)
    Q64, K64, V64 = (a.astype(np.float64) for a in (Q, K, V))
    where = _("for {dtype} Q (4, 3), K (10, 3), V (10, 2) and block_size = 4", dtype=dtype.__name__)
    got = _online_answer(fn, Q, K, V, 4, False, where)
    if not np.all(np.isfinite(got)):
        hint = _(
            " The scores are small here, so look for a division by a zero sum or "
            "exp(-inf - (-inf))."
        )
        raise not_finite(where, _("the output"), hint)
    if not close(got, expected):
        unscaled = scaled_dot_product_attention(Q64, K64, V64, scale=1.0)[0]
        if close(got, unscaled):
            raise Failed(
                _(
                    "{where}, you did not scale the scores: divide them by sqrt(d_k)",
                    where=where,
                )
            )
        for mistake, advice in [
            (
                "last block dropped",
                _(
                    "the last block has only n mod block_size = 2 keys, and "
                    "you left it out: loop over range(0, n, block_size) and slice up to start + "
                    "block_size (NumPy stops a slice at the end by itself)"
                ),
            ),
            (
                "each block normalised",
                _(
                    "you normalised each block on its own and averaged the "
                    "blocks' outputs; the softmax runs over all keys at once. Keep running sums "
                    "and divide only once, after the last block"
                ),
            ),
            (
                "nothing rescaled",
                _(
                    "when a block brings a larger maximum, what was summed so far was summed "
                    "with the old one: multiply both the running sum of exp(s - r) and the "
                    "accumulated sum of exp(s - r) v by exp(r_old - r_new) before adding the "
                    "block"
                ),
            ),
            (
                "accumulator not rescaled",
                _(
                    "when a block brings a larger maximum, the sum of "
                    "exp(s - r) v accumulated so far must be multiplied by exp(r_old - r_new) "
                    "too, not only the sum of exp(s - r)"
                ),
            ),
            (
                "sum not rescaled",
                _(
                    "when a block brings a larger maximum, the running sum of "
                    "exp(s - r) must be multiplied by exp(r_old - r_new), like the accumulator"
                ),
            ),
        ]:
            if close(got, _blockwise(Q64, K64, V64, 4, mistake)):
                raise Failed(_("{where}, {advice}", where=where, advice=advice))
        raise not_close(where, _("the output"), expected, got, _digits_lost(got, expected))

    for block_size in (1, 3, 10, 16):
        where = _("with block_size = {block_size} (n = 10)", block_size=block_size)
        got = _online_answer(fn, Q, K, V, block_size, False, where)
        if not close(got, expected):
            hint = _(" A block larger than n is the whole sequence.") if block_size > 10 else ""
            raise not_close(where, _("the output"), expected, got, hint)

    # causal: m = n = 7 in blocks of 3; key j is visible to query i when j <= i
    rng = np.random.default_rng(1)
    Qc, Kc, Vc = (rng.normal(size=s).astype(dtype) for s in [(7, 3), (7, 3), (7, 2)])
    Qc64, Kc64, Vc64 = (a.astype(np.float64) for a in (Qc, Kc, Vc))
    expected = _attention64(Qc, Kc, Vc, causal=True)
    where = _("with causal = True (m = n = 7, block_size = 3)")
    got = _online_answer(fn, Qc, Kc, Vc, 3, True, where)
    if not close(got, expected):
        local = np.arange(3)[None, :] <= np.arange(7)[:, None]  # (7, 3), block-local
        candidates = [
            (
                _attention64(Qc, Kc, Vc),
                _("you ignored causal: with causal = True query i may attend to keys j <= i only"),
            ),
            (
                scaled_dot_product_attention(Qc64, Kc64, Vc64, mask=causal_mask(7).T)[0],
                _("you kept the keys j >= i, the future; the causal mask keeps j <= i"),
            ),
            (
                scaled_dot_product_attention(Qc64, Kc64, Vc64, mask=np.tile(local, (1, 3))[:, :7])[
                    0
                ],
                _(
                    "you compared the query's position with the key's column inside its block; "
                    "compare it with the key's position in the sequence, start + column"
                ),
            ),
        ]
        for candidate, advice in candidates:
            if close(got, candidate):
                raise Failed(_("{where}, {advice}", where=where, advice=advice))
        lost = np.flatnonzero(~np.all(np.isfinite(got), axis=1)).tolist()
        if lost:
            hint = _(
                " Every query may attend to key 0 (query 0 to key 0 only: keep keys j <= i, not "
                "j < i), and key 0 is in the first block, so the running maximum is finite after "
                "it. A later block whose keys are all masked for a query has maximum -inf, so the "
                "running maximum must stay the larger of the old one and the block's, never the "
                "block's alone."
            )
            raise not_finite(where, _("the output of queries {rows}", rows=lost), hint)
        raise not_close(where, _("the output"), expected, got)

    # scores in the thousands: exp overflows unless every exponent stays <= 0
    for offsets, where in (
        (
            [0.0, 400.0, 800.0, 1200.0],
            _("with scores near 0, 400, 800, 1200 in the four blocks (rising, block_size = 3)"),
        ),
        (
            [1200.0, 800.0, 400.0, 0.0],
            _("with scores near 1200, 800, 400, 0 in the four blocks (falling, block_size = 3)"),
        ),
    ):
        Ql, Kl, Vl = _scores_rising_by_block(3, 12, 3, 2, offsets, 3, dtype, seed=2)
        expected = _attention64(Ql, Kl, Vl)
        got = _online_answer(fn, Ql, Kl, Vl, 3, False, where)
        if not np.all(np.isfinite(got)):
            hint = _(
                " exp overflowed. Subtract the running maximum r before exp, set r to the "
                "larger of r and the block's maximum at every block, and multiply what you "
                "summed before by exp(r_old - r_new), which is never above 1."
            )
            raise not_finite(where, _("the output"), hint)
        if not close(got, expected):
            hint = _(
                " Subtract the running maximum and change the scores in no other way: clipping "
                "them to a range makes different scores equal."
            )
            raise not_close(where, _("the output"), expected, got, hint)

    if dtype != np.float32:
        return
    # float32's exp overflows above 88
    Q32, K32, V32 = _scores_rising_by_block(4, 9, 3, 2, [0.0, 60.0, 120.0], 3, dtype, seed=3)
    expected = _attention64(Q32, K32, V32)
    where = _("for float32 inputs with scores near 0, 60 and 120 (block_size = 3)")
    got = _online_answer(fn, Q32, K32, V32, 3, False, where)
    if not np.all(np.isfinite(got)):
        hint = _(
            " float32's exp overflows above 88, so every exponent must be a score minus the "
            "running maximum."
        )
        raise not_finite(where, _("the output"), hint)
    if not close(got, expected):
        raise not_close(where, _("the output"), expected, got)


def _random_cases(fn, dtype):
    """Fresh random sizes and reals, without and with the causal mask, and every kind of block."""
    rng = random()
    for causal in (False, True):
        n = int(rng.integers(5, 40))
        m = n if causal else int(rng.integers(1, 9))
        d_k, d_v = (int(d) for d in rng.integers(1, 9, size=2))
        Q = (rng.normal(size=(m, d_k)) * rng.uniform(0.5, 3.0)).astype(dtype)
        K = rng.normal(size=(n, d_k)).astype(dtype)
        V = spread((n, d_v), dtype, decades=2.0)
        expected = _attention64(Q, K, V, causal)
        for block_size in _block_sizes(n, rng):
            where = _(
                "for random {dtype} Q {q}, K {k}, V {v}, block_size = {block_size}, "
                "causal = {causal}",
                dtype=dtype.__name__,
                q=Q.shape,
                k=K.shape,
                v=V.shape,
                block_size=block_size,
                causal=causal,
            )
            got = _online_answer(fn, Q, K, V, block_size, causal, where)
            if not close(got, expected):
                _wrong_output(
                    where,
                    expected,
                    got,
                    _(
                        " The worked cases passed: look for what these sizes and values change "
                        "(m, n and block_size in any relation, values of every size)."
                    ),
                )


def _extreme_case(fn, dtype):
    """Scores built exactly, one row of each kind that only a running maximum of each query's
    own scores, started at -inf, survives (see ``extreme_logits``)."""
    rng = random()
    n = int(rng.integers(6, 17))
    d_v = int(rng.integers(1, 5))
    scores = extreme_logits(n, np.float64)  # (5, n)
    Q, K = scores_from_queries_and_keys(scores, 16, dtype)
    V = spread((n, d_v), dtype, decades=1.0)
    expected = _attention64(Q, K, V)
    for block_size in _block_sizes(n, rng):
        where = _(
            "for {dtype} Q {q}, K {k}, V {v} whose scores are in the thousands "
            "(block_size = {block_size})",
            dtype=dtype.__name__,
            q=Q.shape,
            k=K.shape,
            v=V.shape,
            block_size=block_size,
        )
        got = _online_answer(fn, Q, K, V, block_size, False, where)
        if close(got, expected):
            continue
        bad = ~np.all(near(got, expected), axis=1)
        lost = bad & ~np.all(np.isfinite(got), axis=1)
        i = int(np.argmax(lost if lost.any() else bad))
        row = scores[i]
        tops = scores.max(axis=1)
        if lost.any() and np.all(tops[lost] < 0):
            hint = _(
                " Every score of that query is below 0, so a running maximum started at 0 "
                "(or never below 0) makes every exp(s - r) 0, and the sum 0: start it at -inf."
            )
        elif lost.any() and not lost[np.argmax(tops)]:
            hint = _(
                " The query with the largest scores came out right: a maximum shared by all "
                "queries (S.max() without axis=1) is far above the other queries' scores, "
                "whose exp(s - r) are then all 0. Each query needs its own, shape (m, 1)."
            )
        else:
            hint = ""
        hint += _(
            " Keep one running maximum per query, shape (m, 1), started at -inf and set at "
            "every block to the larger of itself and the block's maximum; subtract it before "
            "exp and change the scores in no other way. A maximum shared by all queries, one "
            "started at 0, a shift by another score, or scores clipped to a range overflow, "
            "underflow or change the weights for some of these queries."
        )
        what = _(
            "the output of query {query}, whose scores lie between {low:.0f} and {high:.0f}",
            query=i,
            low=row.min(),
            high=row.max(),
        )
        if lost[i]:
            raise not_finite(where, what, hint)
        raise not_close(where, what, expected[i], got[i], hint)


# About -1.3e30, exact in float32: below the large negative numbers that stand in for -inf
# in wrong answers (-1e4, -1e9, -1e30)
_FAR_BELOW = -(2.0**100)


def _masked_far_below_case(fn, dtype):
    """A causal case in which some queries see only scores below -1e30, and score their future
    keys near +1000: only masked scores set to -inf, before the maximum, give the answer."""
    rng = random()
    n = int(rng.integers(6, 15))
    d_v = int(rng.integers(1, 5))
    scores = rng.normal(0.0, 2.0, size=(n, n))
    future = np.triu(np.ones((n, n), dtype=bool), k=1)
    scores[future] = 1000.0 + rng.uniform(0.0, 8.0, size=int(future.sum()))
    count = int(rng.integers(1, n // 2 + 1))
    deep = rng.permutation(n - 1)[:count]  # some queries, never the last: it has no future
    for i in deep:
        scores[i, : i + 1] = _FAR_BELOW * rng.uniform(1.0, 2.0, size=i + 1)
    scores = scores.astype(np.float32).astype(np.float64)  # exact in float32
    Q, K = scores_from_queries_and_keys(scores, 16, dtype)
    V = spread((n, d_v), dtype, decades=1.0)
    expected = _attention64(Q, K, V, causal=True)
    block_size = _block_sizes(n, rng)[int(rng.integers(3))]
    where = _(
        "with causal = True, {dtype} Q {q}, block_size = {block_size}, and queries {queries} "
        "seeing only scores below -1e30 (their future keys score near +1000)",
        dtype=dtype.__name__,
        q=Q.shape,
        block_size=block_size,
        queries=sorted(deep.tolist()),
    )
    got = _online_answer(fn, Q, K, V, block_size, True, where)
    if close(got, expected):
        return
    bad = ~np.all(near(got, expected), axis=1)
    hint = (
        _(
            " Set the masked scores to -inf before the running maximum: a maximum taken over "
            "the future keys too makes exp(s - r) 0 for every visible key, and the sum 0."
        )
        if not np.all(np.isfinite(got[bad]))
        else _(
            " A masked score must be -inf, so that its exponential is exactly 0: a large "
            "finite number such as -1e9 is larger than these queries' visible scores and "
            "takes all the weight."
        )
    )
    _wrong_output(where, expected, got, hint)


def _about(count: int) -> str:
    """``count`` to two significant digits: a function's peak memory varies by a few bytes
    from run to run, and the same answer gets the same words."""
    return f"{round(count, 1 - len(str(count))):,}"


def _memory_cases(fn, dtype):
    """Many keys for a few queries, then a long causal sequence: the answer must hold no more
    than a few blocks, whatever n (see ``_allowed_bytes``). The sizes are fixed, so that every
    run measures the same: the keys are wider than a column and the values wider still, so a
    copy of K or V costs more than streaming allows, and less than the scores of every query."""
    rng = random()
    itemsize = np.dtype(dtype).itemsize
    many_keys = (16, 128 * 1024, 250, False, 2, 3)
    # widths of 1, so that the (n, n) mask is several times what streaming needs
    long_causal = (1800, 1800, 5, True, 1, 1)
    for m, n, block_size, causal, d_k, d_v in (many_keys, long_causal):
        Q, K, V = (rng.random(s, dtype=dtype) * 2 - 1 for s in [(m, d_k), (n, d_k), (n, d_v)])
        where = _(
            "for {dtype} inputs with m = {m}, n = {n}, d_k = {d_k}, d_v = {d_v}, "
            "block_size = {block_size}, causal = {causal}",
            dtype=dtype.__name__,
            m=m,
            n=n,
            d_k=d_k,
            d_v=d_v,
            block_size=block_size,
            causal=causal,
        )
        got, peak = _online_answer(fn, Q, K, V, block_size, causal, where, measure=True)
        # some queries, the first and the last among them: the full answer costs m * n
        rows = np.union1d([0, m - 1], rng.choice(m, size=min(m, 30), replace=False))
        expected = _attention64(Q, K, V, causal, rows)
        if not close(got[rows], expected):
            _wrong_output(where, expected, got[rows], rows=rows)
        allowed = _allowed_bytes(m, n, block_size, d_k, d_v)
        if not isinstance(peak, int):
            raise Failed(
                _("{where}, the memory your function used could not be measured", where=where)
            )
        if peak <= allowed:
            continue
        if peak >= m * n * itemsize:
            culprit = _(
                "as much as the whole (m, n) matrix of scores ({size:,} bytes): "
                "keep no score beyond the current block, neither the whole matrix (to take "
                "the row maxima first, say) nor the blocks to concatenate them, and walk over "
                "blocks of keys, not of queries",
                size=m * n * itemsize,
            )
        elif causal and peak >= n * n:
            culprit = _(
                "as much as an (n, n) causal mask, {size:,} bytes even as booleans: build "
                "each block's mask from the positions of its keys, start .. start + "
                "block_size - 1",
                size=n * n,
            )
        elif not causal and peak >= n * d_k * itemsize:
            culprit = _(
                "as much as a copy of K ({size:,} bytes): take each block of K and V as a "
                "slice, K[start:stop], which copies nothing, and copy no whole array (no "
                "K.T.copy() or np.ascontiguousarray(K.T), no astype to another dtype)",
                size=n * d_k * itemsize,
            )
        else:
            culprit = _("more than streaming needs, and more as n grows")
        raise Failed(
            _(
                "{where}, your function held about {peak} bytes at its peak, {culprit}. "
                "Streaming needs a few arrays of shape (m, block_size), (m, d_k) and (m, d_v) "
                "at a time, whatever n: this check allows {allowed:,} bytes here ({arrays} "
                "arrays of each shape and of shape (m, 1), and a little for Python)",
                where=where,
                peak=_about(peak),
                culprit=culprit,
                allowed=allowed,
                arrays=ARRAYS,
            )
        )


@check(forbids=SOFTMAXES + ATTENTIONS + NUMPY_ONLY)
def check_online_softmax_attention(fn):
    """Check ``fn(Q, K, V, block_size, causal) -> output``: attention streamed over key blocks.

    ``Q`` ``(m, d_k)``, ``K`` ``(n, d_k)``, ``V`` ``(n, d_v)``; the output must equal
    ``softmax(Q K^T / sqrt(d_k)) V`` (with keys ``j <= i`` only, when ``causal``), in the
    inputs' dtype, stay finite for scores in the thousands, and hold no more memory than a
    few blocks, however many keys there are. attnkit's attention and softmax functions are
    off limits.
    """
    for dtype in dtypes():
        _coded_cases(fn, dtype)
        _random_cases(fn, dtype)
        _extreme_case(fn, dtype)
        _masked_far_below_case(fn, dtype)
        # in each dtype: an answer may stream float64 and copy float32 inputs into float64
        _memory_cases(fn, dtype)
    return _(
        "correct: the streamed output equals softmax(Q K^T / sqrt(d_k)) V for every block "
        "size, with the causal mask, in float32 and float64, for scores in the thousands, "
        "and it never held more than a few blocks in memory"
    )


# --- grouped-query attention ----------------------------------------------------------------


def _gqa_answer(fn, Q, K, V, where):
    """The student's output for these inputs, as an array of the right shape and dtype."""
    with np.errstate(all="ignore"):  # overflow shows as inf or NaN, reported by the caller
        result = call(fn, Q, K, V)
    got = as_array(result, _("the output"))
    h, m = Q.shape[:2]
    g, d_v = V.shape[0], V.shape[2]
    if got.shape != (h, m, d_v):
        hint = (
            _(" That is one output per key-value head; every query head has its own.")
            if got.shape == (g, m, d_v)
            else ""
        )
        raise wrong_shape(where, _("the output"), f"(h, m, d_v) = {(h, m, d_v)}", got.shape, hint)
    keeps_dtype(result, Q.dtype, _("the output"))
    return got


def _gqa_sizes(rng):
    """Random ``(h, g)``: ``g`` from 1 to ``h``, ``h`` a multiple of ``g``."""
    g, per_group = (int(x) for x in rng.integers(1, 5, size=2))
    return g * per_group, g


def _coded_gqa_case(fn, Q, K):
    """Every value of key-value head j is j + 1, so each output row says which head was read."""
    h, m = Q.shape[:2]
    g, n = K.shape[:2]
    d_v = 2
    coded_V = np.repeat(np.arange(1.0, g + 1), n * d_v).reshape(g, n, d_v).astype(Q.dtype)
    where = _(
        "for Q {q} (h = {h}), K {k} and V {v} (g = {g})",
        q=Q.shape,
        h=h,
        k=K.shape,
        v=coded_V.shape,
        g=g,
    )
    got = _gqa_answer(fn, Q, K, coded_V, where)
    should = np.arange(h) // (h // g)
    expected = (should + 1.0)[:, None, None] * np.ones((1, m, d_v))
    if close(got, expected):
        return
    if np.all(got == np.trunc(got)) and np.all((expected - 1 <= got) & (got <= expected)):
        raise Failed(
            _(
                "{where}, every value of key-value head j is j + 1, so every output row should "
                "be j + 1; yours are whole numbers at or below that, starting with "
                "{rows}: the output was cut to integers (an integer array, or astype(int)), "
                "which turns 0.9999999 into 0. Keep it in a float array of the inputs' dtype",
                where=where,
                rows=shown(should + 1.0, got[:, 0, 0])[1],
            )
        )
    read = np.round(got[:, 0, 0]) - 1  # the key-value head each query head read
    if not close(got, (read + 1)[:, None, None] * np.ones((1, m, d_v))) or np.any(
        (read < 0) | (read >= g)
    ):
        raise Failed(
            _(
                "{where}, every value of key-value head j is j + 1, so each output "
                "row should be j + 1 whatever the weights, as long as each row of "
                "weights sums to 1; your rows start with {rows}. Apply the softmax over "
                "the keys (the last axis) before the weighted sum of the values",
                where=where,
                rows=shown(should + 1.0, got[:, 0, 0])[1],
            )
        )
    read = read.astype(int)
    if np.array_equal(read, np.arange(h) % g):
        raise Failed(
            _(
                "{where}, query head i read key-value head i % g ({read}), as "
                "np.tile does. Groups are consecutive: heads 0 .. h/g - 1 share "
                "key-value head 0, and so on ({should}); np.repeat(K, h // g, "
                "axis=0) repeats each head in place",
                where=where,
                read=read.tolist(),
                should=should.tolist(),
            )
        )
    raise Failed(
        _(
            "{where}, every value of key-value head j is j + 1, so your output shows "
            "that query heads 0 .. {last} read key-value heads {read}; "
            "they should read {should} (head i reads i // (h // g))",
            where=where,
            last=h - 1,
            read=read.tolist(),
            should=should.tolist(),
        )
    )


def _compare_gqa(fn, Q, K, V, where):
    """Fail unless ``fn`` gives grouped-query attention of these random inputs."""
    Q64, K64, V64 = (a.astype(np.float64) for a in (Q, K, V))
    expected = grouped_query_attention(Q64, K64, V64)[0]
    got = _gqa_answer(fn, Q, K, V, where)
    if close(got, expected):
        return
    if close(got, grouped_query_attention(Q64, K64, V64, scale=1.0)[0]):
        raise Failed(
            _(
                "{where}, you did not scale the scores: divide them by sqrt(d_k)",
                where=where,
            )
        )
    wrong = [i for i in range(len(Q)) if not close(got[i], expected[i])]
    if len(wrong) == len(Q):
        should, returned = shown(expected[0], got[0])
        raise Failed(
            _(
                "{where}, every query head is wrong: head 0 should output {should}, you "
                "returned {returned}.{lost}",
                where=where,
                should=should,
                returned=returned,
                lost=_digits_lost(got, expected),
            )
        )
    should, returned = shown(expected[wrong[0]], got[wrong[0]])
    raise Failed(
        _(
            "{where}, query heads {wrong} are wrong, the others right: query head "
            "i uses the keys and the values of key-value head i // (h // g), both "
            "from the same head. Head {head} should be {should}, you returned {returned}",
            where=where,
            wrong=wrong,
            head=wrong[0],
            should=should,
            returned=returned,
        )
    )


def _extreme_gqa_case(fn, dtype):
    """Every query head gets the rows of ``extreme_logits``, exactly, from its group's keys."""
    rng = random()
    h, g = _gqa_sizes(rng)
    n, d_k, d_v = int(rng.integers(4, 13)), 16, int(rng.integers(1, 5))
    Q, K = np.empty((h, 5, d_k), dtype=dtype), np.empty((g, n, d_k), dtype=dtype)
    for j in range(g):
        heads = slice(j * (h // g), (j + 1) * (h // g))
        scores = np.concatenate([extreme_logits(n, np.float64) for __ in range(h // g)])
        queries, K[j] = scores_from_queries_and_keys(scores, d_k, dtype)
        Q[heads] = queries.reshape(h // g, 5, d_k)
    V = spread((g, n, d_v), dtype, decades=1.0)
    expected = grouped_query_attention(*(a.astype(np.float64) for a in (Q, K, V)))[0]
    where = _(
        "for {dtype} Q {q}, K {k}, V {v} whose scores are in the thousands",
        dtype=dtype.__name__,
        q=Q.shape,
        k=K.shape,
        v=V.shape,
    )
    got = _gqa_answer(fn, Q, K, V, where)
    if close(got, expected):
        return
    i = int(np.argmin([close(got[k], expected[k]) for k in range(h)]))
    what = _("the output of query head {head}", head=i)
    hint = _(
        " Subtract each row's own maximum, scores.max(axis=-1, keepdims=True), and change the "
        "scores in no other way (or use attnkit.core.scaled_dot_product_attention, which "
        "does): a shift by another score or by one maximum for several rows, or scores "
        "clipped to a range, overflow, underflow or change the weights."
    )
    if not np.all(np.isfinite(got[i])):
        raise not_finite(where, what, hint)
    raise not_close(where, what, expected[i], got[i], hint)


# PyTorch's attention computes the whole answer with enable_gqa=True
@check(
    forbids=(
        "attnkit.core.grouped_query_attention",
        "torch.nn.functional.scaled_dot_product_attention",
    )
)
def check_grouped_query_attention(fn):
    """Check ``fn(Q, K, V) -> output``: ``h`` query heads sharing ``g`` key-value heads.

    ``Q`` ``(h, m, d_k)``, ``K`` ``(g, n, d_k)``, ``V`` ``(g, n, d_v)``; query head ``i``
    attends with key-value head ``i // (h // g)`` and the output is ``(h, m, d_v)``, a NumPy
    array in the inputs' dtype. ``attnkit.core.scaled_dot_product_attention`` is allowed,
    ``grouped_query_attention`` is not.
    """
    for dtype in dtypes():
        rng = np.random.default_rng(4)
        Q, K = rng.normal(size=(6, 3, 5)).astype(dtype), rng.normal(size=(2, 4, 5)).astype(dtype)
        _coded_gqa_case(fn, Q, K)
        fresh = random()
        h, g = _gqa_sizes(fresh)
        m, n, d_k = (int(x) for x in fresh.integers(1, 9, size=3))
        _coded_gqa_case(
            fn,
            fresh.normal(size=(h, m, d_k)).astype(dtype),
            fresh.normal(size=(g, n, d_k)).astype(dtype),
        )
        _coded_gqa_case(fn, Q[:1, :1], K[:1, :1])  # one head, query and key: no axis dropped

        for h, g in ((6, 2), (4, 4), (4, 1), (8, 4), _gqa_sizes(fresh)):
            m, d_k = (int(x) for x in fresh.integers(1, 9, size=2))
            n, d_v = (int(x) for x in fresh.integers(2, 9, size=2))  # two keys and values at least
            Q = fresh.normal(size=(h, m, d_k)).astype(dtype)
            K = fresh.normal(size=(g, n, d_k)).astype(dtype)
            V = spread((g, n, d_v), dtype, decades=2.0)
            kind = {
                h: _("multi-head attention, g = h"),
                1: _("multi-query attention, g = 1"),
            }.get(g, _("h / g = {ratio} query heads per key-value head", ratio=h // g))
            where = _(
                "for random {dtype} Q {q}, K {k}, V {v} ({kind})",
                dtype=dtype.__name__,
                q=Q.shape,
                k=K.shape,
                v=V.shape,
                kind=kind,
            )
            _compare_gqa(fn, Q, K, V, where)

        _extreme_gqa_case(fn, dtype)
    return _(
        "correct: each group of h/g consecutive query heads attends with its own "
        "key-value head, from g = h (multi-head) to g = 1 (multi-query), in float32 and "
        "float64, for scores in the thousands too"
    )


# --- merging partial results over blocks of keys (Flash-Decoding's last step) ----------------

__all__ += ["check_merge_attention_states"]


def _merged64(o_a, lse_a, o_b, lse_b):
    """Eq. scale-merge in float64, a query that sees no key in either block giving 0 and -inf."""
    o_a, lse_a, o_b, lse_b = (np.asarray(a, dtype=np.float64) for a in (o_a, lse_a, o_b, lse_b))
    r = np.maximum(lse_a, lse_b)
    shift = np.where(np.isfinite(r), r, 0.0)  # a query with no key: nothing to scale
    total = np.exp(lse_a - shift) + np.exp(lse_b - shift)
    with np.errstate(divide="ignore"):
        lse = shift + np.log(total)
    safe = np.where(total > 0, total, 1.0)
    w_a, w_b = np.exp(lse_a - shift) / safe, np.exp(lse_b - shift) / safe
    return w_a[:, None] * o_a + w_b[:, None] * o_b, lse


def _block_states(Q, K, V, cut):
    """Each block's attention output and logsumexp, keys ``[:cut]`` and ``[cut:]``, float64."""
    states = []
    for keys in (slice(0, cut), slice(cut, None)):
        S = Q @ K[keys].T / np.sqrt(Q.shape[1])  # (m, B)
        r = S.max(axis=1, keepdims=True)
        e = np.exp(S - r)
        states += [
            e @ V[keys] / e.sum(axis=1, keepdims=True),
            (r + np.log(e.sum(axis=1, keepdims=True)))[:, 0],
        ]
    return states


def _merge_answer(fn, inputs, where):
    """The student's ``(o, lse)`` for ``inputs``, as two arrays of the right shapes and dtype."""
    with np.errstate(all="ignore"):  # overflow shows as inf or NaN, reported by the caller
        result = call(fn, *inputs)
    if not (isinstance(result, tuple) and len(result) == 2):
        raise Failed(_("return a pair (o, lse): the merged output and its logsumexp"))
    o = as_array(result[0], _("the output o"))
    lse = as_array(result[1], _("the logsumexp lse"))
    m, d_v = inputs[0].shape
    if o.shape != (m, d_v) or lse.shape != (m,):
        raise Failed(
            _(
                "{where}, o should have shape (m, d_v) = {o_shape} and lse shape (m,) = "
                "{lse_shape}; you returned {o_got} and {lse_got}",
                where=where,
                o_shape=(m, d_v),
                lse_shape=(m,),
                o_got=o.shape,
                lse_got=lse.shape,
            )
        )
    keeps_dtype(result[0], inputs[0].dtype, _("the output o"))
    keeps_dtype(result[1], inputs[0].dtype, _("the logsumexp lse"))
    return o, lse


def _compare_merge(fn, inputs, where, advice=""):
    """Fail unless ``fn`` merges ``inputs`` as eq. scale-merge does."""
    o, lse = _merge_answer(fn, inputs, where)
    expected_o, expected_lse = _merged64(*inputs)
    both = np.isneginf(expected_lse)
    lse_right = np.all(np.isneginf(lse[both])) and close(lse[~both], expected_lse[~both])
    if close(o, expected_o) and lse_right:
        return
    o_a, lse_a, o_b, lse_b = (a.astype(np.float64) for a in inputs)
    if not np.all(np.isfinite(o)):
        rows = np.flatnonzero(~np.all(np.isfinite(o), axis=1)).tolist()
        hint = _(
            " Subtract the larger of lse_a and lse_b before exp, so that no exponential "
            "overflows, and where both are -inf (the query saw no key in either block) use a "
            "finite shift such as 0, since exp(-inf - (-inf)) is NaN."
        )
        raise not_finite(where, _("the output of queries {rows}", rows=rows), hint)
    if not lse_right:
        hint = ""
        finite = ~both
        if not np.all(np.isfinite(lse[finite])):
            hint = _(
                " exp(lse_a) or exp(lse_b) overflowed or underflowed: subtract r = "
                "max(lse_a, lse_b) before exp and add it back after the log."
            )
        elif close(lse[finite], np.maximum(lse_a, lse_b)[finite]):
            hint = _(
                " That is the larger of the two: lse is log(exp(lse_a) + exp(lse_b)), the "
                "log of the two blocks' sums added."
            )
        elif close(lse[finite], (lse_a + lse_b)[finite]):
            hint = _(
                " That is lse_a + lse_b: the logs of two sums do not add; lse is "
                "log(exp(lse_a) + exp(lse_b))."
            )
        raise not_close(where, "lse", expected_lse, lse, hint)
    if close(o, (o_a + o_b) / 2):
        advice = _(
            " You averaged the two outputs: each block counts in proportion to its share of "
            "the softmax's sum, exp(lse_a - lse) and exp(lse_b - lse)."
        )
    elif close(
        o, np.exp(lse_b - expected_lse)[:, None] * o_a + np.exp(lse_a - expected_lse)[:, None] * o_b
    ):
        advice = _(" Each block's output takes its own weight: exp(lse_a - lse) for o_a.")
    i = int(np.argmin(np.all(near(o, expected_o), axis=1)))
    raise not_close(where, _("the output of query {query}", query=i), expected_o[i], o[i], advice)


@check(forbids=SOFTMAXES + ATTENTIONS)
def check_merge_attention_states(fn):
    """Check ``fn(o_a, lse_a, o_b, lse_b) -> (o, lse)``: two blocks' attention merged.

    ``o_a``, ``o_b`` ``(m, d_v)`` are the outputs of the same ``m`` queries over two blocks of
    keys, each normalised over its own block, and ``lse_a``, ``lse_b`` ``(m,)`` their
    logsumexps (``-inf`` for a query that sees no key of that block, whose output row is 0).
    The answer must be the attention over both blocks and its logsumexp (eq. scale-merge), in
    the inputs' dtype, finite for logsumexps in the thousands, and ``0`` and ``-inf`` for a
    query that sees no key in either block. attnkit's attention and softmax functions are off
    limits.
    """
    rng = random()
    for dtype in dtypes():
        # a worked case: m = 3 queries, 7 keys cut after key 3
        coded = np.random.default_rng(7)
        Q, K, V = coded.normal(size=(3, 4)), coded.normal(size=(7, 4)), coded.normal(size=(7, 2))
        inputs = tuple(a.astype(dtype) for a in _block_states(Q, K, V, 3))
        _compare_merge(
            fn,
            inputs,
            _("for {dtype} states of 3 queries over keys 0-2 and 3-6", dtype=dtype.__name__),
        )

        for __ in range(3):  # fresh sizes and a fresh cut
            m, n, d_k, d_v = (int(x) for x in rng.integers(2, 9, size=4))
            n += 1
            Q = rng.normal(size=(m, d_k)) * rng.uniform(0.5, 3.0)
            K, V = rng.normal(size=(n, d_k)), spread((n, d_v), np.float64, decades=2.0)
            cut = int(rng.integers(1, n))
            inputs = tuple(a.astype(dtype) for a in _block_states(Q, K, V, cut))
            where = _(
                "for random {dtype} states of {m} queries over keys 0-{last_a} and {cut}-{last}",
                dtype=dtype.__name__,
                m=m,
                last_a=cut - 1,
                cut=cut,
                last=n - 1,
            )
            _compare_merge(fn, inputs, where)

        # one query and one value coordinate: an answer must keep both axes of length 1
        Q, K, V = coded.normal(size=(1, 4)), coded.normal(size=(5, 4)), coded.normal(size=(5, 1))
        inputs = tuple(a.astype(dtype) for a in _block_states(Q, K, V, 2))
        where = _(
            "for {dtype} states of one query, d_v = 1, over keys 0-1 and 2-4", dtype=dtype.__name__
        )
        _compare_merge(fn, inputs, where)

        # logsumexps in the thousands, of either sign: exp(lse) overflows or underflows
        m, d_v = 4, 3
        for offset in (1000.0, -1000.0):
            lse_a = (offset + rng.uniform(-5.0, 5.0, size=m)).astype(dtype)
            lse_b = (offset + rng.uniform(-5.0, 5.0, size=m)).astype(dtype)
            o_a, o_b = spread((m, d_v), dtype, decades=1.0), spread((m, d_v), dtype, decades=1.0)
            where = _(
                "for {dtype} logsumexps near {offset:+.0f}", dtype=dtype.__name__, offset=offset
            )
            _compare_merge(fn, (o_a, lse_a, o_b, lse_b), where)

        # queries that see no key in one block, and one that sees none in either
        lse_a = rng.normal(size=5).astype(dtype)
        lse_b = rng.normal(size=5).astype(dtype)
        lse_a[[1, 4]] = -np.inf
        lse_b[[3, 4]] = -np.inf
        o_a, o_b = spread((5, 2), dtype, decades=1.0), spread((5, 2), dtype, decades=1.0)
        o_a[[1, 4]] = 0.0
        o_b[[3, 4]] = 0.0
        where = _(
            "for {dtype} states where query 1 sees no key in block a, query 3 none in "
            "block b and query 4 none in either (lse -inf, output row 0)",
            dtype=dtype.__name__,
        )
        _compare_merge(
            fn,
            (o_a, lse_a, o_b, lse_b),
            where,
            _(" A block with lse = -inf has weight exp(-inf) = 0; a query with none gets 0, -inf."),
        )
    return _(
        "correct: two blocks' outputs weighted by their shares of the softmax's sum, and "
        "their logsumexps combined, in float32 and float64, for logsumexps in the thousands "
        "and for blocks in which a query sees no key"
    )
