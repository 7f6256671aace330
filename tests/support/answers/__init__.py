"""Right and wrong answers to every checked exercise: the scrutiny each check must stand.

For each check, the module of its chapter (``tests/support/answers/<chapter>.py``, named like
the chapter's checks) lists :class:`Answers`: the reference solution and the other correct ways
a student may write it (loops, ``einsum``, other valid shifts), which must all pass, and
wrong answers made from the reference, each of a :data:`FAMILIES` family, which must all be
rejected, with advice, in each float dtype on its own, on fresh random inputs.
:data:`REQUIRED` says which families each check must be tried with, so a new check gets the
same scrutiny by being listed there. ``tests/library/test_answers.py`` runs them all.

The functions below make wrong answers of the families that fit any exercise, from a right one.
"""

from __future__ import annotations

import importlib
import pkgutil
import zlib
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

FAMILIES = {
    "known": "a mistake students were seen to make",
    "structure": "right only on tidy inputs: it rounds, goes through an integer buffer or sorts",
    "shift": "a softmax shifted by something other than each row's own maximum",
    "clip": "scores flattened (clipped) instead of shifted",
    "mask": "a mask that is almost right",
    "stream": "streamed attention that does not stream",
    "size": "right only at the sizes of the example",
    "forbidden": "calls the helper the exercise asks the student to write",
    "type": "returns another type than the one asked for",
    "dtype": "computes or returns another dtype than the inputs'",
    "layout": "right only for arrays laid out in C order in memory",
    "alias": "hands every caller the same array, kept between calls",
    "batch": "right only for a batch of more than one, or while no axis has size 1",
    "rank": "right only for some of the ranks the statement allows",
}

# The families each check is tried with; a new chapter's module lists its own in REQUIRED
# (every_required() gathers them).
_NUMPY = {"known", "structure", "forbidden", "type", "dtype", "layout", "batch"}
_SOFTMAX = {"shift", "clip"}
REQUIRED = {
    "check_softmax": _NUMPY | _SOFTMAX | {"rank"},
    "check_single_query_attention": _NUMPY | _SOFTMAX,
    "check_causal_mask": {"known", "size", "forbidden", "type", "alias", "batch"},
    "check_masked_self_attention": _NUMPY | _SOFTMAX | {"mask"},
    "check_padding_mask": {"known", "mask", "size", "forbidden", "type", "alias", "batch"},
    "check_scaled_dot_product_attention": _NUMPY | _SOFTMAX,
    "check_mask_forms": {"known", "mask", "type", "dtype", "rank", "batch"},
    "check_split_heads": _NUMPY,
    "check_merge_heads": _NUMPY,
    "check_positional_encoding": {
        "known",
        "structure",
        "size",
        "forbidden",
        "type",
        "alias",
        "batch",
    },
    "check_rotary_embedding": _NUMPY | {"size"},
    "check_diagonal_mass": {"known", "structure", "size", "type", "dtype", "batch"},
    "check_online_softmax_attention": _NUMPY | _SOFTMAX | {"mask", "stream"},
    "check_grouped_query_attention": _NUMPY | _SOFTMAX,
    "check_merge_attention_states": _NUMPY | {"shift"},
    "check_causal_rope_attention": _NUMPY | _SOFTMAX | {"mask"},
    "check_top_k_probabilities": _NUMPY | _SOFTMAX | {"rank", "batch"},
    "check_induction_score": _NUMPY,
    "check_k_composition": {"known", "structure", "type"},
}

BOTH = (np.float64, np.float32)


@dataclass(frozen=True)
class Wrong:
    """A wrong answer: its family, the function, a phrase the check's message must contain
    (empty: any message), and the dtypes in each of which, alone, the check must reject it."""

    family: str
    fn: Callable
    advice: str = ""
    dtypes: tuple = BOTH

    def __post_init__(self):
        if self.family not in FAMILIES:
            raise ValueError(f"unknown family {self.family!r}; the families are {list(FAMILIES)}")


