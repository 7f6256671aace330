"""Positions in the attention score, in PyTorch: :mod:`attnkit.relative_position` as modules.

``RotaryPositionEmbedding`` turns queries or keys by their positions, from tables of cosines
and sines that it keeps as buffers; ``ALiBiBias`` gives the additive bias of a causal head,
ready for ``F.scaled_dot_product_attention(..., attn_mask=bias)``. The tables are computed by
the NumPy functions in float64 and rounded once to the module's dtype, as
``SinusoidalPositionalEncoding`` does, so that no angle is ever computed in float32. Inputs are
checked by the same rules as the NumPy functions (:mod:`attnkit.rules`).
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from . import rules
from .core import as_float_array
from .modules import _check_input, _check_joins, _dtype_name
from .relative_position import alibi_slopes, rotary_frequencies

__all__ = ["RotaryPositionEmbedding", "ALiBiBias"]


class RotaryPositionEmbedding(nn.Module):
    """Rotary position embedding of queries or keys ``(..., n, d)``, for positions below ``max_len``.

    The module keeps the buffers ``cos`` and ``sin`` of shape ``(max_len, d/2)``: entry ``[p,
    i]`` is the cosine (sine) of ``p * omega_i``, with ``omega_i = base^(-2i/d)`` or the
    ``frequencies`` given ``(d/2,)``. They are computed in float64 and rounded once to the
    module's dtype (``.double()`` recomputes them in float64); they are not parameters and not
    saved in ``state_dict()``. ``pairing`` is ``"adjacent"`` (columns ``2i`` and ``2i+1``, the
    RoFormer paper) or ``"half"`` (columns ``i`` and ``i + d/2``, GPT-NeoX and Hugging Face's
    Llama).

    ``forward(x, positions=None)`` turns pair ``(a, b)`` of row ``p`` into ``(a cos - b sin,
    a sin + b cos)`` at the position of that row: ``positions`` ``(n,)``, integers in ``0 ..
    max_len - 1``, default ``0 .. n-1``. The result has ``x``'s shape, dtype and device. It
    equals :func:`attnkit.relative_position.apply_rotary`.
    """

    def __init__(
        self,
        d: int,
        max_len: int = 4096,
        base: float = 10000.0,
        pairing: str = "adjacent",
        frequencies=None,
    ):
        super().__init__()
        self.d = rules.positive_int(d, "d")
        rules.check_even_width(self.d)
        self.max_len = rules.positive_int(max_len, "max_len")
        rules.check_pairing(pairing)
        self.pairing = pairing
        if frequencies is None:
            omega = rotary_frequencies(self.d, base)
        else:
            omega = as_float_array(frequencies, "frequencies").astype(np.float64)
            rules.check_frequencies(omega.shape, self.d)
        self._omega = omega  # float64, (d/2,)
        cos, sin = self._tables()
        dtype = torch.get_default_dtype()
        self.register_buffer("cos", cos.to(dtype), persistent=False)
        self.register_buffer("sin", sin.to(dtype), persistent=False)

    def _tables(self) -> tuple[torch.Tensor, torch.Tensor]:
        """The float64 tables ``(max_len, d/2)``: the angles in float64, then cos and sin."""
        angles = np.arange(self.max_len, dtype=np.float64)[:, None] * self._omega
        return torch.from_numpy(np.cos(angles)), torch.from_numpy(np.sin(angles))

    def _apply(self, fn, recurse=True):
        # .double(), .half(), .to(...): round the tables once from float64
        before = self.cos, self.sin
        super()._apply(fn, recurse)
        if not self.cos.is_floating_point():  # .to(torch.complex64): refused
            converted = self.cos
            self.cos, self.sin = before
            rules.check_floats("cos", converted.shape, _dtype_name(converted), is_float=False)
        cos, sin = self._tables()
        self.cos = cos.to(device=self.cos.device, dtype=self.cos.dtype)
        self.sin = sin.to(device=self.sin.device, dtype=self.sin.dtype)
        return self

    def forward(self, x, positions=None):
        _check_input(x, "x", finite=False)  # turning pairs makes no number NaN
        _check_joins(x, "x", self.cos, "the buffers cos and sin", same_dtype=False)
        rules.check_rotary_input("x", x.shape)
        rules.check_tokens("x", x.shape, "(n, d)", self.d, "d")
        n = x.shape[-2]
        if positions is None:
            check_position_range(0, n - 1, self.max_len)
            cos, sin = self.cos[:n], self.sin[:n]
        else:
            positions = torch.as_tensor(positions, device=self.cos.device)
            check_integer_positions(
                positions.shape,
                _dtype_name(positions),
                is_int=not (positions.dtype.is_floating_point or positions.dtype.is_complex)
                and positions.dtype != torch.bool,
            )
            rules.check_positions(positions.shape, "x", x.shape)
            check_position_range(int(positions.min()), int(positions.max()), self.max_len)
            cos, sin = self.cos[positions], self.sin[positions]
        cos, sin = cos.to(x.dtype), sin.to(x.dtype)  # (n, d/2)
        if self.pairing == "adjacent":
            pairs = x.unflatten(-1, (self.d // 2, 2))  # (..., n, d/2, 2)
            first, second = pairs[..., 0], pairs[..., 1]
            turned = torch.stack((first * cos - second * sin, first * sin + second * cos), -1)
            return turned.flatten(-2)
        first, second = x.chunk(2, dim=-1)  # (..., n, d/2) each
        return torch.cat((first * cos - second * sin, first * sin + second * cos), dim=-1)

    def extra_repr(self) -> str:
        return f"d={self.d}, max_len={self.max_len}, pairing={self.pairing!r}"


class ALiBiBias(nn.Module):
    """ALiBi's additive bias for ``h`` causal heads, ``(h, n, n)``.

    Entry ``[head, i, j]`` is ``-slopes[head] * (i - j)`` for ``j <= i`` and ``-inf`` for a
    later key, so that ``F.scaled_dot_product_attention(q, k, v, attn_mask=bias)`` with ``q``
    ``(..., h, n, d_k)`` computes ALiBi's causal attention. The slopes are
    :func:`attnkit.relative_position.alibi_slopes` ``(h)``, kept as the buffer ``slopes``
    (not a parameter: ALiBi learns nothing).
    """

    def __init__(self, h: int):
        super().__init__()
        self.h = rules.positive_int(h, "h")
        slopes = torch.from_numpy(alibi_slopes(self.h)).to(torch.get_default_dtype())
        self.register_buffer("slopes", slopes, persistent=False)

    def forward(self, n: int):
        n = rules.positive_int(n, "n")
        position = torch.arange(n, device=self.slopes.device)
        back = (position[None, :] - position[:, None]).to(self.slopes.dtype)  # (n, n): j - i
        bias = self.slopes[:, None, None] * back  # (h, n, n)
        return bias.masked_fill(back > 0, float("-inf"))

    def extra_repr(self) -> str:
        return f"h={self.h}"


# --- input rules only this module applies


def check_integer_positions(shape, dtype, *, is_int: bool) -> None:
    """TypeError unless the positions are integers, rows of a module's tables."""
    if not is_int:
        raise TypeError(
            f"positions of shape {tuple(shape)} must be integers (the rows of the tables), "
            f"got dtype {dtype}"
        )


def check_position_range(low: int, high: int, max_len: int) -> None:
    """ValueError unless the positions, from ``low`` to ``high``, lie in ``0 .. max_len - 1``,
    the positions a module's tables hold."""
    if low < 0 or high >= max_len:
        raise ValueError(
            f"positions from {low} to {high} do not fit max_len = {max_len}: the tables hold "
            f"positions 0 .. {max_len - 1}; create the module with max_len > {high}"
        )
