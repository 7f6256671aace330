"""Attention in PyTorch: the NumPy functions of ``core`` as ``nn.Module``s.

Conventions are the book's (see the preface): vectors are rows, a set of ``n``
vectors of width ``d`` is an ``(n, d)`` tensor (with optional leading batch
axes), and attention weights are ``(queries, keys)``.

Masks are BOOLEAN tensors in which True means "this query may attend to this
key", exactly like the boolean ``attn_mask`` of
``torch.nn.functional.scaled_dot_product_attention`` (and the opposite of
``nn.MultiheadAttention``, where True means "masked out"). A query row whose
mask is all False raises ``ValueError`` by default; with
``all_masked="zero"`` its weights and output are zero, which is what
``F.scaled_dot_product_attention`` returns. NaN is never returned.

Inputs are checked by the same rules as the NumPy functions (:mod:`attnkit.rules`),
so the same bad input raises the same ``ValueError`` or ``TypeError`` with the same
message from either half. Two differences follow the libraries: tensors of any
floating-point dtype are accepted (NumPy: float32 and float64, integers converted),
and a NumPy boolean mask is accepted too (converted with ``torch.as_tensor``).
"""

from __future__ import annotations

import torch
from torch import nn

from . import rules
from .core import sinusoidal_positional_encoding

__all__ = ["ScaledDotProductAttention", "QKVAttention"]


def _dtype_name(t: torch.Tensor) -> str:
    """``float32`` rather than ``torch.float32``: messages read as the NumPy half's."""
    return str(t.dtype).removeprefix("torch.")


def _check_input(t, name: str, *, finite: bool = True) -> None:
    """The NumPy half's input rule: floating-point numbers, all of them finite (unless not
    ``finite``). A tensor on the meta device holds no numbers, so none is checked there."""
    check_tensor(name, type(t).__name__, is_tensor=isinstance(t, torch.Tensor))
    is_float = t.is_floating_point()
    read_numbers = finite and is_float and not t.is_meta
    rules.check_floats(
        name,
        t.shape,
        _dtype_name(t),
        is_float=is_float,
        finite=not read_numbers or bool(torch.isfinite(t).all()),
    )


def _check_joins(t, name: str, like: torch.Tensor, into: str, *, same_dtype: bool = True) -> None:
    """``t`` is computed with ``like`` (``into``: a cache, a layer's weights): its dtype and device."""
    rules.check_joins(
        name,
        t.shape,
        _dtype_name(t),
        str(t.device),
        into=into,
        dtype_there=_dtype_name(like) if same_dtype else None,
        device_there=str(like.device),
    )


def _as_mask(mask, device) -> torch.Tensor:
    mask = torch.as_tensor(mask, device=device)
    rules.check_mask_dtype("mask", _dtype_name(mask), is_bool=mask.dtype == torch.bool)
    return mask


