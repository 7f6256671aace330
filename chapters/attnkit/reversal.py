"""The capstone's task and model: a tiny Transformer encoder that learns to reverse sequences.

Built only from the book's own modules (:mod:`attnkit.modules`): an embedding, sinusoidal
positional encoding, a stack of post-norm encoder layers, and a linear read-out that predicts,
at every position, the token that belongs there in the target sequence. A *task* is a function
from a batch of input sequences to their targets; the chapter's task is :func:`reverse`, and
:func:`train` takes any other one of the same length (copying, shifting, …). Everything is
seeded, so a run is reproducible on the CPU.
"""

from __future__ import annotations

from contextlib import contextmanager

import torch
from torch import nn

from . import rules
from .modules import EncoderLayer, SinusoidalPositionalEncoding, _dtype_name

__all__ = [
    "reverse",
    "batch",
    "reversal_batch",
    "TinyTransformer",
    "train",
    "accuracy",
    "anti_diagonal_mass",
    "progress_bar",
]


def reverse(inputs):
    """The reversal task: the target of each ``(…, n)`` sequence is the sequence backwards."""
    return inputs.flip(-1)


def batch(batch_size: int, length: int, vocab: int, generator: torch.Generator, task=reverse):
    """``(inputs, task(inputs))``: random digits ``(batch_size, length)`` and their targets.

    ``task`` maps an integer tensor ``(batch_size, length)`` to targets of the same shape with
    values in ``range(vocab)``, one target token per position (int64, as the loss needs).
    """
    inputs = torch.randint(0, vocab, (batch_size, length), generator=generator)
    targets = task(inputs)
    if not isinstance(targets, torch.Tensor):
        raise TypeError(f"task must return a torch.Tensor of targets, got {type(targets).__name__}")
    if targets.shape != inputs.shape:
        raise ValueError(
            f"task must return one target per input token, shape "
            f"{tuple(inputs.shape)}; it returned shape {tuple(targets.shape)}"
        )
    name = "the task's targets"
    rules.check_token_ids(name, targets.shape, _dtype_name(targets), ("int64",))
    rules.check_token_range(name, targets.shape, int(targets.min()), int(targets.max()), vocab)
    return inputs, targets


def reversal_batch(batch_size: int, length: int, vocab: int, generator: torch.Generator):
    """``(inputs, targets)``, both ``(batch_size, length)`` integer tensors; targets reverse inputs."""
    return batch(batch_size, length, vocab, generator, task=reverse)


class TinyTransformer(nn.Module):
    """Embedding (+ positional encoding) → ``layers`` encoder layers → a linear read-out.

    ``forward(tokens)`` takes integer tokens ``(b, n)`` and returns ``(logits, weights)``:
    logits ``(b, n, vocab)`` and a list with one ``(b, h, n, n)`` weight tensor per layer.
    ``positional=False`` leaves the positional encoding out (the model then sees a set).
    """

    def __init__(
        self,
        vocab: int,
        length: int,
        d_model: int = 64,
        h: int = 2,
        layers: int = 2,
        d_ff: int = 128,
        positional: bool = True,
    ):
        super().__init__()
        self.embed = nn.Embedding(vocab, d_model)
        self.positional = (
            SinusoidalPositionalEncoding(d_model, max_len=length) if positional else None
        )
        self.layers = nn.ModuleList(
            EncoderLayer(d_model, h, d_ff, attention_bias=False) for _ in range(layers)
        )
        self.read_out = nn.Linear(d_model, vocab)

    def inputs(self, tokens):
        """What the first layer sees: token embeddings, plus positions if enabled. ``(b, n, d)``."""
        x = self.embed(tokens)
        return self.positional(x) if self.positional is not None else x

    def forward(self, tokens):
        x, weights = self.inputs(tokens), []
        for layer in self.layers:
            x, w = layer(x)
            weights.append(w)
        return self.read_out(x), weights


