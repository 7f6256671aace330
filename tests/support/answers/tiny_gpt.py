"""Right and wrong answers to the exercises of chapter 8 (``chapters/tiny-gpt.md``)."""

import numpy as np

from attnkit.core import causal_mask, masked_softmax, scaled_dot_product_attention
from attnkit.exercises.tiny_gpt import check_causal_rope_attention, check_top_k_probabilities
from attnkit.relative_position import apply_rotary
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


def _stable_softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


# --- check_causal_rope_attention ------------------------------------------------------------


def rope_attention_with(softmax, *, turn=apply_rotary, keep=causal_mask, scale=True, fill=-np.inf):
    """The chapter's solution with its softmax, rotation, mask, scaling or fill swapped."""

    def rope_attention(Q, K, V):
        n, d_k = Q.shape[-2:]
        q, k = turn(Q), turn(K)  # (h, n, d_k): row p turned by p
        scores = q @ k.transpose(0, 2, 1)  # (h, n, n)
        if scale:
            scores = scores / np.sqrt(d_k).astype(Q.dtype)
        weights = softmax(np.where(keep(n), scores, fill))
        return weights @ V, weights

    return rope_attention


rope_reference = rope_attention_with(_stable_softmax)


def _turned_in_float32(x):
    """RoPE whose angles are computed in float32: off by about 3e-8, which float64 inputs
    show and float32 ones hide."""
    n, d = x.shape[-2:]
    rates = np.float32(10000.0) ** (-np.arange(0, d, 2, dtype=np.float32) / np.float32(d))
    angles = np.arange(n, dtype=np.float32)[:, None] * rates  # (n, d/2), float32
    cos, sin = np.cos(angles).astype(x.dtype), np.sin(angles).astype(x.dtype)
    out = np.empty_like(x)
    out[..., 0::2] = x[..., 0::2] * cos - x[..., 1::2] * sin
    out[..., 1::2] = x[..., 0::2] * sin + x[..., 1::2] * cos
    return out


def _quiet_softmax(x):
    """A stable softmax that leaves a row with no key at all as NaN, without a warning."""
    with np.errstate(invalid="ignore"):
        return _stable_softmax(x)


def rope_from_one(Q, K, V):
    """Positions 1 .. n instead of 0 .. n-1: every score depends on the offset alone, so a
    common shift of the positions changes nothing."""
    n = Q.shape[-2]
    positions = np.arange(1, n + 1)
    q, k = apply_rotary(Q, positions), apply_rotary(K, positions)
    scores = q @ k.transpose(0, 2, 1) / np.sqrt(Q.shape[-1]).astype(Q.dtype)
    weights = _stable_softmax(np.where(causal_mask(n), scores, -np.inf))
    return weights @ V, weights


def rope_by_hand(Q, K, V):
    """The rotation written out, a loop over the heads and a masked softmax row by row."""
    h, n, d_k = Q.shape
    omega = 10000.0 ** (-np.arange(0, d_k, 2) / d_k)  # (d_k/2,)
    angles = np.arange(n)[:, None] * omega  # (n, d_k/2), float64
    cos, sin = np.cos(angles).astype(Q.dtype), np.sin(angles).astype(Q.dtype)

    def turn(x):
        out = np.empty_like(x)
        out[..., 0::2] = x[..., 0::2] * cos - x[..., 1::2] * sin
        out[..., 1::2] = x[..., 0::2] * sin + x[..., 1::2] * cos
        return out

    outputs, weights = [], []
    for head in range(h):
        scores = turn(Q[head]) @ turn(K[head]).T / Q.dtype.type(np.sqrt(d_k))
        w = np.zeros_like(scores)
        for i in range(n):
            row = scores[i, : i + 1]
            e = np.exp(row - row.max())
            w[i, : i + 1] = e / e.sum()
        outputs.append(w @ V[head])
        weights.append(w)
    return np.stack(outputs), np.stack(weights)


def rope_with_complex_numbers(Q, K, V):
    """Pairs as complex numbers, turned by multiplying with e^{i p omega}."""
    n, d_k = Q.shape[-2:]
    angles = np.arange(n)[:, None] * 10000.0 ** (-np.arange(0, d_k, 2) / d_k)
    turn = np.exp(1j * angles)  # (n, d_k/2)

    def rotate(x):
        z = (x[..., 0::2] + 1j * x[..., 1::2]) * turn
        out = np.empty_like(x)
        out[..., 0::2], out[..., 1::2] = z.real, z.imag
        return out

    scores = rotate(Q) @ rotate(K).transpose(0, 2, 1) / np.sqrt(d_k).astype(Q.dtype)
    weights = _stable_softmax(np.where(causal_mask(n), scores, -np.inf))
    return weights @ V, weights


def _turned(pairing="adjacent", sign=1):
    def turn(x):
        return apply_rotary(x, sign * np.arange(x.shape[-2]), pairing=pairing)

    return turn


def _keys_only(Q, K, V):
    n, d_k = Q.shape[-2:]
    scores = Q @ apply_rotary(K).transpose(0, 2, 1) / np.sqrt(d_k).astype(Q.dtype)
    weights = _stable_softmax(np.where(causal_mask(n), scores, -np.inf))
    return weights @ V, weights


