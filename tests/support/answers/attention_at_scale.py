"""Right and wrong answers to the exercises of chapter 7 (``chapters/attention-at-scale.md``)."""

import numpy as np

from attnkit.core import (
    causal_mask,
    grouped_query_attention,
    masked_softmax,
    scaled_dot_product_attention,
    softmax,
)
from attnkit.exercises.attention_at_scale import (
    check_grouped_query_attention,
    check_online_softmax_attention,
)
from attnkit.streaming import online_softmax_attention
from tests.support.answers import (
    BOTH,
    Answers,
    Wrong,
    dtype_family,
    layout_family,
    softmax_families,
    squeezed_family,
    structure_family,
    type_family,
)

# --- check_online_softmax_attention ---------------------------------------------------------


def online_reference(Q, K, V, block_size, causal):
    """The chapter's solution."""
    m, d_k = Q.shape
    r = np.full((m, 1), -np.inf, dtype=Q.dtype)  # running max
    ell = np.zeros((m, 1), dtype=Q.dtype)  # running sum
    o = np.zeros((m, V.shape[1]), dtype=Q.dtype)  # accumulator
    for start in range(0, K.shape[0], block_size):
        K_B, V_B = K[start : start + block_size], V[start : start + block_size]
        S = Q @ K_B.T / np.sqrt(d_k).astype(Q.dtype)  # (m, B)
        if causal:
            keys = np.arange(start, start + len(K_B))  # positions
            S = np.where(keys <= np.arange(m)[:, None], S, -np.inf)
        r_new = np.maximum(r, S.max(axis=1, keepdims=True))
        P = np.exp(S - r_new)  # all <= 1
        ell = np.exp(r - r_new) * ell + P.sum(axis=1, keepdims=True)
        o = np.exp(r - r_new) * o + P @ V_B
        r = r_new
    return o / ell


def _block_scores(Q, K_B, start, causal, fill=-np.inf):
    """The scaled scores of one block of keys, ``(m, B)``, the future set to ``fill``."""
    S = Q @ K_B.T / np.sqrt(Q.shape[1]).astype(Q.dtype)
    if causal:
        S[np.arange(start, start + len(K_B)) > np.arange(len(Q))[:, None]] = fill
    return S


def online_two_passes(Q, K, V, block_size, causal):
    """The row maxima block by block first, then the sums with that maximum fixed."""
    n = K.shape[0]
    top = np.full((Q.shape[0], 1), -np.inf, dtype=Q.dtype)
    for start in range(0, n, block_size):
        S = _block_scores(Q, K[start : start + block_size], start, causal)
        top = np.maximum(top, S.max(axis=1, keepdims=True))
    total = np.zeros_like(top)
    out = np.zeros((Q.shape[0], V.shape[1]), dtype=Q.dtype)
    for start in range(0, n, block_size):
        P = np.exp(_block_scores(Q, K[start : start + block_size], start, causal) - top)
        total += P.sum(axis=1, keepdims=True)
        out += P @ V[start : start + block_size]
    return out / total


def online_split_einsum(Q, K, V, block_size, causal):
    """np.split into blocks, einsum, 1-D running arrays and the queries scaled once."""
    m, d_k = Q.shape
    Qs = Q / np.sqrt(d_k).astype(Q.dtype)
    cuts = range(block_size, K.shape[0], block_size)
    r = np.full(m, -np.inf, dtype=Q.dtype)
    ell = np.zeros(m, dtype=Q.dtype)
    o = np.zeros((m, V.shape[1]), dtype=Q.dtype)
    start = 0
    for K_B, V_B in zip(np.split(K, cuts), np.split(V, cuts)):
        S = np.einsum("id,jd->ij", Qs, K_B)
        if causal:
            visible = np.arange(start, start + len(K_B))[None, :] <= np.arange(m)[:, None]
            S = np.where(visible, S, -np.inf)
        start += len(K_B)
        r_new = np.maximum(r, S.max(axis=1))
        P = np.exp(S - r_new[:, None])
        ell = ell * np.exp(r - r_new) + P.sum(axis=1)
        o = o * np.exp(r - r_new)[:, None] + np.einsum("ij,jd->id", P, V_B)
        r = r_new
    return o / ell[:, None]


