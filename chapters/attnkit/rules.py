"""Every input rule that more than one module of attnkit applies, written once (a rule that
only one module applies lives in that module).

The NumPy functions (:mod:`attnkit.core`) and the PyTorch modules
(:mod:`attnkit.modules`) both call these, so that the same input gets the same
error with the same message from either half; so do the objects that keep state
(the key-value cache and decoders of :mod:`attnkit.decoding`, ``train`` in
:mod:`attnkit.reversal`, the heatmap's traits), which check everything with them
before they change anything. The rules see plain Python data (shapes as tuples,
dtypes, devices and flags as names, indices), never arrays or tensors: each half
extracts those from its own objects.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

__all__ = [
    "positive_int",
    "positive_finite",
    "check_all_masked",
    "check_floats",
    "check_axis",
    "check_ndim",
    "check_batch_ndim",
    "check_mask_dtype",
    "check_mask_fits",
    "check_masks_combine",
    "apply_all_masked_policy",
    "broadcast_batch",
    "check_tokens",
    "check_heads_divide",
    "check_qkv_shapes",
    "check_kv_heads",
    "check_head_mask",
    "check_index",
    "check_joins",
    "check_token_ids",
    "check_token_range",
    "check_max_len",
    "check_norm_input",
    "optional_eps",
    "check_pairing",
    "check_rotary_input",
    "check_even_width",
    "check_positions",
    "check_frequencies",
]

ALL_MASKED_CHOICES = ("raise", "zero")


def positive_int(value, name: str) -> int:
    """``value`` as an ``int`` if it is a positive integer (Python's or NumPy's), else ValueError."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return int(value)


def positive_finite(value, name: str) -> float:
    """``value`` as a ``float`` if it is a positive finite number, else ValueError."""
    if not (isinstance(value, numbers.Real) and math.isfinite(value) and value > 0):
        raise ValueError(f"{name} must be a positive finite number, got {value}")
    return float(value)


def check_all_masked(choice: str) -> None:
    if choice not in ALL_MASKED_CHOICES:
        raise ValueError(f"all_masked must be 'raise' or 'zero', got {choice!r}")


def check_floats(name: str, shape, dtype, *, is_float: bool, finite: bool = True) -> None:
    """TypeError unless the input holds floating-point numbers, ValueError unless all are finite."""
    if not is_float:
        raise TypeError(
            f"{name} of shape {tuple(shape)} must hold floating-point numbers "
            f"(float32 or float64), got dtype {dtype}"
        )
    if not finite:
        raise ValueError(
            f"{name} of shape {tuple(shape)} contains NaN or infinite values; "
            "attention needs finite inputs"
        )


def check_axis(name: str, shape, axis: int) -> int:
    """``axis`` counted from the front (``0 .. ndim - 1``) if it indexes a non-empty axis of
    ``shape``, else ValueError."""
    shape = tuple(shape)
    if not shape:
        raise ValueError(f"{name} must have at least one dimension, got a scalar")
    if not -len(shape) <= axis < len(shape):
        raise ValueError(f"axis {axis} is out of range for {name} of shape {shape}")
    if shape[axis] == 0:
        raise ValueError(f"{name} of shape {shape} is empty along axis {axis}")
    return axis % len(shape)


def check_ndim(name: str, shape, form: str, ndims: tuple) -> None:
    """ValueError unless ``shape`` has one of the numbers of axes in ``ndims`` (``form`` shows them)."""
    shape = tuple(shape)
    if len(shape) not in ndims:
        raise ValueError(f"{name} must have shape {form}, got {shape}")


def check_batch_ndim(name: str, shape, form: str, ndim: int) -> None:
    """ValueError unless ``shape`` has at least ``ndim`` axes: ``form``, or a batch of them."""
    shape = tuple(shape)
    if len(shape) < ndim:
        raise ValueError(f"{name} must have shape {form} (or a batch of them), got {shape}")


