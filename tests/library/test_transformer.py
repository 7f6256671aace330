"""Chapter 6's encoder-decoder Transformer: PyTorch against nn.Transformer and its layers, with the
weights copied across (float64, masks included), and the NumPy forward pass against both."""

import warnings

import numpy as np
import pytest
import torch

from attnkit.core import causal_mask, padding_mask
from attnkit.transformer import CrossAttentionDecoderLayer, EncoderDecoderTransformer
from attnkit.transformer_numpy import (
    decoder_layer,
    encoder_decoder,
    encoder_layer,
    feed_forward,
    layer_norm,
)

D, H, D_FF = 8, 2, 16
B, N, M = 3, 5, 4  # batch, source tokens, target tokens
F64 = torch.float64


@pytest.fixture(scope="module", autouse=True)
def one_thread():
    """The models are tiny: more threads only wait for each other, and for a busy CPU."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def torch_transformer(layers=(2, 2), **kwargs):
    kwargs = {"dropout": 0.0, **kwargs}
    with warnings.catch_warnings():  # bias=False turns off the nested-tensor fast path, and says so
        warnings.filterwarnings("ignore", "enable_nested_tensor")
        return torch.nn.Transformer(
            D,
            H,
            num_encoder_layers=layers[0],
            num_decoder_layers=layers[1],
            dim_feedforward=D_FF,
            batch_first=True,
            dtype=F64,
            **kwargs,
        )


def inputs(seed=0):
    g = torch.Generator().manual_seed(seed)
    src = torch.randn(B, N, D, dtype=F64, generator=g)
    tgt = torch.randn(B, M, D, dtype=F64, generator=g)
    return src, tgt


def padding(lengths, n):
    return torch.from_numpy(padding_mask(np.array(lengths), n))  # (b, 1, n), True = real token


def torch_masks(src=None, tgt=None, memory=None) -> dict:
    """The book's masks (True = may attend, shape (b, 1, n)) as nn.Transformer's keyword
    arguments (True = hidden, shape (b, n)), with the target's causal mask."""
    found = {"tgt_mask": ~torch.from_numpy(causal_mask(M))}
    for name, keep in [("src", src), ("tgt", tgt), ("memory", memory)]:
        if keep is not None:
            found[f"{name}_key_padding_mask"] = ~keep[:, 0]
    return found


def scramble_norms(model, seed=0):
    """LayerNorm scales and shifts away from 1 and 0, so that a mix-up of norms shows."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for norm in (m for m in model.modules() if isinstance(m, torch.nn.LayerNorm)):
            norm.weight.copy_(0.5 + torch.rand(norm.weight.shape, dtype=F64, generator=g))
            if norm.bias is not None:
                norm.bias.copy_(torch.randn(norm.bias.shape, dtype=F64, generator=g))


MASKS = {
    "none": ((N, N, N), (M, M, M)),
    "padding": ((5, 3, 1), (4, 2, 1)),
    "source padding": ((5, 2, 4), (M, M, M)),
    "target padding": ((N, N, N), (1, 4, 3)),
}


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("masks", MASKS, ids=str)
def test_model_equals_nn_transformer_with_every_mask(masks, bias):
    torch.manual_seed(1)
    theirs = torch_transformer(bias=bias)
    scramble_norms(theirs)
    ours = EncoderDecoderTransformer.from_torch(theirs)
    src, tgt = inputs()
    src_lengths, tgt_lengths = MASKS[masks]
    src_keep, tgt_keep = padding(src_lengths, N), padding(tgt_lengths, M)
    out, weights = ours(src, tgt, src_mask=src_keep, tgt_mask=tgt_keep, memory_mask=src_keep)
    expected = theirs(src, tgt, **torch_masks(src=src_keep, tgt=tgt_keep, memory=src_keep))
    assert out.dtype == F64 and out.shape == (B, M, D)
    assert torch.allclose(out, expected, rtol=0, atol=1e-12)
    assert [w.shape for w in weights["encoder"]] == [(B, H, N, N)] * 2
    assert [w.shape for w in weights["decoder"]] == [(B, H, M, M)] * 2
    assert [w.shape for w in weights["cross"]] == [(B, H, M, N)] * 2
    for w in weights["decoder"]:
        assert torch.all(w.triu(diagonal=1) == 0)  # causal, always
    for w in weights["cross"] + weights["encoder"]:
        assert torch.all(w.masked_fill(src_keep[:, None], 0) == 0)  # no padded source token


def test_encoder_and_its_final_norm_equal_nn_transformers_encoder():
    torch.manual_seed(2)
    theirs = torch_transformer(layers=(3, 1))
    scramble_norms(theirs)
    ours = EncoderDecoderTransformer.from_torch(theirs)
    src, _ = inputs(1)
    keep = padding([5, 3, 2], N)
    memory, weights = ours.encode(src, src_mask=keep)
    # with gradients on, nn.TransformerEncoder takes no nested-tensor fast path, so the padded
    # positions' outputs are computed too, as ours are
    expected = theirs.encoder(src, src_key_padding_mask=~keep[:, 0])
    assert len(weights) == 3
    assert torch.allclose(memory, expected, rtol=0, atol=1e-12)
    last = src
    for layer in ours.encoder_layers:
        last, _ = layer(last, mask=keep)
    assert torch.allclose(memory, ours.encoder_norm(last), rtol=0, atol=1e-12)


def test_the_fast_path_zeroes_padded_memory_but_not_the_output():
    """In float32 inference nn.TransformerEncoder packs a padded batch as a nested tensor and
    gives zeros at the padded positions; those positions are hidden from the cross-attention,
    so the decoder's output still agrees."""
    torch.manual_seed(3)
    theirs = torch.nn.Transformer(D, H, 1, 1, D_FF, dropout=0.0, batch_first=True).eval()
    ours = EncoderDecoderTransformer.from_torch(theirs)
    src, tgt = (t.float() for t in inputs(2))
    keep = padding([5, 3, 4], N)
    with torch.no_grad(), warnings.catch_warnings():
        warnings.filterwarnings("ignore", "The PyTorch API of nested tensors")
        memory_theirs = theirs.encoder(src, src_key_padding_mask=~keep[:, 0])
        expected = theirs(src, tgt, **torch_masks(src=keep, memory=keep))
        memory_ours, _ = ours.encode(src, src_mask=keep)
        out, _ = ours(src, tgt, src_mask=keep, memory_mask=keep)
    real = keep[:, 0]
    assert torch.allclose(memory_ours[real], memory_theirs[real], atol=1e-5)
    assert not torch.allclose(memory_ours[~real], memory_theirs[~real], atol=1e-2)
    assert torch.allclose(out, expected, atol=1e-5)