def online_normalised(Q, K, V, block_size, causal):
    """The output kept normalised after every block, as FlashAttention's first version does."""
    m = Q.shape[0]
    r = np.full((m, 1), -np.inf, dtype=Q.dtype)
    ell = np.zeros((m, 1), dtype=Q.dtype)
    out = np.zeros((m, V.shape[1]), dtype=Q.dtype)
    for start in range(0, K.shape[0], block_size):
        S = _block_scores(Q, K[start : start + block_size], start, causal)
        r_new = np.maximum(r, S.max(axis=1, keepdims=True))
        P = np.exp(S - r_new)
        kept = np.exp(r - r_new) * ell  # the weight of the keys before this block
        ell = kept + P.sum(axis=1, keepdims=True)
        out = (kept * out + P @ V[start : start + block_size]) / ell
        r = r_new
    return out


def online_named_steps(Q, K, V, block_size, causal):
    """Every intermediate array kept under its own name until the next block."""
    m, d_k = Q.shape
    n = K.shape[0]
    running_max = np.full((m, 1), -np.inf, dtype=Q.dtype)
    running_sum = np.zeros((m, 1), dtype=Q.dtype)
    acc = np.zeros((m, V.shape[1]), dtype=Q.dtype)
    rows = np.arange(m).reshape(m, 1)
    for start in range(0, n, block_size):
        stop = min(start + block_size, n)
        raw = Q @ K[start:stop].T
        scaled = raw / (d_k**0.5)
        masked = np.where(np.arange(start, stop) <= rows, scaled, -np.inf) if causal else scaled
        block_max = masked.max(axis=1, keepdims=True)
        new_max = np.maximum(running_max, block_max)
        shifted = masked - new_max
        weights = np.exp(shifted)
        rescale = np.exp(running_max - new_max)
        running_sum = rescale * running_sum + weights.sum(axis=1, keepdims=True)
        acc = rescale * acc + weights @ V[start:stop]
        running_max = new_max
    return acc / running_sum


def streamed(
    *,
    shift=lambda r, S: np.maximum(r, S.max(axis=1, keepdims=True)),
    start=-np.inf,
    fill=-np.inf,
    clip=None,
    zeroed_after_exp=False,
    mask_up_front=False,
):
    """The reference with one piece changed: ``shift(r, S)`` gives the new running shift of the
    block's scores ``S`` (each query's maximum), ``start`` its first value, ``fill`` the masked
    scores, ``clip`` a limit the scores are clipped to; ``zeroed_after_exp`` masks the
    exponentials instead of the scores, after a shift by the maximum of all keys;
    ``mask_up_front`` builds the whole (n, n) causal mask before the loop."""

    def fn(Q, K, V, block_size, causal):
        m, n = Q.shape[0], K.shape[0]
        whole = np.arange(n) <= np.arange(n)[:, None] if causal and mask_up_front else None
        r = np.full((m, 1), start, dtype=Q.dtype)
        ell = np.zeros((m, 1), dtype=Q.dtype)
        o = np.zeros((m, V.shape[1]), dtype=Q.dtype)
        for first in range(0, n, block_size):
            K_B, V_B = K[first : first + block_size], V[first : first + block_size]
            by_block = causal and not (zeroed_after_exp or mask_up_front)
            S = _block_scores(Q, K_B, first, by_block, fill)
            if whole is not None:
                S = np.where(whole[:, first : first + block_size], S, fill)
            if clip is not None:
                S = np.clip(S, -clip, clip)
            r_new = shift(r, S).astype(Q.dtype)
            P = np.exp(S - r_new)
            if causal and zeroed_after_exp:
                P[np.arange(first, first + len(K_B)) > np.arange(m)[:, None]] = 0
            ell = np.exp(r - r_new) * ell + P.sum(axis=1, keepdims=True)
            o = np.exp(r - r_new) * o + P @ V_B
            r = r_new
        return o / ell

    return fn


