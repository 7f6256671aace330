"""Right and wrong answers to the exercises of chapter 5 (``chapters/positional-encoding.md``)."""

import math

import numpy as np
import torch

from attnkit.core import sinusoidal_positional_encoding
from attnkit.exercises.positional_encoding import (
    check_positional_encoding,
    check_rotary_embedding,
)
from attnkit.modules import SinusoidalPositionalEncoding
from attnkit.relative_position import apply_rotary
from attnkit.relative_position_modules import RotaryPositionEmbedding
from tests.support.answers import (
    Answers,
    Wrong,
    alias_family,
    dtype_family,
    layout_family,
    squeezed_family,
    structure_family,
    type_family,
)


def pe_reference(n, d):
    """The chapter's solution."""
    pair = np.arange(d) // 2  # (d,)
    omega = 1 / 10000 ** (2 * pair / d)  # (d,)
    angles = np.arange(n)[:, None] * omega  # (n, d)
    even = np.arange(d) % 2 == 0  # (d,)
    return np.where(even, np.sin(angles), np.cos(angles))


def pe_loops(n, d):
    out = np.zeros((n, d))
    for p in range(n):
        for i in range(0, d, 2):
            out[p, i] = math.sin(p / 10000 ** (i / d))
            if i + 1 < d:
                out[p, i + 1] = math.cos(p / 10000 ** (i / d))
    return out


