"""The interactive attention heatmap: computed and drawn in the browser.

:class:`AttentionHeatmap` sends small matrices and token labels to its front
end (``heatmap.js``), which computes ``softmax(Q Kᵀ / √d_k / τ)`` with the
chosen masks, head, positional encoding and token order, and draws it. The
controls therefore work on the static web page, where no kernel runs. In a
live kernel the front end writes the weights it shows to ``weights``, and new
data can be sent with :meth:`AttentionHeatmap.set_data`.
:meth:`AttentionHeatmap.expected_weights` computes the same weights in NumPy
with :mod:`attnkit.core`, so the two can be compared.

The heatmap's traits always describe a heatmap that can be drawn: the constructor,
:meth:`~AttentionHeatmap.set_data` and every trait assigned (from Python or from the
front end) are checked before anything changes, and an assignment that raises
``ValueError`` naming the trait leaves the heatmap as it was.
"""

from __future__ import annotations

from pathlib import Path

import anywidget
import numpy as np
import traitlets as t

from .core import as_float_array, causal_mask, masked_softmax, sinusoidal_positional_encoding
from .rules import check_index, check_tokens, positive_finite

__all__ = ["AttentionHeatmap", "CONTROLS", "InvalidHeatmapState"]

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
# the traits that must agree with each other (``scale`` agrees with anything, ``weights`` is
# the front end's answer): the inputs, and the settings that must fit them
DATA = ("query_tokens", "key_tokens", "query_vectors", "key_vectors", "self_attention", "heads")
SETTINGS = (
    "controls",
    "d_k_choices",
    "d_k",
    "head",
    "temperature",
    "causal",
    "positional",
    "padding",
    "permutation",
    "query_row",
)


class InvalidHeatmapState(t.TraitError, ValueError):
    """A trait value the heatmap cannot draw: a ``ValueError``, and traitlets' ``TraitError``
    so that a batch of changes it ends (``set_data``, a message from the front end) is undone."""


def json_numbers(array: np.ndarray) -> list:
    """``array.tolist()``, a float32 array's numbers with the fewest digits that read back as
    the same float32: widened to a Python float, float32's 1.7867 prints as 1.7867000102996826,
    and the page carries every number of the widget's state as JSON text."""
    if array.dtype == np.float32:
        array = array.astype(str).astype(np.float64)
    return array.tolist()


