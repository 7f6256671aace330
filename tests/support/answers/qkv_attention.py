"""Right and wrong answers to the exercises of chapter 3 (``chapters/qkv-attention.md``)."""

import math

import numpy as np
import torch
import torch.nn.functional as F

from attnkit.core import attention, multi_head_attention, scaled_dot_product_attention, softmax
from attnkit.exercises.qkv_attention import check_mask_forms, check_scaled_dot_product_attention
from attnkit.modules import ScaledDotProductAttention
from attnkit.streaming import online_softmax_attention
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

# --- check_scaled_dot_product_attention ---------------------------------------------------------


def sdpa_reference(Q, K, V):
    d_k = K.shape[-1]
    weights = softmax(Q @ K.T / d_k**0.5)  # (m, n), rows sum to 1
    return weights @ V, weights  # (m, d_v), (m, n)


def sdpa_by_hand(Q, K, V):
    scores = Q @ K.T / math.sqrt(Q.shape[1])
    e = np.exp(scores - scores.max(axis=1, keepdims=True))
    weights = e / e.sum(axis=1, keepdims=True)
    return weights @ V, weights


def sdpa_with_einsum(Q, K, V):
    weights = softmax(np.einsum("md,nd->mn", Q, K) / np.sqrt(K.shape[-1]).astype(Q.dtype))
    return np.einsum("mn,nv->mv", weights, V), weights


def sdpa_query_by_query(Q, K, V):
    weights = np.stack([softmax(K @ q / math.sqrt(len(q))) for q in Q])
    return weights @ V, weights


def sdpa_log_sum_exp(Q, K, V):
    scores = Q @ K.T / K.shape[-1] ** 0.5
    top = scores.max(axis=-1, keepdims=True)
    weights = np.exp(scores - top - np.log(np.exp(scores - top).sum(axis=-1, keepdims=True)))
    return weights @ V, weights


def sdpa_in_torch(Q, K, V):
    q, k, v = (torch.from_numpy(a) for a in (Q, K, V))
    weights = torch.softmax(q @ k.T / K.shape[-1] ** 0.5, dim=-1)
    return (weights @ v).numpy(), weights.numpy()


def sdpa_with(softmax):
    def sdpa(Q, K, V):
        weights = softmax(Q @ K.T / K.shape[-1] ** 0.5)
        return weights @ V, weights

    return sdpa


def scaled_by(size):
    """An answer whose scores are divided by ``size(Q, K, V)`` instead of sqrt(d_k)."""

    def sdpa(Q, K, V):
        weights = softmax(Q @ K.T / size(Q, K, V))
        return weights @ V, weights

    return sdpa


def attnkit_mha(Q, K, V):
    """Multi-head attention with one head whose projections pick Q, K and V out of its inputs."""
    d_k, d_v = Q.shape[-1], V.shape[-1]
    source = np.concatenate([K, V], axis=-1)  # (n, d_k + d_v)
    eye = np.eye(d_k + d_v, dtype=Q.dtype)
    out, weights = multi_head_attention(
        Q, source, np.eye(d_k, dtype=Q.dtype), eye[:, :d_k], eye[:, d_k:], np.eye(d_v), 1
    )
    return out, weights[0]


def torch_sdpa_with_identity_values(Q, K, V):
    q, k = torch.from_numpy(Q), torch.from_numpy(K)
    weights = F.scaled_dot_product_attention(q, k, torch.eye(len(K), dtype=k.dtype)).numpy()
    return weights @ V, weights


