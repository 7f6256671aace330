"""Right and wrong answers to the exercises of chapter 2 (``chapters/self-attention.md``)."""

import numpy as np

from attnkit.core import (
    causal_mask,
    grouped_query_attention,
    masked_softmax,
    multi_head_attention,
    padding_mask,
    scaled_dot_product_attention,
    self_attention,
    sliding_window_mask,
    softmax,
)
from attnkit.exercises.self_attention import (
    check_causal_mask,
    check_masked_self_attention,
    check_padding_mask,
)
from tests.support.answers import (
    Answers,
    Wrong,
    alias_family,
    dtype_family,
    layout_family,
    softmax_families,
    squeezed_family,
    structure_family,
    type_family,
)

# --- check_causal_mask --------------------------------------------------------------------------


def causal_reference(n):
    return np.tril(np.ones((n, n), dtype=bool))  # (n, n)


def causal_by_loops(n):
    mask = np.zeros((n, n), dtype=bool)
    for i in range(n):
        mask[i, : i + 1] = True
    return mask


def causal_from_positions(dtype):
    """Keys j <= query i, the positions counted in ``dtype``."""

    def mask(n):
        positions = np.arange(n, dtype=dtype)
        return positions[None, :] <= positions[:, None]

    return mask


# a table built once, as a model registers its causal mask for a maximum length, and sliced
_TABLE = causal_reference(1024)

CAUSAL_MASK = Answers(
    check_causal_mask,
    right={
        "reference": causal_reference,
        "positions compared": causal_from_positions(np.int64),
        "np.tri": lambda n: np.tri(n, dtype=bool),
        "loops": causal_by_loops,
        "the upper triangle negated": lambda n: ~np.triu(np.ones((n, n), dtype=bool), k=1),
    },
    wrong={
        "np.triu": Wrong("known", lambda n: np.triu(np.ones((n, n), dtype=bool)), "np.triu"),
        "flipped": Wrong("known", lambda n: ~causal_reference(n), "flip the mask"),
        "no diagonal": Wrong(
            "known", lambda n: np.tril(np.ones((n, n), dtype=bool), k=-1), "diagonal is False"
        ),
        "floats": Wrong("known", lambda n: np.tril(np.ones((n, n))), "return booleans"),
        "positions in int8": Wrong("size", causal_from_positions(np.int8), "small integer type"),
        "positions in uint8": Wrong("size", causal_from_positions(np.uint8), "small integer type"),
        "a table of 1024 sliced": Wrong("size", lambda n: _TABLE[:n, :n].copy(), "fixed size"),
        "attnkit's causal_mask": Wrong("forbidden", causal_mask, "attnkit.core.causal_mask"),
        "attnkit's causal_mask, called": Wrong(
            "forbidden", lambda n: causal_mask(n), "attnkit.core.causal_mask"
        ),
        "attnkit's sliding window as wide as n": Wrong(
            "forbidden", lambda n: sliding_window_mask(n, n), "attnkit.core.sliding_window_mask"
        ),
        **type_family(causal_reference),
        **alias_family(causal_reference),
        **squeezed_family(causal_reference),
    },
    float_inputs=False,
)


# --- check_masked_self_attention ----------------------------------------------------------------


def stable_softmax(x):
    """The chapter's softmax written out, which lets -inf through: exp(-inf) is 0."""
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def masked_self_attend(X, mask):
    """The chapter's solution."""
    scores = np.where(mask, X @ X.T, -np.inf)  # (n, n)
    shifted = scores - scores.max(axis=1, keepdims=True)
    e = np.exp(shifted)  # masked: 0
    weights = e / e.sum(axis=1, keepdims=True)  # (n, n)
    return weights @ X, weights  # (n, d), (n, n)


def masked_scores_in_torch(X, mask):
    """The scores computed by PyTorch on tensors made from nested lists, the rest as the
    chapter's solution: right, but not NumPy only."""
    import torch

    rows = torch.tensor(X.tolist(), dtype=torch.float64)
    scores = np.where(mask, (rows @ rows.T).numpy(), -np.inf)
    e = np.exp(scores - scores.max(axis=1, keepdims=True))
    weights = (e / e.sum(axis=1, keepdims=True)).astype(X.dtype)
    return weights @ X, weights


def masked_with(softmax, fill=-np.inf, mask_of=lambda mask: mask):
    """Masked self-attention whose masked scores get ``fill``, through ``softmax``."""

    def attend(X, mask):
        weights = softmax(np.where(mask_of(mask), X @ X.T, fill))
        return weights @ X, weights

    return attend


