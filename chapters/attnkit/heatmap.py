"""The interactive attention heatmap: computed and drawn in the browser.

:class:`AttentionHeatmap` sends small matrices and token labels to its front
end (``heatmap.js``), which computes ``softmax(Q Kᵀ / √d_k / τ)`` with the
chosen masks, head, positional encoding and token order, and draws it. The
controls therefore work on the static web page, where no kernel runs. In a
live kernel the front end writes the weights it shows to ``weights``, and new
data can be sent with :meth:`AttentionHeatmap.set_data`.
:meth:`AttentionHeatmap.expected_weights` computes the same weights in NumPy
with :mod:`attnkit.core`, so the two can be compared.
"""

from __future__ import annotations

from pathlib import Path

import anywidget
import numpy as np
import traitlets as t

from .core import as_float_array, causal_mask, masked_softmax, sinusoidal_positional_encoding
from .rules import positive_finite

__all__ = ["AttentionHeatmap", "CONTROLS"]

HERE = Path(__file__).resolve().parent

CONTROLS = {
    "temperature": "a slider for τ, from 0.1 to 10 on a log scale",
    "scale": "a checkbox: divide the scores by √d_k",
    "causal": "a checkbox: the decoder's causal mask (self-attention only)",
    "padding": "each key's label is a button that masks that key (a padding mask)",
    "head": "a menu of the heads, when there are several",
    "positional": "a checkbox: add sinusoidal positional encoding (self-attention only)",
    "shuffle": "buttons that shuffle the tokens and restore their order (self-attention only)",
    "query": "a menu of the query rows and one slider per component of the chosen row",
    "d_k": "a slider over d_k_choices: only the first d_k coordinates of queries and keys are used",
}
SELF_ATTENTION_ONLY = {"causal", "positional", "shuffle"}