def with_inputs_copied(copy):
    """The reference on ``copy(Q), copy(K), copy(V)``: right outputs, but memory that grows
    with n."""

    def fn(Q, K, V, block_size, causal):
        return online_reference(copy(Q), copy(K), copy(V), block_size, causal).astype(Q.dtype)

    return fn


def online_in_torch(Q, K, V, block_size, causal):
    """PyTorch's attention on the whole (m, n) matrix: memory NumPy's count never sees."""
    import torch
    import torch.nn.functional as F

    Q, K, V = (torch.from_numpy(np.ascontiguousarray(a)) for a in (Q, K, V))
    return F.scaled_dot_product_attention(Q, K, V, is_causal=causal).numpy()


def _zeros_and_copy(a):
    """``a`` copied into a tensor that ``torch.zeros`` made: no way in from NumPy is called."""
    import torch

    tensor = torch.zeros(a.shape, dtype=torch.float64 if a.dtype == np.float64 else torch.float32)
    tensor.copy_(torch.utils.dlpack.from_dlpack(np.ascontiguousarray(a)))
    return tensor


def online_in_torch_zeros(Q, K, V, block_size, causal):
    """The whole matrix in PyTorch, its tensors made by ``torch.zeros`` and a copy."""
    import torch.nn.functional as F

    Q, K, V = (_zeros_and_copy(a) for a in (Q, K, V))
    return F.scaled_dot_product_attention(Q, K, V, is_causal=causal).numpy()


def online_in_torch_lists(Q, K, V, block_size, causal):
    """The scores in PyTorch, from ``torch.tensor`` of nested lists, the softmax in NumPy."""
    import torch

    scores = (torch.tensor(Q.tolist()) @ torch.tensor(K.tolist()).T).numpy().astype(np.float64)
    scores = scores / np.sqrt(Q.shape[1])
    if causal:
        scores = np.where(np.tri(*scores.shape, dtype=bool), scores, -np.inf)
    weights = np.exp(scores - scores.max(axis=1, keepdims=True))
    return (weights / weights.sum(axis=1, keepdims=True) @ V).astype(Q.dtype)


def online_in_torch_unwatched(Q, K, V, block_size, causal):
    """The whole matrix in PyTorch with its Python-level overrides turned off."""
    import torch

    with torch._C.DisableTorchFunction():
        return online_in_torch_zeros(Q, K, V, block_size, causal)


def online_keys_transposed_once(Q, K, V, block_size, causal):
    """K transposed once into a contiguous copy, then its columns read block by block."""
    K_T = np.ascontiguousarray(K.T)
    return online_reference(Q, K_T.T, V, block_size, causal)


def _first_block_only(value):
    """A shift taken from the first block and kept: ``value(S)`` while ``r`` is still -inf."""
    return lambda r, S: np.where(np.isneginf(r), value(S), r)


def online_never_rescaled(Q, K, V, block_size, causal):
    """A running maximum, but the sums kept from earlier blocks are never rescaled to it."""
    m = Q.shape[0]
    r = np.full((m, 1), -np.inf, dtype=Q.dtype)
    ell, o = np.zeros((m, 1), dtype=Q.dtype), np.zeros((m, V.shape[1]), dtype=Q.dtype)
    for start in range(0, K.shape[0], block_size):
        S = _block_scores(Q, K[start : start + block_size], start, causal)
        r = np.maximum(r, S.max(axis=1, keepdims=True))
        P = np.exp(S - r)
        ell, o = ell + P.sum(axis=1, keepdims=True), o + P @ V[start : start + block_size]
    return o / ell


def online_whole_matrix(Q, K, V, block_size, causal):
    """No streaming at all: the whole (m, n) matrix of weights."""
    S = Q @ K.T / np.sqrt(Q.shape[1]).astype(Q.dtype)
    if causal:
        S = np.where(np.tril(np.ones(S.shape, dtype=bool)), S, -np.inf)
    P = np.exp(S - S.max(axis=1, keepdims=True))
    return P / P.sum(axis=1, keepdims=True) @ V


