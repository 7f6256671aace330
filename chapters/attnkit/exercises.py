"""Checks for the coding exercises: they say whether an answer is right, and why not.

Each ``check_*`` runs the student's function on several inputs, edge cases
included, and returns a :class:`CheckResult` whose text names the first problem
found in plain words. A function that raises is reported, never re-raised, so an
unfinished exercise does not stop the notebook.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .core import attention, causal_mask, masked_softmax, sinusoidal_positional_encoding, softmax

__all__ = ["CheckResult", "check_softmax", "check_single_query_attention"]


@dataclass(frozen=True)
class CheckResult:
    passed: bool
    message: str

    def __repr__(self) -> str:
        return ("✓ " if self.passed else "✗ ") + self.message


class _Failed(Exception):
    """Raised inside a check to stop at the first problem."""


def _call(fn, *args):
    """Call the student's function on copies, reporting exceptions and mutation."""
    copies = [np.array(a, copy=True) for a in args]
    try:
        result = fn(*copies)
    except Exception as exc:  # any error in student code becomes a message
        shapes = ", ".join(str(np.shape(a)) for a in args)
        raise _Failed(
            f"your function raised {type(exc).__name__}: {exc} "
            f"(it was called with arguments of shape {shapes})"
        ) from None
    for original, copy in zip(args, copies):
        if not np.array_equal(original, copy):
            raise _Failed("your function changed its input array in place; compute a new array instead")
    return result


def _as_array(result, what: str) -> np.ndarray:
    """The answer as a float32 array if it is one (its tolerance is float32's), else float64."""
    try:
        arr = np.asarray(result)
        return arr if arr.dtype == np.float32 else arr.astype(np.float64)
    except (TypeError, ValueError):
        raise _Failed(f"{what} should be a NumPy array, got {type(result).__name__}") from None


def _near(got, expected) -> np.ndarray:
    """Entry by entry: is the answer within rounding error of ``expected``?

    The tolerance follows the answer's dtype: the square root of its machine epsilon
    (about 3e-4 for float32, 1.5e-8 for float64), relative and absolute, so a correct
    float32 answer passes and a float64 answer must be right to about eight digits.
    """
    got = np.asarray(got)
    tol = np.sqrt(np.finfo(got.dtype if got.dtype == np.float32 else np.float64).eps)
    return np.isclose(got, expected, rtol=tol, atol=tol)


def _close(got, expected) -> bool:
    return bool(np.all(_near(got, expected)))


def _shown(expected, got) -> tuple[str, str]:
    """``expected`` and ``got`` written with as many digits as it takes to tell them apart."""
    expected, got = np.broadcast_arrays(np.asarray(expected, dtype=np.float64),
                                        np.asarray(got, dtype=np.float64))
    for digits in range(4, 18):
        pair = tuple(str(np.round(x, digits).tolist()) for x in (expected, got))
        if pair[0] != pair[1]:
            break
    return pair


def _run(check) -> CheckResult:
    try:
        message = check()
    except _Failed as failure:
        return CheckResult(False, str(failure))
    return CheckResult(True, message)