class ScaledDotProductAttention(nn.Module):
    """``softmax(Q K^T * scale) V`` with an optional boolean mask (True = may attend).

    No parameters. ``forward(q, k, v, mask=None)`` takes ``q`` ``(..., m,
    d_k)``, ``k`` ``(..., n, d_k)``, ``v`` ``(..., n, d_v)`` and a boolean
    ``mask`` that broadcasts to ``(..., m, n)``; it returns ``(output,
    weights)`` of shapes ``(..., m, d_v)`` and ``(..., m, n)``. ``scale``
    defaults to ``1 / sqrt(d_k)``. Masked keys get weight exactly 0 (their
    scores are set to -inf before the softmax).

    ``dropout`` is the probability with which, in training mode, each weight is
    zeroed (and the others scaled by ``1 / (1 - dropout)``) before the weighted
    sum, where ``F.scaled_dot_product_attention(dropout_p=...)`` and
    ``nn.MultiheadAttention`` drop it; the same seed drops the same weights. The
    weights returned are those before dropout (rows sum to 1), whereas
    ``nn.MultiheadAttention`` returns the dropped ones.

    Where ``F.scaled_dot_product_attention`` differs: it returns zeros for zero
    keys (``n = 0``) where this raises ``ValueError``, and zeros for an
    all-masked row where this raises unless ``all_masked="zero"``.
    """

    def __init__(self, scale: float | None = None, all_masked: str = "raise", dropout: float = 0.0):
        super().__init__()
        rules.check_all_masked(all_masked)
        self.scale = None if scale is None else rules.positive_finite(scale, "scale")
        self.all_masked = all_masked
        self.dropout = nn.Dropout(dropout)

    def forward(self, q, k, v, mask=None):
        for t, name in ((q, "queries"), (k, "keys"), (v, "values")):
            _check_input(t, name)
        rules.check_qkv_shapes(q.shape, k.shape, v.shape)
        scale = self.scale if self.scale is not None else q.shape[-1] ** -0.5
        scores = q @ k.transpose(-2, -1) * scale  # (..., m, n)
        if mask is None:
            weights = torch.softmax(scores, dim=-1)
            return self.dropout(weights) @ v, weights
        mask = _as_mask(mask, scores.device)
        rules.check_mask_fits(mask.shape, scores.shape)
        mask = mask.expand(scores.shape)
        empty = ~mask.any(dim=-1, keepdim=True)  # (..., m, 1): rows with no key left
        if bool(empty.any()):
            rules.apply_all_masked_policy(torch.nonzero(empty[..., 0]).tolist(), self.all_masked)
        # empty rows keep their finite scores (no -inf/-inf = NaN) and are zeroed after
        scores = scores.masked_fill(~mask & ~empty, float("-inf"))
        weights = torch.softmax(scores, dim=-1).masked_fill(empty, 0.0)
        return self.dropout(weights) @ v, weights


def _check_layer_inputs(x_query, x_source, d_model: int) -> None:
    """A layer's inputs: finite floats of shape ``(..., tokens, d_model)``, batches that broadcast."""
    for t, name in ((x_query, "x_query"), (x_source, "x_source")):
        _check_input(t, name)
        rules.check_tokens(name, t.shape, "(tokens, d_model)", d_model)
    rules.broadcast_batch({"x_query": x_query.shape, "x_source": x_source.shape})


class QKVAttention(nn.Module):
    """Query-key-value attention: learned projections, then scaled dot-product attention.

    ``Q = x_query W_Q``, ``K = x_source W_K``, ``V = x_source W_V`` with
    ``W_Q, W_K`` of shape ``(d_model, d_k)`` and ``W_V`` of shape ``(d_model,
    d_v)``. Each is an ``nn.Linear`` without bias, which stores the TRANSPOSE
    of the book's matrix: ``W_Q = self.w_q.weight.T``.

    ``forward(x_query, x_source=None, mask=None)``: ``x_query`` is ``(..., m,
    d_model)``; ``x_source`` (``(..., n, d_model)``) defaults to ``x_query``,
    which makes it self-attention; with an encoder's outputs as ``x_source`` it
    is encoder-decoder (cross-) attention. Returns ``(output, weights)`` of
    shapes ``(..., m, d_v)`` and ``(..., m, n)``; the mask is as in
    :class:`ScaledDotProductAttention`.
    """

    def __init__(
        self, d_model: int, d_k: int, d_v: int | None = None, *, all_masked: str = "raise"
    ):
        super().__init__()
        d_model, d_k = rules.positive_int(d_model, "d_model"), rules.positive_int(d_k, "d_k")
        d_v = d_k if d_v is None else rules.positive_int(d_v, "d_v")
        self.w_q = nn.Linear(d_model, d_k, bias=False)
        self.w_k = nn.Linear(d_model, d_k, bias=False)
        self.w_v = nn.Linear(d_model, d_v, bias=False)
        self.attend = ScaledDotProductAttention(all_masked=all_masked)

    def forward(self, x_query, x_source=None, mask=None):
        x_source = x_query if x_source is None else x_source
        _check_layer_inputs(x_query, x_source, self.w_q.in_features)
        q = self.w_q(x_query)  # (..., m, d_k)
        k = self.w_k(x_source)  # (..., n, d_k)
        v = self.w_v(x_source)  # (..., n, d_v)
        return self.attend(q, k, v, mask)