SDPA = Answers(
    check_scaled_dot_product_attention,
    right={
        "reference": sdpa_reference,
        "by hand": sdpa_by_hand,
        "einsum": sdpa_with_einsum,
        "query by query": sdpa_query_by_query,
        "log-sum-exp": sdpa_log_sum_exp,
        "in PyTorch": sdpa_in_torch,
    },
    wrong={
        "not scaled": Wrong("known", scaled_by(lambda Q, K, V: 1.0), "without scaling"),
        "scaled by 3": Wrong("known", scaled_by(lambda Q, K, V: 3.0), "take it from the inputs"),
        "scaled by d_k": Wrong(
            "known", scaled_by(lambda Q, K, V: K.shape[-1]), "you divided the scores by d_k"
        ),
        "scaled by sqrt(d_v)": Wrong(
            "known", scaled_by(lambda Q, K, V: V.shape[-1] ** 0.5), "sqrt(d_v)"
        ),
        "scaled by sqrt(n)": Wrong(
            "known", scaled_by(lambda Q, K, V: K.shape[0] ** 0.5), "number of keys"
        ),
        "scaled by sqrt(m)": Wrong(
            "known", scaled_by(lambda Q, K, V: Q.shape[0] ** 0.5), "number of queries"
        ),
        "multiplied by sqrt(d_k)": Wrong(
            "known",
            scaled_by(lambda Q, K, V: K.shape[-1] ** -0.5),
            "you multiplied the scores by sqrt(d_k)",
        ),
        "softmax over the columns": Wrong(
            "known", sdpa_with(lambda s: softmax(s, axis=0)), "each column sums to 1"
        ),
        "K @ Q.T": Wrong(
            "known",
            lambda Q, K, V: (V.T @ softmax(K @ Q.T / 3.0), softmax(K @ Q.T / 3.0)),
            "not K @ Q.T",
        ),
        "the keys averaged": Wrong(
            "known",
            lambda Q, K, V: (sdpa_reference(Q, K, V)[1] @ K, sdpa_reference(Q, K, V)[1]),
            "averaged the keys",
        ),
        "output doubled": Wrong(
            "known",
            lambda Q, K, V: (2 * sdpa_reference(Q, K, V)[0], sdpa_reference(Q, K, V)[1]),
            "not weights @ V",
        ),
        "no pair": Wrong("known", lambda Q, K, V: sdpa_reference(Q, K, V)[0], "return a pair"),
        **structure_family(sdpa_reference, axes=(-1, 0)),
        **softmax_families(sdpa_with),
        "attnkit's scaled dot-product attention": Wrong(
            "forbidden",
            lambda Q, K, V: scaled_dot_product_attention(Q, K, V),
            "attnkit.core.scaled_dot_product_attention",
        ),
        "attnkit's attention": Wrong(
            "forbidden",
            lambda Q, K, V: attention(Q, K, V, temperature=K.shape[-1] ** 0.5),
            "attnkit.core.attention",
        ),
        "attnkit's multi-head attention": Wrong(
            "forbidden", attnkit_mha, "attnkit.core.multi_head_attention"
        ),
        "attnkit's streamed attention": Wrong(
            "forbidden",
            lambda Q, K, V: (
                online_softmax_attention(Q, K, V, block_size=2)[0],
                sdpa_reference(Q, K, V)[1],
            ),
            "attnkit.streaming.online_softmax_attention",
        ),
        "attnkit's PyTorch module": Wrong(
            "forbidden",
            lambda Q, K, V: tuple(
                t.numpy()
                for t in ScaledDotProductAttention()(*(torch.from_numpy(a) for a in (Q, K, V)))
            ),
            "ScaledDotProductAttention",
        ),
        "PyTorch's scaled dot-product attention": Wrong(
            "forbidden",
            torch_sdpa_with_identity_values,
            "torch.nn.functional.scaled_dot_product_attention",
        ),
        **type_family(sdpa_reference),
        **dtype_family(sdpa_reference),
        **layout_family(sdpa_reference),
        **squeezed_family(sdpa_reference),
        "scaled by np.sqrt(d_k)": Wrong(
            "dtype",
            scaled_by(lambda Q, K, V: np.sqrt(K.shape[-1])),
            "float32 inputs",
            dtypes=(np.float32,),
        ),
    },
)

# --- check_mask_forms ---------------------------------------------------------------------------


def mask_forms_reference(keep, dtype):
    masked_out = ~keep  # True = hidden
    additive = torch.zeros(keep.shape, dtype=dtype)
    return masked_out, additive.masked_fill(masked_out, float("-inf"))


def mask_forms_by_where(keep, dtype):
    minus_inf = torch.tensor(float("-inf"), dtype=dtype)
    return keep.logical_not(), torch.where(keep, torch.tensor(0.0, dtype=dtype), minus_inf)


def mask_forms_by_log(keep, dtype):
    return keep == 0, torch.log(keep.to(dtype))  # log 1 = 0, log 0 = -inf


def mask_forms_by_full(keep, dtype):
    additive = torch.full(keep.shape, float("-inf"), dtype=dtype)
    additive[keep] = 0.0
    return torch.logical_not(keep), additive


def with_additive(additive):
    """An answer whose masked_out is right and whose additive is ``additive(keep, dtype)``."""
    return lambda keep, dtype: (~keep, additive(keep, dtype))


def filled_with(value):
    """The additive mask with ``value(dtype)`` where it should hold -inf."""
    return with_additive(
        lambda keep, dtype: torch.zeros(keep.shape, dtype=dtype).masked_fill(~keep, value(dtype))
    )


