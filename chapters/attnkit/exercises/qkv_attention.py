"""Checks for the coding exercises of ``chapters/qkv-attention.md``."""

import numpy as np

from ..core import causal_mask, padding_mask, softmax
from .harness import (
    ATTENTIONS,
    Failed,
    as_array,
    call,
    check,
    close,
    dtypes,
    keeps_dtype,
    not_finite,
    random,
    shown,
)
from .inputs import extreme_logits, scores_from_queries_and_keys, spread
from .wording import _

__all__ = ["check_scaled_dot_product_attention", "check_mask_forms"]

# Every helper that computes the whole of softmax(Q K^T / sqrt(d_k)) V; a softmax is allowed.
_SDPA_HELPERS = ATTENTIONS + (
    "attnkit.modules.ScaledDotProductAttention.forward",
    "torch.nn.functional.scaled_dot_product_attention",
)

# Scaled scores beyond this overflow np.exp in float32 (above 88.7) unless shifted, and round
# some weights to exactly 0 or 1
_EXTREME = 80.0


def _sdpa_cases(dtype):
    """(Q, K, V) triples in which every size differs from the others, so that a transpose or
    a scale taken from the wrong size shows.

    First the worked ones: d_k = 9, 16, 2 (no scale fits two of them), one query, more queries
    than keys, and scores near ±1000. Then fresh random ones: reals of random sizes whose
    values spread over many orders, and scores that only a softmax shifted by each row's own
    maximum survives, built so that Q K^T / sqrt(d_k) is exact in float32 too.
    """
    rng = np.random.default_rng(3)
    cases = [
        (rng.normal(size=(3, 9)), rng.normal(size=(5, 9)), rng.normal(size=(5, 4))),
        (rng.normal(size=(4, 16)), rng.normal(size=(2, 16)), rng.normal(size=(2, 3))),
        (rng.normal(size=(1, 2)), rng.normal(size=(6, 2)), rng.normal(size=(6, 7))),
    ]
    # d_k = 4: the scaled scores are [[1000, 1000, 0, 0], [0, 0, 1000, 1000]], exact in
    # float32 too; np.exp of them overflows unless each row's maximum is subtracted first
    Q = np.array([[60.0, 20.0, 0.0, 0.0], [0.0, 0.0, 60.0, 20.0]])
    K = np.array(
        [
            [30.0, 10.0, 0.0, 0.0],
            [29.0, 13.0, 0.0, 0.0],
            [0.0, 0.0, 30.0, 10.0],
            [0.0, 0.0, 29.0, 13.0],
        ]
    )
    cases = [tuple(a.astype(dtype) for a in case) for case in cases]
    cases.append((Q.astype(dtype), K.astype(dtype), rng.normal(size=(4, 3)).astype(dtype)))

    fresh = random()
    m, n, d_k, d_v = (int(s) for s in fresh.choice(np.arange(2, 10), 4, replace=False))
    cases.append(
        (
            spread((m, d_k), dtype, decades=0.5),  # scores of a few units: no weight 0 or 1
            spread((n, d_k), dtype, decades=0.5),
            spread((n, d_v), dtype, decades=3.0),
        )
    )
    n, d_v = int(fresh.integers(6, 13)), int(fresh.integers(2, 5))  # m = 5 rows, d_k = 16
    Q, K = scores_from_queries_and_keys(extreme_logits(n, np.float64), 16, dtype)
    cases.append((Q, K, spread((n, d_v), dtype, decades=1.0)))
    return cases


