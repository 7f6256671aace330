"""Checks for the coding exercises of ``chapters/positional-encoding.md``."""

import numpy as np

from ..core import sinusoidal_positional_encoding
from .harness import Failed, call, check, close, ndarray, near, random, shown

__all__ = ["check_positional_encoding"]

# Said when the function raises for an odd d, where a loop over pairs of columns breaks.
_ODD_D_HINT = (
    ". For odd d there are ceil(d/2) sine columns (0, 2, ..., d-1) but only "
    "floor(d/2) cosine columns, so the sines and the cosines need different "
    "numbers of frequencies"
)

# The helpers that compute the encoding whole. Naming the module's class imports
# attnkit.modules, and so PyTorch, once per process (the chapter has imported it by then).
_ENCODINGS = (
    "attnkit.core.sinusoidal_positional_encoding",
    "attnkit.modules.SinusoidalPositionalEncoding",
)

# The first whole number a small type gets wrong: positions or column indices held in it
# are right up to there and wrong from there on.
_WRAPS = {
    128: "int8 holds only -128 .. 127",
    256: "uint8 holds only 0 .. 255",
    2049: "float16 holds whole numbers exactly only up to 2048",
    32768: "int16 holds only -32768 .. 32767",
}


def _sizes() -> list[tuple[int, int]]:
    """(n, d) pairs: the worked examples, then fresh random sizes, even and odd widths.

    The random ones reach past every small type's range and past the tables a student might
    precompute and slice (512 .. 5000 rows): n past 127 (int8), past 255 (uint8), past 32767
    (int16, float16's 2048, and every such table), and d past 255 for the column indices.
    The long ones are narrow and the wide ones short, so that the check stays fast.
    """
    rng = random()

    def between(low, high):
        return int(rng.integers(low, high + 1))

    odd = between(0, 1)  # which of the two small random widths is odd
    return [
        (6, 8),
        (50, 16),
        (1, 4),
        (7, 5),
        (3, 1),
        (between(2, 127), 2 * between(1, 32) - odd),
        (between(2, 127), 2 * between(1, 32) - 1 + odd),
        (between(140, 255), between(1, 40)),
        (between(270, 511), between(1, 40)),
        (between(2, 6), between(260, 400)),
        (between(32800, 34000), between(1, 3)),
    ]