def check_softmax(fn) -> CheckResult:
    """Check ``fn(x)``: a softmax over the last axis of a 1-D or 2-D array."""

    def check():
        vector = np.array([1.0, 2.0, 3.0])
        got = _as_array(_call(fn, vector), "the result")
        if got.shape != vector.shape:
            raise _Failed(f"for an input of shape {vector.shape} you returned shape {got.shape}; "
                          "softmax returns one weight per input entry")
        if np.any(got < 0):
            raise _Failed(f"some weights are negative ({got}); exp() makes every term positive")
        if not _close(got.sum(), 1.0):
            raise _Failed(f"the weights sum to {_shown(1.0, got.sum())[1]}, not 1: divide by the sum "
                          "of the exponentials")
        if not _close(got, softmax(vector)):
            raise _Failed("softmax([1, 2, 3]) should be {}, you returned {}".format(
                *_shown(softmax(vector), got)))

        matrix = np.array([[1.0, 2.0, 3.0], [0.0, 0.0, 0.0]])
        got = _as_array(_call(fn, matrix), "the result")
        if got.shape != matrix.shape:
            raise _Failed(f"for an input of shape {matrix.shape} you returned shape {got.shape}; "
                          "keep the shape and normalise each row")
        if _close(got, softmax(matrix, axis=0)):
            raise _Failed("you normalised the columns (axis 0); each row must sum to 1, "
                          "so sum along the last axis with keepdims=True")
        if _close(got.sum(), 1.0):
            raise _Failed("the whole matrix sums to 1, but each row should: "
                          "sum along the last axis with keepdims=True, not over all entries")
        if not _close(got.sum(axis=-1), 1.0):
            raise _Failed(f"the rows sum to {_shown(1.0, got.sum(axis=-1))[1]}, not 1")
        if not _close(got, softmax(matrix)):
            raise _Failed("for [[1, 2, 3], [0, 0, 0]] the rows should be {}, you returned {}".format(
                *_shown(softmax(matrix), got)))

        large = np.array([[1000.0, 1001.0, 1002.0], [-1000.0, -1001.0, -1002.0]])
        with np.errstate(all="ignore"):
            got = _as_array(_call(fn, large), "the result")
        if not np.all(np.isfinite(got)):
            raise _Failed("for logits near ±1000 you returned NaN or inf: exp(1000) overflows and "
                          "exp(-1000) underflows to 0. Subtract each row's maximum first; "
                          "softmax does not change when a constant is added to a row")
        if not _close(got, softmax(large)):
            raise _Failed("for logits near ±1000 the rows should be {}, you returned {}".format(
                *_shown(softmax(large), got)))
        return "correct: non-negative weights, every row sums to 1, and large logits stay finite"

    return _run(check)


def check_single_query_attention(fn) -> CheckResult:
    """Check ``fn(z, H) -> (z_hat, a)``: one query ``z`` (d,) over the rows of ``H`` (I, d)."""

    def check():
        rng = np.random.default_rng(0)
        H = rng.normal(size=(4, 3))  # I = 4 tokens, d = 3: I != d exposes transposes
        z = rng.normal(size=3)
        expected_out, expected_a = attention(z, H)
        result = _call(fn, z, H)
        if not (isinstance(result, tuple) and len(result) == 2):
            raise _Failed("return a pair (z_hat, a): the new vector and the attention weights")
        z_hat = _as_array(result[0], "z_hat")
        a = _as_array(result[1], "a")
        if a.shape != (4,):
            raise _Failed(f"a has shape {a.shape}; with H of shape (I, d) = (4, 3) there is one weight "
                          "per encoder token, shape (I,) = (4,)")
        if _close(a, H @ z):
            raise _Failed("a equals the scores H z: apply softmax to them to get weights")
        if np.any(a < 0) or not _close(a.sum(), 1.0):
            raise _Failed(f"the weights {_shown(expected_a, a)[1]} are not non-negative with "
                          f"sum 1 (they sum to {_shown(1.0, a.sum())[1]})")
        if not _close(a, expected_a):
            raise _Failed("the weights should be softmax(H z) = {}, you returned {}".format(
                *_shown(expected_a, a)))
        if z_hat.shape == H.shape:
            raise _Failed("z_hat has shape (I, d): you scaled each row of H by its weight but did "
                          "not add the rows up; z_hat = a @ H has shape (d,)")
        if z_hat.shape != (3,):
            raise _Failed(f"z_hat has shape {z_hat.shape}; it is a weighted sum of the rows of H, "
                          "shape (d,) = (3,)")
        if not _close(z_hat, expected_out):
            raise _Failed("z_hat should be a @ H = {}, you returned {}".format(
                *_shown(expected_out, z_hat)))
        return "correct: the weights are softmax(H z) and z_hat is their weighted sum of the rows of H"

    return _run(check)


# --- Chapter 2: self-attention ------------------------------------------------

__all__ += ["check_causal_mask", "check_masked_self_attention"]


def _call_with_int(fn, n: int):
    """Call the student's function with a plain integer, reporting exceptions."""
    try:
        return fn(n)
    except Exception as exc:  # any error in student code becomes a message
        raise _Failed(f"your function raised {type(exc).__name__}: {exc} "
                      f"(it was called with n = {n})") from None


