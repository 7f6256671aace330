"""The helper keeps its promises: each test here pins down one fault that was found and fixed."""

import ast
import re

import numpy as np
import pytest
import torch

from attnkit.core import (
    multi_head_attention,
    scaled_dot_product_attention,
    sinusoidal_positional_encoding,
    softmax,
    softmax_matrix_form,
)
from attnkit.exercises import (
    check_masked_self_attention,
    check_positional_encoding,
    check_scaled_dot_product_attention,
    check_single_query_attention,
    check_softmax,
)
from attnkit.modules import (
    EncoderLayer,
    MultiHeadAttention,
    ScaledDotProductAttention,
    SinusoidalPositionalEncoding,
)


def error_of(call):
    """The exception ``call()`` raises (the test fails if it raises none)."""
    with pytest.raises(Exception) as info:
        call()
    return info.value


# --- softmax_matrix_form: loud where the row sum overflows or vanishes ---------------------


@pytest.mark.parametrize(
    "logits, what",
    [
        (np.array([709.0, 709.0, 709.0]), "overflowed"),  # each exp finite, the sum is not
        (np.array([88.0, 88.0, 88.0], dtype=np.float32), "overflowed"),
        (np.array([-740.0, -740.0]), "underflowed"),  # a subnormal sum: 1/sum is inf
    ],
)
def test_matrix_form_raises_where_the_sum_overflows_or_vanishes(logits, what):
    with pytest.raises(FloatingPointError, match=what):
        softmax_matrix_form(logits)


# --- EncoderLayer.from_torch ----------------------------------------------------------------


def torch_layer(dtype=torch.float64, **kwargs):
    torch.manual_seed(0)
    return torch.nn.TransformerEncoderLayer(
        8, 2, dim_feedforward=16, batch_first=True, dtype=dtype, **kwargs
    )


def test_from_torch_copies_a_float64_layer_exactly():
    theirs = torch_layer(dropout=0.0)
    ours = EncoderLayer.from_torch(theirs)
    for name, value in ours.state_dict().items():
        assert value.dtype == torch.float64, name
    for name in ("linear1", "linear2", "norm1", "norm2"):
        for key, value in getattr(theirs, name).state_dict().items():
            assert torch.equal(getattr(ours, name).state_dict()[key], value), (name, key)
    x = torch.randn(2, 5, 8, dtype=torch.float64)
    assert torch.allclose(ours(x)[0], theirs(x), rtol=0, atol=1e-12)


def test_from_torch_copies_a_layer_without_biases():
    theirs = torch_layer(dropout=0.0, bias=False)
    ours = EncoderLayer.from_torch(theirs)
    assert all(not name.endswith("bias") for name, _ in ours.named_parameters())
    x = torch.randn(2, 5, 8, dtype=torch.float64)
    assert torch.allclose(ours(x)[0], theirs(x), rtol=0, atol=1e-12)


def test_training_mode_dropout_falls_where_torch_puts_it():
    theirs = torch_layer(dropout=0.3)
    ours = EncoderLayer.from_torch(theirs)
    x = torch.randn(3, 5, 8, dtype=torch.float64)
    torch.manual_seed(7)
    expected = theirs(x)
    torch.manual_seed(7)
    got, weights = ours(x)
    assert torch.allclose(got, expected, rtol=0, atol=1e-12)
    assert torch.allclose(weights.sum(-1), torch.ones(3, 2, 5, dtype=torch.float64))


# --- the exercise checks: tolerances follow the answer's dtype ------------------------------


def pe_in_float32(n, d):
    """A correct answer computed in float32 throughout."""
    pair = np.arange(d, dtype=np.float32) // 2
    angles = np.arange(n, dtype=np.float32)[:, None] / np.float32(10000) ** (2 * pair / d)
    return np.where(np.arange(d) % 2 == 0, np.sin(angles), np.cos(angles))


def own_softmax(x):
    """A softmax written out, as the exercise asks (attnkit's own is off limits there)."""
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def own_encoding(n, d):
    pair = np.arange(d) // 2
    angles = np.arange(n)[:, None] / 10000.0 ** (2 * pair / d)
    return np.where(np.arange(d) % 2 == 0, np.sin(angles), np.cos(angles))


