"""Each check accepts the reference solution and rejects typical wrong answers with the right advice."""

import numpy as np
import pytest

from attnkit.core import softmax
from attnkit.exercises import check_single_query_attention, check_softmax


# --- check_softmax ----------------------------------------------------------

def softmax_reference(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def softmax_naive(x):
    return np.exp(x) / np.exp(x).sum(axis=-1, keepdims=True)


def softmax_over_columns(x):
    return softmax(x, axis=0)


def softmax_whole_array(x):
    e = np.exp(x - x.max())
    return e / e.sum()


def softmax_no_normalisation(x):
    return np.exp(x - x.max(axis=-1, keepdims=True))


def softmax_in_place(x):
    x -= x.max(axis=-1, keepdims=True)
    np.exp(x, out=x)
    x /= x.sum(axis=-1, keepdims=True)
    return x


def softmax_flattened(x):
    return softmax(x).ravel()


def softmax_unfinished(x):
    raise NotImplementedError("replace this line with your code")


def test_check_softmax_accepts_the_reference():
    result = check_softmax(softmax_reference)
    assert result.passed, result.message
    assert repr(result).startswith("✓")


@pytest.mark.parametrize("wrong, advice", [
    (softmax_naive, "Subtract each row's maximum"),
    (softmax_over_columns, "normalised the columns"),
    (softmax_whole_array, "whole matrix sums to 1"),
    (softmax_no_normalisation, "divide by the sum"),
    (softmax_in_place, "changed its input array in place"),
    (softmax_flattened, "returned shape (6,)"),
    (softmax_unfinished, "raised NotImplementedError"),
    (lambda x: "not an array", "should be a NumPy array"),
    (lambda x: -softmax(x), "negative"),
])
def test_check_softmax_rejects_typical_mistakes(wrong, advice):
    result = check_softmax(wrong)
    assert not result.passed
    assert advice in result.message
    assert repr(result).startswith("✗")


# --- check_single_query_attention ---------------------------------------------

def attend_reference(z, H):
    a = softmax(H @ z)
    return a @ H, a


@pytest.mark.parametrize("wrong, advice", [
    (lambda z, H: (H @ z @ H, H @ z), "equals the scores"),
    (lambda z, H: (softmax(H @ z)[:, None] * H, softmax(H @ z)), "did not add the rows up"),
    (lambda z, H: (H.T @ z, softmax(H.T @ z)), "raised ValueError"),
    (lambda z, H: softmax(H @ z) @ H, "return a pair"),
    (lambda z, H: (softmax(H @ z) @ H, softmax(H @ z)[:2]), "one weight per encoder token"),
    (lambda z, H: (softmax(H @ z) @ H, softmax(-(H @ z))), "should be softmax(H z)"),
    (lambda z, H: (np.zeros(3), softmax(H @ z)), "z_hat should be a @ H"),
    (lambda z, H: (H[0], np.full(4, 0.3)), "not non-negative with sum 1"),
])
def test_check_attention_rejects_typical_mistakes(wrong, advice):
    result = check_single_query_attention(wrong)
    assert not result.passed
    assert advice in result.message


def test_check_attention_accepts_the_reference():
    result = check_single_query_attention(attend_reference)
    assert result.passed, result.message
