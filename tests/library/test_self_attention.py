"""Chapter 2's helpers: self-attention, masks, masked softmax, and their exercise checks."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from attnkit.core import (
    attention,
    causal_mask,
    combine_masks,
    masked_softmax,
    padding_mask,
    self_attention,
    sliding_window_mask,
    softmax,
)
from attnkit.exercises.self_attention import (
    check_causal_mask,
    check_masked_self_attention,
    check_padding_mask,
)
from tests.support.answers.self_attention import (
    causal_reference,
    masked_by_multiplying_the_overall_maximum,
    padding_mask_by_loops,
    padding_mask_reference,
)


def token_matrices(min_n=1, max_n=6, d=3):
    """(n, d) matrices of moderate entries: n tokens of width d."""
    return st.integers(min_n, max_n).flatmap(
        lambda n: hnp.arrays(np.float64, (n, d), elements=st.floats(-3, 3, allow_nan=False))
    )


# --- masks --------------------------------------------------------------------


def test_causal_mask_allows_the_past_and_the_token_itself():
    assert np.array_equal(
        causal_mask(3), [[True, False, False], [True, True, False], [True, True, True]]
    )
    assert causal_mask(1).tolist() == [[True]]
    assert causal_mask(4).dtype == np.bool_


@pytest.mark.parametrize("n", [0, -2, 2.5, True, "3"])
def test_causal_mask_refuses_bad_sizes(n):
    with pytest.raises(ValueError, match="positive integer"):
        causal_mask(n)


def test_padding_mask_hides_padded_keys_from_every_query():
    mask = padding_mask([2, 4], 4)
    assert mask.shape == (2, 1, 4) and mask.dtype == np.bool_
    assert mask[:, 0].tolist() == [[True, True, False, False], [True, True, True, True]]


@pytest.mark.parametrize(
    "lengths, match",
    [
        ([0, 2], "between 1 and n"),
        ([5], "between 1 and n"),
        ([[1, 2]], "1-D array of integers"),
        ([1.5], "1-D array of integers"),
    ],
)
def test_padding_mask_refuses_bad_lengths(lengths, match):
    with pytest.raises(ValueError, match=match):
        padding_mask(lengths, 4)


def test_combine_masks_is_a_broadcast_and():
    both = combine_masks(causal_mask(3), padding_mask([2], 3))
    assert both.shape == (1, 3, 3)
    assert both[0].tolist() == [[True, False, False], [True, True, False], [True, True, False]]
    assert np.array_equal(combine_masks(causal_mask(3)), causal_mask(3))


def test_combine_masks_names_shapes_that_do_not_broadcast():
    with pytest.raises(ValueError, match=r"\(3, 3\), \(2, 1, 4\)"):
        combine_masks(causal_mask(3), padding_mask([2, 4], 4))
    with pytest.raises(ValueError, match="at least one"):
        combine_masks()


def test_masks_must_be_boolean():
    with pytest.raises(TypeError, match=r"boolean.*True = may attend.*mask == 1"):
        combine_masks(np.tril(np.ones((3, 3))))
    with pytest.raises(TypeError, match="additive mask"):
        masked_softmax(np.zeros((2, 2)), np.zeros((2, 2)))


# --- masked softmax ------------------------------------------------------------


def test_masked_softmax_without_mask_is_softmax():
    x = np.array([[1.0, 2.0, 0.0], [3.0, -1.0, 0.5]])
    assert np.allclose(masked_softmax(x), softmax(x))


def test_masked_keys_get_exactly_zero_and_the_rest_is_renormalised():
    x = np.array([[1.0, 2.0, 3.0], [0.0, 5.0, 1.0]])
    mask = np.array([[True, False, True], [True, True, True]])
    w = masked_softmax(x, mask)
    assert w[0, 1] == 0.0
    assert np.allclose(w[0, [0, 2]], softmax(np.array([1.0, 3.0])))
    assert np.allclose(w[1], softmax(x[1]))


def test_a_mask_row_broadcasts_over_the_queries():
    x = np.arange(6.0).reshape(2, 3)
    w = masked_softmax(x, np.array([True, True, False]))  # (3,) -> (2, 3)
    assert np.all(w[:, 2] == 0) and np.allclose(w.sum(axis=1), 1)


def test_an_all_masked_row_raises_and_names_it():
    mask = np.array([[True, False], [False, False], [False, False]])
    with pytest.raises(ValueError, match=r"row\(s\) \[1, 2\].*all_masked='zero'"):
        masked_softmax(np.zeros((3, 2)), mask)


def test_an_all_masked_row_in_a_batch_is_named_by_batch_and_row():
    mask = combine_masks(causal_mask(3), np.array([False, True, True]))  # row 0 sees nothing
    with pytest.raises(ValueError, match=r"\[0\]"):
        masked_softmax(np.zeros((3, 3)), mask)
    batch = np.ones((2, 3, 3), dtype=bool)
    batch[1, 2] = False
    with pytest.raises(ValueError, match=r"\[\(1, 2\)\].*\(batch\.\.\., row\)"):
        masked_softmax(np.zeros((2, 3, 3)), batch)


def test_all_masked_zero_opt_in_gives_a_zero_row_and_no_nan():
    mask = np.array([[True, False], [False, False]])
    w = masked_softmax(np.array([[1.0, 2.0], [3.0, 4.0]]), mask, all_masked="zero")
    assert w.tolist() == [[1.0, 0.0], [0.0, 0.0]]
    out, w = self_attention(np.eye(2), mask=mask, all_masked="zero")
    assert np.array_equal(out[1], [0.0, 0.0]) and np.all(np.isfinite(out))


def test_all_masked_choice_is_checked():
    with pytest.raises(ValueError, match="'raise' or 'zero'"):
        masked_softmax(np.zeros((1, 2)), np.ones((1, 2), dtype=bool), all_masked="nan")


def test_mask_shape_mismatch_names_both_shapes():
    with pytest.raises(ValueError, match=r"mask of shape \(3, 3\).*scores of shape \(2, 3\)"):
        masked_softmax(np.zeros((2, 3)), causal_mask(3))
    with pytest.raises(ValueError, match=r"mask of shape \(2, 2, 3\).*scores of shape \(2, 3\)"):
        masked_softmax(np.zeros((2, 3)), np.ones((2, 2, 3), dtype=bool))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_masked_softmax_keeps_dtype(dtype):
    w = masked_softmax(np.array([[1.0, 2.0], [3.0, 4.0]], dtype=dtype), causal_mask(2))
    assert w.dtype == dtype
    out, w = self_attention(np.ones((3, 2), dtype=dtype), mask=causal_mask(3))
    assert out.dtype == dtype and w.dtype == dtype


def test_huge_scores_with_a_mask_stay_finite():
    x = np.array([[1e4, -1e4, 5e3]], dtype=np.float32)
    w = masked_softmax(x, np.array([[False, True, True]]))
    assert np.allclose(w, [[0.0, 0.0, 1.0]])


# --- self-attention ------------------------------------------------------------


def test_self_attention_is_softmax_of_x_x_transpose_times_x():
    X = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    S = X @ X.T
    A = np.exp(S) / np.exp(S).sum(axis=1, keepdims=True)
    out, w = self_attention(X)
    assert np.allclose(w, A) and np.allclose(out, A @ X)
    assert np.allclose(out, attention(X, X)[0])  # chapter 1 with one source
    assert np.allclose(self_attention(X, scale=0.5)[1], softmax(S * 0.5))


def test_self_attention_on_a_padded_batch():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(2, 4, 3))  # 2 sequences, n = 4, d = 3
    mask = padding_mask([2, 4], 4)  # (2, 1, 4)
    out, w = self_attention(X, mask=mask)
    assert out.shape == (2, 4, 3) and w.shape == (2, 4, 4)
    assert np.all(w[0, :, 2:] == 0)  # padded keys get no weight
    # the real tokens of sequence 0 are unaffected by what the padding holds
    X2 = X.copy()
    X2[0, 2:] = 99.0
    assert np.allclose(self_attention(X2, mask=mask)[0][0, :2], out[0, :2])
    assert np.allclose(out[0, :2], self_attention(X[0, :2])[0])


def test_self_attention_refuses_vectors():
    with pytest.raises(ValueError, match=r"X must have shape \(n, d\).*\(3,\)"):
        self_attention(np.ones(3))


@given(token_matrices(min_n=2), st.randoms(use_true_random=False))
def test_permutation_equivariance_without_positions(X, random):
    perm = list(range(len(X)))
    random.shuffle(perm)
    P = np.eye(len(X))[perm]  # (n, n) permutation matrix
    out, w = self_attention(X)
    out_p, w_p = self_attention(P @ X)
    assert np.allclose(out_p, P @ out)  # SA(PX) = P SA(X)
    assert np.allclose(w_p, P @ w @ P.T)  # rows and columns move together


@given(token_matrices(min_n=2), st.randoms(use_true_random=False), st.data())
def test_permutation_equivariance_with_a_permuted_mask(X, random, data):
    n = len(X)
    mask = data.draw(hnp.arrays(np.bool_, (n, n)))
    mask[np.arange(n), np.arange(n)] = True  # every row keeps itself
    perm = list(range(n))
    random.shuffle(perm)
    P = np.eye(n)[perm]
    out, _ = self_attention(X, mask=mask)
    out_p, _ = self_attention(P @ X, mask=mask[np.ix_(perm, perm)])  # P M P^T
    assert np.allclose(out_p, P @ out)


def test_positions_break_permutation_equivariance():
    X = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    E = np.array([[0.5, 0.0], [0.0, 0.0], [0.0, -0.5]])  # one vector per position
    P = np.eye(3)[[2, 0, 1]]
    with_pos, _ = self_attention(P @ X + E)
    assert not np.allclose(with_pos, P @ self_attention(X + E)[0])


@given(token_matrices(), st.data())
def test_no_weight_on_masked_keys(X, data):
    n = len(X)
    mask = data.draw(hnp.arrays(np.bool_, (n, n)))
    rows = np.arange(n)
    mask[rows, data.draw(hnp.arrays(np.int64, n, elements=st.integers(0, n - 1)))] = True
    out, w = self_attention(X, mask=mask)
    assert np.all(w[~mask] == 0)
    assert np.allclose(w.sum(axis=1), 1.0)
    # query i's output ignores the keys hidden from it: changing them changes nothing
    for i in range(n):
        hidden = ~mask[i]
        hidden[i] = False  # row i is also query i itself
        changed = X.copy()
        changed[hidden] = 7.0
        assert np.allclose(self_attention(changed, mask=mask)[0][i], out[i])


@given(token_matrices(min_n=2), st.data())
def test_no_leakage_past_a_causal_mask(X, data):
    n = len(X)
    t = data.draw(st.integers(1, n - 1))  # tokens t.. are the "future"
    new_future = data.draw(
        hnp.arrays(np.float64, (n - t, X.shape[1]), elements=st.floats(-3, 3, allow_nan=False))
    )
    changed = X.copy()
    changed[t:] = new_future
    mask = causal_mask(n)
    out, _ = self_attention(X, mask=mask)
    out_changed, _ = self_attention(changed, mask=mask)
    assert np.array_equal(out[:t], out_changed[:t])  # earlier outputs: bit for bit


def test_a_causal_mask_breaks_permutation_equivariance():
    X = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    P = np.eye(3)[[2, 0, 1]]
    mask = causal_mask(3)
    assert not np.allclose(self_attention(P @ X, mask=mask)[0], P @ self_attention(X, mask=mask)[0])


# --- exercise checks ------------------------------------------------------------


@pytest.mark.parametrize(
    "fn",
    [
        causal_reference,
        lambda n: np.arange(n)[None, :] <= np.arange(n)[:, None],
        lambda n: np.tri(n, dtype=bool),
    ],
)
def test_check_causal_mask_accepts_correct_answers(fn):
    result = check_causal_mask(fn)
    assert result.passed, result.message


@pytest.mark.parametrize(
    "wrong, advice",
    [
        (lambda n: np.triu(np.ones((n, n), dtype=bool)), "use np.tril, not np.triu"),
        (lambda n: np.triu(np.ones((n, n), dtype=bool), k=1), "flip the mask"),
        (lambda n: np.tril(np.ones((n, n), dtype=bool), k=-1), "the diagonal is False"),
        (lambda n: np.tril(np.ones((n, n), dtype=bool), k=1), "also allows key i + 1"),
        (lambda n: np.tril(np.ones((n, n))), "return booleans"),
        (lambda n: np.tri(n), "return booleans"),
        (lambda n: np.ones((n, n), dtype=bool), "every key is allowed"),
        (lambda n: np.tril(np.ones((n, n + 1), dtype=bool)), "shape (4, 4)"),
        (lambda n: np.tril(np.ones((4, 4), dtype=bool)), "for n = 1 you returned shape (4, 4)"),
        (lambda n: np.eye(n, dtype=bool), "entry [1, 0] should be True"),
        (lambda n: 1 / 0, "raised ZeroDivisionError"),
        (causal_mask, "uses `attnkit.core.causal_mask`"),
        (lambda n: sliding_window_mask(n, n), "uses `attnkit.core.sliding_window_mask`"),
        (lambda n: causal_reference(n).tolist(), "should be a NumPy array, got a list"),
        (
            lambda n: np.arange(n, dtype=np.int8)[None, :] <= np.arange(n, dtype=np.int8)[:, None],
            "wraps round past 127",
        ),
    ],
)
def test_check_causal_mask_rejects_typical_mistakes(wrong, advice):
    result = check_causal_mask(wrong)
    assert not result
    assert advice in result.message, result.message


def softmax_allowing_minus_inf(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def masked_self_attention_reference(X, mask):
    scores = np.where(mask, X @ X.T, -np.inf)  # (n, n)
    weights = softmax_allowing_minus_inf(scores)
    return weights @ X, weights


def masked_with_a_large_negative_number(X, mask):
    weights = softmax_allowing_minus_inf(np.where(mask, X @ X.T, -1e9))
    return weights @ X, weights


def masked_with_the_smallest_float(X, mask):
    """Exact when every row keeps a key: no allowed score lies below the dtype's minimum."""
    weights = softmax_allowing_minus_inf(np.where(mask, X @ X.T, np.finfo(X.dtype).min))
    return weights @ X, weights