@dataclass(frozen=True)
class Answers:
    """A check, its right answers (the reference first) and its wrong ones, by name.

    ``float_inputs`` is False for a check whose inputs have no float dtype (sizes, lengths):
    it then runs once per seed instead of once per dtype.
    """

    check: Callable
    right: dict[str, Callable]
    wrong: dict[str, Wrong]
    float_inputs: bool = True

    @property
    def name(self) -> str:
        return self.check.__name__

    def families(self) -> set[str]:
        return {wrong.family for wrong in self.wrong.values()}


def _modules() -> list:
    """Every chapter's module of answers, in the modules' order."""
    names = sorted(m.name for m in pkgutil.iter_modules(__path__))
    return [importlib.import_module(f"{__name__}.{name}") for name in names]


def every_answers() -> list[Answers]:
    """The answers of every chapter's module, in the modules' order."""
    return [answers for module in _modules() for answers in module.ANSWERS]


def every_required() -> dict[str, set]:
    """:data:`REQUIRED` and the families that a chapter's module lists for its own checks."""
    required = dict(REQUIRED)
    for module in _modules():
        for name, families in getattr(module, "REQUIRED", {}).items():
            if name in required:
                raise ValueError(f"{module.__name__}: {name} is listed twice in REQUIRED")
            required[name] = set(families)
    return required


def every_graded_wrong() -> dict[str, str]:
    """The typical mistake that chapters' modules give for the graded class (GRADED_WRONG)."""
    return {
        label: code
        for module in _modules()
        for label, code in getattr(module, "GRADED_WRONG", {}).items()
    }


def seeds(*names: str, count: int = 1) -> list[int]:
    """Seeds that differ from test to test but not from run to run."""
    first = zlib.crc32("/".join(names).encode())
    return [first + k for k in range(count)]


# --- wrong answers of the families that fit any exercise -----------------------------------------


def each_array(change: Callable, result):
    """``result`` with ``change`` applied to every NumPy array in it (it, or a tuple of them)."""
    if isinstance(result, tuple):
        return tuple(each_array(change, part) for part in result)
    return change(result) if isinstance(result, np.ndarray) else result


def returning(change: Callable, fn: Callable) -> Callable:
    """``fn`` whose answer goes through ``change``, array by array."""

    def wrong(*args):
        return each_array(change, fn(*args))

    return wrong


def rounded(fn: Callable, decimals: int = 0) -> Callable:
    return returning(lambda a: np.round(a, decimals), fn)


def through_int_buffer(fn: Callable) -> Callable:
    """Stored in an integer array on the way out, as ``np.zeros(shape, dtype=int)`` does."""
    return returning(lambda a: a.astype(np.int64).astype(a.dtype) if a.dtype.kind == "f" else a, fn)


def sorted_along(fn: Callable, axis: int = -1) -> Callable:
    return returning(lambda a: np.sort(a, axis=axis) if a.ndim else a, fn)


def as_lists(fn: Callable) -> Callable:
    return returning(lambda a: a.tolist(), fn)


def as_tensors(fn: Callable) -> Callable:
    def to_tensor(a):
        import torch

        return torch.from_numpy(np.ascontiguousarray(a))

    return returning(to_tensor, fn)


def in_float64(fn: Callable) -> Callable:
    """Computed in float64 whatever the inputs: wrong for float32 inputs only."""

    def wrong(*args):
        return fn(*(a.astype(np.float64) if isinstance(a, np.ndarray) else a for a in args))

    return wrong


def in_memory_order(fn: Callable) -> Callable:
    """Each array argument read in the order its elements lie in memory, as code that walks
    an array's buffer does: right for C-ordered arrays only."""

    def wrong(*args):
        return fn(
            *(
                np.ravel(a, order="K").reshape(a.shape) if isinstance(a, np.ndarray) else a
                for a in args
            )
        )

    return wrong


def layout_family(reference: Callable) -> dict[str, Wrong]:
    return {"read in memory order": Wrong("layout", in_memory_order(reference))}


def cached(fn: Callable) -> Callable:
    """``fn`` whose answer is kept for its arguments and handed to every later caller."""
    kept = {}

    def wrong(*args):
        key = tuple(
            (a.dtype.str, a.shape, a.tobytes()) if isinstance(a, np.ndarray) else a for a in args
        )
        if key not in kept:
            kept[key] = fn(*args)
        return kept[key]

    return wrong


