"""Checks for the coding exercises of ``chapters/tiny-transformer.md``."""

import numpy as np

from .harness import (
    Failed,
    Raised,
    call,
    check,
    close,
    dtypes,
    not_close,
    random,
    wrong_shape,
)
from .inputs import spread
from .wording import _

__all__ = ["check_diagonal_mass"]

# The mean over one diagonal per head is what anti_diagonal_mass computes for the mirror
# diagonal: of the weights cut to the queries that have a key at i + offset and flipped left
# to right, it is the answer itself.
_DIAGONAL_MEANS = ("attnkit.reversal.anti_diagonal_mass",)


def _weights(b, h, n, dtype, seed):
    """Random ``(b, h, n, n)`` attention weights whose rows sum to 1; every head differs."""
    import torch

    w = torch.rand(b, h, n, n, generator=torch.Generator().manual_seed(seed), dtype=dtype)
    return w / w.sum(dim=-1, keepdim=True)


def _mean_on_diagonal(w, offset):
    """The answer, in float64: each head's mean of ``w[s, head, i, i + offset]`` over the
    batch ``s`` and the queries ``i`` whose key ``i + offset`` exists."""
    import torch

    n = w.shape[-1]
    rows = torch.arange(max(0, -offset), min(n, n - offset))  # (count,)
    return w.double()[..., rows, rows + offset].mean(dim=(0, -1))


def _attending_weights(b, h, n, offset, dtype):
    """Fresh random ``(b, h, n, n)`` weights whose heads attend to key ``i + offset``, each
    head and each query with its own strength; from three heads on, in no sorted order.

    Every row is a softmax of random logits, its entries spread over orders of magnitude,
    and the logit of key ``i + offset`` is set near the row's largest, higher the later the
    query: the weights there rise from nearly 0 to nearly 1, so that a mean that reads other
    entries, or early queries' in place of late ones (indices that wrap), is off by far more
    than float32's rounding.
    """
    import torch

    rng = random()
    logits = spread((b, h, n, n), np.float64, decades=0.5)
    rows = np.arange(max(0, -offset), min(n, n - offset))
    height = (
        rng.uniform(-1.5, 1.5, (1, h, 1))  # each head its own strength
        + rng.uniform(-2.0, 2.0, (b, h, len(rows)))  # each query its own
        + 6.0 * rows / n
        - 3.0
    )
    logits[..., rows, rows + offset] = logits.max(axis=-1)[..., rows] + height
    e = np.exp(logits - logits.max(axis=-1, keepdims=True))
    w = torch.from_numpy(e / e.sum(axis=-1, keepdims=True)).to(dtype)
    if h < 3:
        return w
    # the head with the largest mean second: the means rise, then fall, so sorting shows
    order = list(range(h))
    top = int(_mean_on_diagonal(w, offset).argmax())
    order[1], order[top] = order[top], order[1]
    return w[:, order].contiguous()


def _cases(dtype):
    """(weights, offsets) pairs: the worked examples, then fresh random weights of random
    sizes, offsets from -(n-1) to n-1, and n past 127 and 255 (where int8 and uint8 indices
    wrap)."""
    rng = random()

    def between(low, high):
        return int(rng.integers(low, high + 1))

    cases = [
        (_weights(3, 2, 5, dtype, 0), [0, -1, 2, -4]),
        (_weights(1, 4, 3, dtype, 1), [1, 0, -2]),
    ]
    n = between(2, 12)
    first = between(-(n - 1), n - 1)
    edge = int(rng.choice([-1, 1])) * (n - 1)  # one query only
    weights = _attending_weights(between(1, 3), between(3, 5), n, first, dtype)
    cases.append((weights, [first, between(-(n - 1), n - 1), edge]))
    # a dozen queries or more past 127, then past 255, at a small offset: one offset each, to
    # stay fast
    for n in (between(150, 180), between(276, 300)):
        first = between(-4, 4)
        cases.append((_attending_weights(1, 1, n, first, dtype), [first]))
    return cases


