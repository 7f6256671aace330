"""Right and wrong answers to the exercises of chapter 9 (``chapters/induction-heads.md``)."""

import numpy as np

from attnkit.exercises.induction_heads import check_induction_score, check_k_composition
from tests.support.answers import (
    Answers,
    Wrong,
    dtype_family,
    layout_family,
    squeezed_family,
    structure_family,
    type_family,
)

# --- check_induction_score --------------------------------------------------------------------


def score_with(*, next_token=True, strict=False, latest=False, every_query=False, total=False):
    """The chapter's solution with one of its choices changed."""

    def induction_score(weights, tokens):
        n = len(tokens)
        same = tokens[:, None] == tokens[None, :]  # (n, n)
        if next_token:
            targets = np.zeros((n, n), dtype=bool)
            targets[:, 1:] = same[:, :-1]  # key s = j + 1
        else:
            targets = same.copy()
        targets &= np.tri(n, k=-1 if strict or not next_token else 0, dtype=bool)
        if latest:
            for t in range(n):
                found = np.flatnonzero(targets[t])
                targets[t] = False
                if len(found):
                    targets[t, found[-1]] = True
        has = targets.any(axis=1) if not every_query else np.ones(n, dtype=bool)
        if not has.any():
            return np.zeros(weights.shape[0], dtype=weights.dtype)
        on_targets = (weights * targets).sum(axis=-1)[:, has]  # (h, queries)
        return on_targets.sum(axis=-1) if total else on_targets.mean(axis=-1)

    return induction_score


score_reference = score_with()


def score_by_loops(weights, tokens):
    """Query by query, key by key, as the definition reads."""
    h, n, _ = weights.shape
    total, count = np.zeros(h, dtype=weights.dtype), 0
    for t in range(n):
        keys = [s for s in range(1, t + 1) if tokens[s - 1] == tokens[t]]
        if keys:
            total += weights[:, t, keys].sum(axis=-1)
            count += 1
    return total / weights.dtype.type(count) if count else total


def score_by_einsum(weights, tokens):
    n = len(tokens)
    after = np.zeros((n, n), dtype=weights.dtype)
    after[:, 1:] = tokens[:, None] == tokens[None, :-1]
    after *= np.tri(n, dtype=weights.dtype)
    has = after.any(axis=1)
    if not has.any():
        return np.zeros(weights.shape[0], dtype=weights.dtype)
    return np.einsum("hts,ts->ht", weights, after)[:, has].mean(axis=1)


def _helper(weights, tokens):
    import torch

    from attnkit.induction import induction_scores

    w, t = torch.from_numpy(weights)[None], torch.from_numpy(tokens)[None]
    if not (t[:, :, None] == t[:, None, :]).tril(-1).any():
        return np.zeros(weights.shape[0], dtype=weights.dtype)
    return induction_scores(w, t).numpy()


INDUCTION_SCORE = Answers(
    check_induction_score,
    right={
        "reference": score_reference,
        "loops": score_by_loops,
        "einsum": score_by_einsum,
    },
    wrong={
        "the occurrences themselves": Wrong("known", score_with(next_token=False), "AFTER"),
        "the latest occurrence only": Wrong("known", score_with(latest=True), "most recent"),
        "key s = t left out": Wrong("known", score_with(strict=True), "s = t"),
        "every query": Wrong("known", score_with(every_query=True), "averaged over every query"),
        "summed over the queries": Wrong("known", score_with(total=True), "summed over"),
        **structure_family(score_reference),
        "attnkit's induction_scores": Wrong(
            "forbidden", _helper, "attnkit.induction.induction_scores"
        ),
        **type_family(score_reference),
        **dtype_family(score_reference),
        **layout_family(score_reference),
        **squeezed_family(score_reference),
    },
)


# --- check_k_composition ----------------------------------------------------------------------


def composition_with(product, *, norm=None, normalise=True):
    def k_composition(W_QK, W_OV):
        m = product(W_QK, W_OV)
        size = np.linalg.norm(m, ord=norm)
        if not normalise:
            return float(size)
        return float(size / (np.linalg.norm(W_QK, ord=norm) * np.linalg.norm(W_OV, ord=norm)))

    return k_composition


composition_reference = composition_with(lambda a, b: a @ b.T)


def composition_by_singular_values(W_QK, W_OV):
    """The Frobenius norm as the root of the sum of squared singular values."""

    def frobenius(m):
        return np.sqrt((np.linalg.svd(m, compute_uv=False) ** 2).sum())

    return float(frobenius(W_QK @ W_OV.T) / (frobenius(W_QK) * frobenius(W_OV)))


def composition_by_trace(W_QK, W_OV):
    """||A B^T||_F^2 = trace(B A^T A B^T), in float64."""
    a, b = W_QK.astype(np.float64), W_OV.astype(np.float64)
    product = np.trace(b @ a.T @ a @ b.T)
    return float(np.sqrt(product / ((a * a).sum() * (b * b).sum())))


K_COMPOSITION = Answers(
    check_k_composition,
    right={
        "reference": composition_reference,
        "singular values": composition_by_singular_values,
        "trace": composition_by_trace,
    },
    wrong={
        "W_QK @ W_OV": Wrong("known", composition_with(lambda a, b: a @ b), "W_QK @ W_OV;"),
        "Q-composition": Wrong("known", composition_with(lambda a, b: b @ a), "Q-composition"),
        "W_QK transposed": Wrong(
            "known", composition_with(lambda a, b: a.T @ b), "transposed W_QK"
        ),
        "not normalised": Wrong(
            "known", composition_with(lambda a, b: a @ b.T, normalise=False), "norms"
        ),
        "spectral norm": Wrong("known", composition_with(lambda a, b: a @ b.T, norm=2), "ord=2"),
        "rounded to 2 decimals": Wrong(
            "structure", lambda a, b: round(composition_reference(a, b), 2)
        ),
        "a list": Wrong("type", lambda a, b: [composition_reference(a, b)], "one number"),
    },
)

ANSWERS = [INDUCTION_SCORE, K_COMPOSITION]
