"""Checks for the coding exercises of ``chapters/attention.md``."""

import numpy as np

from ..core import attention, softmax
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
    not_close,
    not_finite,
    random,
    shown,
)
from .inputs import extreme_logits, spread
from .wording import _

__all__ = ["check_softmax", "check_single_query_attention"]

# Logits that only a softmax shifted by each row's own maximum survives: a row near +1000
# overflows unshifted; a row near -1000 underflows to 0/0 when shifted by the array's maximum
# or by its column's; [1000, -1000, 0] has mean 0 and minimum -1000, so shifting by either
# still overflows.
_LARGE = np.array(
    [
        [1000.0, 1001.0, 1002.0],
        [-1000.0, -1001.0, -1002.0],
        [1000.0, -1000.0, 0.0],
        [-2000.0, -1999.0, -2000.5],
    ]
)


def _softmax_of(fn, x):
    """``fn(x)`` as an array; a broadcasting error is explained, since keepdims cures it."""
    try:
        with np.errstate(all="ignore"):  # overflow is reported below, in words
            return call(fn, x)
    except Raised as raised:
        if "broadcast" not in raised.error:
            raise
        raise Failed(
            _(
                "{raised}. A maximum or a sum along the last axis has shape (m,); "
                "keepdims=True keeps it (m, 1), which broadcasts against (m, n)",
                raised=raised.args[0],  # the message, which can change language
            )
        ) from None


@check(forbids=SOFTMAXES + ATTENTIONS + NUMPY_ONLY)
def check_softmax(fn):
    """Check ``fn(x)``: a softmax over the last axis of a 1-D or 2-D array, in its dtype.

    Besides worked examples it tries random logits whose sizes spread over many orders, and
    rows that only a softmax shifted by each row's own maximum survives."""
    for dtype in dtypes():
        vector = np.array([1.0, 2.0, 3.0], dtype=dtype)
        answer = _softmax_of(fn, vector)
        got = as_array(answer, _("the result"))
        if got.shape != vector.shape:
            raise Failed(
                _(
                    "for an input of shape {shape} you returned shape {got}; "
                    "softmax returns one weight per input entry",
                    shape=vector.shape,
                    got=got.shape,
                )
            )
        keeps_dtype(answer, dtype, _("the result"))
        if np.any(got < 0):
            raise Failed(
                _("some weights are negative ({got}); exp() makes every term positive", got=got)
            )
        if not close(got.sum(), 1.0):
            raise Failed(
                _(
                    "the weights sum to {total}, not 1: divide by the sum of the exponentials",
                    total=shown(1.0, got.sum())[1],
                )
            )
        if not close(got, softmax(vector.astype(float))):
            expected, returned = shown(softmax(vector.astype(float)), got)
            raise Failed(
                _(
                    "softmax([1, 2, 3]) should be {expected}, you returned {returned}",
                    expected=expected,
                    returned=returned,
                )
            )

        single = np.array([7.0], dtype=dtype)
        got = as_array(_softmax_of(fn, single), _("the result"))
        if got.shape != (1,) or not close(got, 1.0):
            raise Failed(
                _(
                    "softmax([7]) should be [1.0] (one entry takes all the weight), you "
                    "returned {returned}",
                    returned=got.tolist(),
                )
            )

        # non-square, then square: a reduction without keepdims raises on the first and gives
        # wrong numbers on the second, whose rows all differ
        for matrix in (
            np.array([[1.0, 2.0, 3.0], [0.0, 0.0, 0.0]], dtype=dtype),
            np.array([[0.0, 1.0, 4.0], [2.0, -1.0, 0.5], [3.0, 3.0, -2.0]], dtype=dtype),
        ):
            expected = softmax(matrix.astype(float))
            answer = _softmax_of(fn, matrix)
            got = as_array(answer, _("the result"))
            if got.shape != matrix.shape:
                raise Failed(
                    _(
                        "for an input of shape {shape} you returned shape {got}; "
                        "keep the shape and normalise each row",
                        shape=matrix.shape,
                        got=got.shape,
                    )
                )
            keeps_dtype(answer, dtype, _("the result"))
            if close(got, softmax(matrix.astype(float), axis=0)):
                raise Failed(
                    _(
                        "you normalised the columns (axis 0); each row must sum to 1, "
                        "so sum along the last axis with keepdims=True"
                    )
                )
            if close(got.sum(), 1.0):
                raise Failed(
                    _(
                        "the whole matrix sums to 1, but each row should: "
                        "sum along the last axis with keepdims=True, not over all entries"
                    )
                )
            if not close(got.sum(axis=-1), 1.0):
                raise Failed(
                    _(
                        "for {matrix} the rows sum to {totals}, not 1: divide each row by "
                        "its own sum, e.sum(axis=-1, keepdims=True)",
                        matrix=matrix.tolist(),
                        totals=shown(1.0, got.sum(axis=-1))[1],
                    )
                )
            if not close(got, expected):
                raise not_close(
                    _("for {matrix}", matrix=matrix.tolist()),
                    _("the rows"),
                    expected,
                    got,
                    _(" Subtract each row's own maximum, x.max(axis=-1, keepdims=True)."),
                )

        expected = softmax(_LARGE)
        answer = _softmax_of(fn, _LARGE.astype(dtype))
        got = as_array(answer, _("the result"))
        if got.shape != _LARGE.shape:
            raise Failed(
                _(
                    "for an input of shape {shape} you returned shape {got}",
                    shape=_LARGE.shape,
                    got=got.shape,
                )
            )
        keeps_dtype(answer, dtype, _("the result"))
        finite = np.isfinite(got).all(axis=-1)
        if not finite.all():
            row = _LARGE[np.argmin(finite)]
            raise not_finite(
                _("for the logits {row}", row=row.tolist()),
                _("the result"),
                _(
                    " exp(1000) overflows and exp(-1000) underflows to 0, giving 0/0. Subtract "
                    "each row's maximum first, so that every exponent is at most 0 and the "
                    "largest is exactly 0. Subtracting the mean, the minimum, or one maximum "
                    "for the whole array guarantees neither."
                ),
            )
        if not close(got, expected):
            raise not_close(
                _("for logits near ±1000"),
                _("the rows"),
                expected,
                got,
                _(
                    " Subtract each row's maximum and change the logits in no other way: "
                    "clipping or rescaling them changes the weights."
                ),
            )
        rng = random()
        for logits in (
            spread(rng.integers(3, 9), dtype, decades=2.0),
            spread((rng.integers(2, 6), rng.integers(3, 9)), dtype, decades=2.0),
            extreme_logits(int(rng.integers(4, 9)), dtype),
        ):
            _compare_softmax(fn, logits, dtype)
    return _(
        "correct: non-negative weights, every row sums to 1, large logits stay finite, "
        "float32 stays float32"
    )


