"""Chapter 1's helpers: softmax and attention in NumPy, and the chapter's exercise checks."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from attnkit.core import attention, softmax, softmax_matrix_form
from attnkit.exercises.attention import check_single_query_attention, check_softmax
from tests.support.answers.attention import (
    attend_by_hand,
    attend_reference,
    softmax_log_sum_exp,
    softmax_row_by_row,
    softmax_whole_array,
)

FLOATS = st.sampled_from([np.float32, np.float64])


def logit_matrices(max_abs=30.0):
    """(m, n) matrices of moderate logits, where the naive formula cannot overflow."""
    return hnp.arrays(
        np.float64,
        hnp.array_shapes(min_dims=2, max_dims=2, min_side=1, max_side=6),
        elements=st.floats(-max_abs, max_abs, allow_nan=False),
    )


# --- softmax: worked values -------------------------------------------------


def test_softmax_of_known_vector():
    e = np.exp([1.0, 2.0, 3.0])
    assert np.allclose(softmax([1.0, 2.0, 3.0]), e / e.sum())
    assert np.allclose(softmax([0.0, 0.0]), [0.5, 0.5])


def test_softmax_axis_is_respected():
    x = np.array([[1.0, 2.0], [3.0, 5.0]])
    assert np.allclose(softmax(x, axis=-1).sum(axis=1), 1.0)
    assert np.allclose(softmax(x, axis=0).sum(axis=0), 1.0)
    assert not np.allclose(softmax(x, axis=0), softmax(x, axis=1))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_softmax_keeps_float_dtype(dtype):
    assert softmax(np.array([1.0, 2.0], dtype=dtype)).dtype == dtype
    assert softmax_matrix_form(np.array([1.0, 2.0], dtype=dtype)).dtype == dtype


def test_integer_input_becomes_float64():
    assert softmax(np.array([1, 2, 3])).dtype == np.float64


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("fn", [softmax, softmax_matrix_form])
def test_non_finite_logits_raise(fn, bad):
    with pytest.raises(ValueError, match="NaN or infinite"):
        fn(np.array([0.0, bad]))


@pytest.mark.parametrize("fn", [softmax, softmax_matrix_form])
def test_bad_axis_and_empty_input_raise(fn):
    with pytest.raises(ValueError, match="out of range"):
        fn(np.zeros((2, 3)), axis=2)
    with pytest.raises(ValueError, match="empty"):
        fn(np.zeros((2, 0)), axis=-1)
    with pytest.raises(ValueError, match="scalar"):
        fn(np.float64(1.0))


def test_softmax_rejects_non_float_types():
    with pytest.raises(TypeError, match="float32 or float64"):
        softmax(np.array([1.0, 2.0], dtype=np.float16))
    with pytest.raises(TypeError):
        softmax(np.array(["a", "b"]))


def test_naive_form_raises_on_overflow_instead_of_nan():
    with pytest.raises(FloatingPointError, match="overflowed"):
        softmax_matrix_form(np.array([1000.0, 1001.0]))
    with pytest.raises(FloatingPointError, match="overflowed"):
        softmax_matrix_form(np.array([100.0, 0.0], dtype=np.float32))


def test_naive_form_raises_on_underflow_instead_of_nan():
    with pytest.raises(FloatingPointError, match="underflowed"):
        softmax_matrix_form(np.array([-1000.0, -1001.0]))


def test_matrix_form_default_axis_is_the_articles_columns():
    x = np.array([[1.0, 2.0, 0.5], [3.0, -1.0, 0.0]])
    assert np.allclose(softmax_matrix_form(x), softmax(x, axis=0))
    assert np.allclose(softmax_matrix_form(x, axis=-1), softmax(x, axis=-1))


# --- softmax: properties ----------------------------------------------------


@given(logit_matrices(max_abs=1e4))
def test_rows_sum_to_one_and_weights_lie_in_unit_interval(x):
    w = softmax(x, axis=-1)
    assert np.all(np.isfinite(w))
    assert np.all((w >= 0) & (w <= 1))
    assert np.allclose(w.sum(axis=-1), 1.0)


@given(logit_matrices(), st.floats(-1e3, 1e3, allow_nan=False))
def test_invariant_to_adding_a_constant_to_a_row(x, c):
    shifted = x.copy()
    shifted[0] += c
    assert np.allclose(softmax(shifted), softmax(x), atol=1e-12)


@given(logit_matrices(), st.sampled_from([0, -1]))
def test_the_two_forms_agree_where_the_naive_one_does_not_overflow(x, axis):
    assert np.allclose(softmax_matrix_form(x, axis=axis), softmax(x, axis=axis), atol=1e-12)


@given(
    hnp.arrays(np.float64, st.integers(1, 8), elements=st.sampled_from([-1e4, 1e4, 0.0, 1.0])),
    FLOATS,
)
def test_stable_softmax_is_finite_for_logits_of_1e4(x, dtype):
    w = softmax(x.astype(dtype))
    assert w.dtype == dtype
    assert np.all(np.isfinite(w))
    assert np.isclose(w.sum(), 1.0, atol=1e-6)


def test_equal_extreme_logits_give_uniform_weights():
    assert np.allclose(softmax(np.full(4, -1e4)), 0.25)
    assert np.allclose(softmax(np.array([1e4, -1e4])), [1.0, 0.0])


# --- attention --------------------------------------------------------------


def test_single_query_attention_by_hand():
    H = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])  # (3, 2)
    z = np.array([2.0, 0.0])  # (2,)
    scores = np.array([2.0, 0.0, 2.0])
    a = np.exp(scores) / np.exp(scores).sum()
    out, weights = attention(z, H)
    assert weights.shape == (3,) and out.shape == (2,)
    assert np.allclose(weights, a)
    assert np.allclose(out, a[0] * H[0] + a[1] * H[1] + a[2] * H[2])


def test_matrix_of_queries_equals_one_query_at_a_time():
    rng = np.random.default_rng(0)
    Q, K, V = rng.normal(size=(4, 3)), rng.normal(size=(5, 3)), rng.normal(size=(5, 2))
    out, weights = attention(Q, K, V)
    assert out.shape == (4, 2) and weights.shape == (4, 5)
    for j in range(4):
        out_j, weights_j = attention(Q[j], K, V)
        assert np.allclose(out[j], out_j) and np.allclose(weights[j], weights_j)


def test_values_default_to_keys():
    rng = np.random.default_rng(1)
    Q, H = rng.normal(size=(2, 3)), rng.normal(size=(4, 3))
    assert np.allclose(attention(Q, H)[0], attention(Q, H, H)[0])


def test_temperature_divides_the_scores():
    rng = np.random.default_rng(2)
    q, K = rng.normal(size=3), rng.normal(size=(4, 3))
    _, w = attention(q, K, temperature=0.5)
    assert np.allclose(w, softmax(K @ q / 0.5))
    _, sharp = attention(q, K, temperature=1e-3)
    assert np.allclose(sharp, np.eye(4)[np.argmax(K @ q)])


@pytest.mark.parametrize("tau", [0.0, -1.0, np.inf, np.nan])
def test_bad_temperature_raises(tau):
    with pytest.raises(ValueError, match="temperature"):
        attention(np.ones(2), np.ones((3, 2)), temperature=tau)


def test_shape_mismatch_names_both_shapes():
    with pytest.raises(ValueError, match=r"\(2, 4\).*\(3, 5\)"):
        attention(np.ones((2, 4)), np.ones((3, 5)))
    with pytest.raises(ValueError, match=r"\(3, 4\).*\(2, 4\)"):
        attention(np.ones(4), np.ones((3, 4)), np.ones((2, 4)))
    with pytest.raises(ValueError, match=r"\(2, 2, 2\)"):
        attention(np.ones((2, 2, 2)), np.ones((3, 2)))
    with pytest.raises(ValueError, match=r"keys must have shape \(n, d\), got \(3,\)"):
        attention(np.ones(3), np.ones(3))


def test_nan_input_raises():
    K = np.ones((3, 2))
    K[1, 0] = np.nan
    with pytest.raises(ValueError, match=r"keys of shape \(3, 2\) contains NaN"):
        attention(np.ones(2), K)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_attention_keeps_dtype(dtype):
    rng = np.random.default_rng(3)
    Q, K = rng.normal(size=(2, 3)).astype(dtype), rng.normal(size=(4, 3)).astype(dtype)
    out, w = attention(Q, K, temperature=0.7)
    assert out.dtype == dtype and w.dtype == dtype


def test_mixed_precision_promotes_to_float64():
    out, w = attention(np.ones(2, dtype=np.float32), np.ones((3, 2)))
    assert out.dtype == np.float64 and w.dtype == np.float64


def test_huge_scores_stay_finite():
    K = np.array([[100.0, 0.0], [0.0, 100.0]], dtype=np.float32)
    _out, w = attention(np.array([100.0, 99.0], dtype=np.float32), K)  # scores 1e4 apart
    assert np.all(np.isfinite(w)) and np.allclose(w, [1.0, 0.0])


@given(
    hnp.arrays(np.float64, (3, 4), elements=st.floats(-5, 5)),
    hnp.arrays(np.float64, (5, 4), elements=st.floats(-5, 5)),
)
def test_output_is_a_convex_combination_of_the_values(Q, K):
    out, w = attention(Q, K)
    assert np.allclose(w.sum(axis=1), 1.0)
    assert np.all(out <= K.max(axis=0) + 1e-9) and np.all(out >= K.min(axis=0) - 1e-9)


# --- check_softmax ----------------------------------------------------------


def softmax_reference(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def softmax_naive(x):
    return np.exp(x) / np.exp(x).sum(axis=-1, keepdims=True)


def softmax_shifted_by(shift):
    """A softmax that subtracts ``shift(x)`` instead of each row's maximum."""

    def fn(x):
        e = np.exp(x - shift(x))
        return e / e.sum(axis=-1, keepdims=True)

    return fn