def _values_turned(Q, K, V):
    _, weights = rope_reference(Q, K, V)
    return weights @ apply_rotary(V), weights


def _fill_minus_1e4(Q, K, V):
    return rope_attention_with(_stable_softmax, fill=-1e4)(Q, K, V)


def _helper_sdpa(Q, K, V):
    n = Q.shape[-2]
    return scaled_dot_product_attention(apply_rotary(Q), apply_rotary(K), V, mask=causal_mask(n))


def _helper_masked_softmax(Q, K, V):
    n, d_k = Q.shape[-2:]
    scores = apply_rotary(Q) @ apply_rotary(K).transpose(0, 2, 1) / np.sqrt(d_k).astype(Q.dtype)
    weights = masked_softmax(scores, causal_mask(n))
    return weights @ V, weights


ROPE_ATTENTION = Answers(
    check_causal_rope_attention,
    right={
        "reference": rope_reference,
        "positions counted from 1": rope_from_one,
        "by hand, head by head": rope_by_hand,
        "complex numbers": rope_with_complex_numbers,
    },
    wrong={
        "no rotation": Wrong(
            "known", rope_attention_with(_stable_softmax, turn=lambda x: x), "did not turn"
        ),
        "keys only": Wrong("known", _keys_only, "turned only the keys"),
        "values turned too": Wrong("known", _values_turned, "turned the values too"),
        "rotate half": Wrong(
            "known", rope_attention_with(_stable_softmax, turn=_turned("half")), "rotate half"
        ),
        "turned the other way": Wrong(
            "known", rope_attention_with(_stable_softmax, turn=_turned(sign=-1)), "wrong way"
        ),
        "not scaled": Wrong(
            "known", rope_attention_with(_stable_softmax, scale=False), "not divided by sqrt"
        ),
        "no mask": Wrong(
            "mask",
            rope_attention_with(_stable_softmax, keep=lambda n: np.ones((n, n), bool)),
            "causal mask is missing",
        ),
        "triu mask": Wrong(
            "mask",
            rope_attention_with(_stable_softmax, keep=lambda n: causal_mask(n).T),
            "transposed",
        ),
        "one step ahead": Wrong(
            "mask",
            rope_attention_with(_stable_softmax, keep=lambda n: np.tri(n, k=1, dtype=bool)),
            "one step into the future",
        ),
        "masked with -1e4": Wrong("mask", _fill_minus_1e4),
        "angles in float32": Wrong(
            "dtype",
            rope_attention_with(_stable_softmax, turn=_turned_in_float32),
            "should be",
            dtypes=(np.float64,),
        ),
        "masked with -1e9": Wrong(
            "mask", rope_attention_with(_stable_softmax, fill=-1e9), "must be -inf"
        ),
        "the diagonal hidden too (j < i)": Wrong(
            "mask",
            rope_attention_with(_quiet_softmax, keep=lambda n: np.tri(n, k=-1, dtype=bool)),
            "hides key i from query i",
        ),
        **structure_family(rope_reference, axes=(-1, -2)),
        **softmax_families(rope_attention_with),
        "attnkit's scaled_dot_product_attention": Wrong(
            "forbidden", _helper_sdpa, "attnkit.core.scaled_dot_product_attention"
        ),
        "attnkit's masked_softmax": Wrong(
            "forbidden", _helper_masked_softmax, "attnkit.core.masked_softmax"
        ),
        **type_family(rope_reference),
        **dtype_family(rope_reference),
        **layout_family(rope_reference),
        **squeezed_family(rope_reference),
    },
)


# --- check_top_k_probabilities --------------------------------------------------------------


def top_k_with(softmax, *, keep_smallest=False, divide=True, fill=-np.inf, strict=False):
    """The chapter's solution with its softmax, choice, temperature or fill swapped."""

    def top_k(logits, k, temperature):
        scaled = logits / temperature if divide else logits * temperature
        ordered = np.sort(scaled, axis=-1)
        if keep_smallest:
            kept = scaled <= ordered[..., k - 1 : k]
        elif strict:
            kept = scaled > ordered[..., -k:][..., :1]
        else:
            kept = scaled >= ordered[..., -k:][..., :1]
        return softmax(np.where(kept, scaled, fill))

    return top_k


top_k_reference = top_k_with(_stable_softmax)


def top_k_by_argpartition(logits, k, temperature):
    scaled = logits / temperature
    top = np.argpartition(-scaled, k - 1, axis=-1)[..., :k]  # the k largest, any order
    kept = np.full_like(scaled, -np.inf)
    np.put_along_axis(kept, top, np.take_along_axis(scaled, top, axis=-1), axis=-1)
    return _stable_softmax(kept)


def top_k_softmax_then_cut(logits, k, temperature):
    """The softmax of all the logits, then cut and renormalised: the same distribution."""
    p = _stable_softmax(logits / temperature)
    kth = np.sort(p, axis=-1)[..., -k:][..., :1]
    p = np.where(p >= kth, p, 0.0)
    return p / p.sum(axis=-1, keepdims=True)


