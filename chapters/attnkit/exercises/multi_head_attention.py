"""Checks for the coding exercises of ``chapters/multi-head-attention.md``."""

import numpy as np

from .harness import Failed, as_array, call, check

__all__ = ["check_split_heads", "check_merge_heads"]


def _coded_tokens(b: int, n: int, h: int, d_k: int) -> np.ndarray:
    """``(b, n, h*d_k)`` whose entries say where they belong: ``100*batch + 10*token + head``."""
    s, t, i, _ = np.meshgrid(np.arange(b), np.arange(n), np.arange(h), np.arange(d_k),
                             indexing="ij")
    return (100 * s + 10 * t + i).reshape(b, n, h * d_k).astype(float)


@check
def check_split_heads(fn):
    """Check ``fn(X, h)``: ``(b, n, h*d_k) -> (b, h, n, d_k)``, head ``i`` = columns ``i*d_k ..``.

    The test input's entries encode their place, ``100*batch + 10*token +
    head``, so a wrong answer can be described in those terms.
    """
    for b, n, h, d_k in ((2, 3, 4, 2), (1, 5, 2, 3), (2, 4, 1, 3), (1, 3, 6, 1)):
        X = _coded_tokens(b, n, h, d_k)                       # (b, n, h*d_k)
        expected = X.reshape(b, n, h, d_k).transpose(0, 2, 1, 3)
        got = as_array(call(fn, X, h), "the result")
        where = f"for X of shape (b, n, h*d_k) = {X.shape} and h = {h}"
        if got.shape != expected.shape:
            if got.shape == (b, n, h, d_k) and n != h:
                raise Failed(f"{where} you returned shape {got.shape} = (b, n, h, d_k): "
                             "the head axis must come before the token axis. Swap axes "
                             "1 and 2 (.transpose(0, 2, 1, 3) in NumPy, .transpose(1, 2) "
                             "in PyTorch)")
            if got.shape == (b, h, d_k, n) and n != d_k:
                raise Failed(f"{where} you returned shape {got.shape} = (b, h, d_k, n): "
                             "each head holds one row per token, shape (b, h, n, d_k)")
            raise Failed(f"{where} the result should have shape (b, h, n, d_k) = "
                         f"{expected.shape}, you returned {got.shape}")
        if np.array_equal(got, expected):
            continue
        straight = X.reshape(b, h, n, d_k)
        if np.array_equal(got, straight):
            pairs = ", ".join(f"({int(r[0]) // 10}, {int(r[0]) % 10})"
                              for r in straight[0, 1])
            want = ", ".join(f"({t}, 1)" for t in range(n))
            raise Failed(
                f"{where} you reshaped straight to (b, h, n, d_k), like view(b, h, n, d_k) "
                "without the transpose. The shape is right but the content is not: the "
                "entries are 100*batch + 10*token + head, and the rows of your head 1 come "
                f"from (token, head) = {pairs}, where they should be {want}: your heads "
                "mix tokens and heads. Reshape to (b, n, h, d_k) first (each token's row "
                "cut into h pieces), then swap axes 1 and 2")
        strided = X.reshape(b, n, d_k, h).transpose(0, 3, 1, 2)
        if np.array_equal(got, strided):
            raise Failed(f"{where} head i got every h-th column (i, i + h, ...). Each head "
                         "owns a block of d_k consecutive columns: reshape the last axis "
                         "to (h, d_k), not (d_k, h)")
        bad = tuple(int(k) for k in np.argwhere(got != expected)[0])
        raise Failed(
            f"{where} entry {list(bad)} (batch, head, token, coordinate) should be "
            f"{expected[bad]:g} = 100*batch + 10*token + head, you have {got[bad]:g}. "
            "Head i of token t is row t's columns i*d_k .. (i+1)*d_k - 1")
    return ("correct: each head gets its own block of d_k columns of every token, "
            "and the tokens stay apart")


@check
def check_merge_heads(fn):
    """Check ``fn(Y)``: ``(b, h, n, d_v) -> (b, n, h*d_v)``, the heads side by side per token."""
    for b, n, h, d_v in ((2, 3, 4, 2), (1, 5, 2, 3), (2, 4, 1, 3)):
        expected = _coded_tokens(b, n, h, d_v)                # (b, n, h*d_v)
        Y = expected.reshape(b, n, h, d_v).transpose(0, 2, 1, 3).copy()  # (b, h, n, d_v)
        got = as_array(call(fn, Y), "the result")
        where = f"for Y of shape (b, h, n, d_v) = {Y.shape}"
        if got.shape != expected.shape:
            if got.shape == (b, n, h, d_v) and n != h:
                raise Failed(f"{where} you returned shape {got.shape} = (b, n, h, d_v): "
                             "the axes are in the right order, now concatenate the heads "
                             "by reshaping the last two axes into one of width h*d_v")
            raise Failed(f"{where} the result should have shape (b, n, h*d_v) = "
                         f"{expected.shape}, you returned {got.shape}")
        if np.array_equal(got, expected):
            continue
        if np.array_equal(got, Y.reshape(b, n, h * d_v)):
            raise Failed(f"{where} you reshaped straight to (b, n, h*d_v) without moving "
                         "the head axis back: the shape is right but each row now holds "
                         "pieces of several tokens of one head, so tokens are mixed. Swap "
                         "axes 1 and 2 first (in PyTorch: .transpose(1, 2).contiguous() "
                         "before .view), then reshape")
        if np.array_equal(got, Y.transpose(0, 2, 3, 1).reshape(b, n, h * d_v)):
            raise Failed(f"{where} the heads' columns are interleaved. Concatenation puts "
                         "head 0's d_v columns first, then head 1's, ...: reshape from "
                         "(b, n, h, d_v), not from (b, n, d_v, h)")
        bad = tuple(int(k) for k in np.argwhere(got != expected)[0])
        raise Failed(f"{where} entry {list(bad)} (batch, token, column) should be "
                     f"{expected[bad]:g} = 100*batch + 10*token + head, you have "
                     f"{got[bad]:g}. Row t is [head 0's row t | head 1's row t | ...]")
    return ("correct: each token's row is its heads' outputs side by side, "
            "head 0 first")
