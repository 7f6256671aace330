"""Property tests: every NumPy function and every module against its PyTorch reference.

Random shapes, dtypes (float32, float64), magnitudes and boolean masks, rows with every key
masked included. The tolerance follows the dtype: 1e-12 in float64, 1e-5 in float32. Where
PyTorch returns something else on purpose (all-masked rows), the test says what and checks it.
"""

import numpy as np
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

from attnkit.core import masked_softmax, multi_head_attention, scaled_dot_product_attention, softmax
from attnkit.modules import EncoderLayer, MultiHeadAttention, ScaledDotProductAttention

TOL = {torch.float32: 1e-5, torch.float64: 1e-12}
SETTINGS = settings(max_examples=30, deadline=None)


def assert_close(actual, expected):
    """Equal to ``expected`` (a tensor) within its dtype's tolerance, NaN nowhere."""
    tol = TOL[expected.dtype]
    torch.testing.assert_close(torch.as_tensor(actual), expected, rtol=tol, atol=tol)


@st.composite
def cases(draw):
    """Sizes, a dtype, a magnitude for the entries and a (b, m, n) mask that may empty rows."""
    b, m, n, h, d_k = (draw(st.integers(1, k)) for k in (2, 4, 4, 3, 3))
    mask = np.array(draw(st.lists(st.booleans(), min_size=b * m * n, max_size=b * m * n)))
    return dict(
        b=b,
        m=m,
        n=n,
        h=h,
        d_k=d_k,
        mask=mask.reshape(b, m, n),
        dtype=draw(st.sampled_from([torch.float32, torch.float64])),
        magnitude=draw(st.sampled_from([0.1, 1.0, 10.0])),
        seed=draw(st.integers(0, 999)),
    )


def randn(case, *shape):
    generator = torch.Generator().manual_seed(case["seed"] + len(shape))
    return torch.randn(*shape, generator=generator, dtype=case["dtype"]) * case["magnitude"]


def empty_rows(mask):
    return ~torch.from_numpy(mask).any(-1)  # (b, m): rows with no key


@SETTINGS
@given(cases())
def test_softmax_and_masked_softmax_equal_torch_softmax(case):
    scores = randn(case, case["b"], case["m"], case["n"])
    mask = torch.from_numpy(case["mask"])
    assert_close(softmax(scores.numpy()), torch.softmax(scores, dim=-1))
    assert_close(softmax(scores.numpy(), axis=0), torch.softmax(scores, dim=0))
    # torch gives NaN on a row with every score -inf; the helper gives zeros (all_masked="zero")
    expected = torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=-1)
    assert torch.isnan(expected[empty_rows(case["mask"])]).all()
    expected[empty_rows(case["mask"])] = 0
    assert_close(masked_softmax(scores.numpy(), case["mask"], all_masked="zero"), expected)


@SETTINGS
@given(cases(), st.sampled_from([None, 0.3]))
def test_sdpa_both_halves_equal_torch_sdpa(case, scale):
    b, m, n, d_k = case["b"], case["m"], case["n"], case["d_k"]
    q, k, v = randn(case, b, m, d_k), randn(case, b, n, d_k, 1)[..., 0], randn(case, b, n, 2)
    mask = torch.from_numpy(case["mask"])
    # F.scaled_dot_product_attention, too, gives zero rows where the mask hides every key
    expected = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, scale=scale)
    out, _ = scaled_dot_product_attention(
        q.numpy(), k.numpy(), v.numpy(), mask=case["mask"], scale=scale, all_masked="zero"
    )
    assert_close(out, expected)
    out, _ = ScaledDotProductAttention(scale=scale, all_masked="zero")(q, k, v, mask)
    assert_close(out, expected)


@SETTINGS
@given(cases(), st.booleans())
def test_multi_head_both_halves_equal_torch_multihead_attention(case, bias):
    b, m, n, h = case["b"], case["m"], case["n"], case["h"]
    d = h * case["d_k"]
    torch.manual_seed(case["seed"])
    theirs = torch.nn.MultiheadAttention(d, h, bias=bias, batch_first=True, dtype=case["dtype"])
    ours = MultiHeadAttention.from_torch(theirs, all_masked="zero")
    xq, xs = randn(case, b, m, d), randn(case, b, n, d, 1)[..., 0]
    mask = torch.from_numpy(case["mask"])
    expected, expected_w = theirs(
        xq, xs, xs, attn_mask=~mask.repeat_interleave(h, dim=0), average_attn_weights=False
    )
    out, w = ours(xq, xs, mask=mask)
    # nn.MultiheadAttention gives NaN on a row with no key; the helper zeros (all_masked="zero")
    empty = empty_rows(case["mask"])
    assert torch.isnan(expected[empty]).all() and (w.transpose(1, 2)[empty] == 0).all()
    assert_close(out[~empty], expected[~empty])
    assert_close(w.transpose(1, 2)[~empty], expected_w.transpose(1, 2)[~empty])
    if not bias:  # the NumPy function has no biases
        W = [lin.weight.detach().T.numpy() for lin in (ours.w_q, ours.w_k, ours.w_v, ours.w_o)]
        out_np, _ = multi_head_attention(
            xq.numpy(), xs.numpy(), *W, h, mask=case["mask"], all_masked="zero"
        )
        assert_close(out_np[~empty.numpy()], expected[~empty].detach())


@SETTINGS
@given(cases(), st.sampled_from(["none", "causal", "padding"]), st.booleans(), st.booleans())
def test_encoder_layer_equals_torch_encoder_layer(case, kind, bias, training):
    b, n, h = case["b"], case["n"], case["h"]
    d = h * case["d_k"]
    torch.manual_seed(case["seed"])
    theirs = torch.nn.TransformerEncoderLayer(
        d, h, dim_feedforward=2 * d, dropout=0.2, bias=bias, batch_first=True, dtype=case["dtype"]
    )
    ours = EncoderLayer.from_torch(theirs)
    theirs.train(training), ours.train(training)
    x = randn(case, b, n, d)
    keep = torch.ones(b, n, n, dtype=torch.bool)  # masks that leave a key in every row
    src_mask = padding = None
    if kind == "causal":
        keep = torch.ones(n, n, dtype=torch.bool).tril()
        src_mask = ~keep
    elif kind == "padding":
        lengths = torch.randint(1, n + 1, (b,), generator=torch.Generator().manual_seed(0))
        keep = (torch.arange(n) < lengths[:, None])[:, None, :]  # (b, 1, n)
        padding = ~keep[:, 0]
    torch.manual_seed(1)  # training: the same seed drops the same
    expected = theirs(x, src_mask=src_mask, src_key_padding_mask=padding)
    torch.manual_seed(1)
    out, _ = ours(x, mask=keep)
    assert_close(out, expected)