def _compare_softmax(fn, logits, dtype):
    """Fail unless ``fn(logits)`` is the softmax of every row of the random ``logits``."""
    expected = softmax(logits.astype(float))
    answer = _softmax_of(fn, logits)
    got = as_array(answer, _("the result"))
    if got.shape != logits.shape:
        raise Failed(
            _(
                "for an input of shape {shape} you returned shape {got}",
                shape=logits.shape,
                got=got.shape,
            )
        )
    keeps_dtype(answer, dtype, _("the result"))
    if close(got, expected):
        return
    rows, have_rows, want_rows = (np.atleast_2d(a) for a in (logits, got, expected))
    bad = next(i for i in range(len(rows)) if not close(have_rows[i], want_rows[i]))
    have, want = have_rows[bad], want_rows[bad]
    where = _(
        "for the {dtype} logits {logits}",
        dtype=dtype.__name__,
        logits=np.round(rows[bad].astype(float), 2).tolist(),
    )
    hint = _(
        " Subtract each row's own maximum, x.max(axis=-1, keepdims=True), and change the "
        "logits in no other way: a shift by another entry, by one maximum for the whole array "
        "or by a maximum floored at 0 overflows or underflows on some rows, and clipping or "
        "rounding changes the weights."
    )
    if not np.all(np.isfinite(have)):
        raise not_finite(where, _("the result"), hint)
    raise not_close(where, _("the result"), want, have, hint)


# Scores H z = [1000, -350, 1000, -300, 999, -950], exact in float32 too: np.exp of them
# overflows, and a stable softmax gives two equal weights and a third one e times smaller.
_LARGE_Z = np.array([30.0, 10.0])
_LARGE_H = np.array(
    [[30.0, 10.0], [-20.0, 25.0], [29.0, 13.0], [0.0, -30.0], [33.0, 0.9], [-30.0, -5.0]]
)


def _attention_cases(dtype):
    """(z, H) pairs: I == d with H not symmetric, first, so that H @ a and H.T @ z give numbers
    to diagnose rather than errors; I != d; one encoder token; scores near 1000; then fresh
    random ones, and scores that only a softmax shifted by its own maximum survives."""
    rng = np.random.default_rng(0)
    cases = [
        (rng.normal(size=3), rng.normal(size=(3, 3))),  # I = d = 3
        (rng.normal(size=3), rng.normal(size=(4, 3))),  # I = 4, d = 3
        (rng.normal(size=5), rng.normal(size=(1, 5))),  # one encoder token
        (_LARGE_Z, _LARGE_H),
    ]
    fresh = random()
    tokens, d = fresh.integers(2, 9, size=2)
    cases.append((spread(d, float, decades=1.0), spread((tokens, d), float, decades=1.0)))
    for scores in extreme_logits(int(fresh.integers(4, 9)), np.float64):
        cases.append(_with_scores(scores, int(fresh.integers(2, 6))))
    return [(z.astype(dtype), H.astype(dtype)) for z, H in cases]