def check_mask_dtype(name: str, dtype, *, is_bool: bool) -> None:
    if not is_bool:
        raise TypeError(
            f"{name} must be boolean (True = may attend, False = hidden), got dtype {dtype}. "
            "From 0/1 numbers use mask == 1; from an additive mask of 0 and -inf use mask == 0"
        )


def check_mask_fits(mask_shape, target_shape, what: str = "scores") -> None:
    """ValueError naming both shapes unless a mask of ``mask_shape`` broadcasts to ``target_shape``."""
    mask_shape, target_shape = tuple(mask_shape), tuple(target_shape)
    try:
        fits = bool(mask_shape) and np.broadcast_shapes(mask_shape, target_shape) == target_shape
    except ValueError:
        fits = False
    if not fits:
        raise ValueError(
            f"mask of shape {mask_shape} does not fit {what} of shape {target_shape} "
            "(queries on rows, keys on columns): it must broadcast to that shape"
        )


def check_masks_combine(shapes: list) -> None:
    """ValueError unless there is at least one mask and the masks' ``shapes`` broadcast together."""
    shapes = [tuple(shape) for shape in shapes]
    if not shapes:
        raise ValueError("combine_masks needs at least one mask")
    try:
        np.broadcast_shapes(*shapes)
    except ValueError:
        named = ", ".join(str(shape) for shape in shapes)
        raise ValueError(f"masks of shapes {named} do not broadcast against each other") from None


def apply_all_masked_policy(empty_rows: list, all_masked: str) -> None:
    """The all-masked-row policy, for rows whose mask hides every key (softmax over none is 0/0).

    ``empty_rows`` holds their indices (``[row]`` or ``[batch..., row]``). With
    ``all_masked="raise"`` this raises ValueError naming them; with ``"zero"`` it
    returns, and the caller gives those rows zero weights and a zero output.
    """
    if not empty_rows or all_masked == "zero":
        return
    rows = [idx[0] if len(idx) == 1 else tuple(idx) for idx in empty_rows]
    where = " (each index is (batch..., row))" if len(empty_rows[0]) > 1 else ""
    raise ValueError(
        f"the mask hides every key from query row(s) {rows}{where}: softmax over no keys is "
        "0/0. Allow at least one key in each row, or pass all_masked='zero' to get zero "
        "weights and a zero output there"
    )


def broadcast_batch(shapes: dict) -> tuple:
    """The broadcast of the batch axes (all but the last two) of ``{name: shape}``, or ValueError."""
    try:
        return np.broadcast_shapes(*(tuple(shape)[:-2] for shape in shapes.values()))
    except ValueError:
        named = ", ".join(f"{name} {tuple(shape)}" for name, shape in shapes.items())
        raise ValueError(f"the batch axes of {named} do not broadcast") from None


def check_tokens(
    name: str, shape, form: str, width: int | None = None, width_name: str = "d_model"
) -> None:
    """ValueError unless ``shape`` is ``(..., tokens, width)`` with no empty token or width axis."""
    shape = tuple(shape)
    check_batch_ndim(name, shape, form, 2)
    if width is not None and shape[-1] != width:
        raise ValueError(
            f"{name} of shape {shape} must have shape {form} with {width_name} = {width}"
        )
    if 0 in shape[-2:]:
        raise ValueError(
            f"{name} of shape {shape} is empty: attention needs at least one token "
            "and one coordinate"
        )


def check_heads_divide(what: str, width: int, h: int) -> None:
    if width % h:
        raise ValueError(
            f"{what}: width {width} is not divisible by h = {h}, so the heads "
            "cannot share it equally"
        )