def _wrong_scale(w, scores, m, n, d_k, d_v):
    """What is wrong with the scale that ``w`` was computed with, or None if it is no scale."""
    right = _("divide by sqrt(d_k) = sqrt({d_k}), with d_k = K.shape[-1]", d_k=d_k)
    candidates = {
        _("the weights are softmax(Q K^T), without scaling: {right}", right=right): 1.0,
        _(
            "you divided the scores by 3, the sqrt(d_k) of one example; d_k is {d_k} here, so "
            "take it from the inputs: {right}",
            d_k=d_k,
            right=right,
        ): 3.0,
        _("you divided the scores by d_k = {d_k}: {right}", d_k=d_k, right=right): float(d_k),
        _(
            "you divided the scores by sqrt(d_v) = sqrt({d_v}), but the scale comes from d_k, "
            "the width of q and k: {right}",
            d_v=d_v,
            right=right,
        ): np.sqrt(d_v),
        _(
            "you divided the scores by sqrt(n) = sqrt({n}), but the scale comes from d_k, not "
            "the number of keys: {right}",
            n=n,
            right=right,
        ): np.sqrt(n),
        _(
            "you divided the scores by sqrt(m) = sqrt({m}), but the scale comes from d_k, not "
            "the number of queries: {right}",
            m=m,
            right=right,
        ): np.sqrt(m),
        _("you multiplied the scores by sqrt(d_k) = sqrt({d_k}); divide them by it", d_k=d_k): 1
        / np.sqrt(d_k),
    }
    for what, c in candidates.items():
        if not np.isclose(c, np.sqrt(d_k)) and close(w, softmax(scores / c)):
            return what
    return None


def _wrong_weights(w, scaled, m, n, d_k, d_v, where):
    """Say what is wrong with weights ``w`` of the right shape that are not softmax(scaled)."""
    expected = softmax(scaled)
    bad = int(np.argmax(~np.all(np.isclose(w, expected, rtol=0, atol=1e-3), axis=-1)))
    row = _("the scaled scores {scores}", scores=np.round(scaled[bad], 2).tolist())
    stable = _(
        " Subtract each row's own maximum, S.max(axis=-1, keepdims=True), or use "
        "attnkit.core.softmax, and change the scores in no other way: a shift by another "
        "entry, by one maximum for the whole matrix or by a maximum floored at 0 overflows or "
        "underflows on some rows, and clipping the scores makes large ones equal."
    )
    if not np.all(np.isfinite(w)):
        where_row = _("{where} and {scores}", where=where, scores=row)
        raise not_finite(where_row, _("the weights"), stable)
    scale = _wrong_scale(w, scaled * np.sqrt(d_k), m, n, d_k, d_v)
    if scale is not None:
        raise Failed(_("{where} {scale}", where=where, scale=scale))
    if m > 1 and close(w, softmax(scaled, axis=0)):
        raise Failed(
            _(
                "each column sums to 1: apply the softmax along the last axis, "
                "so that each query's row of weights sums to 1"
            )
        )
    tame = np.abs(scaled).max() <= _EXTREME  # no weight is 0 or 1 to the last digit
    if tame and any(np.array_equal(w, np.round(w, decimals)) for decimals in range(4)):
        right_weights, weights = shown(expected, w)
        raise Failed(
            _(
                "{where} your weights {weights} are rounded, or went through an "
                "integer array: they should be {right_weights}. Keep every digit, in "
                "the inputs' dtype",
                where=where,
                weights=weights,
                right_weights=right_weights,
            )
        )
    if close(np.sort(w, axis=-1), np.sort(expected, axis=-1)):
        raise Failed(
            _(
                "{where} each row holds the right weights in the wrong order: weight [i, j] "
                "belongs to query i and key j, in the keys' order. Do not sort or reorder them",
                where=where,
            )
        )
    if not close(w.sum(axis=-1), 1.0) or np.any(w < 0):
        raise Failed(
            _(
                "{where} the rows of the weights sum to {totals}, not 1; weights are "
                "non-negative and each row sums to 1",
                where=where,
                totals=shown(1.0, w.sum(axis=-1))[1],
            )
        )
    expected_row, returned = shown(expected[bad], w[bad])
    raise Failed(
        _(
            "{where} and {scores}, the weights should be softmax(Q K^T / sqrt({d_k})) = "
            "{expected}, you returned {returned}.{hint}",
            where=where,
            scores=row,
            d_k=d_k,
            expected=expected_row,
            returned=returned,
            hint="" if tame else stable,
        )
    )