# --- Chapter 4: multi-head attention, RMSNorm and an encoder layer -------------

__all__ += ["RMSNorm", "MultiHeadAttention", "EncoderLayer"]


class RMSNorm(nn.Module):
    """RMSNorm over the last axis (Zhang and Sennrich, 2019), with a learned gain.

    ``forward(x)`` takes ``x`` ``(..., d)`` and returns ``x / sqrt(mean(x**2) + eps) *
    weight``, of the same shape: each row is divided by its root mean square, and nothing is
    subtracted (LayerNorm also subtracts the row's mean, and adds a bias). ``weight`` ``(d,)``
    starts at ones. ``eps=None`` takes the machine epsilon of ``x``'s dtype, as
    ``nn.RMSNorm`` does; the parameter has ``nn.RMSNorm``'s name, so ``load_state_dict``
    copies one into the other. The formula is written out here; the tests check it against
    ``F.rms_norm`` and ``nn.RMSNorm``. :func:`attnkit.core.rms_norm` is the NumPy twin.
    """

    def __init__(self, d: int, eps: float | None = None):
        super().__init__()
        self.d = rules.positive_int(d, "d")
        self.eps = rules.optional_eps(eps)
        self.weight = nn.Parameter(torch.ones(self.d))

    def forward(self, x):
        _check_input(x, "x")
        rules.check_norm_input("x", x.shape, self.d)
        eps = torch.finfo(x.dtype).eps if self.eps is None else self.eps
        mean_square = x.pow(2).mean(dim=-1, keepdim=True)  # (..., 1)
        return x * torch.rsqrt(mean_square + eps) * self.weight  # (..., d)

    def extra_repr(self) -> str:
        return f"d={self.d}, eps={self.eps}"