class AttentionHeatmap(anywidget.AnyWidget):
    """An attention heatmap whose controls work with or without a kernel.

    Self-attention: ``AttentionHeatmap(tokens, X)`` with ``X`` of shape ``(n, d)``;
    the tokens attend to each other. Cross-attention (e.g. decoder over encoder):
    ``AttentionHeatmap(query_tokens, Z, key_tokens=..., keys=H)`` with ``Z`` of
    shape ``(m, d)`` and ``H`` of shape ``(n, d)``.

    ``heads`` is a list of ``(W_Q, W_K)`` pairs (shapes ``(d, d_k)`` and
    ``(d_key, d_k)``) or dicts with keys ``W_Q``, ``W_K`` and optionally
    ``name``; without heads the inputs are used as queries and keys directly.
    ``controls`` names the controls to show (see :data:`CONTROLS`). Padding
    marks keys as masked (True = masked out, the key gets weight 0); a query
    row whose keys are all masked is drawn, and reported, as zeros.
    """

    _esm = HERE / "heatmap.js"
    _css = HERE / "heatmap.css"

    query_tokens = t.List(t.Unicode()).tag(sync=True)
    key_tokens = t.List(t.Unicode()).tag(sync=True)
    query_vectors = t.List(t.List(t.Float())).tag(sync=True)  # (m, d), in the original order
    key_vectors = t.List(t.List(t.Float())).tag(sync=True)  # (n, d); empty for self-attention
    self_attention = t.Bool(True).tag(sync=True)
    heads = t.List(t.Dict()).tag(sync=True)
    head = t.Int(0).tag(sync=True)
    temperature = t.Float(1.0).tag(sync=True)
    scale = t.Bool(False).tag(sync=True)
    causal = t.Bool(False).tag(sync=True)
    padding = t.List(t.Bool()).tag(sync=True)  # per key, True = masked out
    positional = t.Bool(False).tag(sync=True)
    permutation = t.List(t.Int()).tag(sync=True)  # drawing order; empty = original
    query_row = t.Int(0).tag(sync=True)
    d_k = t.Int(0).tag(sync=True)  # 0: every coordinate
    d_k_choices = t.List(t.Int()).tag(sync=True)
    controls = t.List(t.Unicode()).tag(sync=True)
    weights = t.List(t.List(t.Float())).tag(sync=True)  # written by the front end

    def __init__(
        self,
        tokens,
        X,
        *,
        key_tokens=None,
        keys=None,
        heads=(),
        controls=("temperature",),
        temperature=1.0,
        scale=False,
        causal=False,
        padding=None,
        positional=False,
        d_k_choices=(),
    ):
        unknown = set(controls) - set(CONTROLS)
        if unknown:
            raise ValueError(f"unknown controls {sorted(unknown)}; choose from {sorted(CONTROLS)}")
        data = self._checked_data(tokens, X, key_tokens, keys, heads)
        if (causal or positional or SELF_ATTENTION_ONLY & set(controls)) and not data[
            "self_attention"
        ]:
            raise ValueError(
                "causal masks, positional encoding and shuffling need self-attention "
                "(no separate keys)"
            )
        temperature = positive_finite(temperature, "temperature")
        width = len(data["heads"][0]["W_Q"][0]) if data["heads"] else len(data["query_vectors"][0])
        d_k_choices = [int(c) for c in d_k_choices]
        if not all(0 < c <= width for c in d_k_choices) or (
            ("d_k" in controls) != bool(d_k_choices)
        ):
            raise ValueError(
                f"the d_k control needs d_k_choices between 1 and the width {width}, "
                f"got {d_k_choices}"
            )
        n = len(data["key_tokens"])
        padding = [False] * n if padding is None else [bool(p) for p in padding]
        if len(padding) != n:
            raise ValueError(f"padding has {len(padding)} entries for {n} keys")
        # every trait in one go: the front end's first message carries the full state
        super().__init__(
            **data,
            controls=list(controls),
            temperature=temperature,
            scale=scale,
            causal=causal,
            padding=padding,
            positional=positional,
            d_k_choices=d_k_choices,
            d_k=d_k_choices[0] if d_k_choices else 0,
        )
        self.weights = self.expected_weights().tolist()

    def set_data(self, tokens, X, *, key_tokens=None, keys=None, heads=()):
        """Send new inputs to the heatmap, which redraws; shapes are checked first."""
        data = self._checked_data(tokens, X, key_tokens, keys, heads)
        with self.hold_sync():
            if len(self.padding) != len(data["key_tokens"]):  # new keys: nothing masked
                self.padding = [False] * len(data["key_tokens"])
            for name, value in data.items():
                setattr(self, name, value)

    @staticmethod
    def _checked_data(tokens, X, key_tokens, keys, heads) -> dict:
        X = as_float_array(X, "X")
        if X.ndim != 2 or len(tokens) != X.shape[0]:
            raise ValueError(f"X must have shape (tokens, d) = ({len(tokens)}, d), got {X.shape}")
        if keys is None:
            K, key_tokens = X, tokens
        else:
            K = as_float_array(keys, "keys")
            if key_tokens is None or K.ndim != 2 or len(key_tokens) != K.shape[0]:
                raise ValueError(f"keys of shape {K.shape} need one key token per row")
        head_dicts = []
        for i, head in enumerate(heads):
            W_Q, W_K = (head["W_Q"], head["W_K"]) if isinstance(head, dict) else head
            W_Q, W_K = as_float_array(W_Q, "W_Q"), as_float_array(W_K, "W_K")
            if (
                W_Q.shape[0] != X.shape[1]
                or W_K.shape[0] != K.shape[1]
                or W_Q.shape[1] != W_K.shape[1]
            ):
                raise ValueError(
                    f"head {i}: W_Q of shape {W_Q.shape} and W_K of shape {W_K.shape} do not fit "
                    f"queries of shape {X.shape} and keys of shape {K.shape}"
                )
            name = head.get("name", f"head {i + 1}") if isinstance(head, dict) else f"head {i + 1}"
            head_dicts.append({"W_Q": W_Q.tolist(), "W_K": W_K.tolist(), "name": name})
        return {
            "query_tokens": [str(s) for s in tokens],
            "key_tokens": [str(s) for s in key_tokens],
            "self_attention": keys is None,
            "key_vectors": [] if keys is None else K.tolist(),
            "query_vectors": X.tolist(),
            "heads": head_dicts,
            "head": 0,
            "permutation": [],
            "query_row": 0,
        }

    def expected_weights(self) -> np.ndarray:
        """The weights the heatmap shows, computed in NumPy: ``(m, n)``, rows as drawn."""
        order = np.array(self.permutation or range(len(self.query_vectors)), dtype=int)
        Xq = np.array(self.query_vectors, dtype=float)[order]  # (m, d)
        Xk = Xq if self.self_attention else np.array(self.key_vectors, dtype=float)  # (n, d)
        key_index = order if self.self_attention else np.arange(len(Xk))
        if self.positional and self.self_attention:
            Xq = Xq + sinusoidal_positional_encoding(*Xq.shape)
            Xk = Xq
        if self.heads:
            head = self.heads[self.head]
            Q, K = Xq @ np.array(head["W_Q"]), Xk @ np.array(head["W_K"])  # (m, d_k), (n, d_k)
        else:
            Q, K = Xq, Xk
        if self.d_k:
            Q, K = Q[:, : self.d_k], K[:, : self.d_k]
        divisor = self.temperature * (np.sqrt(Q.shape[1]) if self.scale else 1.0)
        mask = ~np.array(self.padding, dtype=bool)[key_index][None, :]  # (1, n)
        if self.causal:
            mask = mask & causal_mask(len(Q))
        return masked_softmax(Q @ K.T / divisor, mask, all_masked="zero")