def squeezed_family(reference: Callable) -> dict[str, Wrong]:
    """The answer's size-1 axes dropped (``np.squeeze``): right only while every axis the
    contract lets be 1 (a batch of one, one head, one query, one key) is longer."""
    return {"squeezes size-1 axes": Wrong("batch", returning(np.squeeze, reference))}


def alias_family(reference: Callable) -> dict[str, Wrong]:
    return {"cached": Wrong("alias", cached(reference), "Return a new array on every call")}


def structure_family(reference: Callable, axes: tuple[int, ...] = (-1,)) -> dict[str, Wrong]:
    """The wrong answers that only tidy inputs let through."""
    wrong = {
        "rounded": Wrong("structure", rounded(reference)),
        "rounded to 2 decimals": Wrong("structure", rounded(reference, 2)),
        "through an integer buffer": Wrong("structure", through_int_buffer(reference)),
    }
    for axis in axes:
        wrong[f"sorted along axis {axis}"] = Wrong("structure", sorted_along(reference, axis))
    return wrong


def type_family(reference: Callable, numpy_only: bool = False) -> dict[str, Wrong]:
    """Lists and tensors for arrays; a NumPy-only check meets the tensors as PyTorch run."""
    tensors = "this exercise is NumPy only" if numpy_only else "got a torch tensor"
    return {
        "nested lists": Wrong("type", as_lists(reference), "should be a NumPy array"),
        "torch tensors": Wrong("type", as_tensors(reference), tensors),
    }


def dtype_family(reference: Callable) -> dict[str, Wrong]:
    return {
        "computed in float64": Wrong(
            "dtype", in_float64(reference), "float32 inputs", dtypes=(np.float32,)
        )
    }


# --- softmaxes shifted or flattened wrongly, to build into answers that contain a softmax ------


def shifted_softmax(shift: Callable) -> Callable:
    """A softmax along the last axis that subtracts ``shift(x)`` instead of each row's maximum."""

    def softmax(x):
        with np.errstate(all="ignore"):
            e = np.exp(x - shift(x))
            return e / e.sum(axis=-1, keepdims=True)

    return softmax


def clipped_softmax(limit: float) -> Callable:
    """A stable softmax of the scores clipped to ±``limit``: exp never overflows, but large
    scores that differ become equal."""

    def softmax(x):
        x = np.clip(x, -limit, limit)
        e = np.exp(x - x.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)

    return softmax


WRONG_SHIFTS = {
    "shifted by the row's first score": lambda x: x[..., :1],
    "shifted by the row's last score": lambda x: x[..., -1:],
    "shifted by one maximum for the whole array": lambda x: x.max(),
    "shifted by the maximum floored at 0": lambda x: np.maximum(x.max(axis=-1, keepdims=True), 0),
    "shifted by the row's mean": lambda x: x.mean(axis=-1, keepdims=True),
    "shifted by the row's minimum": lambda x: x.min(axis=-1, keepdims=True),
    "shifted by each column's maximum": lambda x: (
        x.max(axis=-2, keepdims=True) if x.ndim > 1 else x.max()
    ),
    "not shifted": lambda x: 0.0,
}


# Exact where the softmax runs over one vector: only a matrix has other rows and columns.
ACROSS_ROWS = {"shifted by one maximum for the whole array", "shifted by each column's maximum"}


def wrong_softmaxes(rows: bool = True) -> dict[str, tuple[str, Callable]]:
    """Every wrongly shifted or flattened softmax, by name: (family, softmax). Without
    ``rows`` (a softmax of one vector), those that are wrong only across rows are left out."""
    found = {
        name: ("shift", shifted_softmax(shift))
        for name, shift in WRONG_SHIFTS.items()
        if rows or name not in ACROSS_ROWS
    }
    for limit in (30.0, 80.0):
        found[f"scores clipped to ±{limit:g}"] = ("clip", clipped_softmax(limit))
    return found


def softmax_families(
    answer_with: Callable[[Callable], Callable], rows: bool = True
) -> dict[str, Wrong]:
    """The answer built by ``answer_with(softmax)`` with every wrong softmax in turn; ``rows``
    False where the answer takes the softmax of one vector only."""
    return {
        f"softmax {name}": Wrong(family, answer_with(softmax))
        for name, (family, softmax) in wrong_softmaxes(rows).items()
    }
