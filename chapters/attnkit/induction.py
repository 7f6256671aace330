"""Chapter 9's induction heads: a two-layer attention-only model learns to copy from context.

:class:`AttentionOnly` stacks the book's :class:`~attnkit.modules.MultiHeadAttention` layers
(causal, no biases, no MLP, no norm) on a token embedding and a learned position embedding,
and can zero any head's output (``ablate``). :func:`repeated_sequences` draws the task: random
tokens that repeat with a random period, so that only matching content, never a fixed offset,
finds the next token. :func:`train` trains on one CPU thread from a seed and records, every few
steps, the loss on first occurrences and on repeats, the heads' scores and every head's
attention on one example sequence. :func:`previous_token_scores` and
:func:`induction_scores` measure a head's attention; :func:`composition_scores` and
:func:`ov_circuit` read the circuit from the weights (Elhage et al. 2021). The book ships one
run's record (``data/induction_heads.json``): :func:`load_record`.
"""

from __future__ import annotations

import json
import math
from importlib import resources

import torch
from torch import nn

from . import rules
from .modules import MultiHeadAttention, _dtype_name

__all__ = [
    "AttentionOnly",
    "repeated_sequences",
    "example_sequence",
    "split_losses",
    "seen_tokens_loss",
    "previous_token_scores",
    "induction_targets",
    "induction_scores",
    "ov_circuit",
    "copying_score",
    "composition_scores",
    "train",
    "phase_change_step",
    "load_record",
]


class AttentionOnly(nn.Module):
    """A causal attention-only Transformer: embeddings, ``layers`` attention layers, read-out.

    ``x_0 = E[tokens] + P[positions]`` (both learned), ``x_l = x_{l-1} + MultiHead_l(x_{l-1})``
    with a causal mask, logits ``x_L W_U``. No MLP and no normalisation, so that every path
    from a token to the logits is a product of the weights (Elhage et al. 2021).
    ``forward(tokens, ablate=())`` takes integer tokens ``(b, n)`` and returns ``(logits,
    weights)``: ``(b, n, vocab)`` and one ``(b, h, n, n)`` per layer. ``ablate`` names heads
    ``(layer, head)`` (from 0) whose output is zeroed before ``W_O``. A layer's weights are
    ``softmax(Q K^T / sqrt(d_k))`` with the future masked, its projections the layer's own. With
    ``need_weights=False`` it is PyTorch's fused ``F.scaled_dot_product_attention``
    (``is_causal=True``), which returns no weights (``None`` in their place): the same model,
    which trains in about two thirds of the time.
    """

    def __init__(self, vocab: int, d_model: int = 64, h: int = 4, layers: int = 2,
                 max_len: int = 64):  # fmt: skip
        super().__init__()
        self.config = dict(vocab=vocab, d_model=d_model, h=h, layers=layers, max_len=max_len)
        vocab = rules.positive_int(vocab, "vocab")
        self.max_len = rules.positive_int(max_len, "max_len")
        self.embed = nn.Embedding(vocab, d_model)
        self.position = nn.Embedding(max_len, d_model)
        self.layers = nn.ModuleList(
            MultiHeadAttention(d_model, h, bias=False)
            for _ in range(rules.positive_int(layers, "layers"))
        )
        self.unembed = nn.Linear(d_model, vocab, bias=False)

    def forward(self, tokens, ablate=(), need_weights: bool = True):
        if not isinstance(tokens, torch.Tensor):
            raise TypeError(f"tokens must be a torch.Tensor, got {type(tokens).__name__}")
        rules.check_token_ids("tokens", tokens.shape, _dtype_name(tokens), ("int64", "int32"))
        rules.check_token_range(
            "tokens", tokens.shape, int(tokens.min()), int(tokens.max()), self.embed.num_embeddings
        )
        n = tokens.shape[-1]
        rules.check_max_len(n, self.max_len, "model")
        for layer, head in ablate:
            rules.check_index(layer, len(self.layers), "layer", "model")
            rules.check_index(head, self.layers[0].h, "head", "layer")
        x = self.embed(tokens) + self.position.weight[:n]  # (b, n, d_model)
        future = torch.full((n, n), float("-inf")).triu(1)  # (n, n): 0 where a key may be seen
        weights = []
        for i, attn in enumerate(self.layers):
            q, k, v = (attn.split_heads(w(x)) for w in (attn.w_q, attn.w_k, attn.w_v))
            if need_weights:
                scores = q @ k.transpose(-2, -1) * attn.d_k**-0.5 + future  # (b, h, n, n)
                weights.append(torch.softmax(scores, dim=-1))
                heads = weights[-1] @ v  # (b, h, n, d_k)
            else:
                heads = nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
            keep = torch.ones(attn.h, 1, 1)
            for layer, head in ablate:
                if layer == i:
                    keep[head] = 0.0  # the head's output never reaches the residual stream
            x = x + attn.w_o(attn.merge_heads(heads * keep))
        return self.unembed(x), weights if need_weights else None


