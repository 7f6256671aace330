"""Checks for the coding exercises of ``chapters/tiny-gpt.md``."""

import numpy as np

from ..core import causal_mask
from ..relative_position import apply_rotary
from .harness import (
    ATTENTIONS,
    SOFTMAXES,
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
    shown,
    wrong_shape,
)
from .inputs import scores_from_queries_and_keys, spread
from .wording import _

__all__ = ["check_causal_rope_attention", "check_top_k_probabilities"]


def _softmax(x):
    """A stable softmax along the last axis; rows that are all -inf give zeros."""
    top = np.max(x, axis=-1, keepdims=True)
    top = np.where(np.isfinite(top), top, 0.0)
    e = np.exp(x - top)
    total = e.sum(axis=-1, keepdims=True)
    return np.divide(e, total, out=np.zeros_like(e), where=total > 0)


# --- causal self-attention with rotary position embedding -------------------------------------


def _rope_attention(Q, K, V, *, turn_q=True, turn_k=True, turn_v=False, pairing="adjacent",
                    sign=1, mask="causal", scale=True):  # fmt: skip
    """The answer in float64, or one of the typical mistakes (the keyword arguments)."""
    Q, K, V = (np.asarray(a, dtype=np.float64) for a in (Q, K, V))
    n, d_k = Q.shape[-2], Q.shape[-1]
    positions = sign * np.arange(n, dtype=np.float64)

    def turned(x, on):
        return apply_rotary(x, positions, pairing=pairing) if on else x

    q, k, v = turned(Q, turn_q), turned(K, turn_k), turned(V, turn_v) if V.shape[-1] % 2 == 0 else V
    scores = q @ np.swapaxes(k, -1, -2) / (np.sqrt(d_k) if scale else 1.0)  # (h, n, n)
    keep = {
        "causal": causal_mask(n),
        "none": np.ones((n, n), dtype=bool),
        "transposed": causal_mask(n).T,
        "one ahead": np.tri(n, k=1, dtype=bool),
        "diagonal hidden": np.tri(n, k=-1, dtype=bool),
    }[mask]
    weights = _softmax(np.where(keep, scores, -np.inf))
    return weights @ v, weights


def _rope_mistakes() -> dict[str, dict]:
    """The typical mistakes, in words, and the keyword arguments of ``_rope_attention`` that
    make them."""
    return {
        _(
            "you did not turn the queries and keys at all: rotary position embedding turns each "
            "query and each key by its own position before the scores"
        ): dict(turn_q=False, turn_k=False),
        _(
            "you turned only the keys: turn the queries too, or the score depends on where the "
            "key stands and not on the offset"
        ): dict(turn_q=False),
        _(
            "you turned only the queries: turn the keys too, or the score depends on where the "
            "query stands and not on the offset"
        ): dict(turn_k=False),
        _(
            "you turned the values too: RoPE turns the queries and keys, which make the scores; "
            "the values are mixed as they are"
        ): dict(turn_v=True),
        _(
            "you paired column i with column i + d_k/2 (the 'rotate half' layout); this "
            "exercise pairs ADJACENT columns, 2i with 2i+1, as chapter 5 and attnkit do"
        ): dict(pairing="half"),
        _(
            "you turned each pair the wrong way, by -t: pair (x, y) becomes (x cos t - y sin t, "
            "x sin t + y cos t)"
        ): dict(sign=-1),
        _("the causal mask is missing: query i may see keys 0..i only"): dict(mask="none"),
        _(
            "the mask is transposed: query i sees keys i..n-1, the future; keep keys j <= i "
            "(np.tril, not np.triu)"
        ): dict(mask="transposed"),
        _("the mask lets query i see key i + 1, one step into the future; keep keys j <= i"): dict(
            mask="one ahead"
        ),
        _("the scores are not divided by sqrt(d_k)"): dict(scale=False),
    }