def check_qkv_shapes(q_shape, k_shape, v_shape) -> tuple:
    """ValueError naming the shapes unless queries ``(..., m, d_k)``, keys ``(..., n, d_k)`` and
    values ``(..., n, d_v)`` fit together; returns their broadcast batch shape."""
    q_shape, k_shape, v_shape = tuple(q_shape), tuple(k_shape), tuple(v_shape)
    for shape, name, form in (
        (q_shape, "queries", "(m, d_k)"),
        (k_shape, "keys", "(n, d_k)"),
        (v_shape, "values", "(n, d_v)"),
    ):
        check_tokens(name, shape, form)
    if q_shape[-1] != k_shape[-1]:
        raise ValueError(
            f"queries of shape {q_shape} and keys of shape {k_shape} must have the same "
            f"last dimension d_k ({q_shape[-1]} != {k_shape[-1]})"
        )
    if k_shape[-2] != v_shape[-2]:
        raise ValueError(
            f"keys of shape {k_shape} and values of shape {v_shape} must have the same "
            f"number of rows n ({k_shape[-2]} != {v_shape[-2]})"
        )
    return broadcast_batch({"queries": q_shape, "keys": k_shape, "values": v_shape})


def check_kv_heads(query_heads: int, kv_heads: int) -> None:
    """ValueError unless ``kv_heads`` key-value heads can each serve the same number of the
    ``query_heads`` query heads, that is, unless ``kv_heads`` divides ``query_heads`` (the key-value
    cache calculator's rule; its front end, kv_calculator.js, words it the same)."""
    if query_heads % kv_heads:
        raise ValueError(
            f"{query_heads} query heads cannot be shared equally by {kv_heads} key-value heads: "
            "the number of query heads must be a multiple of the number of key-value heads"
        )


def check_head_mask(mask_shape, query: tuple, source: tuple) -> None:
    """A multi-head layer's mask is one head's: it must fit ``(..., m, n)``, shared by every head.

    ``query`` and ``source`` are ``(name, shape)`` pairs of the layer's two inputs.
    """
    batch = broadcast_batch(dict([query, source]))
    one_head = batch + (tuple(query[1])[-2], tuple(source[1])[-2])
    check_mask_fits(mask_shape, one_head, "one head's weights (every head uses the mask)")


def check_index(value: int, count: int, name: str, what: str) -> None:
    """ValueError unless ``value`` indexes one of ``count`` things (``what``, e.g. "heads")."""
    if not 0 <= value < count:
        raise ValueError(f"{name} must be one of 0 .. {count - 1} (the {what}), got {value}")


# --- numbers that overflow: the matrix form of the softmax, the scores ------------------------


# --- normalisation: LayerNorm or RMSNorm, and its input -----------------------------------------


def check_norm_input(name: str, shape, width: int | None = None) -> None:
    """ValueError unless ``shape`` is ``(..., d)`` with ``d >= 1`` (a norm acts on the last axis)
    and, where ``width`` is given, ``d == width``."""
    shape = tuple(shape)
    check_axis(name, shape, -1)
    if width is not None and shape[-1] != width:
        raise ValueError(
            f"{name} of shape {shape} must have a last axis of {width} entries, the width "
            "the norm was made for"
        )


def optional_eps(value) -> float | None:
    """``None`` (the dtype's machine epsilon, decided later) or a positive finite ``eps``."""
    return None if value is None else positive_finite(value, "eps")


# --- inputs that join state: a cache, a layer's weights, a buffer ----------------------------


def check_joins(
    name: str, shape, dtype: str, device: str, *, into: str, dtype_there=None, device_there: str
) -> None:
    """An input is computed with what it joins (``into``: a cache, a layer's weights): TypeError
    unless it has their dtype (``dtype_there``; None accepts any), ValueError unless it is on
    their device."""
    if dtype_there is not None and dtype != dtype_there:
        raise TypeError(
            f"{name} of shape {tuple(shape)} in dtype {dtype} cannot join {into}, in dtype "
            f"{dtype_there}: convert it to {dtype_there} first"
        )
    if device != device_there:
        raise ValueError(
            f"{name} of shape {tuple(shape)} on device {device} cannot join {into}, on device "
            f"{device_there}: move it there first, .to({device_there!r})"
        )


# --- token ids and positions (the decoders of attnkit.decoding and attnkit.reversal) ---------