# --- the task ---------------------------------------------------------------------------------


def repeated_sequences(batch: int, length: int, vocab: int, generator: torch.Generator,
                       periods: tuple[int, int] = (8, 24)):  # fmt: skip
    """``batch`` sequences of ``length`` tokens: ``p`` random tokens repeated, ``p`` drawn
    uniformly from ``periods`` (both included) for each sequence. Returns ``(tokens,
    period)``: int64 ``(batch, length)`` and ``(batch,)``. Token ``t`` is a repeat when
    ``t >= period``; the first ``period`` tokens cannot be predicted."""
    low, high = periods
    if not 1 <= low <= high < length:
        raise ValueError(f"periods must satisfy 1 <= low <= high < length={length}, got {periods}")
    batch = rules.positive_int(batch, "batch")
    period = torch.randint(low, high + 1, (batch,), generator=generator)  # (batch,)
    source = torch.randint(rules.positive_int(vocab, "vocab"), (batch, high), generator=generator)
    t = torch.arange(length)
    return source.gather(1, t % period[:, None]), period  # (batch, length)


def example_sequence(length: int = 16, period: int = 6, vocab: int = 50, seed: int = 1):
    """One sequence of ``repeated_sequences`` with a chosen period: ``(length,)``."""
    source = torch.randint(vocab, (period,), generator=torch.Generator().manual_seed(seed))
    return source[torch.arange(length) % period]


def split_losses(logits, tokens, period) -> tuple[float, float]:
    """The mean cross-entropy (nats) of predicting token ``t + 1`` from position ``t``, over the
    targets that are first occurrences (``t + 1 < period``) and over the repeats."""
    loss = nn.functional.cross_entropy(
        logits[:, :-1].transpose(1, 2), tokens[:, 1:], reduction="none"
    )  # (b, n - 1)
    repeat = torch.arange(1, tokens.shape[1])[None] >= period[:, None]  # (b, n - 1)
    return loss[~repeat].mean().item(), loss[repeat].mean().item()


def seen_tokens_loss(tokens, period) -> float:
    """The mean loss (nats) on the repeats of a guess that needs no copying: uniform over the
    distinct tokens seen so far, ``ln k`` where ``k`` tokens differ among ``tokens[: t + 1]``.
    Attention that only gathers the context can reach it; beating it takes knowing which
    token comes next."""
    seen = nn.functional.one_hot(tokens).cumsum(dim=1).bool()  # (b, n, V): seen up to t
    distinct = seen.sum(dim=-1)[:, :-1].double()  # (b, n - 1): at position t, for target t + 1
    repeat = torch.arange(1, tokens.shape[1])[None] >= period[:, None]
    return distinct.log()[repeat].mean().item()


# --- scores from attention --------------------------------------------------------------------


def previous_token_scores(weights) -> torch.Tensor:
    """``weights`` ``(b, h, n, n)`` -> ``(h,)``: the mean weight of query ``t`` on key ``t - 1``,
    over the queries ``t >= 1``."""
    _check_weights(weights)
    t = torch.arange(1, weights.shape[-1])
    return weights[..., t, t - 1].mean(dim=(0, -1))