def _extreme_rope_inputs(dtype):
    """``(Q, K, V)`` with ``h = 1``, ``n = 4``, ``d_k = 16`` whose turned, scaled scores are
    set: one key far below zero (-20 000, a row that a maximum floored at 0, or any shift but
    its own, turns into 0/0), a score far above the rest (5000: unshifted, it overflows),
    scores spread over ±1000 whose two largest are close (clipping makes them equal), and a row
    of distinct negative scores. The hidden scores above the diagonal are large and positive
    (4000), so a missing mask, or one filled with -10 000, shows. The queries and keys are
    turned back by their positions, so that turning them again gives these scores."""
    rng = random()
    S = rng.uniform(3900.0, 4100.0, (4, 4))  # hidden: above the diagonal
    S[0, 0] = -20000.0 + rng.uniform(0.0, 1.0)
    S[1, :2] = rng.normal(0.0, 3.0), 5000.0 + rng.uniform(0.0, 1.0)
    top = 1000.0 - rng.uniform(0.0, 1.0)
    S[2, :3] = -900.0 + rng.uniform(0.0, 1.0), top, top - rng.uniform(1.0, 3.0)
    S[3, :4] = -2000.0 + rng.permutation(4) * rng.uniform(0.5, 1.5)
    S = S.astype(np.float32).astype(np.float64)  # exact in float32
    q, k = scores_from_queries_and_keys(S, 16, np.float64)  # (4, 16) each
    back = -np.arange(4.0)
    Q, K = apply_rotary(q, back), apply_rotary(k, back)
    V = rng.normal(size=(4, 4))
    return tuple(a[None].astype(dtype) for a in (Q, K, V))  # (1, 4, .)


def _rope_cases(dtype):
    rng = random()
    cases = []
    for _case in range(3):
        h, n = int(rng.integers(1, 4)), int(rng.integers(2, 10))
        d_k, d_v = 2 * int(rng.integers(1, 9)), 2 * int(rng.integers(1, 4))
        Q, K = (rng.normal(size=(h, n, d_k)) * rng.uniform(0.5, 2.0) for _array in range(2))
        V = spread((h, n, d_v), np.float64, decades=1.0)
        cases.append(tuple(a.astype(dtype) for a in (Q, K, V)))
    V1 = rng.normal(size=(2, 1, 4))  # one token: it sees only itself
    cases.append(tuple(a.astype(dtype) for a in (rng.normal(size=(2, 1, 6)),) * 2 + (V1,)))
    return cases + [_extreme_rope_inputs(dtype)]  # last: typical mistakes are named before


def _far_below_rope_inputs(dtype):
    """``(Q, K, V)`` with ``h = 1``, ``n = 3``, ``d_k = d_v = 2`` whose turned, scaled scores
    all lie near -3e9, each key's a few hundred million apart: each query puts its whole
    weight on key 0, in either dtype, and a masked score filled with a large finite number
    (-1e9, -1e4) lies above them and takes the weight. The queries and keys are turned back by
    their positions, so that turning them again gives these scores."""
    back = -np.arange(3.0)
    Q = apply_rotary(np.tile([-3e9 * np.sqrt(2.0), 0.0], (3, 1)), back)
    K = apply_rotary(np.array([[1.0, 0.0], [1.25, 0.0], [1.5, 0.0]]), back)
    V = np.array([[1.0, -2.0], [3.0, 0.5], [-1.5, 2.5]])
    return tuple(a[None].astype(dtype) for a in (Q, K, V))  # (1, 3, 2)


def _masked_far_below_rope_case(fn, dtype):
    """The masking rule of every chapter: a hidden key's score is -inf, never a large finite
    number, which would outweigh visible scores lower still."""
    Q, K, V = _far_below_rope_inputs(dtype)
    where = _(
        "for {dtype} scores near -3e9 (every query's weight belongs to key 0)",
        dtype=np.dtype(dtype).name,
    )
    result = call(fn, Q, K, V)
    if not (isinstance(result, tuple) and len(result) == 2):
        raise Failed(_("return a pair (output, weights)"))
    out, weights = (as_array(part, name) for part, name in zip(result, ("output", "weights")))
    want_out, want_w = _rope_attention(Q, K, V)
    if weights.shape == want_w.shape and out.shape == want_out.shape:
        if close(weights, want_w) and close(out, want_out):
            return
    raise Failed(
        _(
            "{where}: a masked score must be -inf, so that its exponential is exactly 0: a "
            "large finite number such as -1e9 is larger than these queries' visible scores and "
            "takes all the weight",
            where=where,
        )
    )


