"""Checks for the coding exercises of ``chapters/attention-at-scale.md``."""

import numpy as np

from ..core import causal_mask, grouped_query_attention, scaled_dot_product_attention
from .harness import Failed, as_array, call, check, close, shown

__all__ = ["check_online_softmax_attention", "check_grouped_query_attention"]


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
        running_sum = (1.0 if mistake == "sum not rescaled" else rescale) * running_sum + p.sum(
            axis=1, keepdims=True
        )
        acc = (1.0 if mistake == "accumulator not rescaled" else rescale) * acc + p @ V[b]
        running_max = new_max
    return acc / running_sum


def _online_answer(fn, Q, K, V, block_size, causal, where):
    """The student's output for these inputs, as an array, after the checks every case shares."""
    with np.errstate(all="ignore"):  # overflow shows as inf or NaN, reported below
        result = call(
            fn,
            Q,
            K,
            V,
            block_size,
            causal,
            called_with=f"Q {Q.shape}, K {K.shape}, V {V.shape}, "
            f"block_size = {block_size}, causal = {causal}",
        )
    if isinstance(result, tuple):
        raise Failed("return only the output array, shape (m, d_v), not a tuple")
    got = as_array(result, "the output")
    m, d_v = Q.shape[0], V.shape[1]
    if got.shape != (m, d_v):
        hint = (
            " That is the shape of the weights: the point of streaming is never to form "
            "them; return the output, weights @ V."
            if got.shape == (m, K.shape[0])
            else ""
        )
        raise Failed(
            f"{where} the output should have shape (m, d_v) = {(m, d_v)}, you "
            f"returned {got.shape}.{hint}"
        )
    if got.dtype != Q.dtype:
        raise Failed(
            f"{where} the inputs are {Q.dtype} and your output is {got.dtype}: keep "
            "the inputs' dtype (create the running arrays with dtype=Q.dtype)"
        )
    return got