class MultiHeadAttention(nn.Module):
    """Multi-head attention with ``h`` heads of width ``d_k = d_model / h``.

    Four ``nn.Linear(d_model, d_model)`` layers hold the projections. Each
    stores the TRANSPOSE of the book's matrix: ``W_Q = w_q.weight.T`` is
    ``(d_model, h*d_k)`` and its columns ``i*d_k .. (i+1)*d_k - 1`` are head
    ``i``'s ``W_Q^i``; likewise ``W_K``, ``W_V``, and ``W_O = w_o.weight.T``
    of shape ``(h*d_v, d_model)``. ``bias`` adds a bias to all four, as
    ``nn.MultiheadAttention`` does by default; ``dropout`` drops attention
    weights in training mode, as there (see :class:`ScaledDotProductAttention`).
    ``qk_norm=True`` adds QK-norm: each head's queries and keys pass through an
    :class:`RMSNorm` of width ``d_k`` (``q_norm`` and ``k_norm``, one gain shared by the
    heads, as in Qwen3 and Gemma 3) after the split and before the scores, so that every
    score lies within ``sqrt(d_k)`` times the largest ``|q_norm.weight * k_norm.weight|``
    of zero, however large the projections grow.

    ``forward(x_query, x_source=None, mask=None, average_weights=False)``:
    ``x_query`` is ``(..., m, d_model)``; ``x_source`` (``(..., n,
    d_model)``) defaults to ``x_query`` (self-attention). ``mask`` is boolean,
    True = may attend, and broadcasts to one head's weights ``(..., m, n)``;
    every head uses it (a causal ``(m, n)`` mask and a padding ``(b, 1, n)``
    mask both fit). Returns ``(output, weights)``: output ``(..., m,
    d_model)``; weights ``(..., h, m, n)``, one matrix per head, or their mean
    over the heads ``(..., m, n)`` with ``average_weights=True`` (what
    ``nn.MultiheadAttention`` returns by default). A row with no allowed key
    raises ``ValueError``, or gives zero weights with ``all_masked="zero"``
    (``nn.MultiheadAttention`` returns NaN there).
    """

    def __init__(
        self,
        d_model: int,
        h: int,
        *,
        bias: bool = True,
        dropout: float = 0.0,
        qk_norm: bool = False,
        all_masked: str = "raise",
    ):
        super().__init__()
        d_model, h = rules.positive_int(d_model, "d_model"), rules.positive_int(h, "h")
        rules.check_heads_divide(f"MultiHeadAttention(d_model={d_model}, h={h})", d_model, h)
        self.d_model, self.h, self.d_k = d_model, h, d_model // h
        self.w_q = nn.Linear(d_model, d_model, bias=bias)
        self.w_k = nn.Linear(d_model, d_model, bias=bias)
        self.w_v = nn.Linear(d_model, d_model, bias=bias)
        self.w_o = nn.Linear(d_model, d_model, bias=bias)
        self.q_norm = RMSNorm(self.d_k) if qk_norm else None  # QK-norm: per head, over d_k
        self.k_norm = RMSNorm(self.d_k) if qk_norm else None
        self.attend = ScaledDotProductAttention(all_masked=all_masked, dropout=dropout)

    def split_heads(self, x):
        """``(..., n, h*d_k) -> (..., h, n, d_k)``: view as ``(n, h, d_k)``, then swap."""
        return x.view(*x.shape[:-1], self.h, self.d_k).transpose(-3, -2)

    def merge_heads(self, x):
        """``(..., h, n, d_k) -> (..., n, h*d_k)``: swap back, then concatenate."""
        x = x.transpose(-3, -2)  # (..., n, h, d_k), not contiguous
        return x.reshape(*x.shape[:-2], self.h * self.d_k)

    def forward(self, x_query, x_source=None, mask=None, average_weights: bool = False):
        x_source = x_query if x_source is None else x_source
        _check_layer_inputs(x_query, x_source, self.d_model)
        if mask is not None:
            mask = _as_mask(mask, x_query.device)
            rules.check_head_mask(
                mask.shape, ("x_query", x_query.shape), ("x_source", x_source.shape)
            )
            mask = mask.reshape(mask.shape[:-2] + (1,) + mask.shape[-2:])  # (..., 1, m, n)
        q = self.split_heads(self.w_q(x_query))  # (..., h, m, d_k)
        k = self.split_heads(self.w_k(x_source))  # (..., h, n, d_k)
        v = self.split_heads(self.w_v(x_source))  # (..., h, n, d_k)
        if self.q_norm is not None:  # QK-norm: each head's queries and keys, RMS 1
            q, k = self.q_norm(q), self.k_norm(k)
        heads, weights = self.attend(q, k, v, mask)  # (..., h, m, d_k), (..., h, m, n)
        out = self.w_o(self.merge_heads(heads))  # (..., m, d_model)
        if average_weights:
            weights = weights.mean(dim=-3)  # (..., m, n)
        return out, weights

    @classmethod
    def from_torch(
        cls, mha: nn.MultiheadAttention, *, all_masked: str = "raise"
    ) -> MultiHeadAttention:
        """A copy of ``mha``'s weights and dropout: the same function, in the book's conventions.

        ``mha.in_proj_weight`` ``(3*d_model, d_model)`` stacks the weights of
        the query, key and value projections (each acting as ``x @ W.T``);
        ``mha.out_proj`` is ``w_o``. The copy has ``mha``'s dtype, so nothing is
        rounded. Only plain layers are supported (no ``kdim``/``vdim``,
        ``add_bias_kv`` or ``add_zero_attn``).
        """
        check_copyable_attention(
            plain=mha._qkv_same_embed_dim and mha.bias_k is None and not mha.add_zero_attn
        )
        d = mha.embed_dim
        bias = mha.in_proj_bias is not None
        ours = cls(d, mha.num_heads, bias=bias, dropout=mha.dropout, all_masked=all_masked)
        ours = ours.to(mha.in_proj_weight.dtype)
        with torch.no_grad():
            for i, lin in enumerate((ours.w_q, ours.w_k, ours.w_v)):
                lin.weight.copy_(mha.in_proj_weight[i * d : (i + 1) * d])
                if bias:
                    lin.bias.copy_(mha.in_proj_bias[i * d : (i + 1) * d])
        ours.w_o.load_state_dict(mha.out_proj.state_dict())
        return ours

    def extra_repr(self) -> str:
        return (
            f"d_model={self.d_model}, h={self.h}, d_k={self.d_k}, qk_norm={self.q_norm is not None}"
        )