def online_maxima_first(Q, K, V, block_size, causal):
    """The row maxima from the whole score matrix, then the blocks."""
    top = _block_scores(Q, K, 0, causal).max(axis=1, keepdims=True)
    total = np.zeros_like(top)
    out = np.zeros((Q.shape[0], V.shape[1]), dtype=Q.dtype)
    for start in range(0, K.shape[0], block_size):
        P = np.exp(_block_scores(Q, K[start : start + block_size], start, causal) - top)
        total += P.sum(axis=1, keepdims=True)
        out += P @ V[start : start + block_size]
    return out / total


def online_blocks_concatenated(Q, K, V, block_size, causal):
    """Each block's scores kept, then one softmax over their concatenation."""
    blocks = [
        _block_scores(Q, K[start : start + block_size], start, causal)
        for start in range(0, K.shape[0], block_size)
    ]
    S = np.concatenate(blocks, axis=1)
    P = np.exp(S - S.max(axis=1, keepdims=True))
    return P / P.sum(axis=1, keepdims=True) @ V


def online_query_blocks(Q, K, V, block_size, causal):
    """Blocks over the queries, each with a plain softmax over all the keys."""
    out = np.empty((Q.shape[0], V.shape[1]), dtype=Q.dtype)
    for start in range(0, Q.shape[0], block_size):
        S = Q[start : start + block_size] @ K.T / np.sqrt(Q.shape[1]).astype(Q.dtype)
        if causal:
            rows = np.arange(start, start + len(S))[:, None]
            S = np.where(np.arange(K.shape[0]) <= rows, S, -np.inf)
        P = np.exp(S - S.max(axis=1, keepdims=True))
        out[start : start + block_size] = P / P.sum(axis=1, keepdims=True) @ V
    return out


def online_with(mistake):
    """``online_reference`` with one typical mistake."""

    def fn(Q, K, V, block_size, causal):
        m, d_k = Q.shape
        dtype = np.float64 if mistake == "float64 arrays" else Q.dtype
        r = np.full((m, 1), -np.inf, dtype=dtype)
        s, acc = np.zeros((m, 1), dtype=dtype), np.zeros((m, V.shape[1]), dtype=dtype)
        stop = (
            K.shape[0] - K.shape[0] % block_size if mistake == "whole blocks only" else K.shape[0]
        )
        outputs = []
        for start in range(0, stop, block_size):
            S = Q @ K[start : start + block_size].T
            if mistake != "no scale":
                S = S / np.sqrt(d_k).astype(Q.dtype)
            cols = np.arange(start, start + S.shape[1])
            if mistake == "local positions":
                cols = np.arange(S.shape[1])
            if causal and mistake != "no mask":
                keep = (
                    cols >= np.arange(m)[:, None]
                    if mistake == "future kept"
                    else cols < np.arange(m)[:, None]
                    if mistake == "strict mask"
                    else cols <= np.arange(m)[:, None]
                )
                S = np.where(keep, S, -np.inf)
            if mistake == "plain sum":
                P = np.exp(S)
                s, acc = s + P.sum(axis=1, keepdims=True), acc + P @ V[start : start + block_size]
                continue
            new = (
                r
                if (mistake == "max never updated" and start > 0)
                else S.max(axis=1, keepdims=True)
                if mistake == "block max only"
                else np.maximum(r, S.max(axis=1, keepdims=True))
            )
            P = np.exp(S - new)
            if mistake == "each block normalised":
                outputs.append(P @ V[start : start + block_size] / P.sum(axis=1, keepdims=True))
                continue
            s = (s if mistake == "sum not rescaled" else np.exp(r - new) * s) + P.sum(
                axis=1, keepdims=True
            )
            acc = (acc if mistake == "accumulator not rescaled" else np.exp(r - new) * acc) + P @ V[
                start : start + block_size
            ]
            r = new
        if mistake == "each block normalised":
            return np.mean(outputs, axis=0)
        if mistake == "tuple":
            return acc / s, r
        if mistake == "weights":
            return np.ones((m, K.shape[0]))
        return acc / s

    return fn


