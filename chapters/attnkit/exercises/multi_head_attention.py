"""Checks for the coding exercises of ``chapters/multi-head-attention.md``."""

import numpy as np

from .harness import Failed, as_array, call, check, dtypes, keeps_dtype, random, wrong_shape
from .inputs import spread
from .wording import _

__all__ = ["check_split_heads", "check_merge_heads"]

# (b, n, h, d_k): b, n, h and d_k differ from each other where they can, so that two swapped
# axes change the shape; one head; one column per head; a single sequence
_SIZES = ((2, 3, 4, 2), (1, 5, 2, 3), (2, 4, 1, 3), (1, 3, 6, 1), (3, 2, 3, 4))

CODE = "1000*batch + 100*token + 10*head + column"


def _sizes():
    """The worked sizes, then fresh random ones: b, n, h and d_k all different and at least 2,
    so that a swap of two axes changes the shape and a sort along any axis moves entries."""
    fresh = tuple(int(s) for s in random().choice(np.arange(2, 8), 4, replace=False))
    return [(size, True) for size in _SIZES] + [(fresh, False)]


def _tokens(b: int, n: int, h: int, d_k: int, dtype, coded: bool) -> np.ndarray:
    """``(b, n, h*d_k)``: coded entries (``CODE``, column within the head) that say where they
    belong, so that a wrong answer can be described in those terms, or random reals over
    many orders of magnitude, on which rounding, an integer buffer or a sort changes the answer.

    Every entry differs, the columns of one head included, so any reordering shows.
    """
    if not coded:
        return spread((b, n, h * d_k), dtype, decades=4.0)
    s, t, i, c = np.meshgrid(
        np.arange(b), np.arange(n), np.arange(h), np.arange(d_k), indexing="ij"
    )
    return (1000 * s + 100 * t + 10 * i + c).reshape(b, n, h * d_k).astype(dtype)


def _decoded(value: float) -> str:
    """A coded entry in words: ``1203`` -> ``batch 1, token 2, head 0, column 3``."""
    code = int(value)
    if code != value or not 0 <= code < 10000:
        return _("{value}, which is no entry of the input", value=f"{value:g}")
    return _(
        "{code:g} (batch {batch}, token {token}, head {head}, column {column})",
        code=code,
        batch=code // 1000,
        token=code // 100 % 10,
        head=code // 10 % 10,
        column=code % 10,
    )


def _first_difference(got, expected, axes: str, coded: bool) -> str:
    """The first entry where ``got`` differs from ``expected``: decoded, or as numbers."""
    bad = tuple(int(k) for k in np.argwhere(got != expected)[0])
    if coded:
        want, have = _decoded(expected[bad]), _decoded(got[bad])
    else:
        want, have = repr(float(expected[bad])), repr(float(got[bad]))
        if not np.isin(got[bad], expected):
            have = _("{value}, which is no entry of the input", value=have)
    return _(
        "entry {index} ({axes}) should be {want}, you have {have}",
        index=list(bad),
        axes=axes,
        want=want,
        have=have,
    )


def _values_changed(got, expected, where: str, names: tuple[str, ...]) -> None:
    """Fail with a name for the mistake if ``got`` holds ``expected``'s entries rounded or
    sorted, which only real-valued inputs show: splitting and merging move entries as they
    are."""
    if np.all(got == np.round(got)) and not np.all(expected == np.round(expected)):
        raise Failed(
            _(
                "{where} (random real entries) your result holds whole numbers only: it "
                "rounds, or goes through an integer array (np.zeros(shape, dtype=int), "
                ".astype(int)). Move the entries as they are, without changing any",
                where=where,
            )
        )
    for decimals in range(1, 9):
        if np.array_equal(got, np.round(expected, decimals)):
            raise Failed(
                _(
                    "{where} (random real entries) your result is rounded to {decimals} "
                    "decimals: move the entries as they are, without changing any",
                    where=where,
                    decimals=decimals,
                )
            )
    for axis, name in enumerate(names):
        if np.array_equal(got, np.sort(expected, axis=axis)):
            raise Failed(
                _(
                    "{where} (random real entries) your result is sorted along axis {axis}, "
                    "the {name} axis: the entries must keep their order, each moved as a "
                    "whole into its place",
                    where=where,
                    axis=axis,
                    name=name,
                )
            )


