"""How names follow each kind of operation, and the mistakes each kind can show.

Every function takes the named axes of its operands (tuples of :class:`~.axes.Axis`) and what
the library computed, and returns the result's axes and the flags raised, so that NumPy and
PyTorch, whose calls are read apart, name and judge alike.
"""

from __future__ import annotations

import math
from dataclasses import replace

from .axes import KEY_MARK, TOKENS, Axis, Names, broadcast, reshaped, shown
from .flags import Flag

SCALE_TOLERANCE = 1e-5
# The reductions NumPy and PyTorch both name so; each library's reader adds its own.
REDUCTIONS = {
    "sum", "mean", "max", "amax", "min", "amin", "std", "var", "prod",
    "any", "all", "argmax", "argmin", "nansum",
}  # fmt: skip


def reshape(names: Names, axes: tuple, shape: tuple) -> tuple[tuple, list]:
    out, mixed = reshaped(names, axes, shape)
    flags = [
        Flag("mixed", {"axes": tuple(dict.fromkeys(a.shown() for a in group))}) for group in mixed
    ]
    for axis in (a for a in out if a not in axes):  # an axis this reshape merged
        for name, want in names.composites.items():
            factors = axis.factors
            if len(factors) > 1 and factors != want and sorted(factors) == sorted(want):
                flags.append(
                    Flag(
                        "merge_order",
                        {
                            "axes": factors,
                            "got": axis.name,
                            "name": name,
                            "want": "·".join(want),
                        },
                    )
                )
    return out, flags


def permute(axes: tuple, order: list) -> tuple[tuple, list]:
    return tuple(axes[i] for i in order), []


def reduce(axes: tuple, kept: list, keepdims: bool) -> tuple[tuple, list]:
    """A reduction over the axes not in ``kept`` (their positions); with ``keepdims`` a reduced
    axis stays, of size 1. A normalising one (keepdims) along a table's non-key axis is flagged."""
    reduced = [i for i in range(len(axes)) if i not in kept]
    out = tuple(
        axes[i] if i in kept else Axis("1", 1) for i in range(len(axes)) if keepdims or i in kept
    )
    flags = _normalised_along(axes, reduced) if keepdims else []
    return out, flags


def softmax(axes: tuple, axis: int) -> tuple[tuple, list]:
    return axes, _normalised_along(axes, [axis % len(axes)])


def _normalised_along(axes: tuple, reduced: list) -> list:
    keys = [a for a in axes if a.role == "key"]
    if (
        not keys
        or len(reduced) != 1
        or axes[reduced[0]].role == "key"
        or axes[reduced[0]].size == 1
    ):
        return []
    return [Flag("softmax_axis", {"axis": axes[reduced[0]].shown(), "keys": keys[0].shown()})]


def matmul(names: Names, a: tuple, b: tuple, shape: tuple) -> tuple[tuple, list]:
    """``a @ b`` (NumPy's and PyTorch's matmul, vectors included)."""
    vector_a, vector_b = len(a) == 1, len(b) == 1
    a2 = (Axis("1", 1), *a) if vector_a else a
    b2 = (*b, Axis("1", 1)) if vector_b else b
    flags = _contracted([(a2[-1], b2[-2])])
    batch = broadcast(
        names, [a2[:-2], b2[:-2]], tuple(shape[: len(shape) - 2 + vector_a + vector_b])
    )
    rows, columns = _scores(a2[-2], b2[-1], a2[-1])
    out = (*batch, *(() if vector_a else (rows,)), *(() if vector_b else (columns,)))
    return out, flags


def linear(names: Names, x: tuple, weight: tuple, shape: tuple) -> tuple[tuple, list]:
    """``F.linear``: ``x @ weightᵀ``."""
    return matmul(names, x, tuple(reversed(weight)) if len(weight) == 2 else weight, shape)


def einsum(names: Names, subscripts: str, operands: list, shape: tuple) -> tuple[tuple, list]:
    subscripts = subscripts.replace(" ", "")
    if "." in subscripts:
        return names.guess(shape), []
    inputs, _arrow, output = subscripts.partition("->")
    terms = inputs.split(",")
    if not _arrow:
        letters = "".join(terms)
        output = "".join(sorted(c for c in set(letters) if letters.count(c) == 1))
    seen: dict = {}
    for term, axes in zip(terms, operands):
        for letter, axis in zip(term, axes):
            seen.setdefault(letter, []).append(axis)
    pairs = [
        (found[0], other)
        for letter, found in seen.items()
        if letter not in output
        for other in found[1:]
    ]
    flags = _contracted(pairs)
    out = [seen[letter][0] if letter in seen else Axis("1", 1) for letter in output]
    if len(terms) == 2 and len(output) >= 2:
        only = [c for c in output if (c in terms[0]) != (c in terms[1])]
        summed = [c for c in seen if c not in output]
        if len(summed) == 1 and len(only) >= 2 and only[-2] in terms[0] and only[-1] in terms[1]:
            i, j = output.index(only[-2]), output.index(only[-1])
            out[i], out[j] = _scores(out[i], out[j], seen[summed[0]][0])
    return tuple(out), flags