# The mistakes of ``online_with`` and the advice the check gives for each.
ONLINE_MISTAKES = {
    "no scale": "did not scale the scores",
    "whole blocks only": "the last block has only n mod block_size = 2 keys",
    "each block normalised": "normalised each block on its own",
    "accumulator not rescaled": "exp(s - r) v accumulated so far must be multiplied",
    "sum not rescaled": "the running sum of exp(s - r) must be multiplied",
    "no mask": "you ignored causal",
    "future kept": "keep keys j <= i, not j < i",
    "strict mask": "NaN or inf in the output of queries [0]",
    "local positions": "the key's position in the sequence, start + column",
    "plain sum": "exp overflowed",
    "max never updated": "exp overflowed",
    "block max only": "never the block's alone",
    "float64 arrays": "keep the dtype of the float32 inputs",
    "tuple": "return only the output array",
    "weights": "That is the shape of the weights",
}

_SCORES_KEPT = "as much as the whole (m, n) matrix of scores"

ONLINE = Answers(
    check_online_softmax_attention,
    right={
        "reference": online_reference,
        "two passes": online_two_passes,
        "np.split and einsum": online_split_einsum,
        "normalised at every block": online_normalised,
        "every step named": online_named_steps,
    },
    wrong={
        **{
            mistake: Wrong(
                "known",
                online_with(mistake),
                advice,
                (np.float32,) if mistake == "float64 arrays" else BOTH,
            )
            for mistake, advice in ONLINE_MISTAKES.items()
        },
        **structure_family(online_reference, axes=(-1, 0)),
        "shifted by the first key's score": Wrong(
            "shift", streamed(shift=_first_block_only(lambda S: S[:, :1]))
        ),
        "shifted by each block's last score": Wrong(
            "shift", streamed(shift=lambda r, S: S[:, -1:])
        ),
        "shifted by each block's mean": Wrong(
            "shift", streamed(shift=lambda r, S: S.mean(axis=1, keepdims=True))
        ),
        "shifted by the running minimum": Wrong(
            "shift",
            streamed(
                shift=lambda r, S: np.where(
                    np.isneginf(r),
                    S.min(axis=1, keepdims=True),
                    np.minimum(r, S.min(axis=1, keepdims=True)),
                )
            ),
        ),
        "not shifted": Wrong("shift", streamed(shift=lambda r, S: np.zeros_like(r))),
        **{
            f"scores clipped to ±{limit:g}": Wrong(
                "clip", streamed(clip=limit), "change the scores in no other way"
            )
            for limit in (30.0, 80.0)
        },
        **{
            f"masked scores set to {fill:g}": Wrong(
                "mask", streamed(fill=fill), "must be -inf, so that its exponential is exactly 0"
            )
            for fill in (-1e4, -1e9, -1e30)
        },
        "exponentials of the future zeroed after exp": Wrong(
            "mask", streamed(zeroed_after_exp=True), "before the running maximum"
        ),
        "one running maximum for all queries": Wrong(
            "stream",
            streamed(shift=lambda r, S: np.maximum(r, S.max())),
            "Each query needs its own",
        ),
        "running maximum started at 0": Wrong("stream", streamed(start=0.0), "start it at -inf"),
        "nothing rescaled": Wrong("stream", online_never_rescaled, "multiply both the running sum"),
        "the whole matrix": Wrong("stream", online_whole_matrix, _SCORES_KEPT),
        "row maxima from the whole matrix first": Wrong(
            "stream", online_maxima_first, _SCORES_KEPT
        ),
        "score blocks kept and concatenated": Wrong(
            "stream", online_blocks_concatenated, _SCORES_KEPT
        ),
        "the whole causal mask up front": Wrong(
            "stream", streamed(mask_up_front=True), "as much as an (n, n) causal mask"
        ),
        "blocks over the queries": Wrong("stream", online_query_blocks, _SCORES_KEPT),
        "PyTorch, the whole matrix": Wrong(
            "forbidden", online_in_torch, "this exercise is NumPy only"
        ),
        "PyTorch, tensors from torch.zeros and a copy": Wrong(
            "forbidden", online_in_torch_zeros, "this exercise is NumPy only"
        ),
        "PyTorch, tensors from nested lists": Wrong(
            "forbidden", online_in_torch_lists, "this exercise is NumPy only"
        ),
        "PyTorch with its function overrides disabled": Wrong(
            "forbidden", online_in_torch_unwatched, "this exercise is NumPy only"
        ),
        "K transposed once into a contiguous copy": Wrong(
            "stream", online_keys_transposed_once, "as much as a copy of K"
        ),
        "every input copied": Wrong(
            "stream", with_inputs_copied(np.copy), "as much as a copy of K"
        ),
        "float32 inputs copied into float64 arrays": Wrong(
            "stream",
            with_inputs_copied(lambda a: a.astype(np.float64)),
            "no astype to another dtype",
            (np.float32,),
        ),
        "attnkit's online_softmax_attention": Wrong(
            "forbidden",
            lambda Q, K, V, b, c: online_softmax_attention(Q, K, V, block_size=b, causal=c)[0],
            "attnkit.streaming.online_softmax_attention",
        ),
        "attnkit's scaled_dot_product_attention": Wrong(
            "forbidden",
            lambda Q, K, V, b, c: scaled_dot_product_attention(
                Q, K, V, mask=causal_mask(len(K)) if c else None
            )[0],
            "attnkit.core.scaled_dot_product_attention",
        ),
        "attnkit's softmax": Wrong(
            "forbidden",
            lambda Q, K, V, b, c: softmax(_block_scores(Q, K, 0, c)) @ V,
            "attnkit.core.softmax",
        ),
        "attnkit's masked_softmax": Wrong(
            "forbidden",
            lambda Q, K, V, b, c: (
                masked_softmax(
                    Q @ K.T / np.sqrt(Q.shape[1]), causal_mask(len(K)) if c else None
                ).astype(Q.dtype)
                @ V
            ),
            "attnkit.core.masked_softmax",
        ),
        **type_family(online_reference, numpy_only=True),
        **dtype_family(online_reference),
        **layout_family(online_reference),
        **squeezed_family(online_reference),
    },
)


