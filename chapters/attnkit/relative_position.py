"""Positions in the attention score, in NumPy: rotary position embedding (RoPE) and ALiBi.

Conventions are the book's (see the preface): vectors are rows, ``n`` vectors of width ``d``
are an ``(n, d)`` array (with optional leading batch axes), and scores are ``(queries, keys)``.

Rotary position embedding (Su et al., RoFormer) turns the queries and keys in pairs of columns,
the pair ``i`` of the token at position ``m`` by the angle ``m * omega_i``, with
``omega_i = base^(-2i/d)``. A pair ``(x, y)`` becomes ``(x cos - y sin, x sin + y cos)``: as
row vectors, ``x M_m^T``, the transpose of chapter 5's shift matrix. Two layouts of the pairs
are in use: ``pairing="adjacent"`` pairs the columns ``2i`` and ``2i + 1`` (the paper, Meta's
reference code for Llama), ``pairing="half"`` pairs ``i`` and ``i + d/2`` (GPT-NeoX, Hugging
Face's Llama); the two differ by a fixed order of the columns, :func:`half_pairing_order`.

The angles are computed in float64, whatever the input's dtype: at position 100 000, float32
keeps an angle to about 0.004 rad only. The result keeps the input's dtype (float32 or float64).

ALiBi (Press et al.) adds ``-slope * (i - j)`` to the score of query ``i`` and key ``j <= i``,
with one fixed slope per head, a geometric sequence (:func:`alibi_slopes`).
"""

from __future__ import annotations

import math

import numpy as np

from .core import as_float_array
from .rules import (
    check_even_width,
    check_floats,
    check_frequencies,
    check_pairing,
    check_positions,
    check_rotary_input,
    positive_finite,
    positive_int,
)

__all__ = [
    "rotary_frequencies",
    "llama3_frequencies",
    "apply_rotary",
    "half_pairing_order",
    "alibi_slopes",
    "alibi_bias",
]


def rotary_frequencies(d: int, base: float = 10000.0) -> np.ndarray:
    """The ``(d/2,)`` frequencies of rotary position embedding: ``omega_i = base^(-2i/d)``.

    The same numbers as the sinusoidal encoding's (with ``base = 10000``), in radians per
    position; pair ``i`` has the wavelength ``2 pi / omega_i``. ``d`` must be even.
    """
    d = positive_int(d, "d")
    check_even_width(d)
    base = positive_finite(base, "base")
    return base ** (-np.arange(0, d, 2) / d)


def llama3_frequencies(
    frequencies,
    *,
    factor: float = 8.0,
    low_freq_factor: float = 1.0,
    high_freq_factor: float = 4.0,
    original_context: int = 8192,
) -> np.ndarray:
    """The frequencies rescaled as Llama 3.1 does for long contexts (its defaults).

    With ``L = original_context``, a pair whose wavelength ``2 pi / omega`` is shorter than
    ``L / high_freq_factor`` keeps its frequency, one whose wavelength is longer than
    ``L / low_freq_factor`` gets ``omega / factor``, and in between the two are blended:
    ``(1 - s) omega / factor + s omega`` with ``s = (L / wavelength - low_freq_factor) /
    (high_freq_factor - low_freq_factor)``. Returns a new float64 array of the same shape.
    """
    omega = as_float_array(frequencies, "frequencies").astype(np.float64)
    check_frequency_list(omega.shape, positive=bool(np.all(omega > 0)))
    factor = positive_finite(factor, "factor")
    low = positive_finite(low_freq_factor, "low_freq_factor")
    high = positive_finite(high_freq_factor, "high_freq_factor")
    context = positive_finite(original_context, "original_context")
    check_frequency_factors(factor, low, high)
    wavelength = 2 * np.pi / omega
    smooth = (context / wavelength - low) / (high - low)  # 0 at L/low, 1 at L/high
    blended = (1 - smooth) * omega / factor + smooth * omega
    return np.where(
        wavelength < context / high,
        omega,
        np.where(wavelength > context / low, omega / factor, blended),
    )


def _positions(positions, x_name: str, x_shape) -> np.ndarray:
    """The positions as float64 ``(n,)``: ``0 .. n-1`` when None, else one real number per token."""
    if positions is None:
        return np.arange(x_shape[-2], dtype=np.float64)
    p = np.asarray(positions)
    is_number = p.dtype.kind in "iuf"
    check_floats(
        "positions",
        p.shape,
        p.dtype,
        is_float=is_number,
        finite=not is_number or bool(np.all(np.isfinite(p))),
    )
    check_positions(p.shape, x_name, x_shape)
    return p.astype(np.float64)


