"""Checks for the coding exercises of ``chapters/qkv-attention.md``."""

import numpy as np

from ..core import causal_mask, padding_mask, softmax
from .harness import DTYPES, Failed, as_array, call, check, close, keeps_dtype, shown

__all__ = ["check_scaled_dot_product_attention", "check_mask_forms"]


def _sdpa_cases():
    """(Q, K, V) triples in which every size differs from the others, so that a transpose or
    a scale taken from the wrong size shows: d_k = 9, 16, 2 (no scale fits two of them), one
    query, more queries than keys, and scores near ±1000."""
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
    return cases + [(Q, K, rng.normal(size=(4, 3)))]


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


@check
def check_scaled_dot_product_attention(fn):
    """Check ``fn(Q, K, V) -> (output, weights)``: ``softmax(Q K^T / sqrt(d_k)) V``, any sizes,
    large scores included, float32 inputs giving float32 answers."""
    for dtype in DTYPES:
        for case in _sdpa_cases():
            Q, K, V = (a.astype(dtype) for a in case)
            Q64, K64, V64 = (a.astype(float) for a in (Q, K, V))  # what the function sees
            (m, d_k), (n, d_v) = Q.shape, V.shape
            scores = Q64 @ K64.T  # (m, n)
            expected_w = softmax(scores / np.sqrt(d_k))
            expected_out = expected_w @ V64
            where = (
                f"for Q of shape (m, d_k) = {Q.shape}, K (n, d_k) = {K.shape} and "
                f"V (n, d_v) = {V.shape}"
            )
            with np.errstate(all="ignore"):  # overflow is reported below, in words
                result = call(fn, Q, K, V)
            if not (isinstance(result, tuple) and len(result) == 2):
                raise Failed("return a pair (output, weights)")
            out = as_array(result[0], "output")
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
            keeps_dtype(result[0], dtype, "the output")
            if not close(w, expected_w):
                if not np.all(np.isfinite(w)):
                    raise Failed(
                        f"{where} the weights contain NaN or inf: with scaled scores "
                        f"near {np.abs(scores).max() / np.sqrt(d_k):.0f}, np.exp "
                        "overflows. Subtract each row's maximum first, or use "
                        "attnkit.core.softmax"
                    )
                scale = _wrong_scale(w, scores, m, n, d_k, d_v)
                if scale is not None:
                    raise Failed(f"{where} {scale}")
                if m > 1 and close(w, softmax(scores / np.sqrt(d_k), axis=0)):
                    raise Failed(
                        "each column sums to 1: apply the softmax along the last axis, "
                        "so that each query's row of weights sums to 1"
                    )
                if not close(w.sum(axis=-1), 1.0) or np.any(w < 0):
                    raise Failed(
                        f"{where} the rows of the weights sum to "
                        f"{shown(1.0, w.sum(axis=-1))[1]}, not 1; weights are "
                        "non-negative and each row sums to 1"
                    )
                raise Failed(
                    "{} the weights should be softmax(Q K^T / sqrt({})) = {}, you "
                    "returned {}".format(where, d_k, *shown(expected_w, w))
                )
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
            if not close(out, expected_out):
                raise Failed(f"{where} the weights are right but the output is not weights @ V")
    return (
        "correct: softmax(Q K^T / sqrt(d_k)) along each row, then a weighted sum of V, "
        "for any sizes and large scores, float32 staying float32"
    )


def _keep_masks():
    """(keep, what) pairs, True = may attend; none symmetric, every row keeps a key. The square
    one comes first, so that a transposed answer has the right shape and can be named."""
    scattered = np.array(
        [[True, False, True, False], [False, True, True, True], [True, False, False, False]]
    )
    return [
        (causal_mask(4), "a (4, 4) causal mask"),
        (scattered, "a (3, 4) mask"),
        (padding_mask([3, 5], 5), "a (2, 1, 5) padding mask"),
    ]


def _sdpa_weights(attn_mask, shape, dtype):
    """The weights ``F.scaled_dot_product_attention`` computes with ``attn_mask``.

    ``shape`` is the mask's, ``(..., m, n)`` (a middle 1 standing for m = 3 queries); with the
    identity as the values, the output is the weight matrix itself.
    """
    import torch
    import torch.nn.functional as F

    *batch, m, n = shape
    m = 3 if m == 1 else m
    generator = torch.Generator().manual_seed(4)
    Q = torch.randn(*batch, m, 6, generator=generator, dtype=dtype)
    K = torch.randn(*batch, n, 6, generator=generator, dtype=dtype)
    V = torch.eye(n, dtype=dtype).expand(*batch, n, n)
    return F.scaled_dot_product_attention(Q, K, V, attn_mask=attn_mask)


@check
def check_mask_forms(fn):
    """Check ``fn(keep, dtype) -> (masked_out, additive)``: one mask in PyTorch's other forms.

    ``keep`` is a boolean tensor ``(..., m, n)`` in the book's convention, True = may attend.
    ``masked_out`` is ``nn.MultiheadAttention``'s boolean form, True = masked out;
    ``additive`` is a float mask of dtype ``dtype``, 0 where attention is allowed and -inf
    where it is not. ``F.scaled_dot_product_attention`` must give the same weights with
    ``additive`` as with ``keep``.
    """
    import torch

    for keep_np, what in _keep_masks():
        for dtype in (torch.float64, torch.float32):
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
    expected = _sdpa_weights(keep, keep.shape, dtype).numpy()
    got = _sdpa_weights(additive, keep.shape, dtype).numpy()
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