# --- check_grouped_query_attention ----------------------------------------------------------


def gqa_reference(Q, K, V):
    """The chapter's solution."""
    r = Q.shape[0] // K.shape[0]  # query heads per group
    K_all = np.repeat(K, r, axis=0)  # (h, n, d_k)
    V_all = np.repeat(V, r, axis=0)  # (h, n, d_v)
    return scaled_dot_product_attention(Q, K_all, V_all)[0]


def gqa_by_reshape(Q, K, V):
    """The queries grouped, the keys and values broadcast to each group."""
    return scaled_dot_product_attention(
        Q.reshape(K.shape[0], -1, *Q.shape[1:]), K[:, None], V[:, None]
    )[0].reshape(Q.shape[0], Q.shape[1], V.shape[-1])


def gqa_with(softmax):
    """Grouped-query attention by hand, with ``softmax`` over the keys."""

    def gqa(Q, K, V):
        heads = np.arange(Q.shape[0]) // (Q.shape[0] // K.shape[0])
        scores = np.einsum("hmd,hnd->hmn", Q, K[heads]) / np.sqrt(Q.shape[-1]).astype(Q.dtype)
        return softmax(scores) @ V[heads]

    return gqa


def _stable_softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def gqa_head_by_head(Q, K, V):
    r = Q.shape[0] // K.shape[0]
    return np.stack(
        [scaled_dot_product_attention(Q[i], K[i // r], V[i // r])[0] for i in range(len(Q))]
    )


def tiled(Q, K, V):
    r = Q.shape[0] // K.shape[0]
    return scaled_dot_product_attention(Q, np.tile(K, (r, 1, 1)), np.tile(V, (r, 1, 1)))[0]


def per_group(Q, K, V):
    return scaled_dot_product_attention(Q[:: Q.shape[0] // K.shape[0]], K, V)[0]


def unscaled(Q, K, V):
    r = Q.shape[0] // K.shape[0]
    return scaled_dot_product_attention(
        Q, np.repeat(K, r, axis=0), np.repeat(V, r, axis=0), scale=1.0
    )[0]


def no_softmax(Q, K, V):
    r = Q.shape[0] // K.shape[0]
    return (Q @ np.repeat(K, r, axis=0).transpose(0, 2, 1)) @ np.repeat(V, r, axis=0)


def keys_tiled_values_repeated(Q, K, V):
    r = Q.shape[0] // K.shape[0]
    return scaled_dot_product_attention(Q, np.tile(K, (r, 1, 1)), np.repeat(V, r, axis=0))[0]


def last_group_for_all(Q, K, V):
    return scaled_dot_product_attention(Q, K[-1:], V[-1:])[0]


# The mistakes above and the advice the check gives for each.
GQA_MISTAKES = {
    tiled: "read key-value head i % g ([0, 1, 0, 1, 0, 1])",
    per_group: "one output per key-value head",
    unscaled: "did not scale the scores",
    no_softmax: "Apply the softmax over the keys",
    keys_tiled_values_repeated: "query heads [1, 4] are wrong, the others right",
    last_group_for_all: "read key-value heads [1, 1, 1, 1, 1, 1]",
}


def gqa_by_torch(Q, K, V):
    """PyTorch's attention, which repeats the key-value heads itself with enable_gqa=True."""
    import torch
    import torch.nn.functional as F

    Q, K, V = (torch.from_numpy(np.ascontiguousarray(a)) for a in (Q, K, V))
    return F.scaled_dot_product_attention(Q, K, V, enable_gqa=True).numpy()


GQA = Answers(
    check_grouped_query_attention,
    right={
        "reference": gqa_reference,
        "by reshape": gqa_by_reshape,
        "einsum by hand": gqa_with(_stable_softmax),
        "head by head": gqa_head_by_head,
    },
    wrong={
        **{wrong.__name__: Wrong("known", wrong, advice) for wrong, advice in GQA_MISTAKES.items()},
        **structure_family(gqa_reference, axes=(-1, -2)),
        **softmax_families(gqa_with),
        "attnkit's grouped_query_attention": Wrong(
            "forbidden",
            lambda Q, K, V: grouped_query_attention(Q, K, V)[0],
            "attnkit.core.grouped_query_attention",
        ),
        "PyTorch's attention with enable_gqa=True": Wrong(
            "forbidden", gqa_by_torch, "torch.nn.functional.scaled_dot_product_attention"
        ),
        **type_family(gqa_reference),
        **dtype_family(gqa_reference),
        **layout_family(gqa_reference),
        **squeezed_family(gqa_reference),
    },
)

ANSWERS = [ONLINE, GQA]


# --- check_merge_attention_states -----------------------------------------------------------

from attnkit.exercises.attention_at_scale import check_merge_attention_states  # noqa: E402


def merge_reference(o_a, lse_a, o_b, lse_b):
    """The chapter's solution: eq. scale-merge, shifted by the larger logsumexp."""
    r = np.maximum(lse_a, lse_b)  # (m,)
    shift = np.where(np.isfinite(r), r, 0).astype(o_a.dtype)  # no key at all: nothing to scale
    w_a, w_b = np.exp(lse_a - shift), np.exp(lse_b - shift)  # the blocks' sums, shifted
    total = w_a + w_b
    with np.errstate(divide="ignore"):
        lse = shift + np.log(total)  # -inf where total is 0
    total = np.where(total > 0, total, 1).astype(o_a.dtype)
    return (w_a / total)[:, None] * o_a + (w_b / total)[:, None] * o_b, lse


def merge_by_logaddexp(o_a, lse_a, o_b, lse_b):
    """np.logaddexp for the logsumexp, then the weights exp(lse_x - lse)."""
    lse = np.logaddexp(lse_a, lse_b)
    safe = np.where(np.isneginf(lse), 0, lse).astype(o_a.dtype)
    return np.exp(lse_a - safe)[:, None] * o_a + np.exp(lse_b - safe)[:, None] * o_b, lse


def merge_unnormalised_sums(o_a, lse_a, o_b, lse_b):
    """Back to each block's (r, ell, o) with r the block's lse, then eq. scale-online once."""
    r = np.maximum(lse_a, lse_b)
    finite = np.isfinite(r)
    r = np.where(finite, r, 0).astype(o_a.dtype)
    ell = np.exp(lse_a - r) + np.exp(lse_b - r)  # (m,)
    o = np.exp(lse_a - r)[:, None] * o_a + np.exp(lse_b - r)[:, None] * o_b
    out = np.zeros_like(o)
    np.divide(o, ell[:, None], out=out, where=ell[:, None] > 0)
    return out, np.where(finite, r + np.log(np.where(finite, ell, 1)), -np.inf).astype(o_a.dtype)


def merge_averaged(o_a, lse_a, o_b, lse_b):
    return (o_a + o_b) / 2, merge_reference(o_a, lse_a, o_b, lse_b)[1]


def merge_not_shifted(o_a, lse_a, o_b, lse_b):
    with np.errstate(all="ignore"):
        lse = np.log(np.exp(lse_a) + np.exp(lse_b))
        return np.exp(lse_a - lse)[:, None] * o_a + np.exp(lse_b - lse)[:, None] * o_b, lse


def merge_lse_is_max(o_a, lse_a, o_b, lse_b):
    return merge_reference(o_a, lse_a, o_b, lse_b)[0], np.maximum(lse_a, lse_b)


def merge_lse_added(o_a, lse_a, o_b, lse_b):
    return merge_reference(o_a, lse_a, o_b, lse_b)[0], lse_a + lse_b


def merge_weights_swapped(o_a, lse_a, o_b, lse_b):
    return merge_reference(o_b, lse_a, o_a, lse_b)[0], merge_reference(o_a, lse_a, o_b, lse_b)[1]


def merge_shift_minus_inf(o_a, lse_a, o_b, lse_b):
    """Shifted by the larger logsumexp even where both are -inf: NaN for that query."""
    with np.errstate(invalid="ignore"):
        r = np.maximum(lse_a, lse_b)
        lse = r + np.log(np.exp(lse_a - r) + np.exp(lse_b - r))
        return np.exp(lse_a - lse)[:, None] * o_a + np.exp(lse_b - lse)[:, None] * o_b, lse


def merge_by_softmax(o_a, lse_a, o_b, lse_b):
    """attnkit's softmax over the two logsumexps gives the weights: the forbidden helper."""
    w = softmax(np.stack([lse_a, lse_b], axis=1))  # (m, 2)
    return w[:, :1] * o_a + w[:, 1:] * o_b, np.logaddexp(lse_a, lse_b)


def merge_output_only(o_a, lse_a, o_b, lse_b):
    return merge_reference(o_a, lse_a, o_b, lse_b)[0]


MERGE_MISTAKES = {
    merge_averaged: "You averaged the two outputs",
    merge_not_shifted: "overflowed or underflowed",
    merge_lse_is_max: "That is the larger of the two",
    merge_lse_added: "the logs of two sums do not add",
    merge_weights_swapped: "Each block's output takes its own weight",
    merge_shift_minus_inf: "exp(-inf - (-inf)) is NaN",
    merge_output_only: "return a pair (o, lse)",
}

MERGE = Answers(
    check_merge_attention_states,
    right={
        "reference": merge_reference,
        "np.logaddexp": merge_by_logaddexp,
        "unnormalised sums": merge_unnormalised_sums,
    },
    wrong={
        **{w.__name__: Wrong("known", w, advice) for w, advice in MERGE_MISTAKES.items()},
        **structure_family(merge_reference, axes=(-1,)),
        "shifted by the first logsumexp only": Wrong(
            "shift",
            lambda o_a, lse_a, o_b, lse_b: (
                np.exp(lse_a - np.logaddexp(lse_a, lse_b))[:, None] * o_a
                + np.exp(lse_b - lse_a)[:, None]
                * np.exp(lse_a - np.logaddexp(lse_a, lse_b))[:, None]
                * o_b,
                lse_a + np.log1p(np.exp(lse_b - lse_a)),
            ),
        ),
        "attnkit's softmax": Wrong("forbidden", merge_by_softmax, "attnkit.core.softmax"),
        **type_family(merge_reference),
        **dtype_family(merge_reference),
        **layout_family(merge_reference),
        **squeezed_family(merge_reference),
    },
)

ANSWERS.append(MERGE)