class EncoderLayer(nn.Module):
    """One Transformer encoder layer: post-norm as in Vaswani et al. (2017), or pre-norm.

    Post-norm (the default): ``x -> LayerNorm(x + MultiHeadAttention(x))``
    (self-attention and a residual connection), then ``x -> LayerNorm(x + FFN(x))`` with
    the position-wise feed-forward network ``FFN(x) = ReLU(x W_1 + b_1) W_2 + b_2`` of
    inner width ``d_ff``. ``norm_first=True`` gives the pre-norm layer of GPT-2 and later
    models, ``x -> x + MultiHeadAttention(Norm(x))`` then ``x -> x + FFN(Norm(x))``
    (``nn.TransformerEncoderLayer(norm_first=True)``); a stack of them needs one more norm
    after its last layer. ``norm="rms"`` replaces both LayerNorms by :class:`RMSNorm`, and
    ``qk_norm=True`` adds QK-norm to the attention (see :class:`MultiHeadAttention`).
    ``bias=False`` leaves out the biases of the FFN and of the LayerNorms,
    ``attention_bias=False`` those of the four attention projections, so that each head's
    weights are exactly ``softmax(X W_Q^i (X W_K^i)^T / sqrt(d_k))``
    (``nn.TransformerEncoderLayer``'s one ``bias`` sets both).

    ``dropout`` (default 0) acts in training mode at the four sites of
    ``nn.TransformerEncoderLayer``: the attention weights, the attention
    output, inside the FFN and the FFN's output. Each dropout draws its random
    numbers in the memory order of the tensor it drops from, as PyTorch's
    does, so a copy made with :meth:`from_torch` and run on ``(b, n, d_model)``
    inputs after the same seed drops the same entries and gives the same
    output. (The weights returned are those before dropout.)

    ``forward(x, mask=None)`` takes ``x`` ``(..., n, d_model)`` and a mask as
    in :class:`MultiHeadAttention`; returns ``(output, weights)`` of shapes
    ``(..., n, d_model)`` and ``(..., h, n, n)``.
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
        norm_first: bool = False,
        norm: str = "layer",
        qk_norm: bool = False,
        all_masked: str = "raise",
    ):
        super().__init__()
        d_ff = rules.positive_int(d_ff, "d_ff")
        check_norm(norm)
        self.self_attn = MultiHeadAttention(
            d_model, h, bias=attention_bias, dropout=dropout, qk_norm=qk_norm, all_masked=all_masked
        )
        d_model = self.self_attn.d_model
        self.norm_first = bool(norm_first)
        self.linear1 = nn.Linear(d_model, d_ff, bias=bias)
        self.linear2 = nn.Linear(d_ff, d_model, bias=bias)
        if norm == "layer":
            self.norm1 = nn.LayerNorm(d_model, bias=bias)
            self.norm2 = nn.LayerNorm(d_model, bias=bias)
        else:
            self.norm1, self.norm2 = RMSNorm(d_model), RMSNorm(d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x, mask=None):
        if self.norm_first:  # pre-norm: the residual path x is never normalised
            attended, weights = self.self_attn(self.norm1(x), mask=mask)  # (..., n, d)
            x = x + self._dropout_sequence_first(attended)
            return x + self._feed_forward(self.norm2(x)), weights
        attended, weights = self.self_attn(x, mask=mask)  # (..., n, d), (..., h, n, n)
        x = self.norm1(x + self._dropout_sequence_first(attended))  # residual, then LayerNorm
        x = self.norm2(x + self._feed_forward(x))  # (..., n, d)
        return x, weights

    def _feed_forward(self, x):
        """``FFN(x)`` with its two dropouts: inside, after the ReLU, and on its output."""
        inner = self.dropout(torch.relu(self.linear1(x)))  # (..., n, d_ff)
        return self.dropout(self.linear2(inner))  # (..., n, d)

    def _dropout_sequence_first(self, x):
        """Dropout of the attention output ``(b, n, d)``, its random numbers drawn for ``(n, b, d)``.

        ``nn.MultiheadAttention`` computes sequence-first and hands back a
        transposed view; dropout draws in memory order, so this order is what
        lets the same seed drop the same entries as ``nn.TransformerEncoderLayer``.
        """
        if x.dim() != 3:
            return self.dropout(x)
        return self.dropout(x.transpose(0, 1).contiguous()).transpose(0, 1)

    @classmethod
    def from_torch(
        cls, layer: nn.TransformerEncoderLayer, *, all_masked: str = "raise"
    ) -> EncoderLayer:
        """A copy of a ReLU ``nn.TransformerEncoderLayer``'s weights and dropout, post-norm or
        pre-norm (``norm_first``).

        The copy has the layer's dtype, so nothing is rounded, and its biases
        (or none, for ``bias=False``). LayerNorm's eps must be the default 1e-5.
        """
        check_copyable_encoder_layer(
            relu=layer.activation_relu_or_gelu == 1, eps=(layer.norm1.eps, layer.norm2.eps)
        )
        attn = layer.self_attn
        ours = cls(
            attn.embed_dim,
            attn.num_heads,
            layer.linear1.out_features,
            dropout=layer.dropout.p,
            bias=layer.linear1.bias is not None,
            attention_bias=attn.in_proj_bias is not None,
            norm_first=layer.norm_first,
            all_masked=all_masked,
        )
        ours = ours.to(attn.in_proj_weight.dtype)
        ours.self_attn = MultiHeadAttention.from_torch(attn, all_masked=all_masked)
        for name in ("linear1", "linear2", "norm1", "norm2"):
            getattr(ours, name).load_state_dict(getattr(layer, name).state_dict())
        return ours


# --- Chapter 5: positional encoding -------------------------------------------

__all__ += ["SinusoidalPositionalEncoding"]


class SinusoidalPositionalEncoding(nn.Module):
    """Add the Transformer's sinusoidal positional encoding to a sequence of vectors.

    The encoding of positions ``0 .. max_len - 1`` is computed in float64 by
    :func:`attnkit.core.sinusoidal_positional_encoding` and stored as the buffer
    ``pe`` of shape ``(max_len, d_model)``, rounded once to the module's dtype
    (so after ``.double()`` it is the float64 table itself):
    ``pe[p, 2i] = sin(p / 10000^(2i/d_model))`` and ``pe[p, 2i+1] = cos(p /
    10000^(2i/d_model))``; for odd ``d_model`` the last column is a sine. The buffer is registered with ``persistent=False``: it
    moves and changes dtype with the module (``.to(...)``, ``.double()``) but is
    not saved in ``state_dict()``, since it can always be recomputed. It is not
    a parameter and is never trained.

    ``forward(x)`` takes ``x`` of shape ``(..., n, d_model)`` (the sequence
    axis is the second to last) and returns ``x + pe[:n]``, with ``pe`` cast to
    ``x``'s dtype, so the output has ``x``'s shape, dtype and device. A
    sequence longer than ``max_len`` raises ``ValueError`` naming both lengths, and
    ``x`` on another device than the buffer raises ``ValueError`` naming both. A
    conversion that would make the buffer anything but real floating-point numbers
    (``.to(torch.complex64)``) raises ``TypeError`` and leaves the buffer as it was.
    """

    def __init__(self, d_model: int, max_len: int = 5000):
        super().__init__()
        self.d_model = rules.positive_int(d_model, "d_model")
        self.max_len = rules.positive_int(max_len, "max_len")
        table = self._table().to(torch.get_default_dtype())
        self.register_buffer("pe", table, persistent=False)

    def _table(self) -> torch.Tensor:
        """The float64 table, from the one NumPy function that computes it."""
        return torch.from_numpy(sinusoidal_positional_encoding(self.max_len, self.d_model))

    def _apply(self, fn, recurse=True):
        # .double(), .half(), .to(...): round the buffer once from the float64 table, so that
        # float64 after float32 has float64's accuracy
        before = self.pe
        super()._apply(fn, recurse)
        if not self.pe.is_floating_point():  # .to(torch.complex64), .type(torch.LongTensor)
            converted, self.pe = self.pe, before  # refused: the buffer stays as it was
            rules.check_floats("pe", converted.shape, _dtype_name(converted), is_float=False)
        self.pe = self._table().to(device=self.pe.device, dtype=self.pe.dtype)
        return self

    def forward(self, x):
        # no finite check: adding positions turns no number into NaN
        _check_input(x, "x", finite=False)
        _check_joins(x, "x", self.pe, "the buffer pe", same_dtype=False)  # pe is cast to x's dtype
        rules.check_tokens("x", x.shape, "(tokens, d_model)", self.d_model)
        n = x.shape[-2]
        rules.check_max_len(n, self.max_len, "module")
        return x + self.pe[:n].to(dtype=x.dtype)

    def extra_repr(self) -> str:
        return f"d_model={self.d_model}, max_len={self.max_len}"


# --- input rules only this module applies


def check_tensor(name: str, type_name: str, *, is_tensor: bool) -> None:
    """TypeError unless the input is a ``torch.Tensor`` (``type_name``: what it is instead)."""
    if not is_tensor:
        raise TypeError(f"{name} must be a torch.Tensor, got {type_name}")


def check_copyable_attention(*, plain: bool) -> None:
    """ValueError unless an ``nn.MultiheadAttention`` is ``plain``: no kdim/vdim, no
    add_bias_kv, no add_zero_attn (the book's layer has none of them)."""
    if not plain:
        raise ValueError(
            "only nn.MultiheadAttention without kdim/vdim, add_bias_kv and "
            "add_zero_attn can be copied"
        )


def check_copyable_encoder_layer(*, relu: bool, eps: tuple) -> None:
    """ValueError unless an ``nn.TransformerEncoderLayer`` uses ReLU and LayerNorms whose
    ``eps`` are all the default 1e-5 (pre-norm and post-norm layers are both copied)."""
    if not relu:
        raise ValueError("only layers with ReLU (activation='relu') can be copied")
    if any(value != 1e-5 for value in eps):
        raise ValueError("only layers with LayerNorm eps = 1e-5 can be copied")


NORM_CHOICES = ("layer", "rms")


def check_norm(choice: str) -> None:
    """ValueError unless ``choice`` names a normalisation: ``"layer"`` or ``"rms"``."""
    if choice not in NORM_CHOICES:
        raise ValueError(f"norm must be 'layer' (LayerNorm) or 'rms' (RMSNorm), got {choice!r}")