def attend(z, H):
    weights = softmax(H @ z)
    return weights @ H, weights


def masked_attend(X, mask):
    scores = np.where(mask, X @ X.T, -np.inf)
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights = e / e.sum(axis=-1, keepdims=True)
    return weights @ X, weights


def sdpa(Q, K, V):
    weights = softmax(Q @ K.T / K.shape[-1] ** 0.5)
    return weights @ V, weights


def recording_dtypes(fn, seen):
    """``fn``, noting in ``seen`` the dtype of each float array it is given."""

    def recorded(*args):
        seen.update(a.dtype for a in args if isinstance(a, np.ndarray) and a.dtype.kind == "f")
        return fn(*args)

    return recorded


@pytest.mark.parametrize(
    "check, answer",
    [
        (check_softmax, own_softmax),
        (check_single_query_attention, attend),
        (check_masked_self_attention, masked_attend),
        (check_scaled_dot_product_attention, sdpa),
    ],
)
def test_checks_accept_answers_computed_in_float32_from_float32_inputs(check, answer):
    seen = set()
    result = check(recording_dtypes(answer, seen))
    assert result.passed, result.message
    assert seen == {np.dtype(np.float32), np.dtype(np.float64)}


def test_check_refuses_an_encoding_computed_in_float32_and_says_why():
    """Its sizes reach positions past 30000, whose angles float32 keeps to about 1e-3."""
    result = check_positional_encoding(pe_in_float32)
    assert not result.passed
    assert "return float64" in result.message and "float32 keeps the angle" in result.message


def nudged(fn, k=0):
    """``fn``'s float64 answer with its result ``k`` off by one part in a million."""

    def wrong(*args):
        result = fn(*args)
        if isinstance(result, tuple):
            return tuple(np.asarray(r) * (1 + 1e-6) if i == k else r for i, r in enumerate(result))
        return np.asarray(result) * (1 + 1e-6)

    return wrong


@pytest.mark.parametrize(
    "check, answer",
    [
        (check_positional_encoding, nudged(own_encoding)),
        (check_softmax, nudged(own_softmax)),
        (check_single_query_attention, nudged(attend, 1)),
        (check_single_query_attention, nudged(attend, 0)),
        (check_masked_self_attention, nudged(masked_attend, 1)),
        (check_scaled_dot_product_attention, nudged(sdpa, 1)),
    ],
)
def test_a_float64_answer_off_by_1e_6_is_refused_with_digits_that_differ(check, answer):
    result = check(answer)
    assert not result.passed
    quoted = re.search(r"should be (?:.* = )?(.+), you returned (.+)", result.message)
    if quoted is None:  # "... sum to X, not 1"
        quoted = re.search(r"sum to (\[[^]]*\]|[\d.]+)()", result.message)
    assert quoted, result.message
    first, second = (np.array(ast.literal_eval(text or "1")) for text in quoted.groups())
    assert not np.all(first == second), result.message


# --- the PyTorch half refuses what the NumPy half refuses, in the same words ---------------


def test_torch_modules_refuse_batch_shapes_that_do_not_broadcast_with_a_value_error():
    shapes = [(2, 3, 4), (3, 5, 4), (3, 5, 4)]
    np_error = error_of(lambda: scaled_dot_product_attention(*(np.ones(s) for s in shapes)))
    torch_error = error_of(lambda: ScaledDotProductAttention()(*(torch.ones(s) for s in shapes)))
    assert type(torch_error) is type(np_error) is ValueError
    assert str(torch_error) == str(np_error)
    with pytest.raises(ValueError, match=r"batch axes.*\(2, 3, 4\).*\(3, 5, 4\)"):
        MultiHeadAttention(4, 2)(torch.ones(2, 3, 4), torch.ones(3, 5, 4))


def test_zero_keys_are_refused_in_words_by_both_halves():
    q, k, v = (2, 4), (0, 4), (0, 3)
    np_error = error_of(lambda: scaled_dot_product_attention(np.ones(q), np.ones(k), np.ones(v)))
    torch_error = error_of(
        lambda: ScaledDotProductAttention()(torch.ones(q), torch.ones(k), torch.ones(v))
    )
    assert type(np_error) is ValueError and "keys of shape (0, 4) is empty" in str(np_error)
    assert type(torch_error) is ValueError and str(torch_error) == str(np_error)