def check_token_ids(name: str, shape, dtype: str, allowed: tuple) -> None:
    """TypeError unless the dtype is one of ``allowed`` (integer dtypes an embedding takes),
    ValueError unless ``shape`` is ``(b, n)`` with at least one sequence and one token."""
    shape = tuple(shape)
    if dtype not in allowed:
        raise TypeError(
            f"{name} of shape {shape} must be integer token ids ({' or '.join(allowed)}), "
            f"got dtype {dtype}"
        )
    if len(shape) != 2 or 0 in shape:
        raise ValueError(
            f"{name} must be integer tokens of shape (b, n) with b, n >= 1, got {shape}"
        )


def check_token_range(name: str, shape, low: int, high: int, vocab: int) -> None:
    """ValueError unless every token id, from ``low`` to ``high``, is in ``range(vocab)``."""
    if low < 0 or high >= vocab:
        raise ValueError(
            f"{name} of shape {tuple(shape)} holds token ids from {low} to {high}, outside "
            f"the vocabulary 0 .. {vocab - 1} (vocab = {vocab})"
        )


def check_max_len(length: int, max_len: int, owner: str) -> None:
    """ValueError unless a sequence of ``length`` tokens has a position for each, ``0 .. max_len - 1``."""
    if length > max_len:
        raise ValueError(
            f"positions up to {length - 1} do not fit max_len = {max_len} (the sequence has "
            f"length {length}, longer than max_len = {max_len}): create the {owner} with "
            f"max_len >= {length}"
        )


# --- relative positions: rotary position embedding (attnkit.relative_position) ---------------

PAIRINGS = ("adjacent", "half")


def check_pairing(pairing: str) -> None:
    """ValueError unless ``pairing`` names one of the two layouts of rotary pairs."""
    if pairing not in PAIRINGS:
        raise ValueError(
            f"pairing must be 'adjacent' (columns 2i and 2i+1, as in the RoFormer paper) or "
            f"'half' (columns i and i + d/2, as in GPT-NeoX), got {pairing!r}"
        )


def check_rotary_input(name: str, shape) -> int:
    """ValueError unless ``shape`` is ``(..., n, d)`` with ``n >= 1`` and an even ``d >= 2``
    (rotary position embedding turns the columns in pairs); returns ``d``."""
    shape = tuple(shape)
    check_batch_ndim(name, shape, "(n, d)", 2)
    if shape[-2] == 0:
        raise ValueError(f"{name} of shape {shape} has no token (n = 0)")
    check_even_width(shape[-1], f"{name} of shape {shape}")
    return shape[-1]


def check_even_width(d: int, what: str = "d") -> None:
    """ValueError unless the width ``d`` (of ``what``) is even and at least 2: rotary position
    embedding turns the columns in pairs."""
    if d < 2 or d % 2:
        raise ValueError(
            f"{what} must have an even width d >= 2: rotary position embedding turns the "
            f"columns in pairs, and d = {d}"
        )


def check_positions(shape, x_name: str, x_shape) -> None:
    """ValueError naming both shapes unless the positions are ``(n,)``, one per token of
    ``x_name`` of shape ``(..., n, d)``."""
    shape, x_shape = tuple(shape), tuple(x_shape)
    if len(shape) != 1 or shape[0] != x_shape[-2]:
        raise ValueError(
            f"positions of shape {shape} do not fit {x_name} of shape {x_shape}: give one "
            f"position per token, shape ({x_shape[-2]},)"
        )


def check_frequencies(shape, d: int) -> None:
    """ValueError naming the shape unless there is one frequency per pair of columns,
    ``(d/2,)``."""
    shape = tuple(shape)
    if shape != (d // 2,):
        raise ValueError(
            f"frequencies of shape {shape} do not fit d = {d}: give one frequency per pair "
            f"of columns, shape ({d // 2},)"
        )


# --- chapter 8's tiny GPT (attnkit.gpt) --------------------------------------------------------
