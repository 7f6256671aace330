"""The whole Transformer of Vaswani et al. (2017): a stack of encoder layers and a stack of
decoder layers, in PyTorch, built from :mod:`attnkit.modules`.

The encoder is a stack of :class:`attnkit.modules.EncoderLayer`. Each decoder layer
(:class:`CrossAttentionDecoderLayer`) has three sub-layers, each followed by a residual
connection and LayerNorm (post-norm, as in the paper and in ``nn.TransformerDecoderLayer``'s
default): causal (masked) self-attention over the target, cross-attention from the target to
the encoder's output (the *memory*), and the position-wise feed-forward network.
:class:`EncoderDecoderTransformer` joins the two stacks as ``nn.Transformer`` does, with a
final LayerNorm after each stack; it takes vectors and returns vectors (embeddings,
positional encoding and a read-out go around it). Its :meth:`~EncoderDecoderTransformer.from_torch`
copies an ``nn.Transformer``'s weights, and the copy computes the same function.

Masks are the book's: boolean, True = may attend (see :mod:`attnkit.modules`). This module's
decoder layers are not :class:`attnkit.decoding.DecoderLayer`, the pre-norm layer of a
decoder-only model, which has no cross-attention.
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

from . import rules
from .modules import EncoderLayer, MultiHeadAttention, _as_mask, _check_input

__all__ = ["CrossAttentionDecoderLayer", "EncoderDecoderTransformer"]


def _causal_and(mask, n: int, device) -> torch.Tensor:
    """The ``(n, n)`` causal mask, and ``mask`` where one is given (checked to combine with it)."""
    causal = torch.ones(n, n, dtype=torch.bool, device=device).tril()
    if mask is None:
        return causal
    mask = _as_mask(mask, device)
    rules.check_masks_combine([causal.shape, mask.shape])
    return causal & mask


def _check_post_norm(layer, what: str) -> None:
    """Raise unless ``layer`` (an ``nn.Transformer*Layer``) is post-norm, ReLU, LayerNorm eps 1e-5."""
    relu = layer.activation is F.relu or isinstance(layer.activation, nn.ReLU)
    if layer.norm_first or not relu:
        raise ValueError(f"only post-norm (norm_first=False) {what} with ReLU can be copied")
    norms = [m for name, m in layer.named_children() if name.startswith("norm")]
    if any(norm.eps != 1e-5 for norm in norms):
        raise ValueError(f"only {what} with LayerNorm eps = 1e-5 can be copied")


class CrossAttentionDecoderLayer(nn.Module):
    """One decoder layer of the original Transformer, post-norm: three sub-layers.

    With ``Y`` the target's vectors ``(..., m, d_model)`` and ``M`` the encoder's output
    ``(..., n, d_model)``::

        Y1 = LayerNorm(Y  + MultiHead(Y, Y, causal mask))     # masked self-attention
        Y2 = LayerNorm(Y1 + MultiHead(Y1, M))                  # cross-attention
        Y3 = LayerNorm(Y2 + FFN(Y2)),  FFN(x) = ReLU(x W_1 + b_1) W_2 + b_2

    ``forward(y, memory, mask=None, memory_mask=None)``: the self-attention is always
    causal (query ``i`` sees target positions ``0 .. i``); ``mask`` (boolean, True = may
    attend, broadcasting to ``(..., m, m)``, e.g. a ``(b, 1, m)`` padding mask) hides more
    keys. ``memory_mask`` broadcasts to ``(..., m, n)`` (e.g. the source's ``(b, 1, n)``
    padding mask). Returns ``(output, (self_weights, cross_weights))`` of shapes ``(...,
    m, d_model)``, ``(..., h, m, m)`` and ``(..., h, m, n)``.

    ``bias``, ``attention_bias``, ``dropout`` and ``all_masked`` are as in
    :class:`attnkit.modules.EncoderLayer`; dropout acts in training mode at the six sites
    of ``nn.TransformerDecoderLayer`` (both attentions' weights, both attention outputs,
    inside the FFN and its output), drawing its random numbers in the same order.
    """

    def __init__(
        self,
        d_model: int,
        h: int,
        d_ff: int,
        *,
        dropout: float = 0.0,
        bias: bool = True,
        attention_bias: bool = True,
        all_masked: str = "raise",
    ):
        super().__init__()
        d_ff = rules.positive_int(d_ff, "d_ff")
        attention = dict(bias=attention_bias, dropout=dropout, all_masked=all_masked)
        self.self_attn = MultiHeadAttention(d_model, h, **attention)
        self.cross_attn = MultiHeadAttention(d_model, h, **attention)
        d_model = self.self_attn.d_model
        self.linear1 = nn.Linear(d_model, d_ff, bias=bias)
        self.linear2 = nn.Linear(d_ff, d_model, bias=bias)
        self.norm1 = nn.LayerNorm(d_model, bias=bias)
        self.norm2 = nn.LayerNorm(d_model, bias=bias)
        self.norm3 = nn.LayerNorm(d_model, bias=bias)
        self.dropout = nn.Dropout(dropout)

    def forward(self, y, memory, mask=None, memory_mask=None):
        _check_input(y, "y")
        rules.check_tokens("y", y.shape, "(tokens, d_model)", self.self_attn.d_model)
        causal = _causal_and(mask, y.shape[-2], y.device)  # (..., m, m)
        attended, self_weights = self.self_attn(y, mask=causal)  # (..., m, d), (..., h, m, m)
        y = self.norm1(y + self._dropout_sequence_first(attended))
        fetched, cross_weights = self.cross_attn(y, memory, mask=memory_mask)  # (..., h, m, n)
        y = self.norm2(y + self._dropout_sequence_first(fetched))
        inner = self.dropout(torch.relu(self.linear1(y)))  # (..., m, d_ff)
        y = self.norm3(y + self.dropout(self.linear2(inner)))  # (..., m, d)
        return y, (self_weights, cross_weights)

    def _dropout_sequence_first(self, x):
        """Dropout of an attention output ``(b, m, d)``, its random numbers drawn for ``(m, b, d)``,
        the memory order of ``nn.MultiheadAttention``'s output (as in ``EncoderLayer``)."""
        if x.dim() != 3:
            return self.dropout(x)
        return self.dropout(x.transpose(0, 1).contiguous()).transpose(0, 1)

    @classmethod
    def from_torch(
        cls, layer: nn.TransformerDecoderLayer, *, all_masked: str = "raise"
    ) -> CrossAttentionDecoderLayer:
        """A copy of a post-norm, ReLU ``nn.TransformerDecoderLayer``'s weights and dropout.

        The copy has the layer's dtype, so nothing is rounded, and its biases (or none).
        ``layer.multihead_attn`` becomes ``cross_attn``. LayerNorm's eps must be 1e-5.
        """
        _check_post_norm(layer, "decoder layers")
        attn = layer.self_attn
        ours = cls(
            attn.embed_dim,
            attn.num_heads,
            layer.linear1.out_features,
            dropout=layer.dropout.p,
            bias=layer.linear1.bias is not None,
            attention_bias=attn.in_proj_bias is not None,
            all_masked=all_masked,
        ).to(attn.in_proj_weight.dtype)
        ours.self_attn = MultiHeadAttention.from_torch(attn, all_masked=all_masked)
        ours.cross_attn = MultiHeadAttention.from_torch(layer.multihead_attn, all_masked=all_masked)
        for name in ("linear1", "linear2", "norm1", "norm2", "norm3"):
            getattr(ours, name).load_state_dict(getattr(layer, name).state_dict())
        return ours


