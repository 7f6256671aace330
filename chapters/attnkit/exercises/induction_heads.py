"""Checks for the coding exercises of ``chapters/induction-heads.md``."""

import numpy as np

from .harness import (
    Failed,
    as_array,
    call,
    check,
    close,
    dtypes,
    keeps_dtype,
    near,
    not_close,
    not_finite,
    random,
    wrong_shape,
)
from .wording import _

__all__ = ["check_induction_score", "check_k_composition"]

# What computes the answers: the chapter's helpers, off limits in the exercises.
_INDUCTION = ("attnkit.induction.induction_scores", "attnkit.induction.induction_targets")


# --- the induction score ----------------------------------------------------------------------


def _targets(tokens, *, on="next", latest=False, strict=False):
    """Boolean ``(n, n)``: the keys of each query that the score sums, or a mistake's keys.
    ``on="next"`` the keys after earlier occurrences (the answer), ``"same"`` the occurrences
    themselves; ``latest`` only the last one; ``strict`` keys before the query only."""
    n = len(tokens)
    same = tokens[:, None] == tokens[None, :]  # (n, n): x_j == x_t
    if on == "next":
        found = np.zeros((n, n), dtype=bool)
        found[:, 1:] = same[:, :-1]  # key s = j + 1
    else:
        found = same
    found &= np.tri(n, k=-1 if strict or on == "same" else 0, dtype=bool)
    if latest:
        last = np.where(found.any(axis=1), n - 1 - np.argmax(found[:, ::-1], axis=1), -1)
        found = np.arange(n)[None, :] == last[:, None]
    return found


def _induction_score(weights, tokens, *, every_query=False, total=False, **mistake):
    """The answer in float64, or one of the typical mistakes (the keyword arguments)."""
    w = np.asarray(weights, dtype=np.float64)
    targets = _targets(np.asarray(tokens), **mistake)
    has = targets.any(axis=1) if not every_query else np.ones(len(tokens), dtype=bool)
    if not has.any():
        return np.zeros(w.shape[0])
    on_targets = (w * targets).sum(axis=-1)[:, has]  # (h, queries)
    return on_targets.sum(axis=-1) if total else on_targets.mean(axis=-1)


def _score_mistakes() -> dict[str, dict]:
    return {
        _(
            "you summed the weights on the earlier occurrences of the query's token; an "
            "induction head looks at the token AFTER each earlier occurrence, key s with "
            "tokens[s - 1] == tokens[t]"
        ): dict(on="same"),
        _(
            "you kept only the most recent earlier occurrence; sum the weights on the keys "
            "after every earlier occurrence"
        ): dict(latest=True),
        _(
            "you left out key s = t, whose previous token is the query's own when a token "
            "repeats at once; keep the keys 1 <= s <= t"
        ): dict(strict=True),
        _(
            "you averaged over every query; average only over the queries that have an earlier "
            "occurrence of their token"
        ): dict(every_query=True),
        _("you summed over the queries; take the mean over those that have a target"): dict(
            total=True
        ),
    }