def induction_targets(tokens) -> torch.Tensor:
    """``tokens`` ``(b, n)`` -> boolean ``(b, n, n)``: key ``s`` of query ``t`` is a target when
    it follows an earlier occurrence of the query's token, ``tokens[s - 1] == tokens[t]`` with
    ``1 <= s <= t``."""
    n = tokens.shape[-1]
    same = tokens[:, :, None] == tokens[:, None, :]  # (b, n, n): query t, key j
    after = torch.zeros_like(same)
    after[:, :, 1:] = same[:, :, :-1]  # key s = j + 1 follows occurrence j
    return after & torch.ones(n, n, dtype=torch.bool).tril()


def induction_scores(weights, tokens) -> torch.Tensor:
    """``weights`` ``(b, h, n, n)`` -> ``(h,)``: the weight a query puts on the tokens that
    followed earlier occurrences of its token, summed, averaged over the queries that have one."""
    _check_weights(weights)
    if tokens.shape != weights.shape[:1] + weights.shape[-1:]:
        raise ValueError(
            f"tokens {tuple(tokens.shape)} do not match weights {tuple(weights.shape)}"
        )
    targets = induction_targets(tokens)  # (b, n, n)
    has = targets.any(dim=-1)  # (b, n)
    on_targets = (weights * targets[:, None]).sum(dim=-1)  # (b, h, n)
    return on_targets.transpose(0, 1)[:, has].mean(dim=-1)


def _check_weights(weights) -> None:
    if weights.ndim != 4 or weights.shape[-1] != weights.shape[-2]:
        raise ValueError(f"weights must be (b, h, n, n), got {tuple(weights.shape)}")


# --- the circuit from the weights -------------------------------------------------------------


def _head_matrices(attn: MultiHeadAttention, head: int):
    """Head ``head``'s ``W_Q``, ``W_K``, ``W_V`` ``(d_model, d_k)`` and ``W_O`` ``(d_k, d_model)``
    in the book's row-vector convention (``nn.Linear`` stores their transposes)."""
    cols = slice(head * attn.d_k, (head + 1) * attn.d_k)
    return (attn.w_q.weight[cols].T, attn.w_k.weight[cols].T, attn.w_v.weight[cols].T,
            attn.w_o.weight[:, cols].T)  # fmt: skip


def ov_circuit(model: AttentionOnly, layer: int, head: int) -> torch.Tensor:
    """The full OV circuit ``W_E W_V W_O W_U`` ``(vocab, vocab)`` of one head: row ``a`` holds
    the logits the head adds to every token when it attends to token ``a`` (embedding only)."""
    rules.check_index(layer, len(model.layers), "layer", "model")
    rules.check_index(head, model.layers[layer].h, "head", "layer")
    _, _, w_v, w_o = _head_matrices(model.layers[layer], head)
    return model.embed.weight @ w_v @ w_o @ model.unembed.weight.T


def copying_score(circuit) -> float:
    """``sum(lambda) / sum(|lambda|)`` over the eigenvalues of a square circuit: 1 when every
    eigenvalue is positive (the head raises the logit of the token it reads: it copies), -1
    when every one is negative (Elhage et al. 2021)."""
    if circuit.ndim != 2 or circuit.shape[0] != circuit.shape[1]:
        raise ValueError(f"circuit must be square, got {tuple(circuit.shape)}")
    eigenvalues = torch.linalg.eigvals(circuit.double())
    return (eigenvalues.sum().real / eigenvalues.abs().sum()).item()


def composition_scores(model: AttentionOnly, kind: str = "K", first: int = 0) -> torch.Tensor:
    """``(h, h)``: entry ``[i, j]`` scores how much head ``j`` of layer ``first + 1`` reads the
    output of head ``i`` of layer ``first``, ``||M||_F / (||A||_F ||B||_F)`` with ``W_OV = W_V
    W_O`` of the earlier head and ``W_QK = W_Q W_K^T`` of the later (row vectors): K-composition
    ``M = W_QK W_OV^T`` (the earlier head's output in the keys), Q-composition ``M = W_OV
    W_QK``, V-composition ``M = W_OV W_OV'``."""
    if kind not in ("Q", "K", "V"):
        raise ValueError(f"kind must be 'Q', 'K' or 'V', got {kind!r}")
    rules.check_index(first + 1, len(model.layers), "layer", "model")
    early, late = model.layers[first], model.layers[first + 1]
    scores = torch.zeros(early.h, late.h, dtype=early.w_q.weight.dtype)
    with torch.no_grad():
        for i in range(early.h):
            _, _, w_v, w_o = _head_matrices(early, i)
            ov = w_v @ w_o  # (d, d)
            for j in range(late.h):
                q2, k2, v2, o2 = _head_matrices(late, j)
                qk = q2 @ k2.T  # (d, d)
                a, b = ov, qk if kind != "V" else v2 @ o2
                m = {"K": qk @ ov.T, "Q": ov @ qk, "V": ov @ b}[kind]
                scores[i, j] = m.norm() / (a.norm() * b.norm())
    return scores