class EncoderDecoderTransformer(nn.Module):
    """The encoder-decoder Transformer: ``nn.Transformer``'s function in the book's conventions.

    A stack of ``encoder_layers`` post-norm encoder layers
    (:class:`~attnkit.modules.EncoderLayer`) reads the source ``(..., n, d_model)``; a stack
    of ``decoder_layers`` decoder layers (:class:`CrossAttentionDecoderLayer`) reads the
    target ``(..., m, d_model)`` and, in each cross-attention, the encoder's output (the
    memory). With ``final_norm`` (the default, as in ``nn.Transformer``) a LayerNorm
    follows each stack, so the memory and the output are ``LayerNorm(last layer's
    output)``; the paper has no such norm (each post-norm layer already ends in one), and
    ``final_norm=False`` leaves it out. Every layer has the same ``d_model``, ``h`` and
    ``d_ff``; ``dropout``, ``bias``, ``attention_bias`` and ``all_masked`` are passed to
    every layer (``bias`` to the final norms too).

    - ``encode(src, src_mask=None)`` returns ``(memory, weights)``: the memory ``(..., n,
      d_model)`` and one ``(..., h, n, n)`` tensor per encoder layer.
    - ``decode(tgt, memory, tgt_mask=None, memory_mask=None)`` returns ``(output,
      self_weights, cross_weights)``: ``(..., m, d_model)``, and per decoder layer
      ``(..., h, m, m)`` and ``(..., h, m, n)``.
    - ``forward(src, tgt, src_mask=None, tgt_mask=None, memory_mask=None)`` does both and
      returns ``(output, weights)`` with ``weights = {"encoder": [...], "decoder": [...],
      "cross": [...]}``.

    Masks are boolean, True = may attend: ``src_mask`` broadcasts to ``(..., n, n)``,
    ``tgt_mask`` to ``(..., m, m)`` and is combined with the causal mask, which the decoder
    always applies; ``memory_mask`` broadcasts to ``(..., m, n)``. For a batch padded on
    the right, pass the source's ``padding_mask`` ``(b, 1, n)`` as ``src_mask`` and
    ``memory_mask``, and the target's ``(b, 1, m)`` as ``tgt_mask``; these are
    ``nn.Transformer``'s ``src_key_padding_mask``, ``memory_key_padding_mask`` and
    ``tgt_key_padding_mask``, negated (there True = hidden).
    """

    def __init__(
        self,
        d_model: int,
        h: int,
        d_ff: int,
        *,
        encoder_layers: int = 6,
        decoder_layers: int = 6,
        dropout: float = 0.0,
        bias: bool = True,
        attention_bias: bool = True,
        final_norm: bool = True,
        all_masked: str = "raise",
    ):
        super().__init__()
        layer = dict(
            dropout=dropout, bias=bias, attention_bias=attention_bias, all_masked=all_masked
        )
        encoder_layers = rules.positive_int(encoder_layers, "encoder_layers")
        decoder_layers = rules.positive_int(decoder_layers, "decoder_layers")
        self.encoder_layers = nn.ModuleList(
            EncoderLayer(d_model, h, d_ff, **layer) for _ in range(encoder_layers)
        )
        self.decoder_layers = nn.ModuleList(
            CrossAttentionDecoderLayer(d_model, h, d_ff, **layer) for _ in range(decoder_layers)
        )
        d_model = self.encoder_layers[0].self_attn.d_model
        self.encoder_norm = nn.LayerNorm(d_model, bias=bias) if final_norm else None
        self.decoder_norm = nn.LayerNorm(d_model, bias=bias) if final_norm else None

    def encode(self, src, src_mask=None):
        weights = []
        x = src
        for layer in self.encoder_layers:
            x, w = layer(x, mask=src_mask)  # (..., n, d), (..., h, n, n)
            weights.append(w)
        if self.encoder_norm is not None:
            x = self.encoder_norm(x)
        return x, weights

    def decode(self, tgt, memory, tgt_mask=None, memory_mask=None):
        self_weights, cross_weights = [], []
        y = tgt
        for layer in self.decoder_layers:
            y, (w_self, w_cross) = layer(y, memory, mask=tgt_mask, memory_mask=memory_mask)
            self_weights.append(w_self)  # (..., h, m, m)
            cross_weights.append(w_cross)  # (..., h, m, n)
        if self.decoder_norm is not None:
            y = self.decoder_norm(y)
        return y, self_weights, cross_weights

    def forward(self, src, tgt, src_mask=None, tgt_mask=None, memory_mask=None):
        memory, encoder_weights = self.encode(src, src_mask)
        out, self_weights, cross_weights = self.decode(tgt, memory, tgt_mask, memory_mask)
        weights = {"encoder": encoder_weights, "decoder": self_weights, "cross": cross_weights}
        return out, weights

    @classmethod
    def from_torch(cls, model: nn.Transformer, *, all_masked: str = "raise"):
        """A copy of an ``nn.Transformer``'s weights and dropout: the same function.

        Its layers must be post-norm with ReLU and LayerNorm eps 1e-5 (``nn.Transformer``'s
        defaults), and its two final norms both present or both absent. The copy has the
        model's dtype. It takes batch-first inputs ``(b, n, d_model)`` whatever the
        original's ``batch_first``.
        """
        encoder, decoder = model.encoder, model.decoder
        if (encoder.norm is None) != (decoder.norm is None):
            raise ValueError("only a model with both final norms, or neither, can be copied")
        for layer in encoder.layers:
            _check_post_norm(layer, "encoder layers")
        first = encoder.layers[0]
        ours = cls(
            first.self_attn.embed_dim,
            first.self_attn.num_heads,
            first.linear1.out_features,
            encoder_layers=len(encoder.layers),
            decoder_layers=len(decoder.layers),
            dropout=first.dropout.p,
            bias=first.linear1.bias is not None,
            attention_bias=first.self_attn.in_proj_bias is not None,
            final_norm=encoder.norm is not None,
            all_masked=all_masked,
        ).to(first.self_attn.in_proj_weight.dtype)
        ours.encoder_layers = nn.ModuleList(
            EncoderLayer.from_torch(layer, all_masked=all_masked) for layer in encoder.layers
        )
        ours.decoder_layers = nn.ModuleList(
            CrossAttentionDecoderLayer.from_torch(layer, all_masked=all_masked)
            for layer in decoder.layers
        )
        if encoder.norm is not None:
            for norm in (encoder.norm, decoder.norm):
                if norm.eps != 1e-5:
                    raise ValueError("only final norms with LayerNorm eps = 1e-5 can be copied")
            ours.encoder_norm.load_state_dict(encoder.norm.state_dict())
            ours.decoder_norm.load_state_dict(decoder.norm.state_dict())
        return ours

    def numpy_parameters(self) -> dict:
        """The weights as NumPy arrays in the book's orientation, for
        :func:`attnkit.transformer_numpy.encoder_decoder`.

        Only a model without biases (``bias=False, attention_bias=False``) is exported:
        the NumPy forward pass is the formulas without them. Each attention is ``{"W_Q",
        "W_K", "W_V", "W_O"}`` (``W_Q = w_q.weight.T``), each FFN ``{"W_1", "W_2"}``, each
        LayerNorm its scale ``gamma``.
        """
        if any(name.endswith("bias") for name, _ in self.named_parameters()):
            raise ValueError(
                "only a model without biases (bias=False, attention_bias=False) can be "
                "exported: the NumPy forward pass has none"
            )

        def matrix(linear):
            return linear.weight.detach().cpu().numpy().T.copy()

        def attention(attn):
            return {f"W_{c}": matrix(getattr(attn, f"w_{c.lower()}")) for c in "QKVO"}

        def gamma(norm):
            return norm.weight.detach().cpu().numpy().copy()

        def common(layer, norms):
            return {
                "self_attn": attention(layer.self_attn),
                "ffn": {"W_1": matrix(layer.linear1), "W_2": matrix(layer.linear2)},
                "norms": [gamma(getattr(layer, name)) for name in norms],
            }

        encoder = [common(layer, ["norm1", "norm2"]) for layer in self.encoder_layers]
        decoder = [
            {
                **common(layer, ["norm1", "norm2", "norm3"]),
                "cross_attn": attention(layer.cross_attn),
            }
            for layer in self.decoder_layers
        ]
        final = None
        if self.encoder_norm is not None:
            final = [gamma(self.encoder_norm), gamma(self.decoder_norm)]
        return {
            "h": self.encoder_layers[0].self_attn.h,
            "encoder": encoder,
            "decoder": decoder,
            "final_norms": final,
        }