@check(forbids=_SDPA_HELPERS)
def check_scaled_dot_product_attention(fn):
    """Check ``fn(Q, K, V) -> (output, weights)``: ``softmax(Q K^T / sqrt(d_k)) V``, any sizes,
    large scores included, float32 inputs giving float32 answers.

    Besides worked examples it tries random reals of random sizes, and scores that only a
    softmax shifted by each row's own maximum survives."""
    for dtype in dtypes():
        for Q, K, V in _sdpa_cases(dtype):
            Q64, K64, V64 = (a.astype(float) for a in (Q, K, V))  # what the function sees
            (m, d_k), (n, d_v) = Q.shape, V.shape
            scaled = Q64 @ K64.T / np.sqrt(d_k)  # (m, n)
            expected_w = softmax(scaled)
            where = _(
                "for Q of shape (m, d_k) = {q_shape}, K (n, d_k) = {k_shape} and "
                "V (n, d_v) = {v_shape}",
                q_shape=Q.shape,
                k_shape=K.shape,
                v_shape=V.shape,
            )
            with np.errstate(all="ignore"):  # overflow is reported below, in words
                result = call(fn, Q, K, V)
            if not (isinstance(result, tuple) and len(result) == 2):
                raise Failed(_("return a pair (output, weights)"))
            w = as_array(result[1], "weights")
            if w.shape == (n, m) and m != n:
                raise Failed(
                    _(
                        "{where} the weights have shape (n, m) = {shape}: compute "
                        "Q @ K.T (one row per query), not K @ Q.T",
                        where=where,
                        shape=(n, m),
                    )
                )
            if w.shape != (m, n):
                raise Failed(
                    _(
                        "{where} the weights have shape {shape}; they are (m, n) = "
                        "{right_shape}, one row per query and one column per key",
                        where=where,
                        shape=w.shape,
                        right_shape=(m, n),
                    )
                )
            keeps_dtype(result[1], dtype, _("the weights"))
            if not close(w, expected_w):
                _wrong_weights(w, scaled, m, n, d_k, d_v, where)
            out = as_array(result[0], "output")
            if out.shape == (m, d_k) and d_k != d_v:
                raise Failed(
                    _(
                        "{where} the output has width d_k = {d_k}: you averaged the keys; "
                        "the output is weights @ V, of shape (m, d_v) = {right_shape}",
                        where=where,
                        d_k=d_k,
                        right_shape=(m, d_v),
                    )
                )
            if out.shape != (m, d_v):
                raise Failed(
                    _(
                        "{where} the output has shape {shape}; it is weights @ V, of "
                        "shape (m, d_v) = {right_shape}",
                        where=where,
                        shape=out.shape,
                        right_shape=(m, d_v),
                    )
                )
            keeps_dtype(result[0], dtype, _("the output"))
            expected_out = expected_w @ V64
            if not close(out, expected_out):
                right_output, returned = shown(expected_out, out)
                raise Failed(
                    _(
                        "{where} the weights are right but the output is not weights @ V: it "
                        "should be {right_output}, you returned {returned}",
                        where=where,
                        right_output=right_output,
                        returned=returned,
                    )
                )
    return _(
        "correct: softmax(Q K^T / sqrt(d_k)) along each row, then a weighted sum of V, "
        "for any sizes and large scores, float32 staying float32"
    )


def _keep_masks():
    """(keep, what) pairs, True = may attend; none symmetric, every row keeps a key. The square
    one comes first, so that a transposed answer has the right shape and can be named. Then
    fresh random ones, of random shapes with batch axes."""
    scattered = np.array(
        [[True, False, True, False], [False, True, True, True], [True, False, False, False]]
    )
    masks = [
        (causal_mask(4), _("a (4, 4) causal mask")),
        (scattered, _("a (3, 4) mask")),
        (padding_mask([3, 5], 5), _("a (2, 1, 5) padding mask")),
    ]
    rng = random()
    for axes in (1, 2):
        batch = tuple(int(s) for s in rng.integers(1, 4, size=axes))
        m, n = (int(s) for s in rng.choice(np.arange(2, 8), 2, replace=False))  # not square
        keep = rng.random((*batch, m, n)) < 0.6
        keep[..., 0, :] = False  # a hidden key in every batch entry
        every_row = rng.integers(n, size=(*batch, m, 1))
        np.put_along_axis(keep, every_row, True, axis=-1)  # ... and a kept key in every row
        keep = rng.permutation(keep, axis=-2)
        masks.append((keep, _("a random {shape} mask", shape=keep.shape)))
    return masks


