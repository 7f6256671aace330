"""Right and wrong answers to the exercises of chapter 1 (``chapters/attention.md``)."""

import numpy as np

from attnkit.core import attention, scaled_dot_product_attention, softmax
from attnkit.exercises.attention import check_single_query_attention, check_softmax
from tests.support.answers import (
    Answers,
    Wrong,
    dtype_family,
    layout_family,
    softmax_families,
    squeezed_family,
    structure_family,
    type_family,
)

# --- check_softmax ------------------------------------------------------------------------------


def softmax_reference(x):
    shifted = x - x.max(axis=-1, keepdims=True)
    e = np.exp(shifted)
    return e / e.sum(axis=-1, keepdims=True)


def softmax_of_rows(x):
    """Written for a matrix: axis=1 fails on the vector (n,) the statement allows too."""
    shifted = x - x.max(axis=1, keepdims=True)
    e = np.exp(shifted)
    return e / e.sum(axis=1, keepdims=True)


def softmax_log_sum_exp(x):
    top = x.max(axis=-1, keepdims=True)
    return np.exp(x - top - np.log(np.exp(x - top).sum(axis=-1, keepdims=True)))


def softmax_row_by_row(x):
    rows = np.atleast_2d(x)
    out = np.empty_like(rows)
    for i, row in enumerate(rows):
        e = np.exp(row - row.max())
        out[i] = e / e.sum()
    return out.reshape(x.shape)


def softmax_shifted_twice(x):
    """Any shift is exact once the row's maximum is subtracted: here by the maximum, then 1."""
    e = np.exp(x - np.max(x, axis=-1, keepdims=True) - 1)
    return e / np.sum(e, axis=-1, keepdims=True)


def softmax_naive(x):
    with np.errstate(all="ignore"):
        return np.exp(x) / np.exp(x).sum(axis=-1, keepdims=True)


def softmax_whole_array(x):
    e = np.exp(x - x.max())
    return e / e.sum()


SOFTMAX = Answers(
    check_softmax,
    right={
        "reference": softmax_reference,
        "log-sum-exp": softmax_log_sum_exp,
        "row by row": softmax_row_by_row,
        "shifted by the maximum and a constant": softmax_shifted_twice,
    },
    wrong={
        "naive": Wrong("known", softmax_naive),
        "normalised over the whole array": Wrong("known", softmax_whole_array),
        "over the columns": Wrong("known", lambda x: softmax_reference(x.T).T),
        **structure_family(softmax_reference, axes=(-1, 0)),
        **softmax_families(lambda softmax: softmax),
        "attnkit's softmax": Wrong("forbidden", lambda x: softmax(x), "attnkit.core.softmax"),
        "attnkit's attention": Wrong(
            "forbidden",
            lambda x: attention(np.eye(x.shape[-1], dtype=x.dtype), x, np.eye(x.shape[-1]))[1],
            "attnkit.core.attention",
        ),
        "PyTorch's softmax": Wrong("forbidden", lambda x: _torch_softmax(x), "NumPy only"),
        "PyTorch's exp on a tensor from torch.zeros": Wrong(
            "forbidden", lambda x: _torch_exp_softmax(x), "NumPy only"
        ),
        "rows only (axis=1)": Wrong("rank", softmax_of_rows, "(it was called with"),
        **type_family(softmax_reference, numpy_only=True),
        **dtype_family(softmax_reference),
        **layout_family(softmax_reference),
        **squeezed_family(softmax_reference),
    },
)


def _torch_exp_softmax(x):
    """The exponentials in PyTorch, on a tensor made by ``torch.zeros`` and filled by a copy."""
    import torch

    shifted = x - x.max(axis=-1, keepdims=True)
    e = torch.zeros(x.shape, dtype=torch.float64)
    e[...] = torch.tensor(shifted.tolist(), dtype=torch.float64)
    e = e.exp().numpy().astype(x.dtype)
    return e / e.sum(axis=-1, keepdims=True)


def _torch_softmax(x):
    import torch

    return torch.from_numpy(x).softmax(dim=-1).numpy()


# --- check_single_query_attention ---------------------------------------------------------------


def attend_reference(z, H):
    a = softmax(H @ z)
    return a @ H, a


def attend_by_hand(z, H):
    scores = H @ z
    e = np.exp(scores - scores.max())
    a = e / e.sum()
    return (a[:, None] * H).sum(axis=0), a


def attend_with_einsum(z, H):
    a = softmax(np.einsum("id,d->i", H, z))
    return np.einsum("i,id->d", a, H), a


def attend_with(softmax):
    def attend(z, H):
        a = softmax(H @ z)
        return a @ H, a

    return attend


SINGLE_QUERY = Answers(
    check_single_query_attention,
    right={
        "reference": attend_reference,
        "by hand": attend_by_hand,
        "einsum": attend_with_einsum,
        "H.T @ a": lambda z, H: (H.T @ softmax(H @ z), softmax(H @ z)),
    },
    wrong={
        "the scores as weights": Wrong("known", lambda z, H: (H @ z @ H, H @ z)),
        "H @ a": Wrong("known", lambda z, H: (H @ softmax(H @ z), softmax(H @ z))),
        "scaled by sqrt(d)": Wrong(
            "known",
            lambda z, H: attend_reference(z / np.sqrt(len(z)).astype(z.dtype), H),
        ),
        **structure_family(attend_reference),
        **softmax_families(attend_with, rows=False),
        "attnkit's attention": Wrong(
            "forbidden", lambda z, H: attention(z, H), "attnkit.core.attention"
        ),
        "attnkit's scaled dot-product attention": Wrong(
            "forbidden",
            lambda z, H: tuple(
                r[0] for r in scaled_dot_product_attention(z[None], H, H, scale=1.0)
            ),
            "attnkit.core.scaled_dot_product_attention",
        ),
        **type_family(attend_reference),
        **dtype_family(attend_reference),
        **layout_family(attend_reference),
        **squeezed_family(attend_reference),
    },
)

ANSWERS = [SOFTMAX, SINGLE_QUERY]
