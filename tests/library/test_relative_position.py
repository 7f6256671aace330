"""Chapter 5's relative schemes: rotary position embedding and ALiBi, in NumPy and PyTorch.

The NumPy functions are checked against the formulas written out (a 2 x 2 rotation matrix for
every pair, the paper's recipe for ALiBi's slopes, Meta's rule for Llama 3.1's frequencies), the
PyTorch modules against the NumPy functions and against torch's own complex multiplication and
``F.scaled_dot_product_attention``.
"""

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

from attnkit.core import causal_mask, masked_softmax, sinusoidal_positional_encoding
from attnkit.relative_position import (
    alibi_bias,
    alibi_slopes,
    apply_rotary,
    half_pairing_order,
    llama3_frequencies,
    rotary_frequencies,
)
from attnkit.relative_position_modules import ALiBiBias, RotaryPositionEmbedding


def rotated_by_the_formula(x, positions, pairing="adjacent", base=10000.0):
    """RoPE written out: for every row and every pair, the paper's 2 x 2 rotation matrix
    applied to the pair as a column vector."""
    x = np.asarray(x, dtype=np.float64)
    n, d = x.shape[-2:]
    out = x.copy()
    for p in range(n):
        for i in range(d // 2):
            theta = positions[p] * base ** (-2 * i / d)
            R = np.array([[math.cos(theta), -math.sin(theta)], [math.sin(theta), math.cos(theta)]])
            a, b = (2 * i, 2 * i + 1) if pairing == "adjacent" else (i, i + d // 2)
            pair = x[..., p, [a, b]]  # (..., 2)
            out[..., p, [a, b]] = (R @ pair[..., None])[..., 0]
    return out


def shift_blocks(k, d, base=10000.0):
    """Chapter 5's M_k: the block-diagonal (d, d) matrix with blocks [[c, -s], [s, c]]."""
    M = np.zeros((d, d))
    for i in range(d // 2):
        t = k * base ** (-2 * i / d)
        M[2 * i : 2 * i + 2, 2 * i : 2 * i + 2] = [
            [math.cos(t), -math.sin(t)],
            [math.sin(t), math.cos(t)],
        ]
    return M


# --- the NumPy functions against the formula -------------------------------------------------


@pytest.mark.parametrize("pairing", ["adjacent", "half"])
@pytest.mark.parametrize("d", [2, 4, 10, 64])
def test_both_pairings_equal_the_formula_written_out(pairing, d):
    rng = np.random.default_rng(d)
    x = rng.normal(size=(7, d))
    positions = np.array([0, 1, 5, 2, 300, 4095, 70000])
    got = apply_rotary(x, positions, pairing=pairing)
    assert got.shape == x.shape and got.dtype == np.float64
    # An angle of m radians is known to within an ulp of m, which the two ways of computing it
    # (and each machine's sine) spend differently: 1.5e-11 at m = 70000.
    angle_error = 4 * np.finfo(np.float64).eps * np.maximum(positions, 1)[:, None]
    error = np.abs(got - rotated_by_the_formula(x, positions, pairing))
    assert np.all(error <= 1e-15 + angle_error * np.abs(x).max()), error.max(axis=1)


def test_batch_axes_and_the_default_positions():
    rng = np.random.default_rng(1)
    x = rng.normal(size=(2, 3, 5, 8))  # (b, h, n, d)
    got = apply_rotary(x)
    assert got.shape == x.shape
    assert np.allclose(got, rotated_by_the_formula(x, np.arange(5)), atol=1e-12)
    assert np.array_equal(got[..., 0, :], x[..., 0, :])  # position 0: no turn


def test_adjacent_rotary_is_x_times_the_transposed_shift_matrix():
    rng = np.random.default_rng(2)
    x = rng.normal(size=(4, 8))
    positions = [3, 0, 11, 250]
    got = apply_rotary(x, positions)
    for p, m in enumerate(positions):
        assert np.allclose(got[p], x[p] @ shift_blocks(m, 8).T)


def test_the_frequencies_are_the_sinusoidal_encodings():
    for d in (2, 8, 128):
        omega = rotary_frequencies(d)
        assert omega.shape == (d // 2,) and omega[0] == 1.0
        pe = sinusoidal_positional_encoding(2, d)  # row 1 is sin(omega), cos(omega)
        assert np.allclose(np.arcsin(pe[1, 0::2]), np.minimum(omega, np.pi - omega))
    assert np.allclose(rotary_frequencies(4, base=100.0), [1.0, 0.1])


def test_turning_the_stamp_of_position_zero_gives_the_stamp_of_minus_p():
    # e_0 = [0, 1, 0, 1, ...]; e_0 M_p^T = e_0 M_{-p} = (sin(-w p), cos(-w p)) per pair
    d, positions = 12, np.arange(9)
    e0 = np.tile([0.0, 1.0], d // 2)
    got = apply_rotary(np.tile(e0, (9, 1)), positions)
    stamps = sinusoidal_positional_encoding(9, d)
    assert np.allclose(got[:, 0::2], -stamps[:, 0::2]) and np.allclose(
        got[:, 1::2], stamps[:, 1::2]
    )


def test_float32_keeps_its_dtype_and_far_positions_are_accurate():
    rng = np.random.default_rng(3)
    x = rng.normal(size=(3, 128))
    positions = np.array([1, 65537, 131071])
    exact = apply_rotary(x, positions)
    got = apply_rotary(x.astype(np.float32), positions)
    assert got.dtype == np.float32
    assert np.abs(got - exact).max() < 1e-5  # angles in float64, then rounded once
    # angles computed in float32 instead would be off by up to about 0.01 rad out there
    omega32 = rotary_frequencies(128).astype(np.float32)
    angles32 = positions.astype(np.float32)[:, None] * omega32
    error = np.abs(angles32.astype(np.float64) - positions[:, None] * rotary_frequencies(128))
    assert error.max() > 1e-3


def test_real_positions_give_position_interpolation():
    rng = np.random.default_rng(4)
    x = rng.normal(size=(5, 16))
    positions = np.array([0, 8, 16, 100, 4000])
    squeezed = apply_rotary(x, positions / 4)  # positions m / s
    slower = apply_rotary(x, positions, frequencies=rotary_frequencies(16) / 4)  # omega / s
    assert np.allclose(squeezed, slower)


def test_a_rotation_keeps_every_pair_s_length():
    rng = np.random.default_rng(5)
    x = rng.normal(size=(6, 10))
    for pairing, (a, b) in (
        ("adjacent", (slice(0, None, 2), slice(1, None, 2))),
        ("half", (slice(0, 5), slice(5, None))),
    ):
        got = apply_rotary(x, np.arange(6) * 37, pairing=pairing)
        assert np.allclose(got[:, a] ** 2 + got[:, b] ** 2, x[:, a] ** 2 + x[:, b] ** 2)


# --- the score depends on the offset only (hypothesis) ----------------------------------------

POSITION = st.integers(0, 5000)


@settings(max_examples=60, deadline=None)
@given(
    st.sampled_from(["adjacent", "half"]),
    st.integers(1, 16).map(lambda h: 2 * h),
    POSITION,
    POSITION,
    st.integers(-5000, 5000),
    st.integers(0, 2**32 - 1),
)
def test_the_score_depends_only_on_the_offset(pairing, d, m, n, shift, seed):
    rng = np.random.default_rng(seed)
    q, k = rng.normal(size=(2, 1, d))  # (1, d) each
    score = (apply_rotary(q, [m], pairing=pairing) @ apply_rotary(k, [n], pairing=pairing).T)[0, 0]
    moved = (
        apply_rotary(q, [m + shift], pairing=pairing)
        @ apply_rotary(k, [n + shift], pairing=pairing).T
    )[0, 0]
    assert math.isclose(score, moved, rel_tol=1e-9, abs_tol=1e-9)
    if pairing == "adjacent":  # q M_{n-m} k^T, chapter 5's shift matrix
        assert math.isclose(
            score, (q @ shift_blocks(n - m, d) @ k.T)[0, 0], rel_tol=1e-9, abs_tol=1e-9
        )


# --- the two layouts differ by an order of the columns ----------------------------------------


@pytest.mark.parametrize("d", [2, 6, 16, 128])
def test_half_layout_is_the_adjacent_one_with_the_columns_reordered(d):
    rng = np.random.default_rng(d)
    x = rng.normal(size=(2, 9, d))
    positions = rng.integers(0, 10000, size=9)
    order = half_pairing_order(d)
    assert sorted(order) == list(range(d))
    assert order[: d // 2].tolist() == list(range(0, d, 2))
    assert np.allclose(
        apply_rotary(x[..., order], positions, pairing="half"),
        apply_rotary(x, positions)[..., order],
    )
    back = np.argsort(order)
    assert np.allclose(
        apply_rotary(x, positions),
        apply_rotary(x[..., order], positions, pairing="half")[..., back],
    )


@pytest.mark.parametrize("d", [8, 16, 64])  # at d = 4 the order is its own inverse
def test_eq_pe_rope_half_holds_with_the_permutation_matrix_the_chapter_defines(d):
    """Chapter 5's P has column j = e_order[j], so that x P = x[order]; chapter 2's
    np.eye(d)[order] would apply the inverse order from the right."""
    rng = np.random.default_rng(d + 1)
    x, positions = rng.normal(size=(5, d)), rng.integers(0, 5000, size=5)
    order = half_pairing_order(d)
    P = np.eye(d)[:, order]
    assert np.array_equal(x @ P, x[:, order])
    assert np.allclose(
        apply_rotary(x @ P, positions, pairing="half"), apply_rotary(x, positions) @ P
    )
    q, k = apply_rotary(x, positions), apply_rotary(rng.normal(size=(5, d)), positions)
    assert np.allclose((q @ P) @ (k @ P).T, q @ k.T)
    assert not np.allclose(
        apply_rotary(x @ np.eye(d)[order], positions, pairing="half"),
        apply_rotary(x, positions) @ np.eye(d)[order],
    )


def test_reordered_projections_give_the_same_scores():
    # converting a model from one layout to the other permutes the columns of W_Q and W_K
    rng = np.random.default_rng(6)
    X = rng.normal(size=(7, 12))
    W_Q, W_K = rng.normal(size=(2, 12, 8))
    order = half_pairing_order(8)
    adjacent = apply_rotary(X @ W_Q) @ apply_rotary(X @ W_K).T
    half = (
        apply_rotary(X @ W_Q[:, order], pairing="half")
        @ apply_rotary(X @ W_K[:, order], pairing="half").T
    )
    assert np.allclose(adjacent, half)
    plain_half = apply_rotary(X @ W_Q, pairing="half") @ apply_rotary(X @ W_K, pairing="half").T
    assert not np.allclose(adjacent, plain_half)  # same weights, other layout: other scores


# --- frequencies for long contexts --------------------------------------------------------------


def llama3_by_the_rule(omega, factor=8.0, low=1.0, high=4.0, context=8192):
    """Meta's rule, one frequency at a time."""
    out = []
    for w in omega:
        wavelength = 2 * math.pi / w
        if wavelength < context / high:
            out.append(w)
        elif wavelength > context / low:
            out.append(w / factor)
        else:
            smooth = (context / wavelength - low) / (high - low)
            out.append((1 - smooth) * w / factor + smooth * w)
    return np.array(out)


def test_llama3_frequencies_follow_the_rule():
    omega = rotary_frequencies(128, base=500000.0)
    got = llama3_frequencies(omega)
    assert np.allclose(got, llama3_by_the_rule(omega), rtol=1e-15, atol=0)
    wavelength = 2 * np.pi / omega
    assert np.array_equal(got[wavelength < 2048], omega[wavelength < 2048])
    assert np.allclose(got[wavelength > 8192], omega[wavelength > 8192] / 8)
    assert np.all(got <= omega) and np.all(got >= omega / 8)
    assert np.all(np.diff(got) < 0)  # still one frequency per pair, falling
    other = llama3_frequencies(omega, factor=32.0, high_freq_factor=2.0)
    assert np.allclose(other, llama3_by_the_rule(omega, factor=32.0, high=2.0))


def test_the_blend_joins_both_ends():
    # at the wavelength L / high the blend gives omega, at L / low it gives omega / factor
    for wavelength, expected_ratio in ((2048.0, 1.0), (8192.0, 1 / 8)):
        omega = np.array([2 * np.pi / wavelength])
        blended = llama3_frequencies(omega * (1 + 1e-12))  # just inside the band
        assert np.isclose(blended[0] / omega[0], expected_ratio, rtol=1e-9)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"factor": 0.5}, "factor must be at least 1"),
        ({"low_freq_factor": 4.0, "high_freq_factor": 1.0}, "must be larger than low_freq_factor"),
        ({"original_context": 0}, "original_context must be a positive"),
    ],
)
def test_llama3_frequencies_refuse_bad_settings(kwargs, message):
    with pytest.raises(ValueError, match=message):
        llama3_frequencies(rotary_frequencies(8), **kwargs)


def test_llama3_frequencies_refuse_bad_frequencies_naming_the_shape():
    with pytest.raises(ValueError, match=r"frequencies of shape \(2, 4\) must be a 1-D array"):
        llama3_frequencies(np.ones((2, 4)))
    with pytest.raises(ValueError, match=r"frequencies of shape \(3,\) must be a 1-D array"):
        llama3_frequencies(np.array([1.0, 0.0, 0.5]))


# --- bad input ------------------------------------------------------------------------------------


def test_bad_input_raises_value_errors_naming_the_shapes():
    with pytest.raises(ValueError, match=r"x of shape \(3, 5\) must have an even width"):
        apply_rotary(np.zeros((3, 5)))
    with pytest.raises(
        ValueError, match=r"positions of shape \(4,\) do not fit x of shape \(3, 4\)"
    ):
        apply_rotary(np.zeros((3, 4)), np.arange(4))
    with pytest.raises(
        ValueError, match=r"positions of shape \(1, 3\) do not fit x of shape \(3, 4\)"
    ):
        apply_rotary(np.zeros((3, 4)), np.arange(3)[None])
    with pytest.raises(ValueError, match=r"frequencies of shape \(4,\) do not fit d = 4"):
        apply_rotary(np.zeros((3, 4)), frequencies=np.ones(4))
    with pytest.raises(ValueError, match=r"x must have shape \(n, d\).*\(4,\)"):
        apply_rotary(np.zeros(4))
    with pytest.raises(ValueError, match=r"x of shape \(0, 4\) has no token"):
        apply_rotary(np.zeros((0, 4)))
    with pytest.raises(ValueError, match="pairing must be 'adjacent'"):
        apply_rotary(np.zeros((3, 4)), pairing="interleaved")
    with pytest.raises(ValueError, match=r"positions of shape .* contains NaN"):
        apply_rotary(np.zeros((2, 4)), [0.0, np.nan])
    with pytest.raises(TypeError, match=r"positions .* must hold floating-point numbers"):
        apply_rotary(np.zeros((2, 4)), np.array(["a", "b"]))
    with pytest.raises(ValueError, match=r"even width d >= 2.*d = 7"):
        rotary_frequencies(7)
    with pytest.raises(ValueError, match="positive integer"):
        half_pairing_order(0)


# --- ALiBi ------------------------------------------------------------------------------------


def slopes_by_the_paper(h):
    """The recipe of the ALiBi paper's code, recursively."""

    def power_of_two(k):
        start = 2 ** (-(2 ** -(math.log2(k) - 3)))
        return [start * start**i for i in range(k)]

    if math.log2(h).is_integer():
        return power_of_two(h)
    closest = 2 ** math.floor(math.log2(h))
    return power_of_two(closest) + slopes_by_the_paper(2 * closest)[0::2][: h - closest]


def test_slopes_for_8_heads_are_one_half_to_one_256th():
    assert alibi_slopes(8).tolist() == [2.0**-k for k in range(1, 9)]


@pytest.mark.parametrize("h", [1, 2, 3, 4, 6, 12, 16, 20, 32, 112])
def test_slopes_follow_the_paper_for_any_number_of_heads(h):
    got = alibi_slopes(h)
    assert got.shape == (h,)
    assert np.allclose(got, slopes_by_the_paper(h), rtol=1e-14, atol=0)
    if math.log2(h).is_integer():  # geometric from 2^(-8/h) down to 2^-8
        assert np.allclose(got[1:] / got[:-1], 2 ** (-8 / h)) and np.isclose(got[-1], 2**-8)


def test_alibi_bias_is_minus_slope_times_distance():
    bias = alibi_bias(5, 4)  # (h, n, n)
    slopes = alibi_slopes(4)
    assert bias.shape == (4, 5, 5)
    for head in range(4):
        for i in range(5):
            for j in range(5):
                assert bias[head, i, j] == -slopes[head] * (i - j)
    assert not np.signbit(np.diagonal(bias, axis1=1, axis2=2)).any()  # 0, not -0


def test_only_the_key_position_matters_under_a_causal_softmax():
    # -m (i - j) = m j - m i, and m i is the same for the whole row i
    rng = np.random.default_rng(7)
    scores = rng.normal(size=(8, 6, 6))
    slopes = alibi_slopes(8)[:, None, None]
    by_distance = masked_softmax(scores + alibi_bias(6, 8), causal_mask(6))
    by_key = masked_softmax(scores + slopes * np.arange(6), causal_mask(6))
    assert np.allclose(by_distance, by_key)


# --- the PyTorch modules --------------------------------------------------------------------------


@pytest.mark.parametrize("pairing", ["adjacent", "half"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_rotary_module_equals_the_numpy_function(pairing, dtype):
    rng = np.random.default_rng(8)
    x = rng.normal(size=(2, 3, 5, 16))  # (b, h, n, d)
    positions = np.array([0, 7, 3, 1000, 65000])
    module = RotaryPositionEmbedding(16, max_len=65536, pairing=pairing).to(dtype)
    got = module(torch.from_numpy(x).to(dtype), torch.from_numpy(positions))
    assert got.dtype == dtype and got.shape == x.shape
    expected = apply_rotary(x, positions, pairing=pairing)
    assert np.allclose(
        got.double().numpy(), expected, atol=1e-12 if dtype == torch.float64 else 1e-5
    )
    assert torch.allclose(
        module(torch.from_numpy(x).to(dtype)),
        torch.from_numpy(apply_rotary(x, pairing=pairing)).to(dtype),
        atol=1e-5,
    )


def test_adjacent_rotary_module_equals_torch_s_complex_multiplication():
    # each pair as a complex number times exp(i m omega), as Meta's Llama code computes it
    torch.manual_seed(0)
    x = torch.randn(2, 9, 4, 32, dtype=torch.float64)  # (b, n, h, d), heads after tokens
    module = RotaryPositionEmbedding(32, max_len=9).double()
    angles = torch.outer(
        torch.arange(9, dtype=torch.float64), torch.from_numpy(rotary_frequencies(32))
    )
    turns = torch.polar(torch.ones_like(angles), angles)  # (n, d/2), complex128
    as_complex = torch.view_as_complex(x.reshape(2, 9, 4, 16, 2))
    expected = torch.view_as_real(as_complex * turns[:, None, :]).flatten(-2)
    got = module(x.transpose(1, 2)).transpose(1, 2)  # tokens second to last
    assert torch.allclose(got, expected, atol=1e-12)


def test_rotary_module_keeps_buffers_not_parameters():
    module = RotaryPositionEmbedding(8, max_len=20)
    assert list(module.parameters()) == []
    assert sorted(name for name, _ in module.named_buffers()) == ["cos", "sin"]
    assert module.state_dict() == {}
    assert module.cos.shape == (20, 4) and module.cos.dtype == torch.float32
    assert "d=8, max_len=20, pairing='adjacent'" in repr(module)
    double = module.double()
    angles = np.arange(20)[:, None] * rotary_frequencies(8)
    assert np.array_equal(double.cos.numpy(), np.cos(angles))  # recomputed in float64


def test_rotary_module_tables_are_accurate_far_out_in_float32():
    module = RotaryPositionEmbedding(16, max_len=131072, base=500000.0)
    angles = 131071 * rotary_frequencies(16, base=500000.0)
    assert np.abs(module.sin[131071].double().numpy() - np.sin(angles)).max() < 1e-7


def test_rotary_module_moves_with_the_module():
    module = RotaryPositionEmbedding(4, max_len=8).to("meta")
    assert module.cos.device.type == "meta"
    assert module(torch.zeros(2, 3, 4, device="meta")).device.type == "meta"


def test_rotary_module_refuses_bad_input_naming_the_shapes():
    module = RotaryPositionEmbedding(4, max_len=8)
    with pytest.raises(
        ValueError, match=r"x of shape \(3, 6\) must have shape \(n, d\) with d = 4"
    ):
        module(torch.zeros(3, 6))
    with pytest.raises(ValueError, match=r"x of shape \(3, 5\) must have an even width"):
        module(torch.zeros(3, 5))
    with pytest.raises(
        ValueError, match=r"positions of shape \(2,\) do not fit x of shape \(3, 4\)"
    ):
        module(torch.zeros(3, 4), torch.tensor([0, 1]))
    with pytest.raises(ValueError, match=r"positions from 0 to 9 do not fit max_len = 8"):
        module(torch.zeros(3, 4), torch.tensor([0, 9, 2]))
    with pytest.raises(ValueError, match=r"positions from 0 to 8 do not fit max_len = 8"):
        module(torch.zeros(9, 4))
    with pytest.raises(TypeError, match=r"positions of shape .* must be integers"):
        module(torch.zeros(3, 4), torch.tensor([0.0, 1.0, 2.0]))
    with pytest.raises(ValueError, match="even width"):
        RotaryPositionEmbedding(5)
    with pytest.raises(ValueError, match=r"frequencies of shape \(3,\) do not fit d = 4"):
        RotaryPositionEmbedding(4, frequencies=np.ones(3))
    with pytest.raises(ValueError, match="pairing must be"):
        RotaryPositionEmbedding(4, pairing="rotate_half")


def test_alibi_module_is_the_numpy_bias_under_a_causal_mask():
    module = ALiBiBias(8)
    bias = module(6)
    assert bias.shape == (8, 6, 6) and list(module.parameters()) == []
    numpy_bias = alibi_bias(6, 8)
    below = causal_mask(6)
    assert np.allclose(bias.numpy()[:, below], numpy_bias[:, below])
    assert torch.isinf(bias[:, ~torch.from_numpy(below)]).all()


def test_alibi_attention_through_torch_s_scaled_dot_product_attention():
    torch.manual_seed(1)
    q, k, v = torch.randn(3, 2, 4, 6, 8, dtype=torch.float64)  # (b, h, n, d_k) each
    bias = ALiBiBias(4).double()(6)  # (h, n, n)
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=bias)
    scores = (q @ k.transpose(-2, -1)).numpy() / math.sqrt(8) + alibi_bias(6, 4)
    weights = masked_softmax(scores, causal_mask(6))
    assert np.allclose(out.numpy(), weights @ v.numpy(), atol=1e-12)