def _sdpa_weights(masks, shape, dtype):
    """The weights ``F.scaled_dot_product_attention`` computes with each mask of ``masks``.

    ``shape`` is the masks', ``(..., m, n)`` (a middle 1 standing for m = 3 queries); the
    same random queries and keys serve every mask, and with the identity as the values the
    output is the weight matrix itself.
    """
    import torch
    import torch.nn.functional as F

    *batch, m, n = shape
    m = 3 if m == 1 else m
    rng = random()
    Q = torch.from_numpy(rng.standard_normal((*batch, m, 6))).to(dtype)
    K = torch.from_numpy(rng.standard_normal((*batch, n, 6))).to(dtype)
    V = torch.eye(n, dtype=dtype).expand(*batch, n, n)
    return [F.scaled_dot_product_attention(Q, K, V, attn_mask=mask).numpy() for mask in masks]


@check
def check_mask_forms(fn):
    """Check ``fn(keep, dtype) -> (masked_out, additive)``: one mask in PyTorch's other forms.

    ``keep`` is a boolean tensor ``(..., m, n)`` in the book's convention, True = may attend.
    ``masked_out`` is ``nn.MultiheadAttention``'s boolean form, True = masked out;
    ``additive`` is a float mask of dtype ``dtype``, 0 where attention is allowed and -inf
    where it is not. ``F.scaled_dot_product_attention`` must give the same weights with
    ``additive`` as with ``keep``. Besides worked masks it tries random ones with batch axes.
    """
    import torch

    torch_dtypes = {np.float64: torch.float64, np.float32: torch.float32}
    for keep_np, what in _keep_masks():
        for dtype in (torch_dtypes[d] for d in dtypes()):
            keep = torch.from_numpy(keep_np)
            where = _("for {what} and dtype = {dtype}", what=what, dtype=dtype)
            result = call(
                fn,
                keep,
                dtype,
                called_with=_(
                    "keep of shape {shape} and dtype = {dtype}",
                    shape=tuple(keep.shape),
                    dtype=dtype,
                ),
            )
            if not (isinstance(result, tuple) and len(result) == 2):
                raise Failed(_("return a pair (masked_out, additive)"))
            if not all(isinstance(r, torch.Tensor) for r in result):
                raise Failed(
                    _(
                        "return two torch tensors; you returned {first} and {second}",
                        first=type(result[0]).__name__,
                        second=type(result[1]).__name__,
                    )
                )
            masked_out, additive = result
            for name, mask in (("masked_out", masked_out), ("additive", additive)):
                if mask.shape != keep.shape:
                    raise Failed(
                        _(
                            "{where} {name} has shape {shape}; it is the same "
                            "mask written another way, shape {keep_shape}",
                            where=where,
                            name=name,
                            shape=tuple(mask.shape),
                            keep_shape=tuple(keep.shape),
                        )
                    )
            _check_masked_out(masked_out, keep, where)
            _check_additive(additive, keep, dtype, where)
    return _(
        "correct: masked_out is ~keep (True = masked out, as nn.MultiheadAttention reads "
        "it), and additive is 0 where keep allows and -inf where it hides, in the queries' "
        "dtype: F.scaled_dot_product_attention gives the same weights with it as with keep"
    )