# --- training ---------------------------------------------------------------------------------


def train(model: AttentionOnly, *, steps: int, batch: int = 32, length: int = 48,
          periods: tuple[int, int] = (8, 24), lr: float = 1e-3, seed: int = 0,
          every: int = 10, example=None):  # fmt: skip
    """Train ``model`` on :func:`repeated_sequences` with Adam; return the record of the run.

    One thread (restored after); the batches come from ``seed``. Every ``every`` steps (and
    at the first and the last) it measures, on a fixed batch drawn from ``seed + 1`` (not
    trained on), the loss on first occurrences and on repeats, each layer's previous-token and
    induction scores, each head's copying score, and every head's attention on ``example``
    (default :func:`example_sequence`). Returns a dict of lists: ``losses`` (each step's
    training loss, nats), ``steps`` (where it measured), ``first``, ``repeat`` (nats),
    ``previous``, ``induction``, ``copying`` (``(layers, h)`` per measure), ``attention``
    (``(layers, h, n, n)`` per measure) and ``example`` (its tokens).
    """
    steps = rules.positive_int(steps, "steps")
    every = rules.positive_int(every, "every")
    vocab = model.embed.num_embeddings
    generator = torch.Generator().manual_seed(seed)
    probe, probe_period = repeated_sequences(
        64, length, vocab, torch.Generator().manual_seed(seed + 1), periods
    )
    example = example_sequence(vocab=vocab) if example is None else example
    optimiser = torch.optim.Adam(model.parameters(), lr=lr)
    record = {key: [] for key in ("losses", "steps", "first", "repeat", "previous", "induction",
                                  "copying", "attention")}  # fmt: skip
    record["example"] = example.tolist()

    def measure(step):
        model.eval()
        with torch.no_grad():
            logits, weights = model(probe)
            first, repeat = split_losses(logits, probe, probe_period)
            _, shown = model(example[None])
        record["steps"].append(step)
        record["first"].append(first)
        record["repeat"].append(repeat)
        record["previous"].append([previous_token_scores(w).tolist() for w in weights])
        record["induction"].append([induction_scores(w, probe).tolist() for w in weights])
        record["copying"].append(
            [
                [copying_score(ov_circuit(model, i, j).detach()) for j in range(layer.h)]
                for i, layer in enumerate(model.layers)
            ]
        )
        record["attention"].append(torch.stack([w[0] for w in shown]).tolist())
        model.train()

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    model.train()
    try:
        measure(0)
        for step in range(1, steps + 1):
            tokens, _ = repeated_sequences(batch, length, vocab, generator, periods)
            logits, _ = model(tokens, need_weights=False)
            loss = nn.functional.cross_entropy(
                logits[:, :-1].flatten(0, 1), tokens[:, 1:].flatten()
            )
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
            record["losses"].append(loss.item())
            if step % every == 0 or step == steps:
                measure(step)
    finally:
        torch.set_num_threads(threads)
        model.eval()
    return record


def phase_change_step(record: dict, vocab: int, fraction: float = 0.5) -> int | None:
    """The first measured step at which the loss on repeats is below ``fraction`` of chance,
    ``ln vocab``; ``None`` if it never is."""
    chance = math.log(vocab)
    for step, loss in zip(record["steps"], record["repeat"], strict=True):
        if loss < fraction * chance:
            return step
    return None


RECORD = "induction_heads.json"


def load_record() -> dict:
    """The run the book recorded (``data/induction_heads.json``): its settings, seed, every
    step's loss and every measure, the seconds it took and the revision."""
    data = resources.files("attnkit") / "data" / RECORD
    return json.loads(data.read_text(encoding="utf-8"))