def _wrong_mean(w, offset, got, want, where):
    """Say what is wrong with per-head means ``got`` that are not ``want``."""
    import torch

    n = w.shape[-1]
    rows = torch.arange(n)
    wrapped = w.double()[..., rows, (rows + offset) % n].mean(dim=(0, -1)).numpy()
    count = sum(0 <= i + offset < n for i in range(n))
    if close(got, _mean_on_diagonal(w, -offset).numpy()):
        raise Failed(
            _(
                "{where} you measured key i - offset, or read weights[..., key, "
                "query]; the pattern asks for query i's weight on key i + offset "
                "(offset -1 means one step back)",
                where=where,
            )
        )
    if close(got, want * count):
        raise Failed(_("{where} you summed over the queries; take the mean", where=where))
    if count < n and close(got, want * count / n):
        raise Failed(
            _(
                "{where} you divided by all n = {n} queries; only the {count} "
                "queries whose key i + offset exists count, so divide by {count}",
                where=where,
                n=n,
                count=count,
            )
        )
    if close(got, wrapped):
        raise Failed(
            _(
                "{where} you included queries whose key i + offset lies outside "
                "0..n-1: a negative index wraps around to the end of the row. Leave "
                "those queries out",
                where=where,
            )
        )
    if n >= 128:  # the smaller weights before passed
        raise Failed(
            _(
                "{where} your means are wrong, though they were right for the smaller weights "
                "before: keep the query and key indices in int64, torch.arange's default. int8 "
                "holds only -128 .. 127 and uint8 0 .. 255, so larger indices wrap around",
                where=where,
            )
        )
    hint = _(
        " For each head, the result is the mean of weights[s, head, i, i + offset] over the "
        "batch s and the queries i that have that key."
    )
    raise not_close(where, _("the result"), want, got, hint)


@check(forbids=_DIAGONAL_MEANS)
def check_diagonal_mass(fn):
    """Check ``fn(weights, offset) -> (h,)``: the mean weight query ``i`` puts on key ``i + offset``.

    ``weights`` is a torch tensor ``(b, h, n, n)``, float32 or float64; ``-n < offset < n``;
    only queries whose key ``i + offset`` exists count, and the mean runs over the batch and
    those queries. The answer is a torch tensor in the weights' dtype. Besides worked examples
    the check tries fresh random weights of random sizes (n past 127 and 255), random offsets
    up to ±(n - 1), in each of :func:`dtypes`, with ``anti_diagonal_mass`` made unavailable.
    """
    import torch  # only this check needs PyTorch

    for dtype in dtypes():
        for w, offsets in _cases({np.float64: torch.float64, np.float32: torch.float32}[dtype]):
            n = w.shape[-1]
            for offset in offsets:
                where = _(
                    "for weights of shape (b, h, n, n) = {shape}, dtype {dtype}, "
                    "and offset {offset}",
                    shape=tuple(w.shape),
                    dtype=w.dtype,
                    offset=offset,
                )
                try:
                    got = call(fn, w, offset)
                except Raised as raised:
                    hint = (
                        _(
                            ". Keep the indices int64, torch.arange's default: int8 holds only "
                            "-128 .. 127, and a uint8 tensor used as an index is read as a mask"
                        )
                        if n >= 128
                        else ""
                    )
                    raise Failed(
                        _(
                            "{where} your function raised {error}. For offset {offset} "
                            "only the queries i with 0 <= i + offset < n have a key to look "
                            "at{hint}",
                            where=where,
                            error=raised.error,
                            offset=offset,
                            hint=hint,
                        )
                    ) from None
                if not isinstance(got, torch.Tensor):
                    kind = (
                        _("a NumPy array")
                        if isinstance(got, np.ndarray)
                        else _("a {type}", type=type(got).__name__)
                    )
                    raise Failed(
                        _(
                            "{where} you returned {kind}; return a torch tensor, one number "
                            "per head",
                            where=where,
                            kind=kind,
                        )
                    )
                want = _mean_on_diagonal(w, offset)
                if got.shape != want.shape:
                    hint = (
                        _(" You averaged over the heads too; keep one number per head.")
                        if got.numel() == 1
                        else ""
                    )
                    raise wrong_shape(
                        where, _("the result"), f"(h,) = {tuple(want.shape)}", got.shape, hint
                    )
                if got.dtype != w.dtype:
                    raise Failed(
                        _(
                            "{where} you returned dtype {dtype}: keep the weights' dtype. "
                            "A tensor made with torch.zeros(h) is float32 unless given "
                            "dtype=weights.dtype, and .double() or NumPy's float64 makes float64",
                            where=where,
                            dtype=got.dtype,
                        )
                    )
                got = got.detach().cpu().numpy()
                if not close(got, want.numpy()):
                    _wrong_mean(w, offset, got, want.numpy(), where)
    return _(
        "correct: one mean per head, over the batch and the queries that have a key there, "
        "for weights of any size, in the weights' dtype"
    )