def _check_settings(s: dict) -> None:
    """ValueError unless the settings of the state ``s`` (every trait) fit its inputs."""
    controls, choices = s["controls"], s["d_k_choices"]
    unknown = set(controls) - set(CONTROLS)
    if unknown:
        raise ValueError(f"unknown controls {sorted(unknown)}; choose from {sorted(CONTROLS)}")
    if not s["self_attention"] and (
        s["causal"] or s["positional"] or SELF_ATTENTION_ONLY & set(controls)
    ):
        raise ValueError(
            "causal masks, positional encoding and shuffling need self-attention (no separate keys)"
        )
    positive_finite(s["temperature"], "temperature")
    width = len(s["heads"][0]["W_Q"][0]) if s["heads"] else len(s["query_vectors"][0])
    if not all(0 < c <= width for c in choices) or (("d_k" in controls) != bool(choices)):
        raise ValueError(
            f"the d_k control needs d_k_choices between 1 and the width {width}, got {choices}"
        )
    if choices and s["d_k"] not in choices:
        raise ValueError(f"d_k must be one of d_k_choices {choices}, got {s['d_k']}")
    if not 0 <= s["d_k"] <= width:
        raise ValueError(
            f"d_k must be between 0 (every coordinate) and the width {width}, got {s['d_k']}"
        )
    n, m = len(s["key_tokens"]), len(s["query_tokens"])
    if len(s["padding"]) != n:
        raise ValueError(f"padding has {len(s['padding'])} entries for {n} keys")
    check_index(s["head"], max(len(s["heads"]), 1), "head", "heads")
    check_index(s["query_row"], m, "query_row", "query rows")
    if s["permutation"] and sorted(s["permutation"]) != list(range(m)):
        raise ValueError(
            f"permutation must list each query row 0 .. {m - 1} once (or be empty for the "
            f"original order), got {s['permutation']}"
        )


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
        data = self._checked_data(tokens, X, key_tokens, keys, heads)
        n = len(data["key_tokens"])
        d_k_choices = [int(c) for c in d_k_choices]
        settings = dict(
            controls=list(controls),
            temperature=positive_finite(temperature, "temperature"),  # a float, NumPy's too
            scale=scale,
            causal=causal,
            padding=[False] * n if padding is None else [bool(p) for p in padding],
            positional=positional,
            d_k_choices=d_k_choices,
            d_k=d_k_choices[0] if d_k_choices else 0,
        )
        _check_settings(data | settings)
        # every trait in one go: the front end's first message carries the full state
        super().__init__(**data, **settings)
        self.weights = self.expected_weights().tolist()

    def set_data(self, tokens, X, *, key_tokens=None, keys=None, heads=()):
        """Send new inputs to the heatmap, which redraws. They are checked first, against
        the settings too (a d_k choice wider than new data, keys under a causal mask): a
        call that raises leaves the heatmap as it was."""
        data = self._checked_data(tokens, X, key_tokens, keys, heads)
        if len(self.padding) != len(data["key_tokens"]):  # new keys: nothing masked
            data["padding"] = [False] * len(data["key_tokens"])
        try:
            _check_settings(self._state() | data)
        except ValueError as error:
            raise ValueError(f"the new inputs do not fit the heatmap's settings: {error}") from None
        # checked again together when the block ends, and undone together if that fails
        with self.hold_sync(), self.hold_trait_notifications():
            for name, value in data.items():
                setattr(self, name, value)

    def _state(self) -> dict:
        return {name: getattr(self, name) for name in DATA + SETTINGS}

    @t.validate(*DATA, *SETTINGS)
    def _valid_state(self, proposal):
        """Every trait assigned, from Python or from the front end, keeps the state drawable."""
        name, state = proposal.trait.name, self._state() | {proposal.trait.name: proposal.value}
        try:
            if name in DATA:
                self._check_data(state)
            _check_settings(state)
        except ValueError as error:
            raise InvalidHeatmapState(f"{name}: {error}" if name in DATA else str(error)) from None
        return proposal.value

    @classmethod
    def _check_data(cls, s: dict) -> None:
        """ValueError unless the inputs of the state ``s`` fit together."""
        cross = not s["self_attention"]
        cls._checked_data(
            s["query_tokens"],
            s["query_vectors"],
            s["key_tokens"] if cross else None,
            s["key_vectors"] if cross else None,
            s["heads"],
        )
        if not cross and (s["key_tokens"] != s["query_tokens"] or s["key_vectors"]):
            raise ValueError(
                "in self-attention the keys are the queries: key_tokens must be query_tokens "
                "and key_vectors empty"
            )

    @staticmethod
    def _checked_data(tokens, X, key_tokens, keys, heads) -> dict:
        X = as_float_array(X, "X")
        if X.ndim != 2 or len(tokens) != X.shape[0]:
            raise ValueError(f"X must have shape (tokens, d) = ({len(tokens)}, d), got {X.shape}")
        check_tokens("X", X.shape, "(tokens, d)")  # not empty
        if keys is None:
            K, key_tokens = X, tokens
        else:
            K = as_float_array(keys, "keys")
            if key_tokens is None or K.ndim != 2 or len(key_tokens) != K.shape[0]:
                raise ValueError(f"keys of shape {K.shape} need one key token per row")
            check_tokens("keys", K.shape, "(n, d)")
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
            head_dicts.append({"W_Q": json_numbers(W_Q), "W_K": json_numbers(W_K), "name": name})
        return {
            "query_tokens": [str(s) for s in tokens],
            "key_tokens": [str(s) for s in key_tokens],
            "self_attention": keys is None,
            "key_vectors": [] if keys is None else json_numbers(K),
            "query_vectors": json_numbers(X),
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