@check(forbids=SOFTMAXES + ATTENTIONS)
def check_causal_rope_attention(fn):
    """Check ``fn(Q, K, V) -> (output, weights)``: causal self-attention with rotary position
    embedding, every head at once.

    ``Q`` and ``K`` are ``(h, n, d_k)`` (``d_k`` even), ``V`` ``(h, n, d_v)``, the tokens at
    positions ``0 .. n-1``. Queries and keys are turned by RoPE (adjacent pairs, base 10 000),
    the scores divided by ``sqrt(d_k)``, query ``i`` sees keys ``0 .. i``. The answers are
    NumPy arrays ``(h, n, d_v)`` and ``(h, n, n)`` in the inputs' dtype. Besides random inputs
    the check tries scores from -20 000 to 5000, which only a softmax shifted by each row's own
    maximum survives. The softmaxes and attention functions of attnkit are off limits;
    ``attnkit.relative_position.apply_rotary`` and ``attnkit.core.causal_mask`` are allowed.
    """
    for dtype in dtypes():
        for Q, K, V in _rope_cases(dtype):
            where = _(
                "for Q and K of shape {qk_shape} and V of shape {v_shape} in {dtype}",
                qk_shape=Q.shape,
                v_shape=V.shape,
                dtype=np.dtype(dtype).name,
            )
            result = call(fn, Q, K, V)
            if not (isinstance(result, tuple) and len(result) == 2):
                raise Failed(_("return a pair (output, weights)"))
            out, weights = (
                as_array(part, name) for part, name in zip(result, ("output", "weights"))
            )
            want_out, want_w = _rope_attention(Q, K, V)
            for got, want, name in ((out, want_out, "output"), (weights, want_w, "weights")):
                if got.shape != want.shape:
                    raise wrong_shape(where, name, want.shape, got.shape)
                keeps_dtype(result[0 if name == "output" else 1], dtype, name)
            if not (np.all(np.isfinite(out)) and np.all(np.isfinite(weights))):
                hidden_out, hidden_w = _rope_attention(Q, K, V, mask="diagonal hidden")
                # query 0 sees no key at all under j < i, and its row is 0/0
                if close(weights[..., 1:, :], hidden_w[..., 1:, :]) and close(
                    out[..., 1:, :], hidden_out[..., 1:, :]
                ):
                    raise Failed(
                        _(
                            "{where}: your mask hides key i from query i (j < i): query 0 then "
                            "sees no key at all, and its row is 0/0. Keep keys j <= i",
                            where=where,
                        )
                    )
                hint = _(
                    " Scores run from -20 000 to 5000 here, so subtract each row's own largest "
                    "score (over the keys it may see) before exp."
                )
                raise not_finite(
                    where, "output" if not np.all(np.isfinite(out)) else "weights", hint
                )
            if close(weights, want_w) and close(out, want_out):
                continue
            for advice, mistake in _rope_mistakes().items():
                wrong_out, wrong_w = _rope_attention(Q, K, V, **mistake)
                if close(weights, wrong_w) and close(out, wrong_out):
                    raise Failed(_("{where}: {advice}", where=where, advice=advice))
            if close(weights, want_w):
                own = weights.astype(np.float64) @ np.asarray(V, dtype=np.float64)
                if not close(out, own):
                    raise Failed(
                        _(
                            "{where} the weights are right but the output is not: it is "
                            "weights @ V, with V as it is given",
                            where=where,
                        )
                    )
                index = tuple(int(i) for i in np.argwhere(~near(out, want_out))[0])
                raise not_close(where, f"output{list(index)}", want_out[index], out[index])
            h, i, j = np.argwhere(~near(weights, want_w))[0]
            wanted, have = shown(want_w[h, i, j], weights[h, i, j])
            raise Failed(
                _(
                    "{where}, weights[{h}, {i}, {j}] (head {h}, query {i}, key {j}) should be "
                    "{wanted}, you returned {have}",
                    where=where,
                    h=h,
                    i=i,
                    j=j,
                    wanted=wanted,
                    have=have,
                )
            )
    for dtype in dtypes():
        _masked_far_below_rope_case(fn, dtype)
    return _(
        "correct: queries and keys turned by their positions, scores divided by sqrt(d_k), "
        "keys up to the query's own position, every head, in the inputs' dtype, and stable "
        "for scores in the thousands"
    )