@check
def check_online_softmax_attention(fn):
    """Check ``fn(Q, K, V, block_size, causal) -> output``: attention streamed over key blocks.

    ``Q`` ``(m, d_k)``, ``K`` ``(n, d_k)``, ``V`` ``(n, d_v)``; the output must equal
    ``softmax(Q K^T / sqrt(d_k)) V`` (with keys ``j <= i`` only, when ``causal``), in the
    inputs' dtype, and stay finite for scores in the thousands.
    """
    # m = 4 queries, n = 10 keys in blocks of 4 (the last block has 2), largest scores last
    Q, K, V = _scores_rising_by_block(4, 10, 3, 2, [0.0, 1.0, 2.0], 4, np.float64, seed=0)
    expected = scaled_dot_product_attention(Q, K, V)[0]
    where = "for Q (4, 3), K (10, 3), V (10, 2) and block_size = 4,"
    got = _online_answer(fn, Q, K, V, 4, False, where)
    if not np.all(np.isfinite(got)):
        raise Failed(
            f"{where} your output holds NaN or inf; the scores are small here, so "
            "look for a division by a zero sum or exp(-inf - (-inf))"
        )
    if not close(got, expected):
        unscaled = scaled_dot_product_attention(Q, K, V, scale=1.0)[0]
        if close(got, unscaled):
            raise Failed(f"{where} you did not scale the scores: divide Q K^T by sqrt(d_k)")
        for mistake, advice in [
            (
                "last block dropped",
                "the last block has only n mod block_size = 2 keys, and "
                "you left it out: loop over range(0, n, block_size) and slice up to start + "
                "block_size (NumPy stops a slice at the end by itself)",
            ),
            (
                "each block normalised",
                "you normalised each block on its own and averaged the "
                "blocks' outputs; the softmax runs over all keys at once. Keep running sums and "
                "divide only once, after the last block",
            ),
            (
                "accumulator not rescaled",
                "when a block brings a larger maximum, the sum of "
                "exp(s - r) v accumulated so far must be multiplied by exp(r_old - r_new) too, "
                "not only the sum of exp(s - r)",
            ),
            (
                "sum not rescaled",
                "when a block brings a larger maximum, the running sum of "
                "exp(s - r) must be multiplied by exp(r_old - r_new), like the accumulator",
            ),
        ]:
            if close(got, _blockwise(Q, K, V, 4, mistake)):
                raise Failed(f"{where} {advice}")
        raise Failed(
            "{} the output should be {}, you returned {}".format(where, *shown(expected, got))
        )

    for block_size in (1, 3, 10, 16):
        where = f"with block_size = {block_size} (n = 10),"
        got = _online_answer(fn, Q, K, V, block_size, False, where)
        if not close(got, expected):
            hint = " A block larger than n is the whole sequence." if block_size > 10 else ""
            raise Failed(
                "{} the output should be {}, you returned {}.{}".format(
                    where, *shown(expected, got), hint
                )
            )

    # causal: m = n = 7 in blocks of 3; key j is visible to query i when j <= i
    rng = np.random.default_rng(1)
    Qc, Kc, Vc = rng.normal(size=(7, 3)), rng.normal(size=(7, 3)), rng.normal(size=(7, 2))
    expected = scaled_dot_product_attention(Qc, Kc, Vc, mask=causal_mask(7))[0]
    where = "with causal = True (m = n = 7, block_size = 3),"
    got = _online_answer(fn, Qc, Kc, Vc, 3, True, where)
    if not close(got, expected):
        local = np.arange(3)[None, :] <= np.arange(7)[:, None]  # (7, 3), block-local
        candidates = [
            (
                scaled_dot_product_attention(Qc, Kc, Vc)[0],
                "you ignored causal: with causal = True query i may attend to keys j <= i only",
            ),
            (
                scaled_dot_product_attention(Qc, Kc, Vc, mask=causal_mask(7).T)[0],
                "you kept the keys j >= i, the future; the causal mask keeps j <= i",
            ),
            (
                scaled_dot_product_attention(Qc, Kc, Vc, mask=np.tile(local, (1, 3))[:, :7])[0],
                "you compared the query's position with the key's column inside its block; "
                "compare it with the key's position in the sequence, start + column",
            ),
        ]
        for candidate, advice in candidates:
            if close(got, candidate):
                raise Failed(f"{where} {advice}")
        lost = np.flatnonzero(~np.all(np.isfinite(got), axis=1)).tolist()
        if lost:
            raise Failed(
                f"{where} queries {lost} came out NaN or inf. Every query may attend to key 0 "
                "(query 0 to key 0 only: keep keys j <= i, not j < i), and key 0 is in the first "
                "block, so the running maximum is finite after it. A later block whose keys are "
                "all masked for a query has maximum -inf: the running maximum must stay the "
                "larger of the old one and the block's, never the block's alone"
            )
        raise Failed(
            "{} the output should be {}, you returned {}".format(where, *shown(expected, got))
        )

    # scores in the thousands: exp overflows unless every exponent stays <= 0
    for offsets, order in (
        ([0.0, 400.0, 800.0, 1200.0], "rising"),
        ([1200.0, 800.0, 400.0, 0.0], "falling"),
    ):
        Ql, Kl, Vl = _scores_rising_by_block(3, 12, 3, 2, offsets, 3, np.float64, seed=2)
        expected = scaled_dot_product_attention(Ql, Kl, Vl)[0]
        where = (
            f"with scores near {', '.join(f'{o:g}' for o in offsets)} in the four blocks "
            f"({order}, block_size = 3),"
        )
        got = _online_answer(fn, Ql, Kl, Vl, 3, False, where)
        if not np.all(np.isfinite(got)):
            raise Failed(
                f"{where} your output holds NaN or inf: exp overflowed. Subtract the "
                "running maximum r before exp, set r to the larger of r and the "
                "block's maximum at every block, and multiply what you summed "
                "before by exp(r_old - r_new), which is never above 1"
            )
        if not close(got, expected):
            raise Failed(
                "{} the output should be {}, you returned {}".format(where, *shown(expected, got))
            )

    # float32: the dtype is kept, and float32's exp overflows above 88
    Q32, K32, V32 = _scores_rising_by_block(4, 9, 3, 2, [0.0, 60.0, 120.0], 3, np.float32, seed=3)
    expected = scaled_dot_product_attention(Q32, K32, V32)[0]
    where = "for float32 inputs with scores near 0, 60 and 120 (block_size = 3),"
    got = _online_answer(fn, Q32, K32, V32, 3, False, where)
    if not np.all(np.isfinite(got)):
        raise Failed(
            f"{where} your output holds NaN or inf: float32's exp overflows above "
            "88, so every exponent must be a score minus the running maximum"
        )
    if not close(got, expected):
        raise Failed(
            "{} the output should be {}, you returned {}".format(where, *shown(expected, got))
        )
    return (
        "correct: the streamed output equals softmax(Q K^T / sqrt(d_k)) V for every block "
        "size, with the causal mask, in float32, and for scores in the thousands"
    )


