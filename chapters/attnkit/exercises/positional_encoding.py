"""Checks for the coding exercises of ``chapters/positional-encoding.md``."""

import numpy as np

from ..core import sinusoidal_positional_encoding
from .harness import Failed, as_array, call, check, close, near, shown

__all__ = ["check_positional_encoding"]

# Said when the function raises for an odd d, where a loop over pairs of columns breaks.
_ODD_D_HINT = (
    ". For odd d there are ceil(d/2) sine columns (0, 2, ..., d-1) but only "
    "floor(d/2) cosine columns, so the sines and the cosines need different "
    "numbers of frequencies"
)


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


@check
def check_positional_encoding(fn):
    """Check ``fn(n, d)``: the ``(n, d)`` sinusoidal positional encoding, even and odd ``d``.

    Row ``p`` encodes position ``p`` (from 0); ``PE[p, 2i] = sin(p / 10000^(2i/d))``
    and ``PE[p, 2i+1] = cos(p / 10000^(2i/d))``; for odd ``d`` the last column
    is a sine. Typical mistakes are named: a transposed result, sine and cosine
    swapped, the exponent ``i/d`` or ``j/d`` instead of ``2i/d``, another base,
    positions counted from 1, all sines before all cosines.
    """
    for n, d in ((6, 8), (50, 16), (1, 4), (7, 5), (3, 1)):
        expected = sinusoidal_positional_encoding(n, d)
        answer = call(fn, n, d, called_with=f"n = {n}, d = {d}", hint=_ODD_D_HINT if d % 2 else "")
        got = as_array(answer, "the result")
        if got.shape == (d, n) and n != d and close(got, expected.T):
            raise Failed(
                f"for n = {n}, d = {d} you returned shape {got.shape}, the "
                "transpose: the encoding has one ROW per position, shape (n, d)"
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
        if close(got, expected):
            continue
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
        if d % 2:  # an even-d formula stretched to odd d: the exponent divides by d - 1 or d + 1
            for other in (d - 1, d + 1):
                wrong[
                    f"the exponents divide by {other} instead of d = {d}; for odd d too, column "
                    f"2i holds sin(p / 10000^(2i/d)) and the last column is a sine"
                ] = _sinusoids(n, d, exponent=lambda j, d, other=other: 2 * (j // 2) / other)
        for what, candidate in wrong.items():
            if close(got, candidate):
                raise Failed(f"for n = {n}, d = {d}: {what}")
        half = (d + 1) // 2
        freq = 10000.0 ** (-2 * np.arange(half) / d)  # (ceil(d/2),)
        angles = np.arange(n)[:, None] * freq  # (n, ceil(d/2))
        blocks = np.concatenate([np.sin(angles), np.cos(angles[:, : d // 2])], axis=1)
        if close(got, blocks):
            raise Failed(
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
            raise Failed(
                f"for n = {n}, d = {d} you used the base {base:.4g} instead of 10000: "
                "PE[p, 2i] = sin(p / 10000^(2i/d))"
            )
        if d % 2 and close(got[:, :-1], expected[:, :-1]):
            raise Failed(
                f"for odd d = {d} the last column is wrong: column d-1 = {d - 1} is "
                f"even, so it holds a sine, sin(p / 10000^({d - 1}/{d}))"
            )
        bad = np.argwhere(~near(got, expected))[0]
        p, j = bad
        kind = "sin" if j % 2 == 0 else "cos"
        want, have = shown(expected[p, j], got[p, j])
        raise Failed(
            f"for n = {n}, d = {d}, entry [{p}, {j}] should be {kind}({p} / "
            f"10000^({2 * (j // 2)}/{d})) = {want}, you returned {have}"
        )
    return (
        "correct: sin on the even and cos on the odd columns, frequencies "
        "1 / 10000^(2i/d), one row per position from 0, for even and odd d"
    )
