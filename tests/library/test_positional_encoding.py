"""Chapter 5's helpers: sinusoidal positional encoding in NumPy and PyTorch, and the checks
of its exercises (the sinusoidal encoding, rotary position embedding)."""

import math

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from attnkit.core import (
    scaled_dot_product_attention,
    self_attention,
    sinusoidal_positional_encoding,
)
from attnkit.exercises.positional_encoding import (
    check_positional_encoding,
    check_rotary_embedding,
)
from attnkit.modules import SinusoidalPositionalEncoding
from tests.support.answers.positional_encoding import (
    pe_article_style,
    pe_blocks,
    pe_loops,
    pe_with,
    rope_complex,
    rope_loops,
    rope_reference,
    rope_through_half,
    rope_with,
)

PE = sinusoidal_positional_encoding


def rotation_blocks(k, d, width=None):
    """The (d, d) block-diagonal matrix that maps PE[p] to PE[p + k] (even d), written out.

    The frequencies are those of an encoding of width ``width`` (default ``d``).
    """
    width = d if width is None else width
    M = np.zeros((d, d))
    for i in range(d // 2):
        theta = k / 10000 ** (2 * i / width)
        c, s = math.cos(theta), math.sin(theta)
        # row vector [sin, cos] @ [[c, -s], [s, c]] = [sin(a + theta), cos(a + theta)]
        M[2 * i : 2 * i + 2, 2 * i : 2 * i + 2] = [[c, -s], [s, c]]
    return M


# --- the NumPy encoding, entry by entry ---------------------------------------------


def test_position_zero_is_zero_one_zero_one():
    assert PE(1, 6).tolist() == [[0.0, 1.0, 0.0, 1.0, 0.0, 1.0]]
    assert PE(1, 5).tolist() == [[0.0, 1.0, 0.0, 1.0, 0.0]]  # odd d: a sine last


def test_d_4_written_out():
    # d = 4: the pairs have frequencies 1 / 10000^(0/4) = 1 and 1 / 10000^(2/4) = 1/100
    expected = [
        [0.0, 1.0, 0.0, 1.0],
        [math.sin(1), math.cos(1), math.sin(0.01), math.cos(0.01)],
        [math.sin(2), math.cos(2), math.sin(0.02), math.cos(0.02)],
        [math.sin(3), math.cos(3), math.sin(0.03), math.cos(0.03)],
    ]
    got = PE(4, 4)
    assert got.shape == (4, 4) and got.dtype == np.float64
    assert np.allclose(got, expected, rtol=0, atol=1e-15)


def test_d_5_written_out_ends_with_a_sine():
    # d = 5: frequencies 1, 10000^(-2/5) = 1/39.81..., 10000^(-4/5) = 1/1584.89...
    w1, w2 = 10000**-0.4, 10000**-0.8
    assert math.isclose(1 / w1, 39.810717055, rel_tol=1e-9)
    assert math.isclose(1 / w2, 1584.893192461, rel_tol=1e-9)
    expected = [
        [0.0, 1.0, 0.0, 1.0, 0.0],
        [math.sin(1), math.cos(1), math.sin(w1), math.cos(w1), math.sin(w2)],
        [math.sin(2), math.cos(2), math.sin(2 * w1), math.cos(2 * w1), math.sin(2 * w2)],
    ]
    assert np.allclose(PE(3, 5), expected, rtol=0, atol=1e-15)


def test_tiny_widths():
    assert np.allclose(PE(3, 1), [[0.0], [math.sin(1)], [math.sin(2)]])
    assert np.allclose(PE(2, 2), [[0.0, 1.0], [math.sin(1), math.cos(1)]])
    assert np.allclose(PE(2, 3)[1], [math.sin(1), math.cos(1), math.sin(10000 ** (-2 / 3))])


@pytest.mark.parametrize("n, d", [(0, 4), (4, 0), (2.5, 4), (3, True), (-1, 2)])
def test_bad_sizes_raise(n, d):
    with pytest.raises(ValueError, match="positive integer"):
        PE(n, d)


def test_entries_are_bounded_and_rows_distinct():
    enc = PE(2000, 16)
    assert np.all(np.abs(enc) <= 1)
    squared = (enc**2).sum(axis=1)  # (2000,): |a - b|^2 = |a|^2 + |b|^2 - 2 a.b
    gaps = squared[:, None] + squared[None, :] - 2 * enc @ enc.T  # (2000, 2000)
    assert gaps[~np.eye(2000, dtype=bool)].min() > 1e-3**2  # no repeats


@pytest.mark.parametrize("d", [4, 8, 64])
def test_wavelengths_are_a_geometric_progression_from_two_pi(d):
    wavelengths = 2 * np.pi * 10000 ** (2 * np.arange(d // 2) / d)  # (d/2,)
    assert np.isclose(wavelengths[0], 2 * np.pi)
    assert np.allclose(wavelengths[1:] / wavelengths[:-1], 10000 ** (2 / d))
    assert wavelengths[-1] < 2 * np.pi * 10000
    # each column repeats after its wavelength (a real number, so evaluate the formula there)
    p = np.arange(5.0)
    for i, lam in enumerate(wavelengths):
        omega = 1 / 10000 ** (2 * i / d)
        assert np.allclose(np.sin(omega * (p + lam)), PE(5, d)[:, 2 * i], atol=1e-9)


@pytest.mark.parametrize("d", [2, 6, 32])
def test_every_row_has_squared_norm_d_over_2(d):
    assert np.allclose((PE(100, d) ** 2).sum(axis=1), d / 2)


# --- the two properties of chapter 5 (hypothesis) -------------------------------------

EVEN_D = st.integers(1, 32).map(lambda h: 2 * h)


@given(EVEN_D, st.integers(0, 300), st.integers(0, 300), st.integers(0, 300))
def test_dot_product_depends_only_on_the_offset(d, p, q, shift):
    enc = PE(max(p, q) + shift + 1, d)
    omega = 1 / 10000 ** (2 * np.arange(d // 2) / d)  # (d/2,)
    by_formula = np.cos(omega * (p - q)).sum()
    assert np.isclose(enc[p] @ enc[q], by_formula)
    assert np.isclose(enc[p + shift] @ enc[q + shift], by_formula)
    assert np.isclose(enc[q] @ enc[p], by_formula)  # symmetric in p - q


@given(EVEN_D, st.integers(-50, 50))
def test_a_shift_by_k_is_one_rotation_for_every_position(d, k):
    n = 120
    enc = PE(n, d)  # (n, d)
    M = rotation_blocks(k, d)  # (d, d), no p in it
    lo, hi = max(0, -k), min(n, n - k)
    assert np.allclose(enc[lo:hi] @ M, enc[lo + k : hi + k], atol=1e-9)
    assert np.allclose(M @ M.T, np.eye(d))  # a rotation
    assert np.allclose(rotation_blocks(k, d) @ rotation_blocks(3, d), rotation_blocks(k + 3, d))


def test_rotation_fails_for_the_lone_sine_of_odd_d():
    enc = PE(10, 5)
    M = rotation_blocks(1, 4, width=5)
    assert np.allclose(enc[:-1, :4] @ M, enc[1:, :4])  # the four paired columns rotate
    # the last column sin(w p) has no cosine partner: no 1x1 factor maps it to sin(w (p + 1))
    ratios = enc[2:, 4] / enc[1:-1, 4]
    assert not np.allclose(ratios, ratios[0])


# --- positional encoding breaks permutation equivariance -----------------------------


def test_adding_positions_breaks_permutation_equivariance():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(5, 8))
    P = np.eye(5)[[3, 0, 4, 1, 2]]
    out, _ = self_attention(X)
    out_p, _ = self_attention(P @ X)
    assert np.allclose(out_p, P @ out)  # no positions: equivariant
    E = PE(5, 8)
    out_e, w_e = self_attention(X + E)
    out_pe, w_pe = self_attention(P @ X + E)  # positions stay put
    assert not np.allclose(out_pe, P @ out_e)
    assert not np.allclose(w_pe, P @ w_e @ P.T)


def test_same_words_in_another_order_give_another_set_of_outputs():
    rng = np.random.default_rng(1)
    words = rng.normal(size=(3, 6))  # dog, bites, man
    W_Q, W_K, W_V = rng.normal(size=(3, 6, 6))
    module = SinusoidalPositionalEncoding(6, max_len=10).double()

    def outputs(order, positional):
        X = torch.from_numpy(words[order])
        X = module(X).numpy() if positional else X.numpy()
        out, _ = scaled_dot_product_attention(X @ W_Q, X @ W_K, X @ W_V)
        return out

    a, b = outputs([0, 1, 2], False), outputs([2, 1, 0], False)
    assert np.allclose(np.sort(a, axis=0), np.sort(b, axis=0))  # the same set
    a, b = outputs([0, 1, 2], True), outputs([2, 1, 0], True)
    assert not np.allclose(a[0], b[2])  # "dog" has changed


# --- the PyTorch module -----------------------------------------------------------------


@pytest.mark.parametrize("d", [1, 4, 5, 16])
def test_module_buffer_equals_the_numpy_encoding(d):
    module = SinusoidalPositionalEncoding(d, max_len=300)
    assert module.pe.shape == (300, d) and module.pe.dtype == torch.float32
    assert np.allclose(module.pe.numpy(), PE(300, d), rtol=0, atol=1e-6)
    assert np.array_equal(module.double().pe.numpy(), PE(300, d))  # the float64 table


def test_module_stores_a_buffer_not_a_parameter():
    module = SinusoidalPositionalEncoding(8, max_len=20)
    assert list(module.parameters()) == []
    assert [name for name, _ in module.named_buffers()] == ["pe"]
    assert "pe" not in module.state_dict()  # persistent=False: recomputed
    assert "d_model=8, max_len=20" in repr(module)


def test_forward_adds_the_encoding_sliced_to_the_sequence_length():
    torch.manual_seed(0)
    module = SinusoidalPositionalEncoding(6, max_len=10)
    x = torch.randn(2, 4, 6)  # (batch, n, d_model)
    out = module(x)
    assert out.shape == (2, 4, 6)
    assert torch.allclose(out - x, module.pe[:4].expand(2, 4, 6))
    assert torch.allclose(out[1], module(x[1]))  # no batch axis: (n, d_model)
    full = module(torch.zeros(10, 6))  # exactly max_len is fine
    assert torch.equal(full, module.pe)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16])
def test_forward_keeps_the_input_dtype(dtype):
    x = torch.zeros(3, 4, dtype=dtype)
    out = SinusoidalPositionalEncoding(4, max_len=8)(x)
    assert out.dtype == dtype
    assert np.allclose(
        out.float().numpy(), PE(3, 4), atol=1e-2 if dtype == torch.bfloat16 else 1e-6
    )


def test_double_gives_float64_output_close_to_numpy():
    out = SinusoidalPositionalEncoding(5, max_len=8).double()(
        torch.zeros(8, 5, dtype=torch.float64)
    )
    assert out.dtype == torch.float64 and np.array_equal(out.numpy(), PE(8, 5))


def test_buffer_moves_with_the_module():
    module = SinusoidalPositionalEncoding(4, max_len=8).to("meta")  # a device without a GPU
    assert module.pe.device.type == "meta"
    assert module(torch.zeros(2, 3, 4, device="meta")).device.type == "meta"


def test_too_long_inputs_and_wrong_widths_raise():
    module = SinusoidalPositionalEncoding(4, max_len=8)
    with pytest.raises(ValueError, match=r"length 9, longer than max_len = 8"):
        module(torch.zeros(9, 4))
    with pytest.raises(ValueError, match=r"x of shape \(3, 5\).*d_model = 4"):
        module(torch.zeros(3, 5))
    with pytest.raises(ValueError, match=r"x must have shape \(tokens, d_model\).*\(4,\)"):
        module(torch.zeros(4))


@pytest.mark.parametrize(
    "kwargs", [{"d_model": 0}, {"d_model": 4, "max_len": 0}, {"d_model": 4.0}, {"d_model": True}]
)
def test_module_refuses_bad_sizes(kwargs):
    with pytest.raises(ValueError, match="positive integer"):
        SinusoidalPositionalEncoding(**kwargs)


# --- the exercise check -----------------------------------------------------------------


def pe_reference(n, d):
    pair = np.arange(d) // 2
    angles = np.arange(n)[:, None] / 10000 ** (2 * pair / d)
    return np.where(np.arange(d) % 2 == 0, np.sin(angles), np.cos(angles))


def pe_odd_last_cos(n, d):
    out = pe_reference(n, d)
    if d % 2:
        out[:, -1] = np.cos(np.arange(n) / 10000 ** ((d - 1) / d))
    return out


@pytest.mark.parametrize("fn", [pe_reference, pe_loops])
def test_check_positional_encoding_accepts_correct_answers(fn):
    result = check_positional_encoding(fn)
    assert result.passed, result.message
    assert "even and odd d" in result.message


@pytest.mark.parametrize(
    "wrong, advice",
    [
        (lambda n, d: pe_reference(n, d).T, "the transpose"),
        (pe_with(swap=True), "sine and cosine are swapped"),
        (pe_with(exponent=lambda j, d: (j // 2) / d), "exponent is i/d"),
        (pe_with(exponent=lambda j, d: j / d), "column index j"),
        (pe_with(base=1000.0), "base 1000 instead of 10000"),
        (pe_with(base=math.e), "base 2.718 instead of 10000"),
        (pe_with(first=1), "positions start at 1"),
        (pe_blocks, "all the sines first"),
        (pe_article_style, "ceil(d/2) sine columns"),
        (pe_odd_last_cos, "last column is wrong"),
        # an even-d formula stretched to odd d: the exponent divides by d - 1 (the article's
        # slicing does this) or by d + 1 (computed for d + 1 columns, the last one dropped)
        (pe_with(exponent=lambda j, d: 2 * (j // 2) / (d - d % 2)), "divide by 4 instead of d = 5"),
        (
            lambda n, d: pe_with(exponent=lambda j, e: 2 * (j // 2) / e)(n, d + d % 2)[:, :d],
            "divide by 6 instead of d = 5",
        ),
        (lambda n, d: pe_reference(n, d)[:, : d - d % 2], "shape (7, 4)"),
        (lambda n, d: pe_reference(n, max(d, 2)), "for n = 3, d = 1 you returned shape (3, 2)"),
        (lambda n, d: pe_reference(n, d) * 2, "entry [0, 1] should be cos"),
        (lambda n, d: np.full((n, d), np.nan), "NaN or inf"),
        (lambda n, d: "PE", "should be a NumPy array"),
        (lambda n, d: pe_reference(n, d).tolist(), "should be a NumPy array, got a list"),
        (lambda n, d: pe_reference(n, d).astype(np.float32), "dtype float32: return float64"),
        (lambda n, d: pe_reference(min(n, 5000), d), "only 5000 rows"),
        (lambda n, d: PE(n, d), "uses `attnkit.core.sinusoidal_positional_encoding`"),
        (
            lambda n, d: SinusoidalPositionalEncoding(d, max_len=n).double().pe.numpy(),
            "uses `attnkit.modules.SinusoidalPositionalEncoding`",
        ),
    ],
)
def test_check_positional_encoding_rejects_typical_mistakes(wrong, advice):
    result = check_positional_encoding(wrong)
    assert not result.passed
    assert advice in result.message, result.message


# --- the rotary exercise's check (its right and wrong answers: tests/support/answers) ---------


@pytest.mark.parametrize("fn", [rope_reference, rope_loops, rope_complex, rope_through_half])
def test_check_rotary_embedding_accepts_correct_answers(fn):
    result = check_rotary_embedding(fn)
    assert result.passed, result.message
    assert "adjacent pairs (2i, 2i+1)" in result.message


@pytest.mark.parametrize(
    "wrong, advice",
    [
        (rope_with(pairing="half"), "'rotate half' layout"),
        (rope_with(sign=-1), "the wrong way, by -t"),
        (rope_with(swap=True), "cos and sin are swapped"),
        (rope_with(exponent=lambda i, d: -i / d), "the exponent is -i/d"),
        (rope_with(shift=1), "one too large"),
        (rope_with(turn_k=False), "you returned the keys as they were"),
        (rope_with(k_sign=-1), "you turned the keys the other way"),
        (rope_with(positions_in=np.int16), "int16 holds only -32768 .. 32767"),
        (lambda q, k, p: (q, k, p), "return a pair (q_turned, k_turned)"),
    ],
)
def test_check_rotary_embedding_names_typical_mistakes(wrong, advice):
    result = check_rotary_embedding(wrong)
    assert not result.passed
    assert advice in result.message, result.message


def test_check_rotary_embedding_wants_float64_angles_far_out():
    result = check_rotary_embedding(rope_with(angles_in=np.float32), dtypes=(np.float32,))
    assert not result.passed
    assert "right at every position below 1024 but wrong far out" in result.message
    assert "Compute the angles in float64" in result.message