def masked_filled_with_the_dtype_minimum(X, mask):
    """Exact when every row keeps a key: the minimum lies below every allowed score."""
    return masked_with(stable_softmax, np.finfo(X.dtype).min)(X, mask)


def masked_by_rows(X, mask):
    weights = np.zeros((len(X), len(X)), dtype=X.dtype)
    for i, keep in enumerate(mask):
        scores = X[keep] @ X[i]  # the keys query i may attend to
        e = np.exp(scores - scores.max())
        weights[i, keep] = e / e.sum()
    return weights @ X, weights


def masked_with_einsum(X, mask):
    scores = np.where(mask, np.einsum("id,jd->ij", X, X), -np.inf)
    weights = stable_softmax(scores)
    return np.einsum("ij,jd->id", weights, X), weights


def masked_by_log_sum_exp(X, mask):
    scores = np.where(mask, X @ X.T, -np.inf)
    top = scores.max(axis=-1, keepdims=True)
    log_total = np.log(np.exp(scores - top).sum(axis=-1, keepdims=True))
    weights = np.exp(scores - top - log_total)
    return weights @ X, weights


def masked_after_the_exponential(X, mask):
    """Shifted by the allowed maximum; the masked keys' exp may overflow and is then dropped."""
    scores = X @ X.T
    top = np.where(mask, scores, -np.inf).max(axis=-1, keepdims=True)
    e = np.where(mask, np.exp(scores - top), 0.0)
    weights = e / e.sum(axis=-1, keepdims=True)
    return weights @ X, weights


def masked_split_into_rows(X, mask):
    rows = [
        stable_softmax(np.where(keep, row @ X.T, -np.inf))
        for row, keep in zip(np.split(X, len(X)), np.split(mask, len(mask)))
    ]
    weights = np.concatenate(rows)
    return weights @ X, weights


def masked_zeroed_after_the_softmax(X, mask):
    weights = stable_softmax(X @ X.T) * mask
    return weights @ X, weights


def masked_normalised_over_every_key(X, mask):
    """Masked keys dropped from the numerator only."""
    e = np.exp(X @ X.T - (X @ X.T).max(axis=-1, keepdims=True))
    weights = e * mask / e.sum(axis=-1, keepdims=True)
    return weights @ X, weights


def masked_by_multiplying_the_overall_maximum(X, mask):
    scores = X @ X.T
    e = np.exp(scores - scores.max(axis=-1, keepdims=True)) * mask
    weights = e / e.sum(axis=-1, keepdims=True)
    return weights @ X, weights


def masked_naive(X, mask):
    e = np.exp(np.where(mask, X @ X.T, -np.inf))
    weights = e / e.sum(axis=-1, keepdims=True)
    return weights @ X, weights


def masked_and_scaled(X, mask):
    scores = np.where(mask, X @ X.T / np.sqrt(X.shape[1]).astype(X.dtype), -np.inf)
    weights = stable_softmax(scores)
    return weights @ X, weights


def one_head(X, mask):
    """Self-attention as the one head of multi-head attention: identity projections, the
    scores scaled back up by sqrt(d)."""
    d = X.shape[1]
    scaled = np.eye(d, dtype=X.dtype) * d**0.25
    out, weights = multi_head_attention(X, X, scaled, scaled, np.eye(d), np.eye(d), 1, mask=mask)
    return out, weights[0]


def masked_in_place(X, mask):
    X *= 1.0
    X[0, 0] += 1.0
    return masked_self_attend(X, mask)


# what the check's message says to a softmax shifted or flattened wrongly
ADVICE = {"shift": "each row's maximum", "clip": "clip"}