def accuracy(model: TinyTransformer, inputs, targets) -> float:
    """The fraction of positions whose most likely token is the target."""
    with torch.no_grad():
        logits, _ = model(inputs)
    return (logits.argmax(-1) == targets).float().mean().item()


def progress_bar(fraction: float, width: int = 30) -> str:
    filled = round(fraction * width)
    return "[" + "#" * filled + "." * (width - filled) + f"] {100 * fraction:3.0f}%"


def train(
    model: TinyTransformer,
    *,
    steps: int,
    batch_size: int = 128,
    lr: float = 3e-3,
    seed: int = 0,
    report_every: int = 0,
    length: int,
    vocab: int,
    task=reverse,
):
    """Train with Adam on fresh random batches of ``task``; returns the loss of every step.

    ``task`` maps a batch of inputs to its targets (see :func:`batch`); the default is reversal.
    With ``report_every`` > 0 a progress bar with the loss is printed every that many steps.

    The sizes are checked first, and ``vocab`` and ``length`` against the model's. Training is
    all or nothing: a call that raises, before the first step or during any (a task's wrong
    targets, an interrupt), leaves the model's weights and mode as they were.
    """
    _check_training(model, steps, batch_size, lr, report_every, length, vocab, task)
    with _all_or_nothing(model):
        torch.manual_seed(seed)
        generator = torch.Generator().manual_seed(seed)
        optimiser = torch.optim.Adam(model.parameters(), lr=lr)
        loss_fn = nn.CrossEntropyLoss()
        losses = []
        model.train()
        for step in range(1, steps + 1):
            inputs, targets = batch(batch_size, length, vocab, generator, task)
            logits, _ = model(inputs)
            loss = loss_fn(logits.reshape(-1, vocab), targets.reshape(-1))
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
            losses.append(loss.item())
            if report_every and (step % report_every == 0 or step == steps):
                print(f"{progress_bar(step / steps)} step {step:4d}  loss {loss.item():.4f}")
    model.eval()
    return losses


@contextmanager
def _all_or_nothing(model: nn.Module):
    """Put the model's weights and mode back if the ``with`` block raises."""
    weights = {name: value.clone() for name, value in model.state_dict().items()}
    was_training = model.training
    try:
        yield
    except BaseException:
        model.load_state_dict(weights)  # copies into the same parameters
        model.train(was_training)
        raise


def _check_training(model, steps, batch_size, lr, report_every, length, vocab, task) -> None:
    """What :func:`train` needs, checked before the model changes."""
    if not isinstance(model, TinyTransformer):
        raise TypeError(
            f"model must be an attnkit.reversal.TinyTransformer, got {type(model).__name__}"
        )
    sizes = {"steps": steps, "batch_size": batch_size, "length": length, "vocab": vocab}
    for name, value in sizes.items():
        rules.positive_int(value, name)
    rules.positive_finite(lr, "lr")
    if report_every != 0:
        rules.positive_int(report_every, "report_every")
    if not callable(task):
        raise TypeError(
            f"task must be a function from inputs to targets, got {type(task).__name__}"
        )
    if vocab != model.embed.num_embeddings:
        raise ValueError(
            f"vocab = {vocab} does not match the model, made for {model.embed.num_embeddings} "
            "tokens: pass the vocab the model was created with"
        )
    if model.positional is not None and length > model.positional.max_len:
        raise ValueError(
            f"length = {length} is longer than the model's positional encoding, made for "
            f"sequences of {model.positional.max_len}: create the model with length >= {length}"
        )


def anti_diagonal_mass(weights) -> torch.Tensor:
    """Mean weight on the anti-diagonal (query ``i`` → key ``n-1-i``) for each head.

    ``weights`` is ``(b, h, n, n)``; returns ``(h,)``. A head that attends exactly where
    reversal needs scores 1; a uniform head scores ``1/n``.
    """
    n = weights.shape[-1]
    rows = torch.arange(n)
    return weights[..., rows, n - 1 - rows].mean(dim=(0, -1))