# --- SinusoidalPositionalEncoding in float64 -------------------------------------------------


def test_positional_encoding_after_double_is_float64_accurate():
    module = SinusoidalPositionalEncoding(16, max_len=100).double()
    assert module.pe.dtype == torch.float64
    assert np.array_equal(module.pe.numpy(), sinusoidal_positional_encoding(100, 16))
    back = module.float()
    assert torch.equal(back.pe, torch.from_numpy(sinusoidal_positional_encoding(100, 16)).float())


# --- smaller faults ----------------------------------------------------------------------------


def test_numpy_integers_are_sizes_in_both_halves():
    assert MultiHeadAttention(np.int64(8), np.int64(2)).d_k == 4
    assert SinusoidalPositionalEncoding(np.int64(8), max_len=np.int32(4)).pe.shape == (4, 8)
    assert EncoderLayer(8, 2, np.int64(16)).linear1.out_features == 16
    X = np.ones((3, 4))
    assert multi_head_attention(X, X, *[np.eye(4)] * 4, np.int64(2))[1].shape == (2, 3, 3)


def test_a_numpy_boolean_mask_works_in_the_torch_modules():
    keep = np.tril(np.ones((3, 3), dtype=bool))
    x = torch.randn(2, 3, 4)
    out, _ = ScaledDotProductAttention()(x, x, x, keep)
    assert torch.equal(out, ScaledDotProductAttention()(x, x, x, torch.from_numpy(keep))[0])
    layer = MultiHeadAttention(4, 2)
    assert torch.equal(layer(x, mask=keep)[0], layer(x, mask=torch.from_numpy(keep))[0])
    np_error = error_of(
        lambda: scaled_dot_product_attention(
            x.numpy(), x.numpy(), x.numpy(), mask=keep.astype(float)
        )
    )
    torch_error = error_of(lambda: ScaledDotProductAttention()(x, x, x, keep.astype(float)))
    assert type(np_error) is type(torch_error) is TypeError
    assert str(np_error) == str(torch_error)


def nan_keys(shape):
    k = np.ones(shape)
    k[0, 0] = np.nan
    return k


HIDES_ROW_1 = np.array([[True, True, True], [False, False, False]])


@pytest.mark.parametrize(
    "q, k, v, mask",
    [
        (np.ones(4), np.ones((3, 4)), np.ones((3, 2)), None),  # wrong rank
        (np.ones((2, 4), dtype=complex), np.ones((3, 4)), np.ones((3, 2)), None),  # wrong dtype
        (np.ones((2, 4)), nan_keys((3, 4)), np.ones((3, 2)), None),  # NaN
        (np.ones((2, 4)), np.ones((3, 5)), np.ones((3, 2)), None),  # d_k differs
        (np.ones((0, 4)), np.ones((3, 4)), np.ones((3, 2)), None),  # no query
        (np.ones((2, 2, 4)), np.ones((3, 3, 4)), np.ones((3, 3, 2)), None),  # batch axes
        (np.ones((2, 4)), np.ones((3, 4)), np.ones((3, 2)), np.ones((2, 3))),  # not boolean
        (np.ones((2, 4)), np.ones((3, 4)), np.ones((3, 2)), np.ones((3, 3), bool)),  # does not fit
        (np.ones((2, 4)), np.ones((3, 4)), np.ones((3, 2)), HIDES_ROW_1),  # all masked
    ],
)
def test_both_halves_refuse_the_same_input_with_the_same_error(q, k, v, mask):
    np_error = error_of(lambda: scaled_dot_product_attention(q, k, v, mask=mask))
    torch_error = error_of(
        lambda: ScaledDotProductAttention()(
            torch.from_numpy(q), torch.from_numpy(k), torch.from_numpy(v), mask
        )
    )
    assert type(np_error) in (ValueError, TypeError)
    assert type(torch_error) is type(np_error) and str(torch_error) == str(np_error)
