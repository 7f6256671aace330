"""The training scrubber: a slider over the recorded steps of a run, drawn in the browser.

:class:`TrainingScrubber` sends a run's record to its front end (``scrubber.js``): the loss
curves, and every head's attention on one example sequence at every recorded step. The front
end draws the heads and the curves and marks the chosen step, so the slider works on the static
web page, where no kernel runs. The weights travel as whole percentages (``round(100 w)``), the
lower triangle of each head row by row: the least that draws them (a step of 1 % is finer than
a colour scale shows) in a page a few hundred kilobytes smaller than the floats would make it.
:meth:`TrainingScrubber.weights_at` gives the weights a step shows, as the front end reads them.
"""

from __future__ import annotations

from pathlib import Path

import anywidget
import numpy as np
import traitlets as t

from .rules import check_index

__all__ = ["TrainingScrubber", "pack_weights"]

HERE = Path(__file__).resolve().parent


def pack_weights(attention) -> list[int]:
    """``(layers, h, n, n)`` causal weights -> the lower triangles of every head, row by row, as
    whole percentages: ``layers * h * n (n + 1) / 2`` integers."""
    a = np.asarray(attention, dtype=np.float64)
    if a.ndim != 4 or a.shape[-1] != a.shape[-2]:
        raise ValueError(f"attention must be (layers, h, n, n), got {a.shape}")
    rows, cols = np.tril_indices(a.shape[-1])
    return np.rint(100 * a[..., rows, cols]).astype(int).ravel().tolist()


class TrainingScrubber(anywidget.AnyWidget):
    """Every head's attention on ``tokens`` at each recorded step, beside the loss curves.

    ``TrainingScrubber(record, labels)`` takes the dict that :func:`attnkit.induction.train`
    returns (``steps``, ``first``, ``repeat``, ``attention``) and one label per token of its
    example; ``step`` (an index into ``steps``) is the slider's position, ``chance`` the level
    drawn as a dashed line (``ln V``).
    """

    _esm = HERE / "scrubber.js"
    _css = HERE / "scrubber.css"

    tokens = t.List(t.Unicode()).tag(sync=True)
    steps = t.List(t.Int()).tag(sync=True)
    first = t.List(t.Float()).tag(sync=True)  # loss on first occurrences, nats, per step
    repeat = t.List(t.Float()).tag(sync=True)  # loss on repeats
    chance = t.Float(0.0).tag(sync=True)
    layers = t.Int(2).tag(sync=True)
    heads = t.Int(4).tag(sync=True)
    weights = t.List(t.List(t.Int())).tag(sync=True)  # per step: pack_weights
    step = t.Int(0).tag(sync=True)

    def __init__(self, record: dict, labels, chance: float, step: int | None = None):
        attention = np.asarray(record["attention"])  # (steps, layers, h, n, n)
        count, layers, heads, n, _ = attention.shape
        if len(labels) != n or not len(record["steps"]) == count:
            raise ValueError(
                f"labels ({len(labels)}) and steps ({len(record['steps'])}) must match the "
                f"attention {attention.shape}"
            )
        step = count - 1 if step is None else step
        check_index(step, count, "step", "recorded steps")
        super().__init__(
            tokens=[str(label) for label in labels],
            steps=list(record["steps"]),
            first=[round(x, 4) for x in record["first"]],
            repeat=[round(x, 4) for x in record["repeat"]],
            chance=round(chance, 4),
            layers=layers,
            heads=heads,
            weights=[pack_weights(a) for a in attention],
            step=step,
        )

    @t.validate("step")
    def _valid_step(self, proposal):
        check_index(proposal.value, len(self.steps), "step", "recorded steps")
        return proposal.value

    def weights_at(self, step: int) -> np.ndarray:
        """The weights the scrubber shows at index ``step``: ``(layers, h, n, n)``, in [0, 1]."""
        check_index(step, len(self.steps), "step", "recorded steps")
        n = len(self.tokens)
        rows, cols = np.tril_indices(n)
        packed = np.asarray(self.weights[step]).reshape(self.layers, self.heads, -1)
        out = np.zeros((self.layers, self.heads, n, n))
        out[..., rows, cols] = packed / 100
        return out