# --- top-k sampling probabilities ------------------------------------------------------------


def _top_k(logits, k, temperature, *, multiply=False, renormalise=True, smallest=False,
           keep=None, axis=-1, fill=-np.inf):  # fmt: skip
    """The answer in float64, or one of the typical mistakes (the keyword arguments)."""
    x = np.asarray(logits, dtype=np.float64)
    x = np.moveaxis(x, axis, -1)
    scaled = x * temperature if multiply else x / temperature
    count = k if keep is None else keep
    order = np.sort(scaled, axis=-1)
    if smallest:
        kept = scaled <= order[..., count - 1 : count] if count >= 1 else np.zeros_like(x, bool)
    else:
        kept = scaled >= order[..., -count:][..., :1] if count >= 1 else np.zeros_like(x, bool)
    if renormalise:
        p = _softmax(np.where(kept, scaled, fill))
    else:
        p = np.where(kept, _softmax(scaled), 0.0)
    return np.moveaxis(p, -1, axis)


def _top_k_mistakes(k, vocab, ndim):
    found = {
        _(
            "you multiplied the logits by the temperature; divide them by it, so that a "
            "temperature below 1 sharpens the distribution"
        ): dict(multiply=True),
        _(
            "your probabilities do not sum to 1: after cutting to the k largest, renormalise "
            "(a softmax over the kept logits only)"
        ): dict(renormalise=False),
        _("you kept the k SMALLEST logits; keep the k largest"): dict(smallest=True),
        _(
            "the logits you dropped were set to 0, which still gives them probability; set them "
            "to -inf, so that exp gives exactly 0"
        ): dict(fill=0.0),
    }
    if k + 1 <= vocab:
        found[
            _(
                "you kept {kept} tokens, one too many: keep the k = {k} largest (more only "
                "where logits tie with the k-th largest)",
                kept=k + 1,
                k=k,
            )
        ] = dict(keep=k + 1)
    if k - 1 >= 1:
        found[
            _(
                "you kept {kept} tokens, one too few (compare with >= the k-th largest, not >): "
                "keep the k = {k} largest",
                kept=k - 1,
                k=k,
            )
        ] = dict(keep=k - 1)
    if ndim > 1:
        found[
            _(
                "you chose the k largest along the first axis; each row (the last axis) is one "
                "distribution over the vocabulary"
            )
        ] = dict(axis=0)
    return found


# Logits that tie at the k-th largest (k = 2): the statement lets an answer keep every tied
# logit or exactly k of them.
_TIED = np.array([[2.5, 1.25, 1.25, 0.5, -1.0], [0.5, 0.5, 0.5, -2.0, 3.0]])


def _apart(shape, rng) -> np.ndarray:
    """Random logits no two of which lie within 0.15 of each other, in either dtype and
    divided by any temperature the check tries: the k largest are never a tie."""
    ranks = np.argsort(rng.random(shape), axis=-1)
    return ranks * 0.4 + rng.uniform(-0.1, 0.1, shape) - 0.2 * shape[-1]


def _top_k_cases(dtype):
    """(logits, k, temperature): a worked example, logits that tie, random rows of every rank
    and a batch of one, and logits far apart, which only a softmax shifted by each row's own
    maximum survives, at low and high temperatures."""
    from .inputs import extreme_logits

    rng = random()
    cases = [(np.array([2.0, 1.0, 0.5, -1.0, 3.0]), 2, 1.0), (_TIED, 2, 0.8)]
    for shape in ((int(rng.integers(3, 12)),), (3, int(rng.integers(5, 30))),
                  (2, 3, int(rng.integers(4, 10))), (1, int(rng.integers(4, 10)))):  # fmt: skip
        vocab = shape[-1]
        k = int(rng.integers(2, vocab))
        for temperature in (0.5, 2.5):
            cases.append((_apart(shape, rng), k, temperature))
    vocab = int(rng.integers(6, 12))
    cases.append((_apart((4, vocab), rng), 1, 1.3))  # one token each
    cases.append((_apart((2, vocab), rng), vocab, 0.7))  # every token
    extreme = extreme_logits(vocab, np.float64)
    cases += [(extreme, vocab - 1, temperature) for temperature in (1.0, 0.25, 40.0)]
    return [(x.astype(dtype), k, t) for x, k, t in cases]