def _causal_weights(h, n, rng):
    logits = rng.normal(size=(h, n, n)) * 2.0
    logits = np.where(np.tri(n, dtype=bool), logits, -np.inf)
    e = np.exp(logits - logits.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def _score_cases(dtype):
    """(weights, tokens): a repeated sequence, random tokens from a small vocabulary (repeats
    at any distance, several occurrences, a token that repeats at once), one with no repeat,
    and a single token."""
    rng = random()
    cases = []
    period = int(rng.integers(3, 6))
    base = rng.permutation(20)[:period]
    cases.append((_causal_weights(2, 3 * period + 1, rng), np.resize(base, 3 * period + 1)))
    for _case in range(2):
        n = int(rng.integers(8, 16))
        tokens = rng.integers(0, 5, n)
        tokens[3] = tokens[2]  # a token that repeats at once: key s = t counts
        cases.append((_causal_weights(int(rng.integers(1, 4)), n, rng), tokens))
    cases.append((_causal_weights(3, 5, rng), rng.permutation(9)[:5]))  # nothing repeats
    cases.append((_causal_weights(2, 1, rng), np.array([4])))
    # the head with the largest score first, so that scores sorted in any order show
    cases = [(w[np.roll(np.arange(len(w)), -int(np.argmax(_induction_score(w, t))))], t)
             for w, t in cases]  # fmt: skip
    return [(w.astype(dtype), t.astype(np.int64)) for w, t in cases]


@check(forbids=_INDUCTION)
def check_induction_score(fn):
    """Check ``fn(weights, tokens) -> (h,)``: each head's induction score.

    ``weights`` is ``(h, n, n)``, causal attention weights, ``tokens`` integer ``(n,)``. For
    each query ``t`` with an earlier occurrence of its token, the weights summed over the keys
    ``1 <= s <= t`` with ``tokens[s - 1] == tokens[t]``; the mean over those queries; zeros if
    there is none. The answer is a NumPy array in the weights' dtype. The check tries a
    repeated sequence, random tokens that repeat at any distance (one at once), a sequence with
    no repeat and one token, with ``attnkit.induction``'s scores made unavailable.
    """
    for dtype in dtypes():
        for weights, tokens in _score_cases(dtype):
            where = _(
                "for weights of shape {shape} in {dtype} and tokens {tokens}",
                shape=weights.shape,
                dtype=np.dtype(dtype).name,
                tokens=tokens.tolist(),
            )
            result = call(fn, weights, tokens)
            got = as_array(result, _("the scores"))
            want = _induction_score(weights, tokens)
            if got.shape != want.shape:
                raise wrong_shape(where, _("the scores"), want.shape, got.shape)
            keeps_dtype(result, dtype, _("the scores"))
            if not np.all(np.isfinite(got)):
                hint = _(" When no query has an earlier occurrence of its token, return zeros.")
                raise not_finite(where, _("the scores"), hint)
            if close(got, want):
                continue
            for advice, mistake in _score_mistakes().items():
                if close(got, _induction_score(weights, tokens, **mistake)):
                    raise Failed(_("{where}: {advice}", where=where, advice=advice))
            head = int(np.argwhere(~near(got, want))[0][0])
            raise not_close(where, _("the score of head {head}", head=head), want[head], got[head])
    return _(
        "correct: the weight on the tokens after every earlier occurrence, averaged over the "
        "queries that have one, for every head, in the weights' dtype"
    )


# --- K-composition ----------------------------------------------------------------------------


def _k_composition(W_QK, W_OV, *, product="K", norm="fro", normalise=True):
    """The answer in float64, or one of the typical mistakes (the keyword arguments)."""
    a, b = (np.asarray(m, dtype=np.float64) for m in (W_QK, W_OV))
    m = {"K": a @ b.T, "plain": a @ b, "Q": b @ a, "left": a.T @ b}[product]
    size = np.linalg.norm(m, ord=norm)
    if not normalise:
        return float(size)
    return float(size / (np.linalg.norm(a, ord=norm) * np.linalg.norm(b, ord=norm)))


def _composition_mistakes() -> dict[str, dict]:
    return {
        _(
            "you multiplied W_QK @ W_OV; the earlier head's output enters the keys, so the "
            "product is W_QK @ W_OV.T"
        ): dict(product="plain"),
        _(
            "you computed Q-composition, W_OV @ W_QK (the earlier head's output in the "
            "queries); K-composition is W_QK @ W_OV.T"
        ): dict(product="Q"),
        _("you transposed W_QK instead of W_OV: the product is W_QK @ W_OV.T"): dict(
            product="left"
        ),
        _(
            "you did not divide by the norms of W_QK and W_OV: the score compares the product's "
            "size with theirs"
        ): dict(normalise=False),
        _(
            "you used the largest singular value (ord=2); the score uses the Frobenius norm, "
            "np.linalg.norm's default for a matrix"
        ): dict(norm=2),
    }


def _composition_cases():
    """(W_QK, W_OV): low-rank products of random heads as in a model, of a few widths, and
    neither symmetric nor of equal size, so that every mistaken product differs."""
    rng = random()
    cases = []
    for d, d_k in ((4, 2), (int(rng.integers(6, 12)), 3), (16, 4)):
        W_QK = rng.normal(size=(d, d_k)) @ rng.normal(size=(d_k, d))
        W_OV = rng.normal(size=(d, d_k)) @ rng.normal(size=(d_k, d)) * rng.uniform(0.2, 5.0)
        cases.append((W_QK, W_OV))
    return cases


@check
def check_k_composition(fn):
    """Check ``fn(W_QK, W_OV) -> float``: the K-composition score of a later head ``W_QK`` and
    an earlier head ``W_OV``, both ``(d, d)``: ``||W_QK W_OV^T||_F / (||W_QK||_F ||W_OV||_F)``.
    The check tries random low-rank heads of three widths, in each of :func:`dtypes`.
    (``attnkit.induction.composition_scores`` reads a model's layers, not two matrices: it
    cannot stand in for the answer, and is left available.)
    """
    for dtype in dtypes():
        for W_QK, W_OV in _composition_cases():
            W_QK, W_OV = W_QK.astype(dtype), W_OV.astype(dtype)
            where = _(
                "for W_QK and W_OV of shape {shape} in {dtype}",
                shape=W_QK.shape,
                dtype=np.dtype(dtype).name,
            )
            result = call(fn, W_QK, W_OV)
            try:
                got = float(result)
            except (TypeError, ValueError):
                raise Failed(
                    _(
                        "{where} return one number (a float), not {kind}",
                        where=where,
                        kind=type(result).__name__,
                    )
                ) from None
            want = _k_composition(W_QK, W_OV)
            tolerance = np.array(got, dtype=dtype)
            if close(tolerance, want):
                continue
            for advice, mistake in _composition_mistakes().items():
                if close(tolerance, _k_composition(W_QK, W_OV, **mistake)):
                    raise Failed(_("{where}: {advice}", where=where, advice=advice))
            raise not_close(where, _("the score"), want, got)
    return _(
        "correct: the Frobenius norm of W_QK @ W_OV.T over the product of the two matrices' norms"
    )