@pytest.mark.parametrize("bias", [True, False])
def test_decoder_layer_equals_nn_transformer_decoder_layer(bias):
    torch.manual_seed(4)
    theirs = torch.nn.TransformerDecoderLayer(
        D, H, D_FF, dropout=0.0, batch_first=True, dtype=F64, bias=bias
    )
    scramble_norms(theirs)
    ours = CrossAttentionDecoderLayer.from_torch(theirs)
    src, tgt = inputs(3)
    src_keep, tgt_keep = padding([5, 1, 3], N), padding([4, 4, 2], M)
    got, (w_self, w_cross) = ours(tgt, src, mask=tgt_keep, memory_mask=src_keep)
    expected = theirs(tgt, src, **torch_masks(tgt=tgt_keep, memory=src_keep))
    assert torch.allclose(got, expected, rtol=0, atol=1e-12)
    assert w_self.shape == (B, H, M, M) and w_cross.shape == (B, H, M, N)
    assert any(name.endswith("bias") for name, _ in ours.named_parameters()) == bias


def test_decoder_layer_is_three_residual_sub_layers_each_followed_by_layer_norm():
    torch.manual_seed(5)
    layer = CrossAttentionDecoderLayer(D, H, D_FF).double()
    scramble_norms(layer)
    src, tgt = inputs(4)
    out, _ = layer(tgt, src)
    causal = torch.ones(M, M, dtype=torch.bool).tril()
    y1 = layer.norm1(tgt + layer.self_attn(tgt, mask=causal)[0])
    y2 = layer.norm2(y1 + layer.cross_attn(y1, src)[0])
    y3 = layer.norm3(y2 + layer.linear2(torch.relu(layer.linear1(y2))))
    assert torch.allclose(out, y3, rtol=0, atol=1e-12)


def test_nothing_leaks_from_later_target_positions():
    torch.manual_seed(6)
    model = EncoderDecoderTransformer(D, H, D_FF, encoder_layers=1, decoder_layers=2).double()
    src, tgt = inputs(5)
    out, _ = model(src, tgt)
    changed = tgt.clone()
    changed[:, 2:] = torch.randn(B, M - 2, D, dtype=F64)  # change positions 2 and 3
    out_changed, _ = model(src, changed)
    assert torch.allclose(out[:, :2], out_changed[:, :2], rtol=0, atol=1e-12)
    assert not torch.allclose(out[:, 2:], out_changed[:, 2:])


def test_every_source_token_reaches_every_target_position():
    torch.manual_seed(7)
    model = EncoderDecoderTransformer(D, H, D_FF, encoder_layers=1, decoder_layers=1).double()
    src, tgt = inputs(6)
    out, _ = model(src, tgt)
    changed = src.clone()
    changed[:, -1] += 1.0  # the last source token only
    out_changed, _ = model(changed, tgt)
    assert not torch.isclose(out, out_changed).all(dim=-1).any()  # every target position moves