@check
def check_grouped_query_attention(fn):
    """Check ``fn(Q, K, V) -> output``: ``h`` query heads sharing ``g`` key-value heads.

    ``Q`` ``(h, m, d_k)``, ``K`` ``(g, n, d_k)``, ``V`` ``(g, n, d_v)``; query head ``i``
    attends with key-value head ``i // (h // g)`` and the output is ``(h, m, d_v)``.
    """
    rng = np.random.default_rng(4)
    h, g, m, n, d_k, d_v = 6, 2, 3, 4, 5, 2
    Q, K = rng.normal(size=(h, m, d_k)), rng.normal(size=(g, n, d_k))
    # every value of key-value head j is j + 1, so each output row says which head was read
    coded_V = np.repeat(np.arange(1.0, g + 1), n * d_v).reshape(g, n, d_v)
    where = f"for Q {Q.shape} (h = {h}), K {K.shape} and V {coded_V.shape} (g = {g}),"
    got = as_array(call(fn, Q, K, coded_V), "the output")
    if got.shape != (h, m, d_v):
        hint = (
            " That is one output per key-value head; every query head has its own."
            if got.shape == (g, m, d_v)
            else ""
        )
        raise Failed(
            f"{where} the output should have shape (h, m, d_v) = {(h, m, d_v)}, "
            f"you returned {got.shape}.{hint}"
        )
    should = np.arange(h) // (h // g)
    if not close(got, (should + 1.0)[:, None, None] * np.ones((1, m, d_v))):
        read = np.round(got[:, 0, 0]) - 1  # the key-value head each query head read
        if not close(got, (read + 1)[:, None, None] * np.ones((1, m, d_v))) or np.any(
            (read < 0) | (read >= g)
        ):
            raise Failed(
                f"{where} every value of key-value head j is j + 1, so each output "
                "row should be j + 1 whatever the weights, as long as each row of "
                "weights sums to 1; your rows start with "
                f"{shown(should + 1.0, got[:, 0, 0])[1]}. Apply the softmax over "
                "the keys (the last axis) before the weighted sum of the values"
            )
        read = read.astype(int)
        if np.array_equal(read, np.arange(h) % g):
            raise Failed(
                f"{where} query head i read key-value head i % g ({read.tolist()}), as "
                "np.tile does. Groups are consecutive: heads 0 .. h/g - 1 share "
                f"key-value head 0, and so on ({should.tolist()}); np.repeat(K, h // g, "
                "axis=0) repeats each head in place"
            )
        raise Failed(
            f"{where} every value of key-value head j is j + 1, so your output shows "
            f"that query heads 0 .. {h - 1} read key-value heads {read.tolist()}; "
            f"they should read {should.tolist()} "
            "(head i reads i // (h // g))"
        )

    for h, g in ((6, 2), (4, 4), (4, 1), (8, 4)):
        Q = rng.normal(size=(h, m, d_k))
        K, V = rng.normal(size=(g, n, d_k)), rng.normal(size=(g, n, d_v))
        expected = grouped_query_attention(Q, K, V)[0]
        kind = {h: "multi-head attention, g = h", 1: "multi-query attention, g = 1"}.get(
            g, f"h / g = {h // g} query heads per key-value head"
        )
        where = f"for Q {Q.shape}, K {K.shape}, V {V.shape} ({kind}),"
        got = as_array(call(fn, Q, K, V), "the output")
        if got.shape != expected.shape:
            raise Failed(
                f"{where} the output should have shape (h, m, d_v) = "
                f"{expected.shape}, you returned {got.shape}"
            )
        if close(got, grouped_query_attention(Q, K, V, scale=1.0)[0]):
            raise Failed(f"{where} you did not scale the scores: divide them by sqrt(d_k)")
        if not close(got, expected):
            wrong = [i for i in range(h) if not close(got[i], expected[i])]
            raise Failed(
                f"{where} query heads {wrong} are wrong, the others right: query head "
                "i uses the keys and the values of key-value head i // (h // g), both "
                "from the same head. Head {} should be {}, you returned {}".format(
                    wrong[0], *shown(expected[wrong[0]], got[wrong[0]])
                )
            )
    return (
        "correct: each group of h/g consecutive query heads attends with its own "
        "key-value head, from g = h (multi-head) to g = 1 (multi-query)"
    )
