"""Interactive explorers built on ipywidgets."""

from __future__ import annotations

import ipywidgets as widgets
import matplotlib.pyplot as plt
import numpy as np
from IPython.display import display

from .core import as_float_array, attention
from .plots import attention_heatmap

__all__ = ["DecoderAttentionExplorer"]


class DecoderAttentionExplorer:
    """One decoder position attending over the encoder tokens (chapter 1).

    ``H`` is ``(I, d)``, one encoder output per row; ``Z`` is ``(J, d)``, one
    decoder state per row. Choosing a decoder token loads its state ``z_j`` into
    the query sliders; moving a slider or the temperature recomputes
    ``softmax(H q / τ)`` with :func:`attnkit.core.attention` and redraws.
    """

    def __init__(self, H, encoder_tokens, Z, decoder_tokens, *, slider_range=3.0):
        self.H = as_float_array(H, "H")
        self.Z = as_float_array(Z, "Z")
        self.encoder_tokens = list(encoder_tokens)
        self.decoder_tokens = list(decoder_tokens)
        if self.H.ndim != 2 or self.Z.ndim != 2 or self.H.shape[1] != self.Z.shape[1]:
            raise ValueError(
                f"H of shape {self.H.shape} and Z of shape {self.Z.shape} must both be "
                "(tokens, d) with the same d"
            )
        if len(self.encoder_tokens) != len(self.H) or len(self.decoder_tokens) != len(self.Z):
            raise ValueError(
                f"{len(self.encoder_tokens)} encoder and {len(self.decoder_tokens)} decoder "
                f"labels do not fit H of shape {self.H.shape} and Z of shape {self.Z.shape}"
            )
        d = self.H.shape[1]
        self.position = widgets.Dropdown(
            options=[(tok, j) for j, tok in enumerate(self.decoder_tokens)],
            value=0, description="decoder token")
        self.query_sliders = [
            widgets.FloatSlider(value=0.0, min=-slider_range, max=slider_range, step=0.1,
                                description=f"q[{k}]", continuous_update=True)
            for k in range(d)
        ]
        self.temperature = widgets.FloatLogSlider(
            value=1.0, base=10, min=-1, max=1, step=0.05, description="temperature τ")
        self.output = widgets.Output()
        self._loading = False
        self.position.observe(lambda _: self._load_position(), names="value")
        for control in [*self.query_sliders, self.temperature]:
            control.observe(lambda _: self._loading or self.redraw(), names="value")
        self.widget = widgets.VBox([
            widgets.HBox([self.position, self.temperature]),
            widgets.HBox(self.query_sliders),
            self.output,
        ])
        self._load_position()

    @property
    def query(self) -> np.ndarray:
        """The query vector the sliders show, shape ``(d,)``."""
        return np.array([s.value for s in self.query_sliders], dtype=self.H.dtype)

    def compute(self):
        """``(output, weights)`` for the current query and temperature."""
        return attention(self.query, self.H, temperature=self.temperature.value)

    def _load_position(self):
        # Setting d sliders would redraw d times; draw once at the end instead.
        self._loading = True
        for slider, value in zip(self.query_sliders, self.Z[self.position.value]):
            slider.value = float(value)
        self._loading = False
        self.redraw()

    def redraw(self):
        output, weights = self.compute()
        token = self.decoder_tokens[self.position.value]
        self.output.clear_output(wait=True)
        with self.output:
            fig, ax = plt.subplots(figsize=(1.1 * len(self.encoder_tokens) + 2, 1.9))
            attention_heatmap(weights, [token], self.encoder_tokens, ax=ax,
                              title=f"τ = {self.temperature.value:.2f}")
            plt.show()
            print("weights a   =", np.array2string(weights, precision=3))
            print("output ẑ_j  =", np.array2string(output, precision=3))

    def _ipython_display_(self):
        display(self.widget)