def check_causal_mask(fn) -> CheckResult:
    """Check ``fn(n)``: the ``(n, n)`` boolean causal mask, True = may attend (key ``j <= i``)."""

    def check():
        for n in (4, 1, 6):
            expected = causal_mask(n)
            got = np.asarray(_call_with_int(fn, n))
            if got.shape != (n, n):
                raise _Failed(f"for n = {n} you returned shape {got.shape}; the mask has one row "
                              f"per query and one column per key, shape ({n}, {n})")
            if got.dtype != np.bool_:
                raise _Failed(f"you returned dtype {got.dtype}; return booleans (True = may "
                              "attend), for example build from np.ones((n, n), dtype=bool)")
            if np.array_equal(got, expected):
                continue
            if np.array_equal(got, ~expected):
                raise _Failed("you marked the future keys True and the allowed ones False; in this "
                              "book (and in torch's F.scaled_dot_product_attention) True means "
                              "'may attend': flip the mask")
            if np.array_equal(got, expected.T):
                raise _Failed("row i allows the keys j >= i (the future) instead of j <= i (the "
                              "past): you built the transpose; use np.tril, not np.triu")
            if np.array_equal(got, np.tril(expected, k=-1)):
                raise _Failed("the diagonal is False: a token may attend to itself, and without "
                              "the diagonal row 0 would allow no key at all")
            if got.all():
                raise _Failed("every key is allowed: row i must hide the keys j > i")
            bad = np.argwhere(got != expected)[0]
            raise _Failed(f"for n = {n}, entry [{bad[0]}, {bad[1]}] should be "
                          f"{bool(expected[tuple(bad)])}: query {bad[0]} may attend exactly to the "
                          f"keys 0..{bad[0]}")
        return "correct: row i allows the keys 0..i, itself included, and hides every later key"

    return _run(check)


def check_masked_self_attention(fn) -> CheckResult:
    """Check ``fn(X, mask) -> (output, weights)``: ``softmax(X X^T)`` with masked keys at 0.

    ``X`` is ``(n, d)`` and ``mask`` is an ``(n, n)`` boolean array, True = may
    attend; no row of the mask is all False. No scaling (chapter 2).
    """

    def check():
        rng = np.random.default_rng(2)
        X = rng.normal(size=(4, 3))  # n = 4 tokens, d = 3: n != d exposes transposes
        mask = causal_mask(4)
        mask[3, 1] = False           # hide one past key too: a padding-like gap
        scores = X @ X.T             # (4, 4)
        expected_w = masked_softmax(scores, mask)
        expected_out = expected_w @ X
        try:
            result = _call(fn, X, mask)
        except _Failed as failure:
            if "NaN or infinite" not in str(failure):
                raise
            raise _Failed(f"{failure}. attnkit's softmax refuses -inf scores on purpose; write "
                          "the softmax out with np.exp (np.exp(-np.inf) is 0), after "
                          "subtracting each row's maximum") from None
        if not (isinstance(result, tuple) and len(result) == 2):
            raise _Failed("return a pair (output, weights)")
        out = _as_array(result[0], "output")
        w = _as_array(result[1], "weights")
        if w.shape != (4, 4):
            raise _Failed(f"weights have shape {w.shape}; with X of shape (n, d) = (4, 3) they are "
                          "(n, n) = (4, 4), one row per query and one column per key")
        if not np.all(np.isfinite(w)):
            raise _Failed("the weights contain NaN or inf: a row whose scores are all -inf gives "
                          "0/0; did you hide the allowed keys instead of the others?")
        if _close(w, softmax(scores)):
            raise _Failed("the weights ignore the mask: set the scores of masked keys to -np.inf "
                          "(np.where(mask, scores, -np.inf)) before the softmax")
        if _close(w, softmax(scores) * mask):
            raise _Failed(f"the rows sum to {_shown(1.0, w.sum(axis=-1))[1]}, not 1: you zeroed the "
                          "masked weights after the softmax without renormalising; mask the "
                          "scores with -inf before the softmax instead")
        if _close(w, softmax(np.where(mask, scores, 0.0))):
            raise _Failed("masked keys still get weight: a score of 0 is not 'no weight', because "
                          "exp(0) = 1. Give masked keys the score -np.inf, whose exp is 0")
        if not _close(w[~mask], 0) and _close(w[mask], 0):
            raise _Failed("your weights are non-zero exactly where the mask is False: True means "
                          "'may attend', so keep the True entries and hide the False ones")
        if _close(w, masked_softmax(scores, mask.T)) or _close(w, expected_w.T):
            raise _Failed("your weights are transposed: row i belongs to query i and column j to "
                          "key j, and each row must sum to 1")
        if _close(w, masked_softmax(scores / np.sqrt(3), mask)):
            raise _Failed("you divided the scores by sqrt(d): this chapter's self-attention uses "
                          "the plain dot products X @ X.T (scaling comes in the next chapter)")
        if not _close(w[~mask], 0):
            i, j = np.argwhere(~mask & ~_near(w, 0))[0]
            raise _Failed(f"query {i} gives weight {_shown(0.0, w[i, j])[1]} to key {j}, which its mask "
                          "hides; masked keys must get weight exactly 0")
        if not _close(w.sum(axis=-1), 1.0):
            raise _Failed(f"the rows of the weights sum to {_shown(1.0, w.sum(axis=-1))[1]}, not 1")
        if not _close(w, expected_w):
            raise _Failed("the weights should be {}, you returned {}".format(*_shown(expected_w, w)))
        if out.shape != X.shape:
            raise _Failed(f"the output has shape {out.shape}; it holds one new vector per token, "
                          f"shape (n, d) = {X.shape}: output = weights @ X")
        if not _close(out, expected_out):
            raise _Failed("the weights are right but the output is not weights @ X")
        return ("correct: masked keys get weight 0, every row sums to 1, and the output is "
                "weights @ X")

    return _run(check)


