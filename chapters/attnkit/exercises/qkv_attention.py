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
    random,
    shown,
)
from .inputs import extreme_logits, scores_from_queries_and_keys, spread

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
    right = f"divide by sqrt(d_k) = sqrt({d_k}), with d_k = K.shape[-1]"
    candidates = {
        f"the weights are softmax(Q K^T), without scaling: {right}": 1.0,
        f"you divided the scores by 3, the sqrt(d_k) of one example; d_k is {d_k} here, so "
        f"take it from the inputs: {right}": 3.0,
        f"you divided the scores by d_k = {d_k}: {right}": float(d_k),
        f"you divided the scores by sqrt(d_v) = sqrt({d_v}), but the scale comes from d_k, "
        f"the width of q and k: {right}": np.sqrt(d_v),
        f"you divided the scores by sqrt(n) = sqrt({n}), but the scale comes from d_k, not "
        f"the number of keys: {right}": np.sqrt(n),
        f"you divided the scores by sqrt(m) = sqrt({m}), but the scale comes from d_k, not "
        f"the number of queries: {right}": np.sqrt(m),
        f"you multiplied the scores by sqrt(d_k) = sqrt({d_k}); divide them by it": 1
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
    row = f"the scaled scores {np.round(scaled[bad], 2).tolist()}"
    stable = (
        "Subtract each row's own maximum, S.max(axis=-1, keepdims=True), or use "
        "attnkit.core.softmax, and change the scores in no other way: a shift by another "
        "entry, by one maximum for the whole matrix or by a maximum floored at 0 overflows or "
        "underflows on some rows, and clipping the scores makes large ones equal"
    )
    if not np.all(np.isfinite(w)):
        raise Failed(f"{where} and {row}, the weights contain NaN or inf. {stable}")
    scale = _wrong_scale(w, scaled * np.sqrt(d_k), m, n, d_k, d_v)
    if scale is not None:
        raise Failed(f"{where} {scale}")
    if m > 1 and close(w, softmax(scaled, axis=0)):
        raise Failed(
            "each column sums to 1: apply the softmax along the last axis, "
            "so that each query's row of weights sums to 1"
        )
    tame = np.abs(scaled).max() <= _EXTREME  # no weight is 0 or 1 to the last digit
    if tame and any(np.array_equal(w, np.round(w, decimals)) for decimals in range(4)):
        raise Failed(
            f"{where} your weights {shown(expected, w)[1]} are rounded, or went through an "
            f"integer array: they should be {shown(expected, w)[0]}. Keep every digit, in "
            "the inputs' dtype"
        )
    if close(np.sort(w, axis=-1), np.sort(expected, axis=-1)):
        raise Failed(
            f"{where} each row holds the right weights in the wrong order: weight [i, j] "
            "belongs to query i and key j, in the keys' order. Do not sort or reorder them"
        )
    if not close(w.sum(axis=-1), 1.0) or np.any(w < 0):
        raise Failed(
            f"{where} the rows of the weights sum to "
            f"{shown(1.0, w.sum(axis=-1))[1]}, not 1; weights are "
            "non-negative and each row sums to 1"
        )
    advice = "" if tame else f". {stable}"
    raise Failed(
        "{} and {} the weights should be softmax(Q K^T / sqrt({})) = {}, you returned {}{}".format(
            where, row, d_k, *shown(expected[bad], w[bad]), advice
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
            where = (
                f"for Q of shape (m, d_k) = {Q.shape}, K (n, d_k) = {K.shape} and "
                f"V (n, d_v) = {V.shape}"
            )
            with np.errstate(all="ignore"):  # overflow is reported below, in words
                result = call(fn, Q, K, V)
            if not (isinstance(result, tuple) and len(result) == 2):
                raise Failed("return a pair (output, weights)")
            w = as_array(result[1], "weights")
            if w.shape == (n, m) and m != n:
                raise Failed(
                    f"{where} the weights have shape (n, m) = {(n, m)}: compute "
                    "Q @ K.T (one row per query), not K @ Q.T"
                )
            if w.shape != (m, n):
                raise Failed(
                    f"{where} the weights have shape {w.shape}; they are (m, n) = "
                    f"{(m, n)}, one row per query and one column per key"
                )
            keeps_dtype(result[1], dtype, "the weights")
            if not close(w, expected_w):
                _wrong_weights(w, scaled, m, n, d_k, d_v, where)
            out = as_array(result[0], "output")
            if out.shape == (m, d_k) and d_k != d_v:
                raise Failed(
                    f"{where} the output has width d_k = {d_k}: you averaged the keys; "
                    f"the output is weights @ V, of shape (m, d_v) = {(m, d_v)}"
                )
            if out.shape != (m, d_v):
                raise Failed(
                    f"{where} the output has shape {out.shape}; it is weights @ V, of "
                    f"shape (m, d_v) = {(m, d_v)}"
                )
            keeps_dtype(result[0], dtype, "the output")
            expected_out = expected_w @ V64
            if not close(out, expected_out):
                raise Failed(
                    "{} the weights are right but the output is not weights @ V: it should "
                    "be {}, you returned {}".format(where, *shown(expected_out, out))
                )
    return (
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
        (causal_mask(4), "a (4, 4) causal mask"),
        (scattered, "a (3, 4) mask"),
        (padding_mask([3, 5], 5), "a (2, 1, 5) padding mask"),
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
        masks.append((keep, f"a random {keep.shape} mask"))
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
            where = f"for {what} and dtype = {dtype}"
            result = call(
                fn,
                keep,
                dtype,
                called_with=f"keep of shape {tuple(keep.shape)} and dtype = {dtype}",
            )
            if not (isinstance(result, tuple) and len(result) == 2):
                raise Failed("return a pair (masked_out, additive)")
            if not all(isinstance(r, torch.Tensor) for r in result):
                raise Failed(
                    f"return two torch tensors; you returned "
                    f"{type(result[0]).__name__} and {type(result[1]).__name__}"
                )
            masked_out, additive = result
            for name, mask in (("masked_out", masked_out), ("additive", additive)):
                if mask.shape != keep.shape:
                    raise Failed(
                        f"{where} {name} has shape {tuple(mask.shape)}; it is the same "
                        f"mask written another way, shape {tuple(keep.shape)}"
                    )
            _check_masked_out(masked_out, keep, where)
            _check_additive(additive, keep, dtype, where)
    return (
        "correct: masked_out is ~keep (True = masked out, as nn.MultiheadAttention reads "
        "it), and additive is 0 where keep allows and -inf where it hides, in the queries' "
        "dtype: F.scaled_dot_product_attention gives the same weights with it as with keep"
    )


def _check_masked_out(masked_out, keep, where):
    import torch

    if masked_out.dtype != torch.bool:
        raise Failed(
            f"{where} masked_out has dtype {masked_out.dtype}; nn.MultiheadAttention "
            "reads a boolean mask as True = masked out, so return booleans"
        )
    if torch.equal(masked_out, ~keep):
        return
    if torch.equal(masked_out, keep):
        raise Failed(
            f"{where} masked_out equals keep: nn.MultiheadAttention reads True as "
            "'masked out', the opposite of the book, so negate it: ~keep"
        )
    if torch.equal(masked_out, ~keep.transpose(-1, -2)):
        raise Failed(
            f"{where} masked_out is the transpose of ~keep: entry [i, j] belongs to "
            "query i and key j in every convention; only True and False swap"
        )
    index = tuple(int(k) for k in (masked_out != ~keep).nonzero()[0])
    raise Failed(
        f"{where} masked_out{list(index)} should be {bool(~keep[index])}: keep"
        f"{list(index)} is {bool(keep[index])}, and masked_out is its negation, ~keep"
    )


def _check_additive(additive, keep, dtype, where):
    import torch

    if additive.dtype != dtype:
        raise Failed(
            f"{where} additive has dtype {additive.dtype}: give it the dtype asked "
            f"for, {dtype}. F.scaled_dot_product_attention refuses a float mask whose "
            "dtype differs from the queries' (torch.where(...) gives float32 unless "
            "told otherwise: add .to(dtype), or build from torch.zeros(..., dtype=dtype))"
        )
    if torch.isnan(additive).any():
        raise Failed(
            f"{where} additive contains NaN: 0 * (-inf) is NaN, so do not multiply a "
            "0/1 mask by -inf; pick 0 or -inf with torch.where, or masked_fill a zero "
            "tensor with float('-inf')"
        )
    expected_mask = torch.zeros(keep.shape, dtype=dtype).masked_fill(~keep, float("-inf"))
    expected, got = _sdpa_weights((keep, additive), keep.shape, dtype)
    if not close(got, expected):
        if torch.equal(additive, expected_mask.transpose(-1, -2)):
            raise Failed(
                f"{where} additive is the transpose of the right mask: entry [i, j] "
                "belongs to query i and key j in every convention"
            )
        if torch.equal(additive, keep.to(dtype)):
            raise Failed(
                f"{where} additive is keep as 0.0/1.0: a float mask is ADDED to the "
                "scores, so 1.0 only nudges the allowed scores up and hides nothing. "
                "Use 0 where keep is True and -inf where it is False"
            )
        if torch.isinf(additive[keep]).any() and not torch.isinf(additive[~keep]).any():
            raise Failed(
                f"{where} additive is -inf where keep is True: -inf goes where "
                "attention is NOT allowed (keep False), 0 where it is"
            )
        index = tuple(int(k) for k in np.argwhere(~np.isclose(got, expected))[0])
        want, have = shown(expected[index], got[index])
        raise Failed(
            f"{where} with your additive mask F.scaled_dot_product_attention gives "
            f"query {index[-2]} the weight {have} on key {index[-1]}; with keep it "
            f"gives {want}"
        )
    if torch.equal(additive, expected_mask):
        return
    if torch.isfinite(additive[~keep]).any():
        raise Failed(
            f"{where} additive holds a finite number where keep hides the key; write "
            "-inf (float('-inf')). A large negative number such as -1e9 hides the key "
            "here too, but a row in which every key is hidden then gets equal weights "
            "on all of them instead of none"
        )
    raise Failed(
        f"{where} additive should be exactly 0 where keep allows the key; "
        "F.scaled_dot_product_attention happens to give the same weights when a whole "
        "row is shifted, but any other library reading the mask will not"
    )