def _not_renormalised(logits, k, temperature):
    p = _stable_softmax(logits / temperature)
    kth = np.sort(p, axis=-1)[..., -k:][..., :1]
    return np.where(p >= kth, p, 0.0)


def _first_axis(logits, k, temperature):
    if logits.ndim == 1:
        return top_k_reference(logits, k, temperature)
    return np.moveaxis(top_k_reference(np.moveaxis(logits, 0, -1), k, temperature), -1, 0)


def _no_temperature(logits, k, temperature):
    return top_k_reference(logits, k, 1.0)


def _one_too_many(logits, k, temperature):
    return top_k_reference(logits, min(k + 1, logits.shape[-1]), temperature)


def _shifted_by_the_raw_maximum(logits, k, temperature):
    """exp(z / tau - max z): right whenever tau = 1, overflows for tau < 1 and large logits."""
    scaled = logits / temperature
    kth = np.sort(scaled, axis=-1)[..., -k:][..., :1]
    with np.errstate(all="ignore"):
        e = np.where(scaled >= kth, np.exp(scaled - logits.max(axis=-1, keepdims=True)), 0)
        return e / e.sum(axis=-1, keepdims=True)


def _temperature_on_the_probabilities(logits, k, temperature):
    """The temperature divides the probabilities, which renormalising then undoes."""
    p = top_k_reference(logits, k, 1.0) / temperature
    return p / p.sum(axis=-1, keepdims=True)


def _almost_zero(logits, k, temperature):
    """1e-12 for the dropped tokens, where the statement promises exactly 0."""
    p = top_k_reference(logits, k, temperature)
    return np.where(p == 0, np.asarray(1e-12, dtype=p.dtype), p)


def _exactly_k_first_of_ties(logits, k, temperature):
    """Exactly k tokens, the first of the tied ones: the other reading of the statement."""
    scaled = logits / temperature
    top = np.argsort(-scaled, axis=-1, kind="stable")[..., :k]
    kept = np.full_like(scaled, -np.inf)
    np.put_along_axis(kept, top, np.take_along_axis(scaled, top, axis=-1), axis=-1)
    return _stable_softmax(kept)


def _along_axis_1(logits, k, temperature):
    """Written for a (rows, V) matrix: wrong for a vector and for more axes."""
    scaled = logits / temperature
    kth = np.sort(scaled, axis=1)[:, -k:][:, :1] if scaled.ndim > 1 else np.sort(scaled)[-k]
    kept = np.where(scaled >= kth, scaled, -np.inf)
    e = np.exp(kept - kept.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def _squeezed(logits, k, temperature):
    """np.squeeze on the answer: a batch of one loses its axis."""
    return np.squeeze(top_k_reference(logits, k, temperature))


def _helper(logits, k, temperature):
    import torch

    from attnkit.gpt import top_k_probabilities

    return top_k_probabilities(torch.from_numpy(logits), k, temperature).numpy()


TOP_K = Answers(
    check_top_k_probabilities,
    right={
        "reference": top_k_reference,
        "argpartition": top_k_by_argpartition,
        "softmax, then cut and renormalise": top_k_softmax_then_cut,
        "exactly k, the first of tied logits": _exactly_k_first_of_ties,
    },
    wrong={
        "temperature multiplies": Wrong(
            "known", top_k_with(_stable_softmax, divide=False), "multiplied the logits"
        ),
        "temperature left out": Wrong("known", _no_temperature, "temperature"),
        "not renormalised": Wrong("known", _not_renormalised, "renormalise"),
        "k smallest": Wrong("known", top_k_with(_stable_softmax, keep_smallest=True), "SMALLEST"),
        "one too few (>)": Wrong("known", top_k_with(_stable_softmax, strict=True), "one too few"),
        "one too many": Wrong("known", _one_too_many, "one too many"),
        "dropped logits set to 0": Wrong("known", top_k_with(_stable_softmax, fill=0.0), "-inf"),
        "along the first axis": Wrong("known", _first_axis, "first axis"),
        "shifted by the raw logits' maximum": Wrong(
            "shift", _shifted_by_the_raw_maximum, "NaN or inf"
        ),
        "temperature on the probabilities": Wrong(
            "known", _temperature_on_the_probabilities, "left out the temperature"
        ),
        "1e-12 for the dropped tokens": Wrong("known", _almost_zero, "should be exactly 0"),
        "a matrix only (axis=1)": Wrong("rank", _along_axis_1, ""),
        "squeezed": Wrong("batch", _squeezed, "should have shape"),
        **structure_family(top_k_reference),
        **softmax_families(top_k_with),
        "attnkit's top_k_probabilities": Wrong(
            "forbidden", _helper, "attnkit.gpt.top_k_probabilities"
        ),
        **type_family(top_k_reference),
        **dtype_family(top_k_reference),
        **layout_family(top_k_reference),
        **squeezed_family(top_k_reference),
    },
)

ANSWERS = [ROPE_ATTENTION, TOP_K]