@check(forbids=("attnkit.core.split_heads", "attnkit.modules.MultiHeadAttention.split_heads"))
def check_split_heads(fn):
    """Check ``fn(X, h)``: ``(b, n, h*d_k) -> (b, h, n, d_k)``, head ``i`` = columns ``i*d_k ..``.

    The worked inputs' entries encode their place, ``1000*batch + 100*token + 10*head +
    column``, so a wrong answer can be described in those terms; a fresh random input of
    random sizes, real entries over many orders of magnitude, follows.
    """
    for dtype in dtypes():
        for (b, n, h, d_k), coded in _sizes():
            X = _tokens(b, n, h, d_k, dtype, coded)  # (b, n, h*d_k)
            expected = X.reshape(b, n, h, d_k).transpose(0, 2, 1, 3)
            answer = call(fn, X, h)
            got = as_array(answer, _("the result"))
            where = _("for X of shape (b, n, h*d_k) = {shape} and h = {h}", shape=X.shape, h=h)
            if got.shape != expected.shape:
                if got.shape == (b, n, h, d_k) and n != h:
                    raise Failed(
                        _(
                            "{where} you returned shape {shape} = (b, n, h, d_k): "
                            "the head axis must come before the token axis. Swap axes "
                            "1 and 2 (.transpose(0, 2, 1, 3) in NumPy, .transpose(1, 2) "
                            "in PyTorch)",
                            where=where,
                            shape=got.shape,
                        )
                    )
                if got.shape == (b, h, d_k, n) and n != d_k:
                    raise Failed(
                        _(
                            "{where} you returned shape {shape} = (b, h, d_k, n): "
                            "each head holds one row per token, shape (b, h, n, d_k)",
                            where=where,
                            shape=got.shape,
                        )
                    )
                raise wrong_shape(
                    where, _("the result"), f"(b, h, n, d_k) = {expected.shape}", got.shape
                )
            if not np.array_equal(got, expected):
                _wrong_split(got, expected, X, b, n, h, d_k, where, coded)
            keeps_dtype(answer, dtype, _("the result"))
    return _(
        "correct: each head gets its own block of d_k columns of every token, in order, "
        "and the tokens stay apart, real entries unchanged, float32 staying float32"
    )


def _wrong_split(got, expected, X, b, n, h, d_k, where, coded):
    """Say what is wrong with a split of the right shape and the wrong entries."""
    straight = X.reshape(b, h, n, d_k)
    if np.array_equal(got, straight):
        example = (
            _(
                "the entries are {code}, and head 1 of batch 0 holds {entry} in its first "
                "row, where it should hold token 0's own head 1: ",
                code=CODE,
                entry=_decoded(straight[0, 1, 0, 0]),
            )
            if coded
            else ""
        )
        raise Failed(
            _(
                "{where} you reshaped straight to (b, h, n, d_k), like view(b, h, n, d_k) "
                "without the transpose. The shape is right but the content is not: {example}"
                "your heads mix tokens and heads. Reshape to (b, n, h, d_k) first (each "
                "token's row cut into h pieces), then swap axes 1 and 2",
                where=where,
                example=example,
            )
        )
    if np.array_equal(got, X.reshape(b, n, d_k, h).transpose(0, 3, 1, 2)):
        raise Failed(
            _(
                "{where} head i got every h-th column (i, i + h, ...). Each head owns a "
                "block of d_k consecutive columns: reshape the last axis to (h, d_k), not "
                "(d_k, h)",
                where=where,
            )
        )
    if np.array_equal(got, expected[..., ::-1]):
        raise Failed(
            _(
                "{where} the columns of each head are in reverse order: head i is "
                "columns i*d_k, i*d_k + 1, ..., (i+1)*d_k - 1 of each token, in this order",
                where=where,
            )
        )
    if np.array_equal(got, np.broadcast_to(expected[..., :1], expected.shape)):
        raise Failed(
            _(
                "{where} every column of a head repeats its first column: keep all d_k "
                "columns of the block, X[..., i*d_k:(i+1)*d_k]",
                where=where,
            )
        )
    if not coded:
        _values_changed(got, expected, where, (_("batch"), _("head"), _("token"), _("column")))
    difference = _first_difference(got, expected, _("batch, head, token, column"), coded)
    raise Failed(
        _(
            "{where} {difference}. Head i of token t is row t's columns i*d_k .. "
            "(i+1)*d_k - 1, in order",
            where=where,
            difference=difference,
        )
    )