def masked_weights(X, mask, scale=1.0):
    """The right weights, without attnkit's masked_softmax, which the check forbids."""
    return softmax_allowing_minus_inf(np.where(mask, X @ X.T * scale, -np.inf))


def masked_by_multiplying_allowed_maximum(X, mask):
    scores = X @ X.T
    top = np.where(mask, scores, -np.inf).max(axis=-1, keepdims=True)
    e = np.exp(np.where(mask, scores - top, -np.inf))
    weights = e / e.sum(axis=-1, keepdims=True)
    return weights @ X, weights


def masked_in_place(X, mask):
    X *= 1.0
    X[0, 0] += 1.0
    return masked_self_attention_reference(X, mask)


def _weights_then(fn):
    return lambda X, mask: (fn(X, mask) @ X, fn(X, mask))


@pytest.mark.parametrize(
    "fn",
    [
        masked_self_attention_reference,
        masked_with_the_smallest_float,
        masked_by_multiplying_allowed_maximum,
    ],
)
def test_check_masked_self_attention_accepts_correct_answers_in_float32_and_float64(fn):
    result = check_masked_self_attention(fn)
    assert result.passed, result.message


@pytest.mark.parametrize(
    "wrong, advice",
    [
        (_weights_then(lambda X, m: softmax_allowing_minus_inf(X @ X.T)), "ignore the mask"),
        (
            _weights_then(lambda X, m: softmax_allowing_minus_inf(X @ X.T) * m),
            "without renormalising",
        ),
        (
            _weights_then(lambda X, m: softmax_allowing_minus_inf(np.where(m, X @ X.T, 0.0))),
            "exp(0) = 1",
        ),
        (
            _weights_then(lambda X, m: softmax_allowing_minus_inf(np.where(~m, X @ X.T, -np.inf))),
            "True means",
        ),
        (
            _weights_then(lambda X, m: softmax(np.where(m, X @ X.T, -np.inf))),
            "uses `attnkit.core.softmax`",
        ),
        (_weights_then(lambda X, m: masked_softmax(X @ X.T, m)), "uses `attnkit.core.masked"),
        (lambda X, m: self_attention(X, mask=m), "uses `attnkit.core.self_attention`"),
        (masked_with_a_large_negative_number, "did you give the masked keys one finite score"),
        (
            _weights_then(lambda X, m: masked_weights(X, m, 1 / np.sqrt(X.shape[1]))),
            "sqrt(d)",
        ),
        (_weights_then(lambda X, m: masked_weights(X, m).T), "transposed"),
        (
            _weights_then(lambda X, m: softmax_allowing_minus_inf(np.where(m.T, X @ X.T, -np.inf))),
            "mask[i, j], not mask[j, i]",
        ),
        (
            _weights_then(
                lambda X, m: softmax_allowing_minus_inf(np.where(m, X @ X.T, -np.inf).T).T
            ),
            "normalise each row",
        ),
        (
            lambda X, m: (masked_weights(X, m).T @ X, masked_weights(X, m)),
            "the output is not weights @ X",
        ),
        (
            lambda X, m: (masked_weights(X, m)[:, :, None] * X, masked_weights(X, m)),
            "output has shape (4, 4, 3)",
        ),
        (masked_weights, "return a pair"),
        (
            _weights_then(
                lambda X, m: (
                    np.exp(np.where(m, X @ X.T, -np.inf))
                    / np.exp(np.where(m, X @ X.T, -np.inf)).sum(axis=-1, keepdims=True)
                )
            ),
            "np.exp(1000) overflows",
        ),
        (masked_by_multiplying_the_overall_maximum, "largest score the row may attend to"),
        (
            lambda X, m: masked_self_attention_reference(X.astype(float), m),
            "for float32 inputs you returned the weights in float64",
        ),
        (masked_in_place, "changed its input array in place"),
    ],
)
def test_check_masked_self_attention_rejects_typical_mistakes(wrong, advice):
    with np.errstate(all="ignore"):
        result = check_masked_self_attention(wrong)
    assert not result
    assert advice in result.message, result.message


