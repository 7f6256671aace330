"""Inputs that the checks share: random, real-valued, and hard on every softmax.

A check that tries only tidy inputs (integers, ``arange``-like data, small scores) accepts
answers that happen to be right on them: an answer that rounds, goes through an integer buffer
or sorts along an axis, or a softmax shifted by something other than each row's own maximum.
These inputs are drawn from the running check's generator (:func:`harness.random`): the same
for every run of a check, other ones for another ``seed=``, on which the tests try every answer
too, so no answer can be fitted to them.
"""

from __future__ import annotations

import numpy as np

from .harness import random

__all__ = ["spread", "extreme_logits", "scores_from_queries_and_keys"]

# float32 and float64 both overflow exp() above 709 at the latest (float32 above 88.7) and
# round it to 0 below -746 (float32 below -104): these scores are far outside both.
HUGE = 3000.0


def spread(shape, dtype, decades: float = 3.0) -> np.ndarray:
    """Random reals of both signs whose sizes spread over ``2 * decades`` orders of magnitude.

    No two entries are equal and none is an integer, so rounding, an integer buffer or a sort
    along any axis changes the answer.
    """
    rng = random()
    values = rng.standard_normal(shape) * 10.0 ** rng.uniform(-decades, decades, shape)
    return values.astype(dtype)


def extreme_logits(n: int, dtype) -> np.ndarray:
    """``(5, n)`` logits (n >= 3) that only a softmax shifted by each row's own maximum survives.

    The rows come in random order, each with its entries in random order, its largest entry
    neither first nor last:

    - all very negative (near -10000): shifted by 0, or by a maximum floored at 0, every
      exponential rounds to 0 and the row becomes 0/0;
    - one score far above the rest: unshifted, it overflows;
    - scores spread over ±3000, the two largest within a few units of each other, whose
      spread no exp() can hold: a shift by the mean, the minimum or the first entry overflows,
      and clipping the scores (to ±30 or ±80) makes the two largest equal;
    - near +2000 with distinct large scores, and a row near -2000: one maximum for the whole
      array, or one per column, leaves the low rows at 0/0.

    The entries are exact in float32, so both dtypes hold the same logits.
    """
    if n < 3:
        raise ValueError(f"extreme logits need n >= 3 entries per row, got {n}")
    rng = random()
    rows = np.empty((5, n))
    rows[0] = -10000.0 + rng.uniform(0.0, 8.0, n)
    rows[1] = rng.normal(0.0, 3.0, n)
    rows[1, 0] = 5000.0 + rng.uniform(0.0, 1.0)
    rows[2] = rng.uniform(-HUGE, HUGE - 100.0, n)
    rows[2, :2] = HUGE - rng.uniform(0.0, 1.0), HUGE - rng.uniform(1.0, 3.0)
    rows[3] = 2000.0 + rng.uniform(-6.0, 6.0, n)
    rows[4] = -2000.0 - rng.uniform(0.0, 6.0, n)
    rows = rows.astype(np.float32).astype(np.float64)  # exact in float32
    for row in rows:
        rng.shuffle(row)
        # the maximum never first or last, so that no shift by a fixed entry is the right one
        top, inside = int(np.argmax(row)), int(rng.integers(1, n - 1))
        row[[top, inside]] = row[[inside, top]]
    rng.shuffle(rows)
    return rows.astype(dtype)


def scores_from_queries_and_keys(S: np.ndarray, d_k: int, dtype) -> tuple[np.ndarray, np.ndarray]:
    """Queries ``(m, d_k)`` and keys ``(n, d_k)`` whose scaled scores are exactly ``S`` ``(m, n)``.

    ``Q @ K.T / sqrt(d_k)`` must give ``S`` in float32 too, whatever order a student adds in:
    each key is a power of two on a coordinate of its own (in random order), so every score is
    one exact product, and ``d_k`` is a power of 4, so ``sqrt(d_k)`` is exact. The queries'
    other coordinates are random and meet only zeros. ``S`` must be exact in float32.
    """
    m, n = S.shape
    root = round(float(np.sqrt(d_k)))
    if root * root != d_k or root & (root - 1) or d_k < n:
        raise ValueError(f"d_k must be a power of 4 and at least n = {n}, got {d_k}")
    rng = random()
    coordinate = rng.permutation(d_k)[:n]  # key j lives on its own coordinate
    scale = 2.0 ** rng.integers(-2, 3)
    K = np.zeros((n, d_k))
    K[np.arange(n), coordinate] = scale
    Q = rng.normal(size=(m, d_k))
    Q[:, coordinate] = S * root / scale
    return Q.astype(dtype), K.astype(dtype)
