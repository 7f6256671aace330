"""Checks for the coding exercises: they say whether an answer is right, and why not.

Each ``check_*`` runs the student's function on several inputs, edge cases
included, and returns a :class:`CheckResult` whose text names the first problem
found in plain words. A function that raises is reported, never re-raised, so an
unfinished exercise does not stop the notebook.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .core import attention, softmax

__all__ = ["CheckResult", "check_softmax", "check_single_query_attention"]


@dataclass(frozen=True)
class CheckResult:
    passed: bool
    message: str

    def __repr__(self) -> str:
        return ("✓ " if self.passed else "✗ ") + self.message


class _Failed(Exception):
    """Raised inside a check to stop at the first problem."""


def _call(fn, *args):
    """Call the student's function on copies, reporting exceptions and mutation."""
    copies = [np.array(a, copy=True) for a in args]
    try:
        result = fn(*copies)
    except Exception as exc:  # any error in student code becomes a message
        shapes = ", ".join(str(np.shape(a)) for a in args)
        raise _Failed(
            f"your function raised {type(exc).__name__}: {exc} "
            f"(it was called with arguments of shape {shapes})"
        ) from None
    for original, copy in zip(args, copies):
        if not np.array_equal(original, copy):
            raise _Failed("your function changed its input array in place; compute a new array instead")
    return result


def _as_array(result, what: str) -> np.ndarray:
    try:
        arr = np.asarray(result, dtype=float)
    except (TypeError, ValueError):
        raise _Failed(f"{what} should be a NumPy array, got {type(result).__name__}") from None
    return arr


def _run(check) -> CheckResult:
    try:
        message = check()
    except _Failed as failure:
        return CheckResult(False, str(failure))
    return CheckResult(True, message)


def check_softmax(fn) -> CheckResult:
    """Check ``fn(x)``: a softmax over the last axis of a 1-D or 2-D array."""

    def check():
        vector = np.array([1.0, 2.0, 3.0])
        got = _as_array(_call(fn, vector), "the result")
        if got.shape != vector.shape:
            raise _Failed(f"for an input of shape {vector.shape} you returned shape {got.shape}; "
                          "softmax returns one weight per input entry")
        if np.any(got < 0):
            raise _Failed(f"some weights are negative ({got}); exp() makes every term positive")
        if not np.isclose(got.sum(), 1.0):
            raise _Failed(f"the weights sum to {got.sum():.4f}, not 1: divide by the sum of the exponentials")
        if not np.allclose(got, softmax(vector)):
            raise _Failed(f"softmax([1, 2, 3]) should be {np.round(softmax(vector), 4)}, you returned {np.round(got, 4)}")

        matrix = np.array([[1.0, 2.0, 3.0], [0.0, 0.0, 0.0]])
        got = _as_array(_call(fn, matrix), "the result")
        if got.shape != matrix.shape:
            raise _Failed(f"for an input of shape {matrix.shape} you returned shape {got.shape}; "
                          "keep the shape and normalise each row")
        if np.allclose(got, softmax(matrix, axis=0)):
            raise _Failed("you normalised the columns (axis 0); each row must sum to 1, "
                          "so sum along the last axis with keepdims=True")
        if np.isclose(got.sum(), 1.0):
            raise _Failed("the whole matrix sums to 1, but each row should: "
                          "sum along the last axis with keepdims=True, not over all entries")
        if not np.allclose(got.sum(axis=-1), 1.0):
            raise _Failed(f"the rows sum to {np.round(got.sum(axis=-1), 4)}, not 1")
        if not np.allclose(got, softmax(matrix)):
            raise _Failed(f"for [[1, 2, 3], [0, 0, 0]] the rows should be {np.round(softmax(matrix), 4).tolist()}, "
                          f"you returned {np.round(got, 4).tolist()}")

        large = np.array([[1000.0, 1001.0, 1002.0], [-1000.0, -1001.0, -1002.0]])
        with np.errstate(all="ignore"):
            got = _as_array(_call(fn, large), "the result")
        if not np.all(np.isfinite(got)):
            raise _Failed("for logits near ±1000 you returned NaN or inf: exp(1000) overflows and "
                          "exp(-1000) underflows to 0. Subtract each row's maximum first; "
                          "softmax does not change when a constant is added to a row")
        if not np.allclose(got, softmax(large)):
            raise _Failed(f"for logits near ±1000 the rows should be {np.round(softmax(large), 4).tolist()}, "
                          f"you returned {np.round(got, 4).tolist()}")
        return "correct: non-negative weights, every row sums to 1, and large logits stay finite"

    return _run(check)


def check_single_query_attention(fn) -> CheckResult:
    """Check ``fn(z, H) -> (z_hat, a)``: one query ``z`` (d,) over the rows of ``H`` (I, d)."""

    def check():
        rng = np.random.default_rng(0)
        H = rng.normal(size=(4, 3))  # I = 4 tokens, d = 3: I != d exposes transposes
        z = rng.normal(size=3)
        expected_out, expected_a = attention(z, H)
        result = _call(fn, z, H)
        if not (isinstance(result, tuple) and len(result) == 2):
            raise _Failed("return a pair (z_hat, a): the new vector and the attention weights")
        z_hat = _as_array(result[0], "z_hat")
        a = _as_array(result[1], "a")
        if a.shape != (4,):
            raise _Failed(f"a has shape {a.shape}; with H of shape (I, d) = (4, 3) there is one weight "
                          "per encoder token, shape (I,) = (4,)")
        if np.allclose(a, H @ z):
            raise _Failed("a equals the scores H z: apply softmax to them to get weights")
        if not np.isclose(a.sum(), 1.0) or np.any(a < 0):
            raise _Failed(f"the weights {np.round(a, 3)} are not non-negative with sum 1")
        if not np.allclose(a, expected_a):
            raise _Failed(f"the weights should be softmax(H z) = {np.round(expected_a, 4)}, "
                          f"you returned {np.round(a, 4)}")
        if z_hat.shape == H.shape:
            raise _Failed("z_hat has shape (I, d): you scaled each row of H by its weight but did "
                          "not add the rows up; z_hat = a @ H has shape (d,)")
        if z_hat.shape != (3,):
            raise _Failed(f"z_hat has shape {z_hat.shape}; it is a weighted sum of the rows of H, "
                          "shape (d,) = (3,)")
        if not np.allclose(z_hat, expected_out):
            raise _Failed(f"z_hat should be a @ H = {np.round(expected_out, 4)}, you returned {np.round(z_hat, 4)}")
        return "correct: the weights are softmax(H z) and z_hat is their weighted sum of the rows of H"

    return _run(check)
