"""Right and wrong answers to the exercises of chapter 4 (``chapters/multi-head-attention.md``)."""

import numpy as np
import torch

from attnkit.core import merge_heads, split_heads
from attnkit.exercises.multi_head_attention import check_merge_heads, check_split_heads
from attnkit.modules import MultiHeadAttention
from tests.support.answers import (
    Answers,
    Wrong,
    dtype_family,
    layout_family,
    returning,
    squeezed_family,
    structure_family,
    type_family,
)

# --- check_split_heads --------------------------------------------------------------------------


def split_reference(X, h):
    b, n, width = X.shape
    pieces = X.reshape(b, n, h, width // h)  # (b, n, h, d_k)
    return pieces.transpose(0, 2, 1, 3)  # (b, h, n, d_k)


def split_by_stacking(X, h):
    return np.stack(np.split(X, h, axis=-1), axis=1)


def split_with_einsum(X, h):
    b, n, width = X.shape
    return np.einsum("bnhd->bhnd", X.reshape(b, n, h, width // h))


def split_by_loops(X, h):
    b, n, width = X.shape
    d_k = width // h
    out = np.empty((b, h, n, d_k), dtype=X.dtype)
    for i in range(h):
        out[:, i] = X[:, :, i * d_k : (i + 1) * d_k]
    return out


def split_in_torch(X, h):
    x = torch.from_numpy(X)
    b, n, width = x.shape
    return x.view(b, n, h, width // h).transpose(1, 2).numpy()


def split_by_swapaxes(X, h):
    return np.swapaxes(X.reshape(*X.shape[:-1], h, -1), 1, 2)


def split_mixing_tokens(X, h):
    """Article 001's listing: view as (b, h, n, d_k) without the transpose."""
    return X.reshape(X.shape[0], h, X.shape[1], -1)


def split_in_float64(X, h):
    b, n, width = X.shape
    out = np.zeros((b, h, n, width // h))
    for i in range(h):
        out[:, i] = X[:, :, i * (width // h) : (i + 1) * (width // h)]
    return out


def split_in_place(X, h):
    X[0, 0, 0] = -1.0
    return split_reference(X, h)


def split_with_attnkit_layer(X, h):
    layer = MultiHeadAttention(X.shape[-1], h)
    return layer.split_heads(torch.from_numpy(X)).numpy()


SPLIT = Answers(
    check_split_heads,
    right={
        "reference": split_reference,
        "np.split and np.stack": split_by_stacking,
        "einsum": split_with_einsum,
        "loops": split_by_loops,
        "PyTorch": split_in_torch,
        "swapaxes": split_by_swapaxes,
    },
    wrong={
        "straight to (b, h, n, d_k)": Wrong("known", split_mixing_tokens, "mix tokens and heads"),
        "no transpose": Wrong(
            "known", lambda X, h: X.reshape(X.shape[0], X.shape[1], h, -1), "= (b, n, h, d_k)"
        ),
        "every h-th column": Wrong(
            "known",
            lambda X, h: X.reshape(X.shape[0], X.shape[1], -1, h).transpose(0, 3, 1, 2),
            "every h-th column",
        ),
        "tokens and columns swapped": Wrong(
            "known", lambda X, h: split_reference(X, h).transpose(0, 1, 3, 2), "(b, h, d_k, n)"
        ),
        "columns reversed": Wrong(
            "known", lambda X, h: split_reference(X, h)[..., ::-1], "in reverse order"
        ),
        "heads reversed": Wrong(
            "known", lambda X, h: split_reference(X, h)[:, ::-1], "should be 0 (batch 0"
        ),
        "changes X in place": Wrong("known", split_in_place, "in place"),
        **structure_family(split_reference, axes=(-1, -2, 1, 0)),
        "heads sorted along their columns": Wrong(
            "structure", returning(lambda a: np.sort(a, axis=-1), split_reference), "sorted"
        ),
        "heads sorted along their tokens": Wrong(
            "structure", returning(lambda a: np.sort(a, axis=-2), split_reference), "sorted"
        ),
        "through an integer buffer, with a message": Wrong(
            "structure",
            lambda X, h: split_reference(X.astype(np.int64), h).astype(X.dtype),
            "whole numbers",
        ),
        "rounded to 3 decimals": Wrong(
            "structure", lambda X, h: split_reference(np.round(X, 3), h), "rounded to 3"
        ),
        "attnkit's split_heads": Wrong(
            "forbidden", lambda X, h: split_heads(X, h), "attnkit.core.split_heads"
        ),
        "attnkit's layer": Wrong("forbidden", split_with_attnkit_layer, "split_heads"),
        **type_family(split_reference),
        **dtype_family(split_reference),
        **layout_family(split_reference),
        **squeezed_family(split_reference),
        "through a float64 buffer": Wrong(
            "dtype", split_in_float64, "float32 inputs", dtypes=(np.float32,)
        ),
    },
)

# --- check_merge_heads --------------------------------------------------------------------------


def merge_reference(Y):
    b, h, n, d_v = Y.shape
    tokens_first = Y.transpose(0, 2, 1, 3)  # (b, n, h, d_v)
    return tokens_first.reshape(b, n, h * d_v)  # (b, n, h*d_v)


def merge_by_concatenating(Y):
    return np.concatenate(list(Y.transpose(1, 0, 2, 3)), axis=-1)


def merge_by_unstacking(Y):
    return np.concatenate([Y[:, i] for i in range(Y.shape[1])], axis=-1)


def merge_with_einsum(Y):
    b, h, n, d_v = Y.shape
    return np.einsum("bhnd->bnhd", Y).reshape(b, n, h * d_v)


def merge_by_loops(Y):
    b, h, n, d_v = Y.shape
    out = np.empty((b, n, h * d_v), dtype=Y.dtype)
    for i in range(h):
        out[:, :, i * d_v : (i + 1) * d_v] = Y[:, i]
    return out


def merge_in_torch(Y):
    y = torch.from_numpy(Y)
    return y.transpose(1, 2).contiguous().view(Y.shape[0], Y.shape[2], -1).numpy()


def merge_with_attnkit_layer(Y):
    h, d_v = Y.shape[1], Y.shape[-1]
    return MultiHeadAttention(h * d_v, h).merge_heads(torch.from_numpy(Y)).numpy()


MERGE = Answers(
    check_merge_heads,
    right={
        "reference": merge_reference,
        "np.concatenate": merge_by_concatenating,
        "head by head": merge_by_unstacking,
        "einsum": merge_with_einsum,
        "loops": merge_by_loops,
        "PyTorch": merge_in_torch,
    },
    wrong={
        "straight to (b, n, h*d_v)": Wrong(
            "known", lambda Y: Y.reshape(Y.shape[0], Y.shape[2], -1), "without moving the head"
        ),
        "interleaved": Wrong(
            "known",
            lambda Y: Y.transpose(0, 2, 3, 1).reshape(Y.shape[0], Y.shape[2], -1),
            "interleaved",
        ),
        "columns reversed": Wrong(
            "known", lambda Y: merge_reference(Y[..., ::-1]), "columns of each head are reversed"
        ),
        "heads reversed": Wrong(
            "known", lambda Y: merge_reference(Y[:, ::-1]), "heads are in reverse order"
        ),
        "not concatenated": Wrong(
            "known", lambda Y: Y.transpose(0, 2, 1, 3), "now concatenate the heads"
        ),
        "half added": Wrong("known", lambda Y: merge_reference(Y) + 0.5, "no entry of the input"),
        **structure_family(merge_reference, axes=(-1, -2, 0)),
        "heads sorted along their columns": Wrong(
            "structure", lambda Y: merge_reference(np.sort(Y, axis=-1)), "should be"
        ),
        "heads sorted along their tokens": Wrong(
            "structure", lambda Y: merge_reference(np.sort(Y, axis=-2)), "sorted along axis 1"
        ),
        "through an integer buffer, with a message": Wrong(
            "structure", lambda Y: merge_reference(Y.astype(np.int32)).astype(Y.dtype), "whole"
        ),
        "attnkit's merge_heads": Wrong(
            "forbidden", lambda Y: merge_heads(Y), "attnkit.core.merge_heads"
        ),
        "attnkit's layer": Wrong("forbidden", merge_with_attnkit_layer, "merge_heads"),
        **type_family(merge_reference),
        **dtype_family(merge_reference),
        **layout_family(merge_reference),
        **squeezed_family(merge_reference),
        "through a float64 buffer": Wrong(
            "dtype",
            lambda Y: merge_by_loops(Y.astype(np.float64)),
            "float32 inputs",
            dtypes=(np.float32,),
        ),
    },
)

ANSWERS = [SPLIT, MERGE]