def pe_slices(n, d):
    """Sines and cosines by slices, each with its own number of frequencies (odd d too)."""
    out = np.empty((n, d))
    positions = np.arange(n, dtype=float)[:, None]  # (n, 1)
    freq = np.exp(-np.log(10000.0) * np.arange(0, d, 2) / d)  # (ceil(d/2),)
    out[:, 0::2] = np.sin(positions * freq)
    out[:, 1::2] = np.cos(positions * freq[: d // 2])
    return out


def pe_outer(n, d):
    angles = np.outer(np.arange(n), 10000.0 ** (-2 * (np.arange(d) // 2) / d))  # (n, d)
    angles[:, 1::2] += np.pi / 2  # cos x = sin(x + pi/2)
    return np.sin(angles)


def pe_with_torch(n, d):
    """Computed in PyTorch, returned as the NumPy float64 array asked for."""
    pair = (
        torch.arange(d, dtype=torch.float64) // 2
    )  # float64 throughout: torch's default is float32
    angles = torch.arange(n, dtype=torch.float64)[:, None] / 10000 ** (2 * pair / d)
    even = torch.arange(d) % 2 == 0
    return torch.where(even, angles.sin(), angles.cos()).numpy()


# --- wrong answers -------------------------------------------------------------------------------


def pe_with(*, base=10000.0, exponent=lambda j, d: 2 * (j // 2) / d, first=0, swap=False):
    def fn(n, d):
        j = np.arange(d)
        angles = np.arange(first, first + n)[:, None] / base ** exponent(j, d)
        sine = (j % 2 == 1) if swap else (j % 2 == 0)
        return np.where(sine, np.sin(angles), np.cos(angles))

    return fn


def pe_article_style(n, d):
    """One frequency per even column for both slices: breaks for odd d."""
    out = np.zeros((n, d))
    freq = np.exp(np.arange(0, d, 2) * (-math.log(10000.0) / d))
    out[:, 0::2] = np.sin(np.arange(n)[:, None] * freq)
    out[:, 1::2] = np.cos(np.arange(n)[:, None] * freq)
    return out


def pe_blocks(n, d):
    freq = 10000.0 ** (-2 * np.arange((d + 1) // 2) / d)
    angles = np.arange(n)[:, None] * freq
    return np.concatenate([np.sin(angles), np.cos(angles[:, : d // 2])], axis=1)


def positions_in(dtype):
    """The reference with the positions held in ``dtype``: wrong past its range."""

    def fn(n, d):
        pair = np.arange(d) // 2
        angles = np.arange(n).astype(dtype)[:, None] / 10000 ** (2 * pair / d)
        return np.where(np.arange(d) % 2 == 0, np.sin(angles), np.cos(angles))

    return fn


def columns_in(dtype):
    """The reference with the column indices held in ``dtype``: 2i wraps past its range."""

    def fn(n, d):
        pair = np.arange(d).astype(dtype) // 2
        angles = np.arange(n)[:, None] / 10000.0 ** (2 * pair / d)
        return np.where(np.arange(d) % 2 == 0, np.sin(angles), np.cos(angles))

    return fn


def length_in_uint8(n, d):
    return pe_reference(int(np.array(n).astype(np.uint8)), d)


def table_of(rows):
    """A table precomputed for ``rows`` positions, for each width, and a copy of its first n
    rows (a view would also hand every caller the same memory: the alias family)."""
    tables = {}

    def fn(n, d):
        if d not in tables:
            tables[d] = pe_reference(rows, d)
        return tables[d][:n].copy()

    return fn


def with_the_module(n, d):
    return SinusoidalPositionalEncoding(d, max_len=n).double().pe.numpy()


def in_float32(n, d):
    pair = np.arange(d) // 2
    angles = np.arange(n, dtype=np.float32)[:, None] / np.float32(10000) ** (2 * pair / d).astype(
        np.float32
    )
    return np.where(np.arange(d) % 2 == 0, np.sin(angles), np.cos(angles))


def in_an_integer_buffer(n, d):
    out = np.zeros((n, d), dtype=int)
    out[:] = pe_reference(n, d)
    return out


POSITIONAL_ENCODING = Answers(
    check_positional_encoding,
    right={
        "reference": pe_reference,
        "loops": pe_loops,
        "slices with exp and log": pe_slices,
        "np.outer, cos as a shifted sine": pe_outer,
        "in torch, returned as NumPy": pe_with_torch,
    },
    wrong={
        "transposed": Wrong("known", lambda n, d: pe_reference(n, d).T, "the transpose"),
        "sine and cosine swapped": Wrong(
            "known", pe_with(swap=True), "sine and cosine are swapped"
        ),
        "exponent i/d": Wrong(
            "known", pe_with(exponent=lambda j, d: (j // 2) / d), "exponent is i/d"
        ),
        "exponent j/d": Wrong("known", pe_with(exponent=lambda j, d: j / d), "column index j"),
        "base 1000": Wrong("known", pe_with(base=1000.0), "base 1000 instead of 10000"),
        "exponent by integer division": Wrong(
            "known", pe_with(exponent=lambda j, d: (2 * (j // 2)) // d), "integer division"
        ),
        "positions from 1": Wrong("known", pe_with(first=1), "positions start at 1"),
        "sines then cosines": Wrong("known", pe_blocks, "all the sines first"),
        "the article's slicing, odd d": Wrong("known", pe_article_style, "ceil(d/2) sine columns"),
        "twice too large": Wrong(
            "known", lambda n, d: pe_reference(n, d) * 2, "entry [0, 1] should be cos"
        ),
        **structure_family(pe_reference, axes=(0, -1)),
        "an integer array": Wrong("structure", in_an_integer_buffer, "dtype int64"),
        "positions in int8": Wrong("size", positions_in(np.int8), "int8 holds only"),
        "positions in uint8": Wrong("size", positions_in(np.uint8), "uint8 holds only"),
        "positions in int16": Wrong("size", positions_in(np.int16), "int16 holds only"),
        "positions in float16": Wrong("size", positions_in(np.float16), "float16 holds"),
        "column indices in int8": Wrong("size", columns_in(np.int8), "from column 128 on"),
        "column indices in uint8": Wrong("size", columns_in(np.uint8), "column indices"),
        "the length in uint8": Wrong("size", length_in_uint8, "small integer type"),
        **{
            f"a table of {rows} rows, sliced": Wrong(
                "size", table_of(rows), f"A table made for {rows} positions"
            )
            for rows in (512, 1024, 2048, 4096, 5000)
        },
        "attnkit's encoding": Wrong(
            "forbidden",
            lambda n, d: sinusoidal_positional_encoding(n, d),
            "attnkit.core.sinusoidal_positional_encoding",
        ),
        "attnkit's encoding, renamed": Wrong(
            "forbidden",
            sinusoidal_positional_encoding,
            "attnkit.core.sinusoidal_positional_encoding",
        ),
        "attnkit's PyTorch module": Wrong(
            "forbidden", with_the_module, "attnkit.modules.SinusoidalPositionalEncoding"
        ),
        **type_family(pe_reference),
        **alias_family(pe_reference),
        **squeezed_family(pe_reference),
        "float32": Wrong("type", in_float32, "return float64"),
    },
    float_inputs=False,
)


# --- rotary position embedding: right answers ------------------------------------------------


def rope_reference(q, k, positions):
    """The chapter's solution."""
    d = q.shape[1]
    omega = 10000.0 ** (-np.arange(0, d, 2) / d)  # (d/2,)
    angles = np.asarray(positions, dtype=np.float64)[:, None] * omega  # (n, d/2)
    cos, sin = np.cos(angles).astype(q.dtype), np.sin(angles).astype(q.dtype)

    def turn(x):  # (n, d) -> (n, d)
        out = np.empty_like(x)
        out[:, 0::2] = x[:, 0::2] * cos - x[:, 1::2] * sin
        out[:, 1::2] = x[:, 0::2] * sin + x[:, 1::2] * cos
        return out

    return turn(q), turn(k)


def rope_loops(q, k, positions):
    """A 2 x 2 rotation matrix for every pair of every row, written out."""

    def turn(x):
        n, d = x.shape
        out = np.empty_like(x)
        for p in range(n):
            for i in range(d // 2):
                t = float(positions[p]) / 10000 ** (2 * i / d)
                R = np.array([[math.cos(t), -math.sin(t)], [math.sin(t), math.cos(t)]])
                out[p, 2 * i : 2 * i + 2] = R @ x[p, 2 * i : 2 * i + 2]
        return out

    return turn(q), turn(k)


def rope_complex(q, k, positions):
    """Each pair as a complex number x + iy, multiplied by exp(i t) (Meta's Llama code)."""
    d = q.shape[1]
    angles = np.outer(positions, 1 / 10000 ** (np.arange(d // 2) * 2 / d))  # (n, d/2)
    turn = np.exp(1j * angles)  # complex128

    def turned(x):
        z = x[:, 0::2] + 1j * x[:, 1::2]  # (n, d/2)
        w = z * turn
        return np.stack([w.real, w.imag], axis=-1).reshape(x.shape).astype(x.dtype)

    return turned(q), turned(k)


def rope_through_half(q, k, positions):
    """Reordered into the 'rotate half' layout, turned there, and put back in order."""
    d = q.shape[1]
    order = np.concatenate([np.arange(0, d, 2), np.arange(1, d, 2)])
    back = np.argsort(order)
    angles = np.asarray(positions, dtype=np.float64)[:, None] * 10000.0 ** (-np.arange(0, d, 2) / d)
    cos = np.cos(np.concatenate([angles, angles], axis=1)).astype(q.dtype)  # (n, d)
    sin = np.sin(np.concatenate([angles, angles], axis=1)).astype(q.dtype)

    def turned(x):
        h = x[:, order]
        rotated_half = np.concatenate([-h[:, d // 2 :], h[:, : d // 2]], axis=1)
        return (h * cos + rotated_half * sin)[:, back]

    return turned(q), turned(k)


def rope_in_torch(q, k, positions):
    """In PyTorch (float64 angles), returned as NumPy arrays of the inputs' dtype."""
    d = q.shape[1]
    omega = 10000.0 ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)
    angles = torch.as_tensor(positions, dtype=torch.float64)[:, None] * omega
    dtype = torch.from_numpy(q).dtype
    cos, sin = angles.cos().to(dtype), angles.sin().to(dtype)

    def turned(x):
        pairs = torch.from_numpy(x).unflatten(-1, (d // 2, 2))
        a, b = pairs[..., 0], pairs[..., 1]
        return torch.stack([a * cos - b * sin, a * sin + b * cos], -1).flatten(-2).numpy()

    return turned(q), turned(k)


# --- rotary position embedding: wrong answers ------------------------------------------------


def rope_with(
    *,
    pairing="adjacent",
    exponent=lambda i, d: -2 * i / d,
    swap=False,
    sign=1,
    shift=0,
    base=10000.0,
    ignore_positions=False,
    angles_in=np.float64,
    positions_in=None,
    turn_q=True,
    turn_k=True,
    k_sign=None,
):
    """The reference with one thing changed."""

    def fn(q, k, positions):
        n, d = q.shape
        p = np.arange(n) if ignore_positions else np.asarray(positions)
        if positions_in is not None:
            p = p.astype(positions_in)
        i = np.arange(d // 2)
        omega = (base ** exponent(i, d)).astype(angles_in)
        p = (p + shift).astype(angles_in)

        def turned(x, s):
            angles = s * p[:, None] * omega
            cos, sin = np.cos(angles).astype(x.dtype), np.sin(angles).astype(x.dtype)
            if swap:
                cos, sin = sin, cos
            out = np.empty_like(x)
            if pairing == "adjacent":
                a, b = x[:, 0::2], x[:, 1::2]
                out[:, 0::2], out[:, 1::2] = a * cos - b * sin, a * sin + b * cos
            else:
                a, b = x[:, : d // 2], x[:, d // 2 :]
                out[:, : d // 2], out[:, d // 2 :] = a * cos - b * sin, a * sin + b * cos
            return out

        return (
            turned(q, sign) if turn_q else q.copy(),
            turned(k, sign if k_sign is None else k_sign) if turn_k else k.copy(),
        )

    return fn


def quietly(fn):
    """``fn`` with NumPy's warnings off, as a notebook shows them: warnings, not errors."""

    def wrong(*args):
        with np.errstate(all="ignore"):
            return fn(*args)

    return wrong


def rope_in_x_dtype(q, k, positions):
    """Every angle in the inputs' dtype: float32 for float32 inputs."""
    d = q.shape[1]
    omega = (10000.0 ** (-np.arange(0, d, 2) / d)).astype(q.dtype)
    angles = np.asarray(positions).astype(q.dtype)[:, None] * omega
    cos, sin = np.cos(angles), np.sin(angles)

    def turn(x):
        out = np.empty_like(x)
        out[:, 0::2] = x[:, 0::2] * cos - x[:, 1::2] * sin
        out[:, 1::2] = x[:, 0::2] * sin + x[:, 1::2] * cos
        return out

    return turn(q), turn(k)


def rope_in_place(q, k, positions):
    q_turned, k_turned = rope_reference(q, k, positions)
    q[:], k[:] = q_turned, k_turned
    return q, k


def rope_with_the_helper(q, k, positions):
    return apply_rotary(q, positions), apply_rotary(k, positions)


def rope_with_the_module(q, k, positions):
    module = RotaryPositionEmbedding(q.shape[1], max_len=int(np.max(positions)) + 1).double()
    p = torch.as_tensor(positions)
    return tuple(
        module(torch.from_numpy(x.astype(np.float64)), p).numpy().astype(x.dtype) for x in (q, k)
    )


ROTARY_EMBEDDING = Answers(
    check_rotary_embedding,
    right={
        "reference": rope_reference,
        "loops of 2 x 2 rotations": rope_loops,
        "complex numbers": rope_complex,
        "through the 'rotate half' layout and back": rope_through_half,
        "in torch, returned as NumPy": rope_in_torch,
    },
    wrong={
        "the 'rotate half' layout": Wrong("known", rope_with(pairing="half"), "rotate half"),
        "turned the other way": Wrong("known", rope_with(sign=-1), "the wrong way"),
        "cos and sin swapped": Wrong("known", rope_with(swap=True), "cos and sin are swapped"),
        "exponent -i/d": Wrong(
            "known", rope_with(exponent=lambda i, d: -i / d), "the exponent is -i/d"
        ),
        "frequencies that grow": Wrong(
            "known", rope_with(exponent=lambda i, d: 2 * i / d), "the frequencies grow"
        ),
        "base 1000": Wrong("known", rope_with(base=1000.0), "10000^(-"),
        "positions ignored": Wrong(
            "known", rope_with(ignore_positions=True), "not the positions given"
        ),
        "positions one too large": Wrong("known", rope_with(shift=1), "one too large"),
        "positions one too small": Wrong("known", rope_with(shift=-1), "one too small"),
        "keys not turned": Wrong(
            "known", rope_with(turn_k=False), "you returned the keys as they were"
        ),
        "queries not turned": Wrong(
            "known", rope_with(turn_q=False), "you returned the queries as they were"
        ),
        "nothing turned": Wrong(
            "known", rope_with(turn_q=False, turn_k=False), "did not turn them at all"
        ),
        "keys turned the other way": Wrong(
            "known", rope_with(k_sign=-1), "you turned the keys the other way"
        ),
        "queries and keys swapped": Wrong(
            "known", lambda q, k, p: rope_reference(q, k, p)[::-1], "q_turned[0, 0] should be"
        ),
        "changed in place": Wrong("known", rope_in_place, "in place"),
        "a list, not a pair": Wrong(
            "type", lambda q, k, p: list(rope_reference(q, k, p)), "return a pair"
        ),
        **structure_family(rope_reference, axes=(0, -1)),
        "positions in uint8": Wrong(
            "size", rope_with(positions_in=np.uint8), "uint8 holds only 0 .. 255"
        ),
        "positions in float16": Wrong(
            "size", quietly(rope_with(positions_in=np.float16)), "float16"
        ),
        "positions in int16": Wrong("size", rope_with(positions_in=np.int16), "int16 holds only"),
        "angles in float32": Wrong("size", rope_with(angles_in=np.float32), "float32"),
        "angles in the inputs' dtype": Wrong(
            "size", rope_in_x_dtype, "computed in float32", dtypes=(np.float32,)
        ),
        "attnkit's apply_rotary": Wrong(
            "forbidden", rope_with_the_helper, "attnkit.relative_position.apply_rotary"
        ),
        "attnkit's PyTorch module": Wrong(
            "forbidden",
            rope_with_the_module,
            "attnkit.relative_position_modules.RotaryPositionEmbedding",
        ),
        **type_family(rope_reference),
        **dtype_family(rope_reference),
        **layout_family(rope_reference),
        **squeezed_family(rope_reference),
    },
)

ANSWERS = [POSITIONAL_ENCODING, ROTARY_EMBEDDING]