# --- Chapter 3: query-key-value attention ------------------------------------

__all__ += ["check_scaled_dot_product_attention"]


def check_scaled_dot_product_attention(fn) -> CheckResult:
    """Check ``fn(Q, K, V) -> (output, weights)``: ``softmax(Q K^T / sqrt(d_k)) V``."""

    def check():
        rng = np.random.default_rng(3)
        # m = 3 queries, n = 5 keys, d_k = 9, d_v = 4: every size differs, so a
        # wrong transpose or a wrong scale (sqrt(d_v) = 2, d_k = 9, sqrt(n) ...) shows
        Q, K, V = rng.normal(size=(3, 9)), rng.normal(size=(5, 9)), rng.normal(size=(5, 4))
        scores = Q @ K.T  # (3, 5)
        expected_w = softmax(scores / 3.0)
        expected_out = expected_w @ V
        result = _call(fn, Q, K, V)
        if not (isinstance(result, tuple) and len(result) == 2):
            raise _Failed("return a pair (output, weights)")
        out = _as_array(result[0], "output")
        w = _as_array(result[1], "weights")
        if w.shape == (5, 3):
            raise _Failed("the weights have shape (n, m) = (5, 3): compute Q @ K.T (one row per "
                          "query), not K @ Q.T")
        if w.shape != (3, 5):
            raise _Failed(f"the weights have shape {w.shape}; with Q (m, d_k) = (3, 9) and K "
                          "(n, d_k) = (5, 9) they are (m, n) = (3, 5)")
        if _close(w, softmax(scores)):
            raise _Failed("the weights are softmax(Q K^T) without scaling: divide the scores by "
                          "sqrt(d_k) = 3 before the softmax")
        wrong_scales = {"d_k = 9 instead of sqrt(d_k) = 3": 9.0,
                        "sqrt(d_v) = 2, but the scale comes from d_k, the width of q and k": 2.0,
                        "sqrt(n) = sqrt(5), but the scale comes from d_k, not the number of "
                        "keys": np.sqrt(5.0)}
        for what, c in wrong_scales.items():
            if _close(w, softmax(scores / c)):
                raise _Failed(f"you divided the scores by {what}")
        if _close(w, softmax(scores / 3.0, axis=0)):
            raise _Failed("each column sums to 1: apply the softmax along the last axis, so that "
                          "each query's row of weights sums to 1")
        if not _close(w.sum(axis=-1), 1.0) or np.any(w < 0):
            raise _Failed(f"the rows of the weights sum to {_shown(1.0, w.sum(axis=-1))[1]}, not 1; "
                          "weights are non-negative and each row sums to 1")
        if not _close(w, expected_w):
            raise _Failed("the weights should be softmax(Q K^T / 3) = {}, you returned {}".format(
                *_shown(expected_w, w)))
        if out.shape == (3, 9):
            raise _Failed("the output has width d_k = 9: you averaged the keys; the output is "
                          "weights @ V, of shape (m, d_v) = (3, 4)")
        if out.shape != (3, 4):
            raise _Failed(f"the output has shape {out.shape}; it is weights @ V, of shape "
                          "(m, d_v) = (3, 4)")
        if not _close(out, expected_out):
            raise _Failed("the weights are right but the output is not weights @ V")
        return "correct: softmax(Q K^T / sqrt(d_k)) along each row, then a weighted sum of V"

    return _run(check)