def _check_masked_out(masked_out, keep, where):
    import torch

    if masked_out.dtype != torch.bool:
        raise Failed(
            _(
                "{where} masked_out has dtype {dtype}; nn.MultiheadAttention "
                "reads a boolean mask as True = masked out, so return booleans",
                where=where,
                dtype=masked_out.dtype,
            )
        )
    if torch.equal(masked_out, ~keep):
        return
    if torch.equal(masked_out, keep):
        raise Failed(
            _(
                "{where} masked_out equals keep: nn.MultiheadAttention reads True as "
                "'masked out', the opposite of the book, so negate it: ~keep",
                where=where,
            )
        )
    if torch.equal(masked_out, ~keep.transpose(-1, -2)):
        raise Failed(
            _(
                "{where} masked_out is the transpose of ~keep: entry [i, j] belongs to "
                "query i and key j in every convention; only True and False swap",
                where=where,
            )
        )
    index = tuple(int(k) for k in (masked_out != ~keep).nonzero()[0])
    raise Failed(
        _(
            "{where} masked_out{index} should be {right}: keep{index} is {kept}, and "
            "masked_out is its negation, ~keep",
            where=where,
            index=list(index),
            right=bool(~keep[index]),
            kept=bool(keep[index]),
        )
    )


def _check_additive(additive, keep, dtype, where):
    import torch

    if additive.dtype != dtype:
        raise Failed(
            _(
                "{where} additive has dtype {got}: give it the dtype asked for, {dtype}. "
                "F.scaled_dot_product_attention refuses a float mask whose "
                "dtype differs from the queries' (torch.where(...) gives float32 unless "
                "told otherwise: add .to(dtype), or build from torch.zeros(..., dtype=dtype))",
                where=where,
                got=additive.dtype,
                dtype=dtype,
            )
        )
    if torch.isnan(additive).any():
        raise Failed(
            _(
                "{where} additive contains NaN: 0 * (-inf) is NaN, so do not multiply a "
                "0/1 mask by -inf; pick 0 or -inf with torch.where, or masked_fill a zero "
                "tensor with float('-inf')",
                where=where,
            )
        )
    expected_mask = torch.zeros(keep.shape, dtype=dtype).masked_fill(~keep, float("-inf"))
    expected, got = _sdpa_weights((keep, additive), keep.shape, dtype)
    if not close(got, expected):
        if torch.equal(additive, expected_mask.transpose(-1, -2)):
            raise Failed(
                _(
                    "{where} additive is the transpose of the right mask: entry [i, j] "
                    "belongs to query i and key j in every convention",
                    where=where,
                )
            )
        if torch.equal(additive, keep.to(dtype)):
            raise Failed(
                _(
                    "{where} additive is keep as 0.0/1.0: a float mask is ADDED to the "
                    "scores, so 1.0 only nudges the allowed scores up and hides nothing. "
                    "Use 0 where keep is True and -inf where it is False",
                    where=where,
                )
            )
        if torch.isinf(additive[keep]).any() and not torch.isinf(additive[~keep]).any():
            raise Failed(
                _(
                    "{where} additive is -inf where keep is True: -inf goes where "
                    "attention is NOT allowed (keep False), 0 where it is",
                    where=where,
                )
            )
        index = tuple(int(k) for k in np.argwhere(~np.isclose(got, expected))[0])
        want, have = shown(expected[index], got[index])
        raise Failed(
            _(
                "{where} with your additive mask F.scaled_dot_product_attention gives "
                "query {query} the weight {have} on key {key}; with keep it gives {want}",
                where=where,
                query=index[-2],
                have=have,
                key=index[-1],
                want=want,
            )
        )
    if torch.equal(additive, expected_mask):
        return
    if torch.isfinite(additive[~keep]).any():
        raise Failed(
            _(
                "{where} additive holds a finite number where keep hides the key; write "
                "-inf (float('-inf')). A large negative number such as -1e9 hides the key "
                "here too, but a row in which every key is hidden then gets equal weights "
                "on all of them instead of none",
                where=where,
            )
        )
    raise Failed(
        _(
            "{where} additive should be exactly 0 where keep allows the key; "
            "F.scaled_dot_product_attention happens to give the same weights when a whole "
            "row is shifted, but any other library reading the mask will not",
            where=where,
        )
    )