def apply_rotary(x, positions=None, *, base: float = 10000.0, frequencies=None, pairing="adjacent"):
    """Rotary position embedding of ``x`` ``(..., n, d)``: row ``p`` turned by its position.

    ``positions`` holds one position per row, ``(n,)`` (integers, or real numbers); the default
    is ``0 .. n-1``. The frequencies are :func:`rotary_frequencies` ``(d, base)`` unless
    ``frequencies`` ``(d/2,)`` is given (then ``base`` is not used). With ``pairing="adjacent"``
    the columns ``2i`` and ``2i+1`` form pair ``i``; with ``pairing="half"`` the columns ``i``
    and ``i + d/2``. Pair ``(x, y)`` of row ``p`` becomes ``(x cos t - y sin t, x sin t + y cos
    t)`` with ``t = positions[p] * omega_i``. Returns a new array of ``x``'s dtype.

    Queries and keys are both turned, each by its own position; the values are not. Then the
    score of a query at ``m`` and a key at ``n`` depends on the positions only through ``m - n``.
    """
    x = as_float_array(x, "x")
    d = check_rotary_input("x", x.shape)
    check_pairing(pairing)
    p = _positions(positions, "x", x.shape)
    if frequencies is None:
        omega = rotary_frequencies(d, base)
    else:
        omega = as_float_array(frequencies, "frequencies").astype(np.float64)
        check_frequencies(omega.shape, d)
    angles = p[:, None] * omega  # (n, d/2), float64 whatever x's dtype
    cos, sin = np.cos(angles).astype(x.dtype), np.sin(angles).astype(x.dtype)
    if pairing == "adjacent":
        first, second = x[..., 0::2], x[..., 1::2]  # (..., n, d/2) each
    else:
        first, second = x[..., : d // 2], x[..., d // 2 :]
    turned_first = first * cos - second * sin
    turned_second = first * sin + second * cos
    out = np.empty_like(x)
    if pairing == "adjacent":
        out[..., 0::2], out[..., 1::2] = turned_first, turned_second
    else:
        out[..., : d // 2], out[..., d // 2 :] = turned_first, turned_second
    return out


def half_pairing_order(d: int) -> np.ndarray:
    """The column order ``[0, 2, ..., d-2, 1, 3, ..., d-1]`` that turns the adjacent layout
    into the half layout: ``apply_rotary(x[..., order], pairing="half")`` equals
    ``apply_rotary(x)[..., order]``. Its inverse is ``np.argsort(order)``."""
    d = positive_int(d, "d")
    check_even_width(d)
    return np.concatenate([np.arange(0, d, 2), np.arange(1, d, 2)])


def alibi_slopes(h: int) -> np.ndarray:
    """ALiBi's ``(h,)`` slopes, one per head, as the paper's code computes them.

    For ``h`` a power of two, the geometric sequence ``2^(-8/h), 2^(-16/h), ..., 2^(-8)``
    (``h = 8``: ``1/2, 1/4, ..., 1/256``). Otherwise, the slopes of the largest power of two
    ``k < h``, then every other slope of ``2k`` heads, ``h - k`` of them.
    """
    h = positive_int(h, "h")

    def power_of_two(k: int) -> list[float]:
        return [2.0 ** (-8.0 * (j + 1) / k) for j in range(k)]

    k = 2 ** math.floor(math.log2(h))
    slopes = power_of_two(k)
    if k < h:
        slopes += power_of_two(2 * k)[0::2][: h - k]
    return np.array(slopes)


def alibi_bias(n: int, h: int) -> np.ndarray:
    """ALiBi's bias ``(h, n, n)``: entry ``[head, i, j] = -slope[head] * (i - j)``.

    Added to the scores of a causal head before the softmax: on and below the diagonal
    (``j <= i``) it is zero for the query itself and falls by ``slope`` per position back.
    Above the diagonal it is positive; the causal mask hides those keys.
    """
    n = positive_int(n, "n")
    back = np.arange(n)[None, :] - np.arange(n)[:, None]  # (n, n): j - i, <= 0 on the left
    return alibi_slopes(h)[:, None, None] * back


# --- input rules only this module applies


def check_frequency_list(shape, *, positive: bool) -> None:
    """ValueError naming the shape unless the frequencies are one row, ``(d/2,)``, of
    ``positive`` numbers (each a pair's angle per position)."""
    shape = tuple(shape)
    if len(shape) != 1 or not positive:
        raise ValueError(
            f"frequencies of shape {shape} must be a 1-D array of positive numbers, one per "
            "pair of columns"
        )


def check_frequency_factors(factor: float, low: float, high: float) -> None:
    """ValueError unless a frequency-dependent scaling stretches (``factor >= 1``) and its
    band of blended wavelengths is not empty (``high > low``)."""
    if factor < 1:
        raise ValueError(f"factor must be at least 1 (it stretches wavelengths), got {factor}")
    if not high > low:
        raise ValueError(
            f"high_freq_factor ({high}) must be larger than low_freq_factor ({low}): "
            "between the two wavelengths they set, the frequencies are blended"
        )