# --- Chapter 5: positional encoding -------------------------------------------


__all__ += ["check_positional_encoding"]


def _call_with_sizes(fn, n: int, d: int):
    """Call the student's function with two plain integers, reporting exceptions."""
    try:
        return fn(n, d)
    except Exception as exc:  # any error in student code becomes a message
        hint = ""
        if d % 2:
            hint = (". For odd d there are ceil(d/2) sine columns (0, 2, ..., d-1) but only "
                    "floor(d/2) cosine columns, so the sines and the cosines need different "
                    "numbers of frequencies")
        raise _Failed(f"your function raised {type(exc).__name__}: {exc} (it was called with "
                      f"n = {n}, d = {d}){hint}") from None


def _sinusoids(n: int, d: int, *, base: float = 10000.0, exponent=None, first: int = 0,
               swap: bool = False) -> np.ndarray:
    """Sinusoidal encodings with one thing changed: the wrong answers the check recognises.

    ``exponent(j, d)`` gives the exponent of ``base`` for column ``j`` (the right
    one is ``2 * (j // 2) / d``); ``first`` is the first position; ``swap``
    puts the cosines on the even columns.
    """
    j = np.arange(d)
    exponent = (lambda j, d: 2 * (j // 2) / d) if exponent is None else exponent
    angles = np.arange(first, first + n)[:, None] / base ** exponent(j, d)   # (n, d)
    sine = (j % 2 == 1) if swap else (j % 2 == 0)
    return np.where(sine, np.sin(angles), np.cos(angles))


def _implied_base(got: np.ndarray, d: int):
    """The base b for which column 2 (at position 1) is sin(1 / b^(2/d)), or None."""
    if got.shape[0] < 2 or d < 4 or not 0 < got[1, 2] < 1:
        return None
    omega = np.arcsin(got[1, 2])          # the frequency of pair 1, if it is a sine
    return omega ** (-d / 2)


def check_positional_encoding(fn) -> CheckResult:
    """Check ``fn(n, d)``: the ``(n, d)`` sinusoidal positional encoding, even and odd ``d``.

    Row ``p`` encodes position ``p`` (from 0); ``PE[p, 2i] = sin(p / 10000^(2i/d))``
    and ``PE[p, 2i+1] = cos(p / 10000^(2i/d))``; for odd ``d`` the last column
    is a sine. Typical mistakes are named: a transposed result, sine and cosine
    swapped, the exponent ``i/d`` or ``j/d`` instead of ``2i/d``, another base,
    positions counted from 1, all sines before all cosines.
    """

    def check():
        for n, d in ((6, 8), (50, 16), (1, 4), (7, 5)):
            expected = sinusoidal_positional_encoding(n, d)
            got = _as_array(_call_with_sizes(fn, n, d), "the result")
            if got.shape == (d, n) and n != d and _close(got, expected.T):
                raise _Failed(f"for n = {n}, d = {d} you returned shape {got.shape}, the "
                              "transpose: the encoding has one ROW per position, shape (n, d)")
            if got.shape != (n, d):
                raise _Failed(f"for n = {n}, d = {d} you returned shape {got.shape}; the encoding "
                              f"has one row per position and one column per dimension, shape "
                              f"({n}, {d})")
            if not np.all(np.isfinite(got)):
                raise _Failed(f"for n = {n}, d = {d} the result contains NaN or inf")
            if _close(got, expected):
                continue
            wrong = {
                "sine and cosine are swapped: the EVEN columns 0, 2, 4, ... hold sin and the odd "
                "columns hold cos (so PE[0] = [0, 1, 0, 1, ...])": _sinusoids(n, d, swap=True),
                "the exponent is i/d with i the pair index; it is 2i/d, so that the frequencies "
                "run from 1 down to about 1/10000 across the d columns":
                    _sinusoids(n, d, exponent=lambda j, d: (j // 2) / d),
                "the exponent uses the column index j (j/d); columns 2i and 2i+1 share ONE "
                "frequency, 1 / 10000^(2i/d), with i = j // 2":
                    _sinusoids(n, d, exponent=lambda j, d: j / d),
                "positions start at 1; the first row is position 0, whose encoding is "
                "[0, 1, 0, 1, ...]": _sinusoids(n, d, first=1),
            }
            for what, candidate in wrong.items():
                if _close(got, candidate):
                    raise _Failed(f"for n = {n}, d = {d}: {what}")
            half = (d + 1) // 2
            freq = 10000.0 ** (-2 * np.arange(half) / d)                  # (ceil(d/2),)
            angles = np.arange(n)[:, None] * freq                         # (n, ceil(d/2))
            blocks = np.concatenate([np.sin(angles), np.cos(angles[:, :d // 2])], axis=1)
            if _close(got, blocks):
                raise _Failed("you put all the sines first and all the cosines after them; this "
                              "book (like the Transformer paper) interleaves them: sin in column "
                              "2i, cos of the same angle in column 2i+1")
            base = _implied_base(got, d)
            if base is not None and not np.isclose(base, 10000.0, rtol=1e-3) and \
                    _close(got, _sinusoids(n, d, base=base)):
                raise _Failed(f"you used the base {base:.4g} instead of 10000: PE[p, 2i] = "
                              "sin(p / 10000^(2i/d))")
            if d % 2 and _close(got[:, :-1], expected[:, :-1]):
                raise _Failed(f"for odd d = {d} the last column is wrong: column d-1 = {d - 1} is "
                              f"even, so it holds a sine, sin(p / 10000^({d - 1}/{d}))")
            bad = np.argwhere(~_near(got, expected))[0]
            p, j = bad
            kind = "sin" if j % 2 == 0 else "cos"
            want, have = _shown(expected[p, j], got[p, j])
            raise _Failed(f"for n = {n}, d = {d}, entry [{p}, {j}] should be {kind}({p} / "
                          f"10000^({2 * (j // 2)}/{d})) = {want}, you returned {have}")
        return ("correct: sin on the even and cos on the odd columns, frequencies "
                "1 / 10000^(2i/d), one row per position from 0, for even and odd d")

    return _run(check)


# --- Chapter 4: multi-head attention -----------------------------------------

__all__ += ["check_split_heads", "check_merge_heads"]


def _coded_tokens(b: int, n: int, h: int, d_k: int) -> np.ndarray:
    """``(b, n, h*d_k)`` whose entries say where they belong: ``100*batch + 10*token + head``."""
    s, t, i, _ = np.meshgrid(np.arange(b), np.arange(n), np.arange(h), np.arange(d_k),
                             indexing="ij")
    return (100 * s + 10 * t + i).reshape(b, n, h * d_k).astype(float)


def check_split_heads(fn) -> CheckResult:
    """Check ``fn(X, h)``: ``(b, n, h*d_k) -> (b, h, n, d_k)``, head ``i`` = columns ``i*d_k ..``.

    The test input's entries encode their place, ``100*batch + 10*token +
    head``, so a wrong answer can be described in those terms.
    """

    def check():
        for b, n, h, d_k in ((2, 3, 4, 2), (1, 5, 2, 3), (2, 4, 1, 3), (1, 3, 6, 1)):
            X = _coded_tokens(b, n, h, d_k)                       # (b, n, h*d_k)
            expected = X.reshape(b, n, h, d_k).transpose(0, 2, 1, 3)
            got = _as_array(_call(lambda x: fn(x, h), X), "the result")  # h: a plain int
            where = f"for X of shape (b, n, h*d_k) = {X.shape} and h = {h}"
            if got.shape != expected.shape:
                if got.shape == (b, n, h, d_k) and n != h:
                    raise _Failed(f"{where} you returned shape {got.shape} = (b, n, h, d_k): "
                                  "the head axis must come before the token axis. Swap axes "
                                  "1 and 2 (.transpose(0, 2, 1, 3) in NumPy, .transpose(1, 2) "
                                  "in PyTorch)")
                if got.shape == (b, h, d_k, n) and n != d_k:
                    raise _Failed(f"{where} you returned shape {got.shape} = (b, h, d_k, n): "
                                  "each head holds one row per token, shape (b, h, n, d_k)")
                raise _Failed(f"{where} the result should have shape (b, h, n, d_k) = "
                              f"{expected.shape}, you returned {got.shape}")
            if np.array_equal(got, expected):
                continue
            straight = X.reshape(b, h, n, d_k)
            if np.array_equal(got, straight):
                pairs = ", ".join(f"({int(r[0]) // 10}, {int(r[0]) % 10})"
                                  for r in straight[0, 1])
                want = ", ".join(f"({t}, 1)" for t in range(n))
                raise _Failed(
                    f"{where} you reshaped straight to (b, h, n, d_k), like view(b, h, n, d_k) "
                    "without the transpose. The shape is right but the content is not: the "
                    "entries are 100*batch + 10*token + head, and the rows of your head 1 come "
                    f"from (token, head) = {pairs}, where they should be {want}: your heads "
                    "mix tokens and heads. Reshape to (b, n, h, d_k) first (each token's row "
                    "cut into h pieces), then swap axes 1 and 2")
            strided = X.reshape(b, n, d_k, h).transpose(0, 3, 1, 2)
            if np.array_equal(got, strided):
                raise _Failed(f"{where} head i got every h-th column (i, i + h, ...). Each head "
                              "owns a block of d_k consecutive columns: reshape the last axis "
                              "to (h, d_k), not (d_k, h)")
            bad = tuple(int(k) for k in np.argwhere(got != expected)[0])
            raise _Failed(
                f"{where} entry {list(bad)} (batch, head, token, coordinate) should be "
                f"{expected[bad]:g} = 100*batch + 10*token + head, you have {got[bad]:g}. "
                "Head i of token t is row t's columns i*d_k .. (i+1)*d_k - 1")
        return ("correct: each head gets its own block of d_k columns of every token, "
                "and the tokens stay apart")

    return _run(check)


def check_merge_heads(fn) -> CheckResult:
    """Check ``fn(Y)``: ``(b, h, n, d_v) -> (b, n, h*d_v)``, the heads side by side per token."""

    def check():
        for b, n, h, d_v in ((2, 3, 4, 2), (1, 5, 2, 3), (2, 4, 1, 3)):
            expected = _coded_tokens(b, n, h, d_v)                # (b, n, h*d_v)
            Y = expected.reshape(b, n, h, d_v).transpose(0, 2, 1, 3).copy()  # (b, h, n, d_v)
            got = _as_array(_call(fn, Y), "the result")
            where = f"for Y of shape (b, h, n, d_v) = {Y.shape}"
            if got.shape != expected.shape:
                if got.shape == (b, n, h, d_v) and n != h:
                    raise _Failed(f"{where} you returned shape {got.shape} = (b, n, h, d_v): "
                                  "the axes are in the right order, now concatenate the heads "
                                  "by reshaping the last two axes into one of width h*d_v")
                raise _Failed(f"{where} the result should have shape (b, n, h*d_v) = "
                              f"{expected.shape}, you returned {got.shape}")
            if np.array_equal(got, expected):
                continue
            if np.array_equal(got, Y.reshape(b, n, h * d_v)):
                raise _Failed(f"{where} you reshaped straight to (b, n, h*d_v) without moving "
                              "the head axis back: the shape is right but each row now holds "
                              "pieces of several tokens of one head, so tokens are mixed. Swap "
                              "axes 1 and 2 first (in PyTorch: .transpose(1, 2).contiguous() "
                              "before .view), then reshape")
            if np.array_equal(got, Y.transpose(0, 2, 3, 1).reshape(b, n, h * d_v)):
                raise _Failed(f"{where} the heads' columns are interleaved. Concatenation puts "
                              "head 0's d_v columns first, then head 1's, ...: reshape from "
                              "(b, n, h, d_v), not from (b, n, d_v, h)")
            bad = tuple(int(k) for k in np.argwhere(got != expected)[0])
            raise _Failed(f"{where} entry {list(bad)} (batch, token, column) should be "
                          f"{expected[bad]:g} = 100*batch + 10*token + head, you have "
                          f"{got[bad]:g}. Row t is [head 0's row t | head 1's row t | ...]")
        return ("correct: each token's row is its heads' outputs side by side, "
                "head 0 first")

    return _run(check)


# --- Capstone: measuring a learned attention pattern -------------------------

__all__ += ["check_diagonal_mass"]


def check_diagonal_mass(fn) -> CheckResult:
    """Check ``fn(weights, offset) -> (h,)``: the mean weight query ``i`` puts on key ``i + offset``.

    ``weights`` is a torch tensor ``(b, h, n, n)``; only queries whose key ``i + offset`` exists
    count, and the mean runs over the batch and those queries.
    """
    import torch  # only this check needs PyTorch

    def expected(w, offset):
        n = w.shape[-1]
        rows = [i for i in range(n) if 0 <= i + offset < n]
        return torch.stack([w[:, :, i, i + offset] for i in rows], dim=-1).mean(dim=(0, -1))

    def check():
        generator = torch.Generator().manual_seed(0)
        w = torch.rand(3, 2, 5, 5, generator=generator)       # (b, h, n, n)
        w = w / w.sum(dim=-1, keepdim=True)                    # rows sum to 1
        for offset in [0, -1, 2, -4]:
            try:
                got = fn(w.clone(), offset)
            except Exception as exc:  # student code: report, do not raise
                raise _Failed(f"with offset {offset} your function raised "
                              f"{type(exc).__name__}: {exc}. For offset {offset} only the queries "
                              f"i with 0 <= i + offset < n have a key to look at") from None
            got = torch.as_tensor(got, dtype=w.dtype)
            want = expected(w, offset)
            where = f"for weights of shape (b, h, n, n) = {tuple(w.shape)} and offset {offset}"
            if got.shape != want.shape:
                hint = (" You averaged over the heads too; keep one number per head."
                        if got.numel() == 1 else "")
                raise _Failed(f"{where} the result should have shape (h,) = {tuple(want.shape)}, "
                              f"you returned {tuple(got.shape)}.{hint}")
            if _close(got.numpy(), want.numpy()):
                continue
            n = w.shape[-1]
            rows = torch.arange(n)
            wrapped = w[..., rows, (rows + offset) % n].mean(dim=(0, -1))
            if _close(got.numpy(), expected(w, -offset).numpy()):
                raise _Failed(f"{where} you measured key i - offset; the pattern asks for key "
                              "i + offset (offset -1 means one step back)")
            if _close(got.numpy(), (want * sum(0 <= i + offset < n for i in range(n))).numpy()):
                raise _Failed(f"{where} you summed over the queries; take the mean")
            if _close(got.numpy(), wrapped.numpy()):
                raise _Failed(f"{where} you included queries whose key i + offset lies outside "
                              "0..n-1: a negative index wraps around to the end of the row. Leave "
                              "those queries out")
            raise _Failed("{} the result should be {}, you returned {}".format(
                where, *_shown(want.numpy(), got.numpy())))
        return "correct: one mean per head, over the batch and the queries that have a key there"

    return _run(check)
