"""Right and wrong answers to the exercise of chapter 6 (``chapters/tiny-transformer.md``)."""

import numpy as np
import torch

from attnkit.exercises.tiny_transformer import check_diagonal_mass
from attnkit.reversal import anti_diagonal_mass
from tests.support.answers import Answers, Wrong


def diagonal_mass_reference(weights, offset):
    """The chapter's solution."""
    n = weights.shape[-1]
    rows = torch.arange(max(0, -offset), min(n, n - offset))  # queries
    return weights[..., rows, rows + offset].mean(dim=(0, -1))  # (h,)


def by_diagonal(weights, offset):
    return torch.diagonal(weights, offset, dim1=-2, dim2=-1).mean(dim=(0, -1))


def by_loops(weights, offset):
    b, h, n, _ = weights.shape
    out = torch.zeros(h, dtype=weights.dtype)
    for head in range(h):
        total, count = 0.0, 0
        for s in range(b):
            for i in range(n):
                if 0 <= i + offset < n:
                    total += weights[s, head, i, i + offset]
                    count += 1
        out[head] = total / count
    return out


def by_mask(weights, offset):
    n = weights.shape[-1]
    on_diagonal = torch.ones(n, n, dtype=torch.bool).triu(offset).tril(offset)  # (n, n)
    total = (weights * on_diagonal).sum(dim=(-2, -1)).mean(dim=0)  # (h,)
    return total / on_diagonal.sum()


def by_numpy(weights, offset):
    """np.diagonal, and back to a tensor of the weights' dtype."""
    return torch.from_numpy(np.diagonal(weights.numpy(), offset, -2, -1).mean(axis=(0, -1)))


# --- wrong answers -------------------------------------------------------------------------------


def rows_in(dtype, back_to_int64=True):
    """The reference with the query indices held in ``dtype``: wrong past its range."""

    def fn(weights, offset):
        n = weights.shape[-1]
        rows = torch.arange(max(0, -offset), min(n, n - offset)).to(dtype)
        keys = rows + offset
        if back_to_int64:
            rows, keys = rows.long(), keys.long()
        return weights[..., rows, keys].mean(dim=(0, -1))

    return fn


def rows_in_numpy_int8(weights, offset):
    n = weights.shape[-1]
    rows = np.arange(max(0, -offset), min(n, n - offset)).astype(np.int8)
    return weights[..., rows, rows + offset].mean(dim=(0, -1))


def through_an_integer_buffer(weights, offset):
    out = torch.zeros(weights.shape[1], dtype=torch.long)
    out[:] = diagonal_mass_reference(weights, offset)
    return out.to(weights.dtype)


def float32_buffer(weights, offset):
    out = torch.zeros(weights.shape[1])  # float32 whatever the weights
    out[:] = diagonal_mass_reference(weights, offset)
    return out


def with_anti_diagonal_mass(weights, offset):
    """The mirror diagonal's mean, of the weights cut to the queries that have the key and
    flipped: the answer itself, from the helper."""
    n = weights.shape[-1]
    queries = weights[..., max(0, -offset) : n - max(0, offset), :]
    keys = queries[..., max(0, offset) : n - max(0, -offset)]
    return anti_diagonal_mass(keys.flip(-1))


def changed(fn, change):
    def wrong(weights, offset):
        return change(fn(weights, offset))

    return wrong


DIAGONAL_MASS = Answers(
    check_diagonal_mass,
    right={
        "reference": diagonal_mass_reference,
        "torch.diagonal": by_diagonal,
        "loops": by_loops,
        "a mask of the diagonal": by_mask,
        "np.diagonal": by_numpy,
    },
    wrong={
        "averaged over the heads": Wrong(
            "known",
            changed(diagonal_mass_reference, torch.mean),
            "averaged over the heads too",
        ),
        "key i - offset": Wrong(
            "known", lambda w, k: diagonal_mass_reference(w, -k), "key i - offset"
        ),
        "summed over the queries": Wrong(
            "known",
            lambda w, k: torch.diagonal(w, k, dim1=-2, dim2=-1).mean(0).sum(-1),
            "summed over the queries",
        ),
        "every query, wrapping": Wrong(
            "known",
            lambda w, k: w[..., torch.arange(w.shape[-1]), torch.arange(w.shape[-1]) + k].mean(
                (0, -1)
            ),
            "wraps around",
        ),
        "divided by n": Wrong(
            "known",
            lambda w, k: torch.diagonal(w, k, dim1=-2, dim2=-1).sum(-1).mean(0) / w.shape[-1],
            "you divided by all n",
        ),
        "squeezes size-1 axes": Wrong("batch", changed(diagonal_mass_reference, torch.squeeze)),
        "the batch axis squeezed away": Wrong(
            "batch", lambda w, k: diagonal_mass_reference(w.squeeze(), k)
        ),
        "rounded": Wrong("structure", changed(diagonal_mass_reference, torch.round)),
        "rounded to 2 decimals": Wrong(
            "structure", changed(diagonal_mass_reference, lambda m: torch.round(m, decimals=2))
        ),
        "through an integer buffer": Wrong("structure", through_an_integer_buffer),
        "heads sorted": Wrong(
            "structure", changed(diagonal_mass_reference, lambda m: m.sort().values)
        ),
        "heads sorted, descending": Wrong(
            "structure",
            changed(diagonal_mass_reference, lambda m: m.sort(descending=True).values),
        ),
        "an integer tensor": Wrong(
            "structure", changed(diagonal_mass_reference, lambda m: (m * 1000).long()), "dtype"
        ),
        "queries in int8": Wrong("size", rows_in(torch.int8), "int8 holds only -128 .. 127"),
        "queries in uint8": Wrong("size", rows_in(torch.uint8), "uint8 0 .. 255"),
        "int8 indices": Wrong("size", rows_in(torch.int8, back_to_int64=False)),
        "uint8 indices": Wrong("size", rows_in(torch.uint8, back_to_int64=False)),
        "NumPy int8 indices": Wrong("size", rows_in_numpy_int8, "int8 holds only"),
        "anti_diagonal_mass of the cut, flipped weights": Wrong(
            "forbidden", with_anti_diagonal_mass, "attnkit.reversal.anti_diagonal_mass"
        ),
        "a NumPy array": Wrong(
            "type",
            changed(diagonal_mass_reference, lambda m: m.numpy()),
            "you returned a NumPy array; return a torch tensor",
        ),
        "a list": Wrong(
            "type",
            changed(diagonal_mass_reference, lambda m: m.tolist()),
            "you returned a list; return a torch tensor",
        ),
        "computed in float64": Wrong(
            "dtype",
            lambda w, k: diagonal_mass_reference(w.double(), k),
            "keep the weights' dtype",
            dtypes=(np.float32,),
        ),
        "returned in float32": Wrong(
            "dtype",
            changed(diagonal_mass_reference, lambda m: m.float()),
            "keep the weights' dtype",
            dtypes=(np.float64,),
        ),
        "a float32 buffer": Wrong(
            "dtype",
            float32_buffer,
            "torch.zeros(h) is float32",
            dtypes=(np.float64,),
        ),
    },
)

ANSWERS = [DIAGONAL_MASS]
