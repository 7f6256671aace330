"""Checks for the coding exercises of ``chapters/positional-encoding.md``."""

import numpy as np

from ..core import sinusoidal_positional_encoding
from .harness import (
    Failed,
    as_array,
    call,
    check,
    close,
    dtypes,
    keeps_dtype,
    ndarray,
    near,
    not_finite,
    random,
    shown,
)
from .wording import _, joined

__all__ = ["check_positional_encoding", "check_rotary_embedding"]


def _odd_d_hint() -> str:
    """Said when the function raises for an odd d, where a loop over pairs of columns breaks."""
    return _(
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


def _wraps() -> dict[int, str]:
    """The first whole number a small type gets wrong: positions or column indices held in it
    are right up to there and wrong from there on."""
    return {
        128: _("int8 holds only -128 .. 127"),
        256: _("uint8 holds only 0 .. 255"),
        2049: _("float16 holds whole numbers exactly only up to 2048"),
        32768: _("int16 holds only -32768 .. 32767"),
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
    answer = call(
        fn,
        n,
        d,
        called_with=_("n = {n}, d = {d}", n=n, d=d),
        hint=_odd_d_hint() if d % 2 else "",
        fresh_result=True,
    )
    got = ndarray(answer, _("the result"))
    if got.dtype != np.float64:
        raise Failed(
            _(
                "for n = {n}, d = {d} you returned an array of dtype {dtype}: return float64, "
                "as np.sin and np.cos of np.arange(n) give. An integer array (np.zeros(..., "
                "dtype=int)) keeps only whole numbers, and float32 keeps the angle of a position "
                "in the thousands to only about four decimals",
                n=n,
                d=d,
                dtype=got.dtype,
            )
        )
    if got.shape == (d, n) and n != d and close(got, sinusoidal_positional_encoding(n, d).T):
        raise Failed(
            _(
                "for n = {n}, d = {d} you returned shape {shape}, the "
                "transpose: the encoding has one ROW per position, shape (n, d)",
                n=n,
                d=d,
                shape=got.shape,
            )
        )
    if got.ndim == 2 and got.shape[1] == d and 0 < got.shape[0] < n:
        raise Failed(
            _(
                "for n = {n}, d = {d} you returned shape {shape}, only {rows} "
                "rows. A table made for {rows} positions and sliced with [:n] stops "
                "there, and so does a length kept in a small integer type (uint8 wraps at 256): "
                "compute the positions 0 .. n-1 for every n",
                n=n,
                d=d,
                shape=got.shape,
                rows=got.shape[0],
            )
        )
    if got.shape != (n, d):
        raise Failed(
            _(
                "for n = {n}, d = {d} you returned shape {shape}; the encoding "
                "has one row per position and one column per dimension, shape "
                "({n}, {d})",
                n=n,
                d=d,
                shape=got.shape,
            )
        )
    if not np.all(np.isfinite(got)):
        raise not_finite(
            _("for n = {n}, d = {d}", n=n, d=d),
            _("the result"),
            _(" Every entry is the sine or the cosine of a finite angle, so it lies in [-1, 1]."),
        )
    return got


def _named_mistake(got: np.ndarray, expected: np.ndarray, n: int, d: int) -> str | None:
    """The typical mistake ``got`` is, in words, or None."""
    wrong = {
        _(
            "sine and cosine are swapped: the EVEN columns 0, 2, 4, ... hold sin and the odd "
            "columns hold cos (so PE[0] = [0, 1, 0, 1, ...])"
        ): _sinusoids(n, d, swap=True),
        _(
            "the exponent is i/d with i the pair index; it is 2i/d, so that the frequencies "
            "run from 1 down to about 1/10000 across the d columns"
        ): _sinusoids(n, d, exponent=lambda j, d: (j // 2) / d),
        _(
            "the exponent uses the column index j (j/d); columns 2i and 2i+1 share ONE "
            "frequency, 1 / 10000^(2i/d), with i = j // 2"
        ): _sinusoids(n, d, exponent=lambda j, d: j / d),
        _(
            "positions start at 1; the first row is position 0, whose encoding is [0, 1, 0, 1, ...]"
        ): _sinusoids(n, d, first=1),
        _(
            "the exponent 2i/d was computed by integer division: 2 * i // d is 0 for every "
            "pair, so every frequency is 1. Divide with /, which gives a float"
        ): _sinusoids(n, d, exponent=lambda j, d: (2 * (j // 2)) // d),
    }
    if d % 2 and d > 1:  # an even-d formula stretched to odd d: it divides by d - 1 or d + 1
        for other in (d - 1, d + 1):
            wrong[
                _(
                    "the exponents divide by {other} instead of d = {d}; for odd d too, column "
                    "2i holds sin(p / 10000^(2i/d)) and the last column is a sine",
                    other=other,
                    d=d,
                )
            ] = _sinusoids(n, d, exponent=lambda j, d, other=other: 2 * (j // 2) / other)
    for what, candidate in wrong.items():
        if close(got, candidate):
            return what
    half = (d + 1) // 2
    freq = 10000.0 ** (-2 * np.arange(half) / d)  # (ceil(d/2),)
    angles = np.arange(n)[:, None] * freq  # (n, ceil(d/2))
    blocks = np.concatenate([np.sin(angles), np.cos(angles[:, : d // 2])], axis=1)
    if close(got, blocks):
        return _(
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
        return _(
            "you used the base {base:.4g} instead of 10000: PE[p, 2i] = sin(p / 10000^(2i/d))",
            base=base,
        )
    if d % 2 and d > 1 and close(got[:, :-1], expected[:, :-1]):
        return _(
            "the last column is wrong: for odd d = {d}, column d-1 = {last} is "
            "even, so it holds a sine, sin(p / 10000^({last}/{d}))",
            d=d,
            last=d - 1,
        )
    return None


def _size_mistake(bad: np.ndarray, n: int, d: int) -> str | None:
    """Say so when the answer is right up to a position (or column) past every worked example
    and wrong from there on: a small type or a fixed-length table ran out there."""
    rows, columns = bad.any(axis=1), bad.any(axis=0)  # (n,), (d,)
    wraps = _wraps()
    first = int(np.argmax(rows))
    if first >= 128:
        return _(
            "for n = {n}, d = {d} your encoding is right up to position {last} and "
            "wrong from position {first} on{why}. Hold the positions in a type that reaches "
            "n - 1 (np.arange(n) gives int64, or use floats) and compute every row for any n, "
            "not from a table of fixed length",
            n=n,
            d=d,
            last=first - 1,
            first=first,
            why=_(": {reason}", reason=wraps[first]) if first in wraps else "",
        )
    first = int(np.argmax(columns))
    if first >= 128:
        return _(
            "for n = {n}, d = {d} your encoding is right up to column {last} and "
            "wrong from column {first} on{why}. Hold the column indices, and 2i, in a type "
            "that reaches d - 1 (np.arange(d) gives int64)",
            n=n,
            d=d,
            last=first - 1,
            first=first,
            why=_(": {reason}", reason=wraps[first]) if first in wraps else "",
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
            raise Failed(_("for n = {n}, d = {d}: {mistake}", n=n, d=d, mistake=mistake))
        mistake = _size_mistake(bad, n, d)
        if mistake is not None:
            raise Failed(mistake)
        p, j = np.argwhere(bad)[0]
        kind = "sin" if j % 2 == 0 else "cos"
        want, have = shown(expected[p, j], got[p, j])
        raise Failed(
            _(
                "for n = {n}, d = {d}, entry [{p}, {j}] should be {kind}({p} / "
                "10000^({exponent}/{d})) = {want}, you returned {have}",
                n=n,
                d=d,
                p=p,
                j=j,
                kind=kind,
                exponent=2 * (j // 2),
                want=want,
                have=have,
            )
        )
    return _(
        "correct: sin on the even and cos on the odd columns, frequencies "
        "1 / 10000^(2i/d), one row per position from 0, for even and odd d, long and wide "
        "encodings, in float64"
    )


# --- rotary position embedding ----------------------------------------------------------------

# The helpers that turn queries and keys whole.
_ROTARIES = (
    "attnkit.relative_position.apply_rotary",
    "attnkit.relative_position_modules.RotaryPositionEmbedding",
)

# Positions on both sides of the range of every small type (int8, uint8, float16's whole
# numbers, int16, uint16), up to Llama 3.1's 131 072 tokens: the last case of the check.
_FAR = [0, 1, 127, 128, 255, 256, 2047, 2049, 32767, 32768, 65535, 65537, 100003, 131071]


def _rope_cases() -> list[tuple[int, np.ndarray]]:
    """(d, positions) pairs: a worked example, then fresh random ones, one far out, and one
    token alone."""
    rng = random()
    d_small = 2 * int(rng.integers(2, 17))  # 4 .. 32
    n_small = int(rng.integers(3, 9))
    start = int(rng.integers(1000, 3000))  # a chunk that continues a sequence,
    start += 16 if start % 256 < 16 else 0  # never one that wraps to 0, 1, ... in 8 bits
    return [
        (4, np.arange(3)),
        (2, rng.permutation(9)[:4]),
        (d_small, rng.choice(60, size=n_small, replace=False)),
        (64, start + np.arange(6)),
        (128, rng.permutation(_FAR)),
        (6, rng.integers(1, 60, size=1)),  # one token: an answer must keep its axis
    ]


def _turned(x: np.ndarray, positions, *, pairing="adjacent", exponent=None, swap=False, sign=1):
    """``x`` (float64) turned by rotary position embedding, or with one thing changed: the
    wrong answers the check recognises. ``exponent(i, d)`` gives the exponent of 10000 for
    pair ``i`` (the right one is ``-2i/d``); ``swap`` exchanges cos and sin; ``sign=-1``
    turns the other way."""
    d = x.shape[-1]
    i = np.arange(d // 2)
    omega = 10000.0 ** ((lambda i, d: -2 * i / d) if exponent is None else exponent)(i, d)
    angles = sign * np.asarray(positions, dtype=np.float64)[:, None] * omega  # (n, d/2)
    cos, sin = np.cos(angles), np.sin(angles)
    if swap:
        cos, sin = sin, cos
    if pairing == "adjacent":
        first, second = x[:, 0::2], x[:, 1::2]
    else:
        first, second = x[:, : d // 2], x[:, d // 2 :]
    out = np.empty_like(x)
    turned = first * cos - second * sin, first * sin + second * cos
    if pairing == "adjacent":
        out[:, 0::2], out[:, 1::2] = turned
    else:
        out[:, : d // 2], out[:, d // 2 :] = turned
    return out


def _rope_mistake(got, x, positions) -> str | None:
    """The typical mistake that turned ``x`` (float64) into ``got``, in words, or None."""
    n = x.shape[0]
    wrong = {
        _("you did not turn them at all"): x,
        _(
            "you paired column i with column i + d/2 (the 'rotate half' layout of GPT-NeoX and "
            "Hugging Face's Llama); this exercise pairs ADJACENT columns, 2i with 2i+1, as the "
            "RoFormer paper does"
        ): _turned(x, positions, pairing="half"),
        _(
            "you turned each pair the wrong way, by -t: (x cos t + y sin t, -x sin t + y cos t), "
            "which is x M_p, the chapter's shift matrix itself. RoPE turns (x, y) into "
            "(x cos t - y sin t, x sin t + y cos t), x M_p^T"
        ): _turned(x, positions, sign=-1),
        _(
            "cos and sin are swapped: the pair (x, y) becomes (x cos t - y sin t, x sin t + "
            "y cos t)"
        ): _turned(x, positions, swap=True),
        _(
            "the exponent is -i/d with i the pair index; the frequency of pair i is 10000^(-2i/d)"
        ): _turned(x, positions, exponent=lambda i, d: -i / d),
        _(
            "the frequencies grow with i: 10000^(+2i/d); the frequency of pair i is "
            "10000^(-2i/d), from 1 down to about 1/10000"
        ): _turned(x, positions, exponent=lambda i, d: 2 * i / d),
        _(
            "you used the positions 0, 1, ..., n-1 and not the positions given; a row is "
            "turned by its own position, positions[p]"
        ): _turned(x, np.arange(n)),
        _(
            "your positions are one too large: row p is turned by positions[p] itself, "
            "not positions[p] + 1"
        ): _turned(x, np.asarray(positions) + 1),
        _(
            "your positions are one too small: row p is turned by positions[p] itself, "
            "not positions[p] - 1"
        ): _turned(x, np.asarray(positions) - 1),
    }
    for what, candidate in wrong.items():
        if close(got, candidate):
            return what
    return None


def _small_types() -> dict:
    """The small types that hold positions wrongly past a point, and why."""
    return {
        np.int8: _("int8 holds only -128 .. 127"),
        np.uint8: _("uint8 holds only 0 .. 255"),
        np.float16: _("float16 holds whole numbers exactly only up to 2048"),
        np.int16: _("int16 holds only -32768 .. 32767"),
        np.uint16: _("uint16 holds only 0 .. 65535"),
    }


def _far_mistake(got, x, positions, want) -> str | None:
    """Advice when the answer is right at the small positions and wrong only far out: the
    positions were held in a small type, or the angles computed in float32."""
    positions = np.asarray(positions)
    d = x.shape[-1]
    matches = []  # int8 and uint8 agree on positions whose remainder by 256 is below 128
    for small, why in _small_types().items():
        with np.errstate(all="ignore"):  # float16 turns 65 520 and beyond into inf
            held = positions.astype(small).astype(np.float64)
            candidate = _turned(x, held)
        if close(got, candidate):
            matches.append((np.dtype(small).name, why, int(positions[held != positions].min())))
    if matches:
        names = joined(_(" or "), [name for name, _why, _first in matches])
        whys = joined(_("; "), [why for _name, why, _first in matches])
        return _(
            "for d = {d} you turned the rows by the positions held in {names}, which are "
            "wrong from position {first} on: {whys}. Keep the positions as they are "
            "given (int64)",
            d=d,
            names=names,
            first=matches[0][2],
            whys=whys,
        )
    bad = ~near(got, want).all(axis=1)  # (n,): the rows with a wrong entry
    close_by = positions < 1024
    if positions[close_by].max(initial=0) < 100 or bad[close_by].any():
        return None  # wrong near the start too: not a matter of digits
    first = int(positions[bad].min())
    return _(
        "for d = {d} your answer is right at every position below 1024 but wrong far out, "
        "first at position {first}: an angle p * omega computed in float32 keeps only about "
        "7 digits, which at p = {first} leaves an error of about {error:.0e} rad. "
        "Compute the angles in float64 (np.asarray(positions, dtype=np.float64)), then cast "
        "the cosines and sines to the inputs' dtype",
        d=d,
        first=first,
        error=first * 2.0**-24,
    )


def _rope_answer(fn, q, k, positions, where, called_with):
    """The student's ``(q_turned, k_turned)``, after the checks every case shares."""
    result = call(fn, q, k, positions, called_with=called_with)
    if not (isinstance(result, tuple) and len(result) == 2):
        raise Failed(
            _(
                "return a pair (q_turned, k_turned): the queries and the keys, each turned by "
                "the positions"
            )
        )
    got = []
    for part, name in zip(result, ("q_turned", "k_turned")):
        arr = as_array(part, name)
        if arr.shape != q.shape:
            raise Failed(
                _(
                    "{where}, {name} has shape {shape}; turning keeps the shape, {expected}",
                    where=where,
                    name=name,
                    shape=arr.shape,
                    expected=q.shape,
                )
            )
        keeps_dtype(part, q.dtype, name)
        if not np.all(np.isfinite(arr)):
            far = (
                _(
                    " Positions up to {largest} overflow float16, whose largest number is "
                    "65 504: keep the positions as they are given (int64).",
                    largest=int(np.max(positions)),
                )
                if np.max(positions) > 65504
                else ""
            )
            raise not_finite(where, name, _(" A rotation keeps every length.") + far)
        got.append(arr)
    return got


@check(forbids=_ROTARIES)
def check_rotary_embedding(fn):
    """Check ``fn(q, k, positions) -> (q_turned, k_turned)``: rotary position embedding.

    ``q`` and ``k`` are ``(n, d)`` with an even ``d``, ``positions`` ``(n,)`` integers, one per
    row, not necessarily ``0 .. n-1``. The columns ``2i`` and ``2i+1`` form pair ``i``, turned
    by the angle ``t = positions[p] * 10000^(-2i/d)``: ``(x, y) -> (x cos t - y sin t, x sin t +
    y cos t)``, for the queries and the keys alike. The answers keep the inputs' dtype; the
    positions reach 131 071, where only angles computed in float64 are right. Typical
    mistakes are named: the 'rotate half' layout, the other direction, cos and sin swapped,
    other exponents, the positions ignored or off by one, keys (or queries) not turned,
    angles in float32 or positions in a small type.
    """
    for dtype in dtypes():
        for d, positions in _rope_cases():
            n = len(positions)
            rng = random()
            q64, k64 = rng.standard_normal((2, n, d))
            q, k = q64.astype(dtype), k64.astype(dtype)
            q64, k64 = q.astype(np.float64), k.astype(np.float64)  # what the inputs hold
            inputs = dict(
                shape=q.shape,
                dtype=np.dtype(dtype).name,
                positions=np.array2string(positions, separator=", ", threshold=8),
            )
            where = _("for q and k of shape {shape} in {dtype} and positions {positions}", **inputs)
            called_with = _(
                "q and k of shape {shape} in {dtype} and positions {positions}", **inputs
            )
            got_q, got_k = _rope_answer(fn, q, k, positions, where, called_with)
            expected = _turned(q64, positions), _turned(k64, positions)
            right = close(got_q, expected[0]), close(got_k, expected[1])
            if all(right):
                continue
            if right[0] and close(got_k, _turned(k64, positions, sign=-1)):
                raise Failed(
                    _(
                        "{where}: the queries are right, but you turned the keys the other way; "
                        "queries and keys are turned alike, each by its own position, and the "
                        "score q_m . k_n then depends on m - n",
                        where=where,
                    )
                )
            if right[0] and close(got_k, k64):
                raise Failed(
                    _(
                        "{where}: the queries are right, but you returned the keys as they "
                        "were; turn the keys too, or the score depends on where the query "
                        "stands and not on the offset",
                        where=where,
                    )
                )
            if right[1] and close(got_q, q64):
                raise Failed(
                    _(
                        "{where}: the keys are right, but you returned the queries as they "
                        "were; turn the queries too, or the score depends on where the query "
                        "stands and not on the offset",
                        where=where,
                    )
                )
            for name, got, x, want in (
                ("q_turned", got_q, q64, expected[0]),
                ("k_turned", got_k, k64, expected[1]),
            ):
                if close(got, want):
                    continue
                mistake = _rope_mistake(got, x, positions)
                if mistake is not None:
                    raise Failed(
                        _("{where}, {name}: {mistake}", where=where, name=name, mistake=mistake)
                    )
                mistake = _far_mistake(got, x, positions, want)
                if mistake is not None:
                    raise Failed(mistake)
                if dtype == np.float64 and np.allclose(got, want, rtol=1e-4, atol=1e-4):
                    raise Failed(
                        _(
                            "{where}, {name} is right to only about float32's precision: for "
                            "float64 inputs compute the angles, cosines and sines in float64",
                            where=where,
                            name=name,
                        )
                    )
                p, j = np.argwhere(~near(got, want))[0]
                wanted, have = shown(want[p, j], got[p, j])
                entry = dict(
                    where=where,
                    name=name,
                    v=name[0],  # q or k
                    p=p,
                    j=j,
                    position=int(positions[p]),
                    exponent=2 * (j // 2),
                    d=d,
                    wanted=wanted,
                    have=have,
                )
                if j % 2 == 0:
                    raise Failed(
                        _(
                            "{where}, {name}[{p}, {j}] should be {v}[{p}, {j}] cos t - "
                            "{v}[{p}, {partner}] sin t with t = {position} * "
                            "10000^(-{exponent}/{d}), that is {wanted}; you returned {have}",
                            partner=j + 1,
                            **entry,
                        )
                    )
                raise Failed(
                    _(
                        "{where}, {name}[{p}, {j}] should be {v}[{p}, {partner}] sin t + "
                        "{v}[{p}, {j}] cos t with t = {position} * "
                        "10000^(-{exponent}/{d}), that is {wanted}; you returned {have}",
                        partner=j - 1,
                        **entry,
                    )
                )
    return _(
        "correct: adjacent pairs (2i, 2i+1) turned by positions[p] * 10000^(-2i/d), "
        "queries and keys alike, at every position up to 131 071, and the inputs' dtype kept"
    )