def _scores(rows: Axis, columns: Axis, over: Axis) -> tuple[Axis, Axis]:
    """Rows and columns of a product: queries and keys when two token axes meet over a feature
    axis (the keys' copy of a repeated name is marked, ``T'``)."""
    if rows.base in TOKENS and columns.base in TOKENS and over.base not in TOKENS:
        name = columns.base + KEY_MARK if columns.base == rows.base else columns.name
        return replace(rows, role="query"), replace(columns, name=name, role="key", over=over)
    return rows, columns


def _contracted(pairs: list) -> list:
    flags = []
    for left, right in pairs:
        if left.mixed or right.mixed:
            continue  # the reshape that mixed them was flagged
        if not left.same_as(right) or "query" in (left.role, right.role):
            flags.append(
                Flag("contraction", {"left": _role_named(left), "right": _role_named(right)})
            )
    return flags


def _role_named(axis: Axis) -> str:
    return f"{axis.shown()} (the queries' axis)" if axis.role == "query" else axis.shown()


def elementwise(
    names: Names, operands: list, shape: tuple, *, op: str = "", scalars=(), masks=()
) -> tuple[tuple, list]:
    """An elementwise operation with broadcasting. ``operands`` are the arrays' axes,
    ``scalars`` the plain numbers among the operands (with ``op``, ``multiply`` or
    ``divide``, and whether they divide), ``masks`` the positions of boolean operands."""
    unmasked = [a for i, a in enumerate(operands) if i not in masks]
    out = broadcast(names, unmasked + [operands[i] for i in masks], shape)
    flags = []
    for index in masks:
        flags += _mask_alignment(operands[index], broadcast(names, unmasked, shape))
    for value, divides in scalars:
        flags += _scaled(names, operands, value, divides, op)
    return out, flags


def _mask_alignment(mask: tuple, out: tuple) -> list:
    """A mask against the table of scores ``out``: it must vary along the keys."""
    keys = [p for p, a in enumerate(out) if a.role == "key"]
    queries = [p for p, a in enumerate(out) if a.role == "query"]
    if not keys or not queries:
        return []
    k, q = keys[0] - len(out), queries[0] - len(out)  # from the right, as broadcasting aligns
    along_k = mask[k] if len(mask) >= -k else Axis("1", 1)
    along_q = mask[q] if len(mask) >= -q else Axis("1", 1)
    crossed = along_k.role == "query" or along_q.role == "key"
    if (along_k.size == 1 and along_q.size > 1) or crossed:
        lined_up = (Axis("1", 1),) * max(0, len(out) - len(mask)) + mask
        fields = {"mask": shown(lined_up), "scores": shown(out), "keys": out[k].shown()}
        return [Flag("mask_axis", fields)]
    return []


def _scaled(names: Names, operands: list, value: float, divides: bool, op: str) -> list:
    arrays = [a for a in operands if a]
    if (
        len(arrays) != 1
        or op not in ("multiply", "divide")
        or not math.isfinite(value)
        or value <= 0
    ):
        return []
    axes = arrays[0]
    factor = 1 / value if divides else value
    keys = [a for a in axes if a.role == "key" and a.over is not None]
    want = keys[0].over if keys else axes[-1]
    if not keys and want.base in TOKENS:
        return []  # not a table of scores, nor vectors whose width is known
    for name, size in names.sizes.items():
        root = math.sqrt(size)
        if math.isclose(factor, 1 / root, rel_tol=SCALE_TOLERANCE) and size != want.size:
            return [Flag("scale", {"got": f"1/√{name}", "want": want.shown()})]
        if keys and math.isclose(factor, root, rel_tol=SCALE_TOLERANCE):
            return [Flag("scale", {"got": f"√{name}", "want": want.shown()})]
    return []


def index(names: Names, axes: tuple, key, shape: tuple) -> tuple[tuple, list]:
    """Basic indexing: integers drop an axis, slices keep it (renamed by its new size), None
    adds one; anything else (arrays, booleans) names the result by its sizes."""
    key = key if isinstance(key, tuple) else (key,)
    if any(not (k is None or k is Ellipsis or isinstance(k, (int, slice))) for k in key):
        return names.guess(shape), []
    explicit = sum(1 for k in key if k is not None and k is not Ellipsis)
    expanded: list = []
    for k in key:
        expanded += [slice(None)] * (len(axes) - explicit) if k is Ellipsis else [k]
    if Ellipsis not in key:
        expanded += [slice(None)] * (len(axes) - explicit)
    out, position, sizes = [], 0, iter(shape)
    for k in expanded:
        if k is None:
            out.append(Axis("1", next(sizes)))
        elif isinstance(k, int):
            position += 1
        else:
            size, axis = next(sizes), axes[position]
            out.append(axis if size == axis.size else replace(names.by_size(size), role=axis.role))
            position += 1
    return tuple(out), []


def concatenate(
    names: Names, operands: list, axis: int, shape: tuple, *, stacked: bool
) -> tuple[tuple, list]:
    first = list(operands[0])
    axis = axis % len(shape)
    if stacked:
        first.insert(axis, names.by_size(shape[axis]))
    else:
        first[axis] = names.by_size(shape[axis])
    return tuple(first), []


def named(names: Names, axes: tuple, shape: tuple) -> tuple:
    """``axes`` if they still fit ``shape`` (an operation that kept the shape), else a guess."""
    return axes if tuple(a.size for a in axes) == tuple(shape) else names.guess(shape)