def with_masked_out(masked_out):
    return lambda keep, dtype: (masked_out(keep), mask_forms_reference(keep, dtype)[1])


def additive_in(fixed):
    return with_additive(lambda keep, dtype: mask_forms_reference(keep, fixed)[1])


def returning_each(change):
    return lambda keep, dtype: tuple(change(t) for t in mask_forms_reference(keep, dtype))


FINITE = "holds a finite number where keep hides the key"


def mask_forms_of_one_matrix(keep, dtype):
    """Written for one ``(m, n)`` mask, without the batch axes the contract allows."""
    m, n = keep.shape
    additive = torch.zeros(m, n, dtype=dtype).masked_fill(~keep, float("-inf"))
    return ~keep, additive


MASK_FORMS = Answers(
    check_mask_forms,
    right={
        "reference": mask_forms_reference,
        "torch.where": mask_forms_by_where,
        "log": mask_forms_by_log,
        "torch.full": mask_forms_by_full,
    },
    wrong={
        "one (m, n) mask only": Wrong("rank", mask_forms_of_one_matrix),
        "squeezes size-1 axes": Wrong("batch", returning_each(torch.squeeze)),
        "keep not negated": Wrong(
            "known", lambda keep, dtype: (keep, mask_forms_reference(keep, dtype)[1]), "equals keep"
        ),
        "masked_out transposed": Wrong(
            "known", with_masked_out(lambda keep: ~keep.transpose(-1, -2)), "transpose of ~keep"
        ),
        "additive is keep as 0/1": Wrong(
            "known", with_additive(lambda keep, dtype: keep.to(dtype)), "keep as 0.0/1.0"
        ),
        "0 * -inf": Wrong(
            "known",
            with_additive(lambda keep, dtype: (~keep).to(dtype) * float("-inf")),
            "0 * (-inf) is NaN",
        ),
        "-inf where keep is True": Wrong(
            "known",
            with_additive(lambda keep, dtype: mask_forms_reference(~keep, dtype)[1]),
            "-inf where keep is True",
        ),
        "additive transposed": Wrong(
            "known",
            with_additive(
                lambda keep, dtype: mask_forms_reference(keep.transpose(-1, -2), dtype)[1]
            ),
            "transpose of the right mask",
        ),
        "1 where allowed": Wrong(
            "known",
            with_additive(lambda keep, dtype: 1 + mask_forms_reference(keep, dtype)[1]),
            "exactly 0 where keep allows",
        ),
        "no pair": Wrong(
            "known", lambda keep, dtype: mask_forms_reference(keep, dtype)[1], "return a pair"
        ),
        "keep negated in place": Wrong(
            "known",
            lambda keep, dtype: (keep.logical_not_(), mask_forms_reference(~keep, dtype)[1]),
            "changed its input array in place",
        ),
        "-1e9": Wrong("mask", filled_with(lambda dtype: -1e9), FINITE),
        "-1e4": Wrong("mask", filled_with(lambda dtype: -1e4), FINITE),
        "-1e30": Wrong("mask", filled_with(lambda dtype: -1e30), FINITE),
        "the dtype's smallest number": Wrong(
            "mask", filled_with(lambda dtype: torch.finfo(dtype).min), FINITE
        ),
        "(1 - keep) * -1e9": Wrong(
            "mask", with_additive(lambda keep, dtype: (~keep).to(dtype) * -1e9), FINITE
        ),
        "additive always float32": Wrong(
            "dtype", additive_in(torch.float32), "additive has dtype", dtypes=(np.float64,)
        ),
        "additive always float64": Wrong(
            "dtype", additive_in(torch.float64), "additive has dtype", dtypes=(np.float32,)
        ),
        "additive as torch.where gives it": Wrong(
            "dtype",
            with_additive(lambda keep, dtype: torch.where(keep, 0.0, float("-inf"))),
            "additive has dtype",
            dtypes=(np.float64,),
        ),
        "masked_out as uint8": Wrong(
            "dtype", with_masked_out(lambda keep: (~keep).to(torch.uint8)), "return booleans"
        ),
        "masked_out as int": Wrong(
            "dtype", with_masked_out(lambda keep: (~keep).int()), "return booleans"
        ),
        "NumPy arrays": Wrong("type", returning_each(lambda t: t.numpy()), "two torch tensors"),
        "nested lists": Wrong("type", returning_each(lambda t: t.tolist()), "two torch tensors"),
    },
)

ANSWERS = [SDPA, MASK_FORMS]
