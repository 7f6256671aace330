"""Right and wrong answers to the exercise of chapter 5 (``chapters/positional-encoding.md``)."""

import math

import numpy as np
import torch

from attnkit.core import sinusoidal_positional_encoding
from attnkit.exercises.positional_encoding import check_positional_encoding
from attnkit.modules import SinusoidalPositionalEncoding
from tests.support.answers import Answers, Wrong, structure_family, type_family


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
    """A table precomputed for ``rows`` positions, for each width, and sliced with [:n]."""
    tables = {}

    def fn(n, d):
        if d not in tables:
            tables[d] = pe_reference(rows, d)
        return tables[d][:n]

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
        "float32": Wrong("type", in_float32, "return float64"),
    },
    float_inputs=False,
)

ANSWERS = [POSITIONAL_ENCODING]