@check(forbids=("attnkit.core.merge_heads", "attnkit.modules.MultiHeadAttention.merge_heads"))
def check_merge_heads(fn):
    """Check ``fn(Y)``: ``(b, h, n, d_v) -> (b, n, h*d_v)``, the heads side by side per token.

    The worked inputs' entries encode where they belong in the answer, as for
    :func:`check_split_heads`; a fresh random input of random sizes follows."""
    for dtype in dtypes():
        for (b, n, h, d_v), coded in _sizes():
            expected = _tokens(b, n, h, d_v, dtype, coded)  # (b, n, h*d_v)
            Y = expected.reshape(b, n, h, d_v).transpose(0, 2, 1, 3).copy()  # (b, h, n, d_v)
            answer = call(fn, Y)
            got = as_array(answer, _("the result"))
            where = _("for Y of shape (b, h, n, d_v) = {shape}", shape=Y.shape)
            if got.shape != expected.shape:
                if got.shape == (b, n, h, d_v) and n != h:
                    raise Failed(
                        _(
                            "{where} you returned shape {shape} = (b, n, h, d_v): "
                            "the axes are in the right order, now concatenate the heads "
                            "by reshaping the last two axes into one of width h*d_v",
                            where=where,
                            shape=got.shape,
                        )
                    )
                raise wrong_shape(
                    where, _("the result"), f"(b, n, h*d_v) = {expected.shape}", got.shape
                )
            if not np.array_equal(got, expected):
                _wrong_merge(got, expected, Y, b, n, h, d_v, where, coded)
            keeps_dtype(answer, dtype, _("the result"))
    return _(
        "correct: each token's row is its heads' outputs side by side, head 0 first, each "
        "head's columns in order, real entries unchanged, float32 staying float32"
    )


def _wrong_merge(got, expected, Y, b, n, h, d_v, where, coded):
    """Say what is wrong with a merge of the right shape and the wrong entries."""
    if np.array_equal(got, Y.reshape(b, n, h * d_v)):
        raise Failed(
            _(
                "{where} you reshaped straight to (b, n, h*d_v) without moving the head "
                "axis back: the shape is right but each row now holds pieces of several "
                "tokens of one head, so tokens are mixed. Swap axes 1 and 2 first (in "
                "PyTorch: .transpose(1, 2).contiguous() before .view), then reshape",
                where=where,
            )
        )
    if np.array_equal(got, Y.transpose(0, 2, 3, 1).reshape(b, n, h * d_v)):
        raise Failed(
            _(
                "{where} the heads' columns are interleaved. Concatenation puts head 0's "
                "d_v columns first, then head 1's, ...: reshape from (b, n, h, d_v), not "
                "from (b, n, d_v, h)",
                where=where,
            )
        )
    if np.array_equal(got, Y[..., ::-1].transpose(0, 2, 1, 3).reshape(b, n, h * d_v)):
        raise Failed(
            _(
                "{where} the columns of each head are reversed: head i's d_v columns "
                "go in their own order, from column 0 to d_v - 1",
                where=where,
            )
        )
    if np.array_equal(got, Y[:, ::-1].transpose(0, 2, 1, 3).reshape(b, n, h * d_v)):
        raise Failed(
            _(
                "{where} the heads are in reverse order: head 0's columns come first",
                where=where,
            )
        )
    if not coded:
        _values_changed(got, expected, where, (_("batch"), _("token"), _("column")))
    difference = _first_difference(got, expected, _("batch, token, column"), coded)
    raise Failed(
        _(
            "{where} {difference}. Row t is [head 0's row t | head 1's row t | ...]",
            where=where,
            difference=difference,
        )
    )
