"""Checks for the coding exercises of ``chapters/attention.md``."""

import numpy as np

from ..core import attention, softmax
from .harness import Failed, as_array, call, check, close, shown

__all__ = ["check_softmax", "check_single_query_attention"]


@check
def check_softmax(fn):
    """Check ``fn(x)``: a softmax over the last axis of a 1-D or 2-D array."""
    vector = np.array([1.0, 2.0, 3.0])
    got = as_array(call(fn, vector), "the result")
    if got.shape != vector.shape:
        raise Failed(f"for an input of shape {vector.shape} you returned shape {got.shape}; "
                     "softmax returns one weight per input entry")
    if np.any(got < 0):
        raise Failed(f"some weights are negative ({got}); exp() makes every term positive")
    if not close(got.sum(), 1.0):
        raise Failed(f"the weights sum to {shown(1.0, got.sum())[1]}, not 1: divide by the sum "
                     "of the exponentials")
    if not close(got, softmax(vector)):
        raise Failed("softmax([1, 2, 3]) should be {}, you returned {}".format(
            *shown(softmax(vector), got)))

    matrix = np.array([[1.0, 2.0, 3.0], [0.0, 0.0, 0.0]])
    got = as_array(call(fn, matrix), "the result")
    if got.shape != matrix.shape:
        raise Failed(f"for an input of shape {matrix.shape} you returned shape {got.shape}; "
                     "keep the shape and normalise each row")
    if close(got, softmax(matrix, axis=0)):
        raise Failed("you normalised the columns (axis 0); each row must sum to 1, "
                     "so sum along the last axis with keepdims=True")
    if close(got.sum(), 1.0):
        raise Failed("the whole matrix sums to 1, but each row should: "
                     "sum along the last axis with keepdims=True, not over all entries")
    if not close(got.sum(axis=-1), 1.0):
        raise Failed(f"the rows sum to {shown(1.0, got.sum(axis=-1))[1]}, not 1")
    if not close(got, softmax(matrix)):
        raise Failed("for [[1, 2, 3], [0, 0, 0]] the rows should be {}, you returned {}".format(
            *shown(softmax(matrix), got)))

    large = np.array([[1000.0, 1001.0, 1002.0], [-1000.0, -1001.0, -1002.0]])
    with np.errstate(all="ignore"):
        got = as_array(call(fn, large), "the result")
    if not np.all(np.isfinite(got)):
        raise Failed("for logits near ±1000 you returned NaN or inf: exp(1000) overflows and "
                     "exp(-1000) underflows to 0. Subtract each row's maximum first; "
                     "softmax does not change when a constant is added to a row")
    if not close(got, softmax(large)):
        raise Failed("for logits near ±1000 the rows should be {}, you returned {}".format(
            *shown(softmax(large), got)))
    return "correct: non-negative weights, every row sums to 1, and large logits stay finite"


@check
def check_single_query_attention(fn):
    """Check ``fn(z, H) -> (z_hat, a)``: one query ``z`` (d,) over the rows of ``H`` (I, d)."""
    rng = np.random.default_rng(0)
    H = rng.normal(size=(4, 3))  # I = 4 tokens, d = 3: I != d exposes transposes
    z = rng.normal(size=3)
    expected_out, expected_a = attention(z, H)
    result = call(fn, z, H)
    if not (isinstance(result, tuple) and len(result) == 2):
        raise Failed("return a pair (z_hat, a): the new vector and the attention weights")
    z_hat = as_array(result[0], "z_hat")
    a = as_array(result[1], "a")
    if a.shape != (4,):
        raise Failed(f"a has shape {a.shape}; with H of shape (I, d) = (4, 3) there is one weight "
                     "per encoder token, shape (I,) = (4,)")
    if close(a, H @ z):
        raise Failed("a equals the scores H z: apply softmax to them to get weights")
    if np.any(a < 0) or not close(a.sum(), 1.0):
        raise Failed(f"the weights {shown(expected_a, a)[1]} are not non-negative with "
                     f"sum 1 (they sum to {shown(1.0, a.sum())[1]})")
    if not close(a, expected_a):
        raise Failed("the weights should be softmax(H z) = {}, you returned {}".format(
            *shown(expected_a, a)))
    if z_hat.shape == H.shape:
        raise Failed("z_hat has shape (I, d): you scaled each row of H by its weight but did "
                     "not add the rows up; z_hat = a @ H has shape (d,)")
    if z_hat.shape != (3,):
        raise Failed(f"z_hat has shape {z_hat.shape}; it is a weighted sum of the rows of H, "
                     "shape (d,) = (3,)")
    if not close(z_hat, expected_out):
        raise Failed("z_hat should be a @ H = {}, you returned {}".format(
            *shown(expected_out, z_hat)))
    return "correct: the weights are softmax(H z) and z_hat is their weighted sum of the rows of H"