def test_training_mode_dropout_falls_where_torch_puts_it():
    torch.manual_seed(8)
    theirs = torch_transformer(dropout=0.3)
    ours = EncoderDecoderTransformer.from_torch(theirs)
    src, tgt = inputs(7)
    keep = padding([5, 4, 2], N)
    torch.manual_seed(9)
    expected = theirs(src, tgt, **torch_masks(src=keep, memory=keep))
    torch.manual_seed(9)
    got, _ = ours(src, tgt, src_mask=keep, memory_mask=keep)
    assert torch.allclose(got, expected, rtol=0, atol=1e-12)
    ours.eval()
    assert not torch.allclose(ours(src, tgt, src_mask=keep, memory_mask=keep)[0], got)


def test_without_final_norms():
    torch.manual_seed(10)
    theirs = torch_transformer()
    theirs.encoder.norm = theirs.decoder.norm = None
    ours = EncoderDecoderTransformer.from_torch(theirs)
    assert ours.encoder_norm is None and ours.decoder_norm is None
    src, tgt = inputs(8)
    expected = theirs(src, tgt, **torch_masks())
    assert torch.allclose(ours(src, tgt)[0], expected, rtol=0, atol=1e-12)
    plain = EncoderDecoderTransformer(D, H, D_FF, final_norm=False)
    assert plain.encoder_norm is None and plain.decoder_norm is None
    assert len(plain.encoder_layers) == len(plain.decoder_layers) == 6  # the paper's N


def test_copies_refuse_what_they_cannot_copy():
    with pytest.raises(ValueError, match="post-norm"):
        EncoderDecoderTransformer.from_torch(torch_transformer(norm_first=True))
    with pytest.raises(ValueError, match="ReLU"):
        EncoderDecoderTransformer.from_torch(torch_transformer(activation="gelu"))
    with pytest.raises(ValueError, match="eps"):
        EncoderDecoderTransformer.from_torch(torch_transformer(layer_norm_eps=1e-6))
    theirs = torch_transformer()
    theirs.decoder.norm = None
    with pytest.raises(ValueError, match="both final norms"):
        EncoderDecoderTransformer.from_torch(theirs)
    with pytest.raises(ValueError, match="post-norm"):
        CrossAttentionDecoderLayer.from_torch(
            torch.nn.TransformerDecoderLayer(D, H, D_FF, norm_first=True)
        )


def test_inputs_are_checked_and_errors_name_the_shapes():
    model = EncoderDecoderTransformer(D, H, D_FF, encoder_layers=1, decoder_layers=1)
    src, tgt = torch.randn(2, N, D), torch.randn(2, M, D)
    with pytest.raises(ValueError, match=r"y of shape \(2, 4, 6\).*d_model = 8"):
        model(src, torch.randn(2, M, 6))
    with pytest.raises(ValueError, match=r"x_query of shape \(2, 5, 6\)"):
        model(torch.randn(2, N, 6), tgt)
    with pytest.raises(ValueError, match=r"masks of shapes \(4, 4\), \(2, 1, 3\)"):
        model(src, tgt, tgt_mask=torch.ones(2, 1, 3, dtype=torch.bool))
    with pytest.raises(ValueError, match=r"mask of shape \(2, 1, 4\) does not fit"):
        model(src, tgt, memory_mask=torch.ones(2, 1, 4, dtype=torch.bool))
    with pytest.raises(TypeError, match="boolean"):
        model(src, tgt, tgt_mask=torch.ones(2, 1, M))
    with pytest.raises(TypeError, match=r"torch\.Tensor"):
        model(src, tgt.numpy())
    with pytest.raises(ValueError, match="encoder_layers must be a positive integer"):
        EncoderDecoderTransformer(D, H, D_FF, encoder_layers=0)
    with pytest.raises(ValueError, match="not divisible"):
        CrossAttentionDecoderLayer(6, 4, D_FF)


# --- NumPy ---------------------------------------------------------------------------------


def bias_free(seed, layers=(2, 2), final_norm=True):
    torch.manual_seed(seed)
    model = EncoderDecoderTransformer(
        D,
        H,
        D_FF,
        encoder_layers=layers[0],
        decoder_layers=layers[1],
        bias=False,
        attention_bias=False,
        final_norm=final_norm,
    ).double()
    scramble_norms(model, seed)
    return model