MASKED_SELF_ATTENTION = Answers(
    check_masked_self_attention,
    right={
        "reference": masked_self_attend,
        "the dtype's minimum as the fill": masked_filled_with_the_dtype_minimum,
        "row by row": masked_by_rows,
        "einsum": masked_with_einsum,
        "log-sum-exp": masked_by_log_sum_exp,
        "masked after the exponential": masked_after_the_exponential,
        "np.split into rows": masked_split_into_rows,
        "shifted by the allowed maximum and a constant": masked_with(
            lambda x: stable_softmax(x - 1.0)
        ),
    },
    wrong={
        "the mask ignored": Wrong(
            "known", masked_with(stable_softmax, mask_of=np.ones_like), "ignore the mask"
        ),
        "scaled by sqrt(d)": Wrong("known", masked_and_scaled, "sqrt(d)"),
        "output weights.T @ X": Wrong(
            "known",
            lambda X, mask: (masked_self_attend(X, mask)[1].T @ X, masked_self_attend(X, mask)[1]),
            "output is not weights @ X",
        ),
        "X changed in place": Wrong("known", masked_in_place, "in place"),
        "no shift at all": Wrong("known", masked_naive, "largest score the row may attend to"),
        "exp shifted by the maximum over every key": Wrong(
            "known", masked_by_multiplying_the_overall_maximum, "largest score the row may"
        ),
        **{
            f"masked scores filled with {fill:g}": Wrong(
                "mask", masked_with(stable_softmax, fill), "one finite score"
            )
            for fill in (-1e4, -1e9, -1e10, -1e30)
        },
        "masked scores filled with 0": Wrong(
            "mask", masked_with(stable_softmax, 0.0), "exp(0) = 1"
        ),
        "mask.T": Wrong(
            "mask", masked_with(stable_softmax, mask_of=np.transpose), "mask[i, j], not mask[j, i]"
        ),
        "~mask": Wrong(
            "mask", masked_with(stable_softmax, mask_of=np.logical_not), "True means 'may attend'"
        ),
        "zeroed after the softmax": Wrong(
            "mask", masked_zeroed_after_the_softmax, "without renormalising"
        ),
        "normalised over the masked keys too": Wrong(
            "mask", masked_normalised_over_every_key, "without renormalising"
        ),
        **structure_family(masked_self_attend, axes=(-1, 0)),
        **{
            name: Wrong(wrong.family, wrong.fn, ADVICE[wrong.family])
            for name, wrong in softmax_families(masked_with).items()
        },
        "attnkit's masked_softmax": Wrong(
            "forbidden",
            lambda X, mask: (masked_softmax(X @ X.T, mask) @ X, masked_softmax(X @ X.T, mask)),
            "attnkit.core.masked_softmax",
        ),
        "attnkit's softmax of the dtype's minimum": Wrong(
            "forbidden",
            masked_with(softmax, np.finfo(np.float32).min),
            "attnkit.core.softmax",
        ),
        "attnkit's self_attention": Wrong(
            "forbidden",
            lambda X, mask: self_attention(X, mask=mask),
            "attnkit.core.self_attention",
        ),
        "attnkit's scaled dot-product attention": Wrong(
            "forbidden",
            lambda X, mask: scaled_dot_product_attention(X, X, X, mask=mask, scale=1.0),
            "attnkit.core.scaled_dot_product_attention",
        ),
        "attnkit's multi-head attention with one head": Wrong(
            "forbidden",
            one_head,
            "attnkit.core.multi_head_attention",
        ),
        "attnkit's grouped-query attention": Wrong(
            "forbidden",
            lambda X, mask: tuple(
                r[0]
                for r in grouped_query_attention(X[None], X[None], X[None], mask=mask, scale=1.0)
            ),
            "attnkit.core.grouped_query_attention",
        ),
        "the scores in PyTorch, from torch.tensor of lists": Wrong(
            "forbidden", masked_scores_in_torch, "NumPy only"
        ),
        **type_family(masked_self_attend, numpy_only=True),
        **dtype_family(masked_self_attend),
        **layout_family(masked_self_attend),
        **squeezed_family(masked_self_attend),
    },
)


# --- check_padding_mask -------------------------------------------------------------------------


def padding_mask_reference(lengths, n, left=False):
    """The chapter's solution."""
    positions = np.arange(n)  # (n,)
    column = lengths[:, None]  # (b, 1)
    real = positions >= n - column if left else positions < column
    return real[:, None, :]  # (b, 1, n)


def padding_mask_by_loops(lengths, n, left=False):
    mask = np.zeros((len(lengths), 1, n), dtype=bool)
    for s, length in enumerate(lengths):
        if left:
            mask[s, 0, n - length :] = True
        else:
            mask[s, 0, :length] = True
    return mask


def padding_mask_by_flipping(lengths, n, left=False):
    right = (np.arange(n) < lengths[:, None])[:, None, :]
    return right[..., ::-1] if left else right


def padding_mask_counted(lengths, n, left=False, positions=None, column=None):
    """The reference with the positions and the lengths held as given."""
    positions = np.arange(n) if positions is None else positions
    column = lengths[:, None] if column is None else column
    real = positions >= n - column if left else positions < column
    return real[:, None, :]


def padding_sized_by_the_longest(lengths, n, left=False):
    return padding_mask_reference(lengths, int(lengths.max()), left)


def padding_left_from_the_longest(lengths, n, left=False):
    """Left padding counted back from the longest sequence's end, not from n."""
    if not left:
        return padding_mask_reference(lengths, n)
    real = np.arange(n) >= lengths.max() - lengths[:, None]
    return real[:, None, :]