def right_padded(lengths, n, left=False):
    return (np.arange(n) < lengths[:, None])[:, None, :]


def padding_mask_by_flipping(lengths, n, left=False):
    right = right_padded(lengths, n)
    return right[..., ::-1] if left else right


@pytest.mark.parametrize(
    "fn", [padding_mask_reference, padding_mask_by_loops, padding_mask_by_flipping]
)
def test_check_padding_mask_accepts_correct_answers(fn):
    result = check_padding_mask(fn)
    assert result.passed, result.message


def test_check_padding_mask_agrees_with_the_helper_on_right_padding():
    lengths = np.array([3, 5, 1])
    assert np.array_equal(padding_mask_reference(lengths, 5), padding_mask(lengths, 5))


@pytest.mark.parametrize(
    "wrong, advice",
    [
        (
            lambda lengths, n, left=False: right_padded(lengths, n)[:, 0],
            "= (b, n). Add a middle axis",
        ),
        (
            lambda lengths, n, left=False: right_padded(lengths, n).transpose(0, 2, 1),
            "which hides query rows",
        ),
        (
            lambda lengths, n, left=False: (
                right_padded(lengths, n).transpose(0, 2, 1) & right_padded(lengths, n)
            ),
            "you hid the padded queries (rows) as well",
        ),
        (
            lambda lengths, n, left=False: np.broadcast_to(
                right_padded(lengths, n), (len(lengths), n, n)
            ),
            "should have shape (b, 1, n) = (3, 1, 5)",
        ),
        (lambda lengths, n, left=False: ~right_padded(lengths, n), "flip it"),
        (lambda lengths, n, left=False: right_padded(lengths, n).astype(int), "return booleans"),
        (
            lambda lengths, n, left=False: (np.arange(n) <= lengths[:, None])[:, None, :],
            "j < lengths[s], not j <= lengths[s]",
        ),
        (right_padded, "with left=True the padding comes first"),
        (
            lambda lengths, n, left=False: (
                (np.arange(n) >= lengths[:, None])[:, None, :] if left else right_padded(lengths, n)
            ),
            "j >= n - lengths[s]",
        ),
        (lambda lengths, n: right_padded(lengths, n), "raised TypeError"),
        (
            lambda lengths, n, left=False: padding_mask_reference(lengths[::-1].copy(), n, left),
            "entry [0, 0, 1] should be True",
        ),
        (
            lambda lengths, n, left=False: padding_mask(lengths, n),
            "uses `attnkit.core.padding_mask`",
        ),
        (
            lambda lengths, n, left=False: padding_mask_reference(
                lengths, int(lengths.max()), left
            ),
            "your mask has 4 positions, the longest sequence's length",
        ),
        (
            lambda lengths, n, left=False: padding_mask_reference(
                lengths.astype(np.uint8), n, left
            ),
            "small integer type",
        ),
        (
            lambda lengths, n, left=False: padding_mask_reference(lengths, n, left).tolist(),
            "should be a NumPy array, got a list",
        ),
    ],
)
def test_check_padding_mask_rejects_typical_mistakes(wrong, advice):
    result = check_padding_mask(wrong)
    assert not result
    assert advice in result.message, result.message