@pytest.mark.parametrize("final_norm", [True, False])
def test_numpy_forward_equals_the_pytorch_model(final_norm):
    model = bias_free(11, final_norm=final_norm)
    params = model.numpy_parameters()
    src, tgt = inputs(9)
    src_keep, tgt_keep = padding([5, 2, 3], N), padding([4, 1, 3], M)
    with torch.no_grad():
        expected, w_expected = model(src, tgt, src_keep, tgt_keep, src_keep)
    out, w = encoder_decoder(
        src.numpy(),
        tgt.numpy(),
        params,
        src_mask=src_keep.numpy(),
        tgt_mask=tgt_keep.numpy(),
        memory_mask=src_keep.numpy(),
    )
    assert out.dtype == np.float64
    assert np.allclose(out, expected.numpy(), rtol=0, atol=1e-12)
    for kind in ("encoder", "decoder", "cross"):
        for a, e in zip(w[kind], w_expected[kind]):
            assert np.allclose(a, e.numpy(), rtol=0, atol=1e-12)


def test_numpy_forward_equals_nn_transformer_without_biases():
    torch.manual_seed(12)
    theirs = torch_transformer(bias=False)
    scramble_norms(theirs)
    params = EncoderDecoderTransformer.from_torch(theirs).numpy_parameters()
    src, tgt = inputs(10)
    keep = padding([5, 3, 4], N)
    expected = theirs(src, tgt, **torch_masks(src=keep, memory=keep))
    out, _ = encoder_decoder(
        src.numpy(), tgt.numpy(), params, src_mask=keep.numpy(), memory_mask=keep.numpy()
    )
    assert np.allclose(out, expected.detach().numpy(), rtol=0, atol=1e-12)


def test_numpy_layers_are_their_formulas():
    rng = np.random.default_rng(13)
    X = rng.normal(size=(2, N, D))
    gamma, beta = rng.uniform(0.5, 1.5, D), rng.normal(size=D)
    ln = layer_norm(X, gamma, beta)
    expected = torch.nn.functional.layer_norm(
        torch.from_numpy(X), (D,), torch.from_numpy(gamma), torch.from_numpy(beta)
    )
    assert np.allclose(ln, expected.numpy(), rtol=0, atol=1e-12)
    assert np.allclose(layer_norm(X).mean(-1), 0) and np.allclose(
        layer_norm(X).var(-1), 1, atol=1e-4
    )
    W_1, W_2 = rng.normal(size=(D, D_FF)), rng.normal(size=(D_FF, D))
    assert np.allclose(feed_forward(X, W_1, W_2), np.maximum(X @ W_1, 0) @ W_2)
    assert (
        feed_forward(X.astype(np.float32), W_1.astype(np.float32), W_2.astype(np.float32)).dtype
        == np.float32
    )
    model = bias_free(14, layers=(1, 1), final_norm=False)
    params = model.numpy_parameters()
    src, tgt = inputs(11)
    with torch.no_grad():
        enc, w_enc = model.encoder_layers[0](src)
        dec, (w_self, w_cross) = model.decoder_layers[0](tgt, src)
    got, w = encoder_layer(src.numpy(), params["encoder"][0], H)
    assert np.allclose(got, enc.numpy(), rtol=0, atol=1e-12) and np.allclose(w, w_enc.numpy())
    got, (ws, wc) = decoder_layer(tgt.numpy(), src.numpy(), params["decoder"][0], H)
    assert np.allclose(got, dec.numpy(), rtol=0, atol=1e-12)
    assert np.allclose(ws, w_self.numpy()) and np.allclose(wc, w_cross.numpy())
    assert np.all(np.triu(ws, 1) == 0)


def test_numpy_errors_name_the_shapes():
    X = np.ones((2, N, D))
    with pytest.raises(ValueError, match=r"X of shape \(2, 5, 8\).*the width of gamma = 6"):
        layer_norm(X, np.ones(6))
    with pytest.raises(ValueError, match=r"gamma must have shape \(d_model,\)"):
        layer_norm(X, np.ones((1, D)))
    with pytest.raises(ValueError, match=r"X of shape \(2, 5, 8\).*rows of W_1\) = 6"):
        feed_forward(X, np.ones((6, D_FF)), np.ones((D_FF, D)))
    with pytest.raises(ValueError, match=r"W_1 of shape \(8, 16\).*rows of W_2\) = 12"):
        feed_forward(X, np.ones((D, D_FF)), np.ones((12, D)))
    with pytest.raises(ValueError, match="NaN"):
        layer_norm(np.full((2, 3), np.nan))
    params = bias_free(15, layers=(1, 1)).numpy_parameters()
    with pytest.raises(ValueError, match=r"masks of shapes \(4, 4\), \(2, 1, 3\)"):
        decoder_layer(np.ones((2, M, D)), X, params["decoder"][0], H, mask=np.ones((2, 1, 3), bool))
    with pytest.raises(ValueError, match="without biases"):
        EncoderDecoderTransformer(D, H, D_FF, encoder_layers=1, decoder_layers=1).numpy_parameters()