def _exactly_k_tied(logits, k, temperature, got) -> bool:
    """Is ``got`` the other right reading where logits tie at the k-th largest: exactly k
    tokens kept in each row, every logit above the tie among them, renormalised over them?"""
    x = np.asarray(logits, dtype=np.float64) / temperature
    kept = got != 0
    kth = np.sort(x, axis=-1)[..., -k:][..., :1]
    if not (np.all(kept.sum(axis=-1) == k) and np.all(kept[x > kth]) and not np.any(kept[x < kth])):
        return False
    return close(got, _softmax(np.where(kept, x, -np.inf)))


@check(forbids=SOFTMAXES + ("attnkit.gpt.top_k_probabilities",))
def check_top_k_probabilities(fn):
    """Check ``fn(logits, k, temperature) -> probabilities``: top-k sampling's distribution.

    ``logits`` is a NumPy array ``(..., vocab)``, ``1 <= k <= vocab``, ``temperature > 0``.
    The answer has the logits' shape and dtype: ``softmax(logits / temperature)`` over the
    ``k`` largest logits of each row, renormalised to sum to 1, and exactly 0 elsewhere. Where
    logits tie with the k-th largest, either every tied one is kept or exactly k logits are.
    Besides worked examples and ties the check tries random rows of every rank, a batch of
    one, ``k = 1`` and ``k = vocab``, and logits thousands apart at temperatures 1/4 to 40. The softmaxes (attnkit's, SciPy's, PyTorch's) and
    ``attnkit.gpt.top_k_probabilities`` are off limits.
    """
    for dtype in dtypes():
        for logits, k, temperature in _top_k_cases(dtype):
            where = _(
                "for logits of shape {shape} in {dtype}, k = {k} and temperature {temperature}",
                shape=logits.shape,
                dtype=np.dtype(dtype).name,
                k=k,
                temperature=temperature,
            )
            result = call(fn, logits, k, temperature)
            got = as_array(result, _("the probabilities"))
            want = _top_k(logits, k, temperature)
            if got.shape != want.shape:
                raise wrong_shape(where, _("the result"), want.shape, got.shape)
            keeps_dtype(result, dtype, _("the probabilities"))
            if not np.all(np.isfinite(got)):
                hint = _(
                    " Subtract each row's own largest kept logit before exp (the logits here lie "
                    "thousands apart)."
                )
                raise not_finite(where, _("the probabilities"), hint)
            outside = (want == 0) & (got != 0)
            if np.any(outside) and close(got, want):
                index = tuple(int(i) for i in np.argwhere(outside)[0])
                raise Failed(
                    _(
                        "{where}, entry {index} should be exactly 0, you returned {have}: a "
                        "token outside the k largest is never drawn. Set its logit to -inf "
                        "before the softmax, so that exp gives exactly 0",
                        where=where,
                        index=list(index),
                        have=repr(float(got[index])),
                    )
                )
            if close(got, want) or _exactly_k_tied(logits, k, temperature, got):
                continue
            for advice, mistake in _top_k_mistakes(k, logits.shape[-1], logits.ndim).items():
                if close(got, _top_k(logits, k, temperature, **mistake)):
                    raise Failed(_("{where}: {advice}", where=where, advice=advice))
            if close(got, _top_k(logits, k, 1.0)) and temperature != 1.0:
                raise Failed(
                    _(
                        "{where}: you left out the temperature; divide the logits by it",
                        where=where,
                    )
                )
            index = tuple(int(i) for i in np.argwhere(~near(got, want))[0])
            raise not_close(where, _("entry {index}", index=list(index)), want[index], got[index])
    return _(
        "correct: the k largest logits of each row, divided by the temperature, through a "
        "stable softmax, every other token exactly 0, in the logits' dtype"
    )