def softmax_over_columns(x):
    return softmax_reference(x.T).T


def softmax_no_normalisation(x):
    return np.exp(x - x.max(axis=-1, keepdims=True))


def softmax_in_place(x):
    x -= x.max(axis=-1, keepdims=True)
    np.exp(x, out=x)
    x /= x.sum(axis=-1, keepdims=True)
    return x


def softmax_flattened(x):
    return softmax_reference(x).ravel()


def softmax_max_without_keepdims(x):
    e = np.exp(x - x.max(axis=-1))
    return e / e.sum(axis=-1, keepdims=True)


def softmax_sum_without_keepdims(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1)


def softmax_of_rows_only(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def softmax_in_float64(x):
    return softmax_reference(np.asarray(x, dtype=np.float64))


def softmax_clipped(x):
    return softmax_naive(np.clip(x, -500, 500))


def softmax_unfinished(x):
    raise NotImplementedError("replace this line with your code")


@pytest.mark.parametrize("fn", [softmax_reference, softmax_log_sum_exp, softmax_row_by_row])
def test_check_softmax_accepts_correct_answers_in_float32_and_float64(fn):
    result = check_softmax(fn)
    assert result.passed, result.message
    assert repr(result).startswith("✓")


@pytest.mark.parametrize(
    "wrong, advice",
    [
        (softmax_naive, "Subtract each row's maximum"),
        (
            softmax_shifted_by(lambda x: x.mean(axis=-1, keepdims=True)),
            "for the logits [1000.0, -1000.0, 0.0], you returned NaN",
        ),
        (
            softmax_shifted_by(lambda x: x.min(axis=-1, keepdims=True)),
            "for the logits [1000.0, -1000.0, 0.0], you returned NaN",
        ),
        (softmax_shifted_by(lambda x: x.max()), "for the logits [-1000.0, -1001.0, -1002.0]"),
        (softmax_shifted_by(lambda x: x.max(axis=0)), "Subtract each row's own maximum"),
        (softmax_clipped, "for logits near ±1000, the rows should be"),
        (softmax_over_columns, "normalised the columns"),
        (softmax_whole_array, "whole matrix sums to 1"),
        (softmax_no_normalisation, "divide by the sum"),
        (softmax_max_without_keepdims, "keepdims=True keeps it (m, 1)"),
        (softmax_sum_without_keepdims, "keepdims=True keeps it (m, 1)"),
        (softmax_of_rows_only, "raised AxisError"),
        (softmax_in_float64, "for float32 inputs you returned the result in float64"),
        (softmax_in_place, "changed its input array in place"),
        (softmax_flattened, "returned shape (6,)"),
        (softmax_unfinished, "raised NotImplementedError"),
        (lambda x: "not an array", "should be a NumPy array"),
        (lambda x: -softmax_reference(x), "negative"),
        (lambda x: softmax_reference(x).squeeze(), "softmax([7]) should be [1.0]"),
        (softmax, "uses `attnkit.core.softmax`"),
    ],
)
def test_check_softmax_rejects_typical_mistakes(wrong, advice):
    result = check_softmax(wrong)
    assert not result
    assert advice in result.message, result.message
    assert repr(result).startswith("✗")


# --- check_single_query_attention ---------------------------------------------


def naive_softmax(s):
    return np.exp(s) / np.exp(s).sum()


@pytest.mark.parametrize(
    "fn", [attend_reference, attend_by_hand, lambda z, H: (H.T @ softmax(H @ z), softmax(H @ z))]
)
def test_check_attention_accepts_correct_answers_in_float32_and_float64(fn):
    result = check_single_query_attention(fn)
    assert result.passed, result.message


@pytest.mark.parametrize(
    "wrong, advice",
    [
        (lambda z, H: (H @ z @ H, H @ z), "equals the scores"),
        (lambda z, H: (softmax(H @ z)[:, None] * H, softmax(H @ z)), "did not add the rows up"),
        (lambda z, H: (H.T @ z, softmax(H.T @ z)), "the weights should be softmax(H z)"),
        (lambda z, H: (H @ softmax(H @ z), softmax(H @ z)), "z_hat is H @ a"),
        (lambda z, H: softmax(H @ z) @ H, "return a pair"),
        (lambda z, H: (softmax(H @ z) @ H, softmax(H @ z)[:2]), "one weight per encoder token"),
        (lambda z, H: (softmax(H @ z) @ H, softmax(-(H @ z))), "should be softmax(H z)"),
        (lambda z, H: (np.zeros_like(z), softmax(H @ z)), "z_hat should be a @ H"),
        (
            lambda z, H: (H[0], np.full(len(H), 0.3, dtype=H.dtype)),
            "sum to 0.9: weights are non-negative and sum to 1",
        ),
        (
            lambda z, H: (softmax(H @ z / np.sqrt(len(z))) @ H, softmax(H @ z / len(z) ** 0.5)),
            "divided the scores by sqrt(d)",
        ),
        (
            lambda z, H: (naive_softmax(H @ z) @ H, naive_softmax(H @ z)),
            "use a softmax that subtracts the maximum",
        ),
        (
            lambda z, H: attend_reference(z.astype(float), H.astype(float)),
            "for float32 inputs you returned a in float64",
        ),
        (lambda z, H: attend_reference(z[:3], H[:3, :3]), "one weight per encoder token"),
    ],
)
def test_check_attention_rejects_typical_mistakes(wrong, advice):
    result = check_single_query_attention(wrong)
    assert not result
    assert advice in result.message, result.message