def _sinusoids(
    n: int, d: int, *, base: float = 10000.0, exponent=None, first: int = 0, swap: bool = False
) -> np.ndarray:
    """Sinusoidal encodings with one thing changed: the wrong answers the check recognises.

    ``exponent(j, d)`` gives the exponent of ``base`` for column ``j`` (the right
    one is ``2 * (j // 2) / d``); ``first`` is the first position; ``swap``
    puts the cosines on the even columns.
    """
    j = np.arange(d)
    exponent = (lambda j, d: 2 * (j // 2) / d) if exponent is None else exponent
    angles = np.arange(first, first + n)[:, None] / base ** exponent(j, d)  # (n, d)
    sine = (j % 2 == 1) if swap else (j % 2 == 0)
    return np.where(sine, np.sin(angles), np.cos(angles))


def _implied_base(got: np.ndarray, d: int):
    """The base b for which column 2 (at position 1) is sin(1 / b^(2/d)), or None."""
    if got.shape[0] < 2 or d < 4 or not 0 < got[1, 2] < 1:
        return None
    omega = np.arcsin(got[1, 2])  # the frequency of pair 1, if it is a sine
    return omega ** (-d / 2)


def _answer(fn, n: int, d: int) -> np.ndarray:
    """``fn(n, d)``, refused unless it is a float64 NumPy array of shape ``(n, d)``."""
    answer = call(fn, n, d, called_with=f"n = {n}, d = {d}", hint=_ODD_D_HINT if d % 2 else "")
    got = ndarray(answer, "the result")
    if got.dtype != np.float64:
        raise Failed(
            f"for n = {n}, d = {d} you returned an array of dtype {got.dtype}: return float64, "
            "as np.sin and np.cos of np.arange(n) give. An integer array (np.zeros(..., "
            "dtype=int)) keeps only whole numbers, and float32 keeps the angle of a position "
            "in the thousands to only about four decimals"
        )
    if got.shape == (d, n) and n != d and close(got, sinusoidal_positional_encoding(n, d).T):
        raise Failed(
            f"for n = {n}, d = {d} you returned shape {got.shape}, the "
            "transpose: the encoding has one ROW per position, shape (n, d)"
        )
    if got.ndim == 2 and got.shape[1] == d and 0 < got.shape[0] < n:
        raise Failed(
            f"for n = {n}, d = {d} you returned shape {got.shape}, only {got.shape[0]} "
            f"rows. A table made for {got.shape[0]} positions and sliced with [:n] stops "
            "there, and so does a length kept in a small integer type (uint8 wraps at 256): "
            "compute the positions 0 .. n-1 for every n"
        )
    if got.shape != (n, d):
        raise Failed(
            f"for n = {n}, d = {d} you returned shape {got.shape}; the encoding "
            f"has one row per position and one column per dimension, shape "
            f"({n}, {d})"
        )
    if not np.all(np.isfinite(got)):
        raise Failed(
            f"for n = {n}, d = {d} the result contains NaN or inf; every entry is "
            "the sine or the cosine of a finite angle, so it lies in [-1, 1]"
        )
    return got


def _named_mistake(got: np.ndarray, expected: np.ndarray, n: int, d: int) -> str | None:
    """The typical mistake ``got`` is, in words, or None."""
    wrong = {
        "sine and cosine are swapped: the EVEN columns 0, 2, 4, ... hold sin and the odd "
        "columns hold cos (so PE[0] = [0, 1, 0, 1, ...])": _sinusoids(n, d, swap=True),
        "the exponent is i/d with i the pair index; it is 2i/d, so that the frequencies "
        "run from 1 down to about 1/10000 across the d columns": _sinusoids(
            n, d, exponent=lambda j, d: (j // 2) / d
        ),
        "the exponent uses the column index j (j/d); columns 2i and 2i+1 share ONE "
        "frequency, 1 / 10000^(2i/d), with i = j // 2": _sinusoids(
            n, d, exponent=lambda j, d: j / d
        ),
        "positions start at 1; the first row is position 0, whose encoding is "
        "[0, 1, 0, 1, ...]": _sinusoids(n, d, first=1),
    }
    if d % 2 and d > 1:  # an even-d formula stretched to odd d: it divides by d - 1 or d + 1
        for other in (d - 1, d + 1):
            wrong[
                f"the exponents divide by {other} instead of d = {d}; for odd d too, column "
                f"2i holds sin(p / 10000^(2i/d)) and the last column is a sine"
            ] = _sinusoids(n, d, exponent=lambda j, d, other=other: 2 * (j // 2) / other)
    for what, candidate in wrong.items():
        if close(got, candidate):
            return what
    half = (d + 1) // 2
    freq = 10000.0 ** (-2 * np.arange(half) / d)  # (ceil(d/2),)
    angles = np.arange(n)[:, None] * freq  # (n, ceil(d/2))
    blocks = np.concatenate([np.sin(angles), np.cos(angles[:, : d // 2])], axis=1)
    if close(got, blocks):
        return (
            "you put all the sines first and all the cosines after them; this "
            "book (like the Transformer paper) interleaves them: sin in column "
            "2i, cos of the same angle in column 2i+1"
        )
    base = _implied_base(got, d)
    if (
        base is not None
        and not np.isclose(base, 10000.0, rtol=1e-3)
        and close(got, _sinusoids(n, d, base=base))
    ):
        return f"you used the base {base:.4g} instead of 10000: PE[p, 2i] = sin(p / 10000^(2i/d))"
    if d % 2 and d > 1 and close(got[:, :-1], expected[:, :-1]):
        return (
            f"the last column is wrong: for odd d = {d}, column d-1 = {d - 1} is "
            f"even, so it holds a sine, sin(p / 10000^({d - 1}/{d}))"
        )
    return None


def _size_mistake(bad: np.ndarray, n: int, d: int) -> str | None:
    """Say so when the answer is right up to a position (or column) past every worked example
    and wrong from there on: a small type or a fixed-length table ran out there."""
    rows, columns = bad.any(axis=1), bad.any(axis=0)  # (n,), (d,)
    for first, what, fix in (
        (
            int(np.argmax(rows)),
            "position",
            "Hold the positions in a type that reaches n - 1 (np.arange(n) gives int64, or "
            "use floats) and compute every row for any n, not from a table of fixed length",
        ),
        (
            int(np.argmax(columns)),
            "column",
            "Hold the column indices, and 2i, in a type that reaches d - 1 (np.arange(d) "
            "gives int64)",
        ),
    ):
        if first >= 128:
            why = f": {_WRAPS[first]}" if first in _WRAPS else ""
            return (
                f"for n = {n}, d = {d} your encoding is right up to {what} {first - 1} and "
                f"wrong from {what} {first} on{why}. {fix}"
            )
    return None


@check(forbids=_ENCODINGS)
def check_positional_encoding(fn):
    """Check ``fn(n, d)``: the ``(n, d)`` sinusoidal positional encoding, even and odd ``d``.

    Row ``p`` encodes position ``p`` (from 0); ``PE[p, 2i] = sin(p / 10000^(2i/d))``
    and ``PE[p, 2i+1] = cos(p / 10000^(2i/d))``; for odd ``d`` the last column
    is a sine. The answer is a float64 NumPy array. Besides worked examples the check tries
    fresh random sizes, past the range of every small integer type and of common fixed-length
    tables. Typical mistakes are named: a transposed result, sine and cosine swapped, the
    exponent ``i/d`` or ``j/d`` instead of ``2i/d``, another base, positions counted from 1,
    all sines before all cosines, positions that wrap around.
    """
    for n, d in _sizes():
        expected = sinusoidal_positional_encoding(n, d)
        got = _answer(fn, n, d)
        bad = ~near(got, expected)
        if not bad.any():
            continue
        mistake = _named_mistake(got, expected, n, d)
        if mistake is not None:
            raise Failed(f"for n = {n}, d = {d}: {mistake}")
        mistake = _size_mistake(bad, n, d)
        if mistake is not None:
            raise Failed(mistake)
        p, j = np.argwhere(bad)[0]
        kind = "sin" if j % 2 == 0 else "cos"
        want, have = shown(expected[p, j], got[p, j])
        raise Failed(
            f"for n = {n}, d = {d}, entry [{p}, {j}] should be {kind}({p} / "
            f"10000^({2 * (j // 2)}/{d})) = {want}, you returned {have}"
        )
    return (
        "correct: sin on the even and cos on the odd columns, frequencies "
        "1 / 10000^(2i/d), one row per position from 0, for even and odd d, long and wide "
        "encodings, in float64"
    )