def padding_built_for_the_longest_then_padded(lengths, n, left=False):
    mask = padding_mask_reference(lengths, int(lengths.max()), left)
    return np.pad(mask, ((0, 0), (0, 0), (0, n - mask.shape[-1])))


def padding_with_lengths_squeezed(lengths, n, left=False):
    """np.squeeze on the lengths: a batch of one becomes a single number, and the mask loses
    its batch axis."""
    lengths = np.squeeze(lengths)
    positions = np.arange(n)
    kept = positions >= n - lengths[..., None] if left else positions < lengths[..., None]
    return kept[:, None, :]


def padding_sorting_lengths_in_place(lengths, n, left=False):
    mask = padding_mask_reference(lengths, n, left)
    lengths.sort()
    return mask


# positions counted once, for a maximum length, and sliced
_POSITIONS = np.arange(1024)

PADDING_MASK = Answers(
    check_padding_mask,
    right={
        "reference": padding_mask_reference,
        "loops": padding_mask_by_loops,
        "flipped for left padding": padding_mask_by_flipping,
        "np.newaxis": lambda lengths, n, left=False: padding_mask_reference(lengths, n, left)[:, 0][
            :, np.newaxis
        ],
    },
    wrong={
        "shape (b, n)": Wrong(
            "known",
            lambda lengths, n, left=False: padding_mask_reference(lengths, n, left)[:, 0],
            "Add a middle axis",
        ),
        "queries hidden too": Wrong(
            "known",
            lambda lengths, n, left=False: (
                padding_mask_reference(lengths, n, left).transpose(0, 2, 1)
                & padding_mask_reference(lengths, n, left)
            ),
            "padded queries (rows) as well",
        ),
        "flipped": Wrong(
            "known",
            lambda lengths, n, left=False: ~padding_mask_reference(lengths, n, left),
            "flip it",
        ),
        "lengths sorted": Wrong(
            "known",
            lambda lengths, n, left=False: padding_mask_reference(np.sort(lengths), n, left),
        ),
        "lengths sorted in place": Wrong("known", padding_sorting_lengths_in_place, "in place"),
        "lengths squeezed": Wrong(
            "batch", padding_with_lengths_squeezed, "lengths = np.array([3])"
        ),
        "left ignored": Wrong(
            "mask",
            lambda lengths, n, left=False: padding_mask_reference(lengths, n),
            "with left=True the padding comes first",
        ),
        "j <= lengths[s]": Wrong(
            "mask",
            lambda lengths, n, left=False: (
                padding_mask_reference(lengths, n, left)
                if left
                else (np.arange(n) <= lengths[:, None])[:, None, :]
            ),
            "not j <= lengths[s]",
        ),
        "sized by the longest sequence": Wrong(
            "mask", padding_sized_by_the_longest, "the longest sequence"
        ),
        "left padding counted from the longest sequence": Wrong(
            "mask", padding_left_from_the_longest, "the longest sequence"
        ),
        "built for the longest sequence, then padded on the right": Wrong(
            "mask", padding_built_for_the_longest_then_padded, "the longest sequence"
        ),
        "positions in int8": Wrong(
            "size",
            lambda lengths, n, left=False: padding_mask_counted(
                lengths, n, left, positions=np.arange(n, dtype=np.int8)
            ),
            "small integer type",
        ),
        "positions in uint8": Wrong(
            "size",
            lambda lengths, n, left=False: padding_mask_counted(
                lengths, n, left, positions=np.arange(n, dtype=np.uint8)
            ),
            "small integer type",
        ),
        "lengths in uint8": Wrong(
            "size",
            lambda lengths, n, left=False: padding_mask_counted(
                lengths, n, left, column=lengths.astype(np.uint8)[:, None]
            ),
            "small integer type",
        ),
        "lengths in int8": Wrong(
            "size",
            lambda lengths, n, left=False: padding_mask_counted(
                lengths, n, left, column=lengths.astype(np.int8)[:, None]
            ),
            "small integer type",
        ),
        "positions from a table of 1024": Wrong(
            "size",
            lambda lengths, n, left=False: padding_mask_counted(
                lengths, n, left, positions=_POSITIONS[:n]
            ),
            "fixed size",
        ),
        "attnkit's padding_mask": Wrong(
            "forbidden",
            lambda lengths, n, left=False: (
                padding_mask(lengths, n)[..., ::-1] if left else padding_mask(lengths, n)
            ),
            "attnkit.core.padding_mask",
        ),
        **type_family(padding_mask_reference),
        **alias_family(padding_mask_reference),
        **squeezed_family(padding_mask_reference),
    },
    float_inputs=False,
)

ANSWERS = [CAUSAL_MASK, MASKED_SELF_ATTENTION, PADDING_MASK]
