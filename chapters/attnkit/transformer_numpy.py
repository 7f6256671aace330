"""The encoder-decoder Transformer's forward pass in NumPy: the formulas, composed.

Each function is one line of the architecture, built on :func:`attnkit.core.multi_head_attention`;
vectors are rows, as everywhere in the book. The model here has no biases: it is the PyTorch
model built with ``bias=False, attention_bias=False``, whose method
:meth:`~attnkit.transformer.EncoderDecoderTransformer.numpy_parameters` exports its weights
in the form below. So each sub-layer is exactly its formula:

- ``layer_norm(X, gamma)``: each row scaled to mean 0 and variance 1, times ``gamma``
- ``feed_forward(X, W_1, W_2) = ReLU(X W_1) W_2``
- ``encoder_layer``: ``X1 = LN(X + MultiHead(X, X))``, ``LN(X1 + FFN(X1))``
- ``decoder_layer``: ``Y1 = LN(Y + MultiHead(Y, Y, causal))``, ``Y2 = LN(Y1 + MultiHead(Y1,
  M))``, ``LN(Y2 + FFN(Y2))``
- ``encoder_decoder``: the stacks, with a final LayerNorm after each when the parameters
  have ``final_norms``

Masks are boolean, True = may attend, as in :mod:`attnkit.core`. Parameters: an attention is
a dict ``{"W_Q", "W_K", "W_V", "W_O"}`` of ``(d_model, d_model)`` matrices, an FFN
``{"W_1": (d_model, d_ff), "W_2": (d_ff, d_model)}``, a layer ``{"self_attn", "ffn",
"norms"}`` (a decoder layer also ``"cross_attn"``; ``norms`` holds the ``gamma`` of each
LayerNorm, two or three), and a model ``{"h", "encoder", "decoder", "final_norms"}``.
"""

from __future__ import annotations

import numpy as np

from . import rules
from .core import as_float_array, causal_mask, combine_masks, multi_head_attention

__all__ = ["layer_norm", "feed_forward", "encoder_layer", "decoder_layer", "encoder_decoder"]


def layer_norm(X, gamma=None, beta=None, *, eps: float = 1e-5) -> np.ndarray:
    """``(X - mean) / sqrt(var + eps) * gamma + beta`` over each row's ``d_model`` entries.

    ``X`` is ``(..., n, d_model)``; ``gamma`` and ``beta`` (default 1 and 0) are
    ``(d_model,)``. The variance is the biased one (divided by ``d_model``), as
    ``nn.LayerNorm`` computes it.
    """
    x = as_float_array(X, "X")
    rules.check_tokens("X", x.shape, "(tokens, d_model)")
    eps = rules.positive_finite(eps, "eps")
    for value, name in ((gamma, "gamma"), (beta, "beta")):
        if value is not None:
            value = as_float_array(value, name)
            rules.check_ndim(name, value.shape, "(d_model,)", (1,))
            rules.check_tokens(
                "X", x.shape, "(tokens, d_model)", value.shape[0], f"the width of {name}"
            )
    mean = x.mean(axis=-1, keepdims=True)
    var = x.var(axis=-1, keepdims=True)  # biased, as nn.LayerNorm
    out = (x - mean) / np.sqrt(var + eps)
    if gamma is not None:
        out = out * np.asarray(gamma)
    if beta is not None:
        out = out + np.asarray(beta)
    return out


def feed_forward(X, W_1, W_2) -> np.ndarray:
    """``ReLU(X W_1) W_2``, on each row alone: ``(..., n, d_model) -> (..., n, d_out)``."""
    x = as_float_array(X, "X")
    w1, w2 = as_float_array(W_1, "W_1"), as_float_array(W_2, "W_2")
    rules.check_ndim("W_1", w1.shape, "(d_model, d_ff)", (2,))
    rules.check_ndim("W_2", w2.shape, "(d_ff, d_out)", (2,))
    rules.check_tokens("X", x.shape, "(tokens, d_model)", w1.shape[0], "d_model (the rows of W_1)")
    rules.check_tokens("W_1", w1.shape, "(d_model, d_ff)", w2.shape[0], "d_ff (the rows of W_2)")
    return np.maximum(x @ w1, 0) @ w2


def _attend(X_query, X_source, attention: dict, h: int, mask):
    p = attention
    return multi_head_attention(
        X_query, X_source, p["W_Q"], p["W_K"], p["W_V"], p["W_O"], h, mask=mask
    )


def encoder_layer(X, params: dict, h: int, *, mask=None):
    """One post-norm encoder layer on ``X`` ``(..., n, d_model)``: returns ``(output, weights)``
    of shapes ``(..., n, d_model)`` and ``(..., h, n, n)``. ``mask`` broadcasts to ``(..., n, n)``."""
    norm1, norm2 = params["norms"]
    attended, weights = _attend(X, X, params["self_attn"], h, mask)
    X1 = layer_norm(X + attended, norm1)
    return layer_norm(X1 + feed_forward(X1, **params["ffn"]), norm2), weights


def decoder_layer(Y, memory, params: dict, h: int, *, mask=None, memory_mask=None):
    """One post-norm decoder layer: masked self-attention over ``Y`` ``(..., m, d_model)``,
    cross-attention over ``memory`` ``(..., n, d_model)``, the FFN.

    The self-attention is causal; ``mask`` (broadcasting to ``(..., m, m)``) hides more keys,
    ``memory_mask`` (to ``(..., m, n)``) hides memory positions. Returns ``(output,
    (self_weights, cross_weights))``: ``(..., m, d_model)``, ``(..., h, m, m)``, ``(..., h,
    m, n)``.
    """
    y = as_float_array(Y, "Y")
    rules.check_tokens("Y", y.shape, "(tokens, d_model)")
    causal = causal_mask(y.shape[-2])  # (m, m)
    self_mask = causal if mask is None else combine_masks(causal, mask)
    norm1, norm2, norm3 = params["norms"]
    attended, self_weights = _attend(y, y, params["self_attn"], h, self_mask)
    Y1 = layer_norm(y + attended, norm1)
    fetched, cross_weights = _attend(Y1, memory, params["cross_attn"], h, memory_mask)
    Y2 = layer_norm(Y1 + fetched, norm2)
    return layer_norm(Y2 + feed_forward(Y2, **params["ffn"]), norm3), (self_weights, cross_weights)


def encoder_decoder(src, tgt, params: dict, *, src_mask=None, tgt_mask=None, memory_mask=None):
    """The whole model: the encoder on ``src`` ``(..., n, d_model)``, then the decoder on
    ``tgt`` ``(..., m, d_model)`` reading the encoder's output. Masks as in
    :func:`encoder_layer` and :func:`decoder_layer`.

    Returns ``(output, weights)``: ``(..., m, d_model)`` and ``{"encoder": [...], "decoder":
    [...], "cross": [...]}``, one weight tensor per layer.
    """
    h = params["h"]
    final = params.get("final_norms")
    weights = {"encoder": [], "decoder": [], "cross": []}
    memory = src
    for layer in params["encoder"]:
        memory, w = encoder_layer(memory, layer, h, mask=src_mask)
        weights["encoder"].append(w)
    if final is not None:
        memory = layer_norm(memory, final[0])
    out = tgt
    for layer in params["decoder"]:
        out, (w_self, w_cross) = decoder_layer(
            out, memory, layer, h, mask=tgt_mask, memory_mask=memory_mask
        )
        weights["decoder"].append(w_self)
        weights["cross"].append(w_cross)
    if final is not None:
        out = layer_norm(out, final[1])
    return out, weights