def _with_scores(scores, d):
    """A query ``z`` (d,) and keys ``H`` (I, d) whose scores ``H @ z`` are exactly ``scores``:
    ``z`` is a power of two on one coordinate and 0 elsewhere, so each score is one product."""
    rng = random()
    axis, scale = int(rng.integers(d)), 2.0 ** rng.integers(-2, 3)
    z = np.zeros(d)
    z[axis] = scale
    H = rng.normal(size=(len(scores), d))
    H[:, axis] = scores / scale
    return z, H


def _wrong_weights(a, z, H, expected, where):
    """Say what is wrong with weights ``a`` that are not ``softmax(H z)``."""
    scores = H @ z
    if not np.all(np.isfinite(a)):
        hint = _(
            " The scores H z reach {largest:.0f} here: use a softmax that subtracts the "
            "maximum (attnkit.core.softmax).",
            largest=np.abs(scores).max(),
        )
        raise not_finite(where, _("the weights"), hint)
    if close(a, scores):
        raise Failed(_("a equals the scores H z: apply softmax to them to get weights"))
    if np.any(a < 0) or not close(a.sum(), 1.0):
        raise Failed(
            _(
                "{where} your weights {weights} sum to {total}: weights are non-negative "
                "and sum to 1, as softmax(H z) does",
                where=where,
                weights=shown(expected, a)[1],
                total=shown(1.0, a.sum())[1],
            )
        )
    if close(a, softmax(scores / np.sqrt(H.shape[1]))):
        raise Failed(
            _(
                "you divided the scores by sqrt(d): this chapter's attention uses "
                "the plain dot products H z (scaling comes in chapter 3)"
            )
        )
    weights, returned = shown(expected, a)
    raise Failed(
        _(
            "{where} the weights should be softmax(H z) = {weights}, you returned {returned}",
            where=where,
            weights=weights,
            returned=returned,
        )
    )


@check(forbids=ATTENTIONS)
def check_single_query_attention(fn):
    """Check ``fn(z, H) -> (z_hat, a)``: one query ``z`` (d,) over the rows of ``H`` (I, d)."""
    for dtype in dtypes():
        for z, H in _attention_cases(dtype):
            tokens, d = H.shape  # I and d
            z64, H64 = z.astype(float), H.astype(float)
            expected_out, expected_a = attention(z64, H64)
            where = _("for z of shape ({d},) and H of shape (I, d) = {shape}", d=d, shape=H.shape)
            with np.errstate(all="ignore"):
                result = call(fn, z, H)
            if not (isinstance(result, tuple) and len(result) == 2):
                raise Failed(
                    _("return a pair (z_hat, a): the new vector and the attention weights")
                )
            z_hat = as_array(result[0], "z_hat")
            a = as_array(result[1], "a")
            if a.shape != (tokens,):
                raise Failed(
                    _(
                        "{where} a has shape {shape}; there is one weight per encoder "
                        "token, shape (I,) = ({tokens},)",
                        where=where,
                        shape=a.shape,
                        tokens=tokens,
                    )
                )
            keeps_dtype(result[1], dtype, "a")
            keeps_dtype(result[0], dtype, "z_hat")
            if not close(a, expected_a):
                _wrong_weights(a, z64, H64, expected_a, where)
            if z_hat.shape == H.shape:
                raise Failed(
                    _(
                        "z_hat has shape (I, d): you scaled each row of H by its weight but "
                        "did not add the rows up; z_hat = a @ H has shape (d,)"
                    )
                )
            if z_hat.shape != (d,):
                raise Failed(
                    _(
                        "{where} z_hat has shape {shape}; it is a weighted sum of "
                        "the rows of H, shape (d,) = ({d},)",
                        where=where,
                        shape=z_hat.shape,
                        d=d,
                    )
                )
            if not close(z_hat, expected_out):
                if tokens == d and close(z_hat, H64 @ expected_a):
                    raise Failed(
                        _(
                            "{where} z_hat is H @ a, which mixes the coordinates of each "
                            "token; the weighted sum of the rows of H is a @ H",
                            where=where,
                        )
                    )
                vector, returned = shown(expected_out, z_hat)
                raise Failed(
                    _(
                        "{where} z_hat should be a @ H = {vector}, you returned {returned}",
                        where=where,
                        vector=vector,
                        returned=returned,
                    )
                )
    return _(
        "correct: the weights are softmax(H z), z_hat is their weighted sum of the rows of H, "
        "and float32 stays float32"
    )
