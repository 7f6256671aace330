"""Chapter 8's tiny GPT: a decoder-only language model in today's shape, from attnkit's parts.

:class:`TinyGPT` composes what the earlier chapters built: a token embedding, pre-norm blocks
with :class:`~attnkit.modules.RMSNorm` (chapter 4), causal multi-head self-attention whose
queries and keys are turned by :class:`~attnkit.relative_position_modules.RotaryPositionEmbedding`
(chapter 5), with grouped-query attention and a :class:`~attnkit.decoding.KVCache` as options
(chapter 7), a gated MLP (:class:`SwiGLU`), and a read-out that shares the embedding's matrix
(tied embeddings). The
attention is :class:`~attnkit.modules.MultiHeadAttention` with RoPE and fewer key-value heads
added (:class:`GPTAttention`), so that its weights can be read, head by head.

The corpus is text every reader has: the source of some modules of Python's standard library,
read from the running interpreter (:func:`load_corpus`), one token per character
(:class:`CharVocab`). :func:`train` trains on one CPU thread from a seed; the book ships the
weights it produced (``data/tiny_gpt.pt``, with ``data/tiny_gpt.json``: the seed, the
hyper-parameters, every step's loss and the revision), and :func:`load_trained` loads them.
:func:`generate` samples with a temperature and top-k, with or without the cache.
Every input rule lives in :mod:`attnkit.rules`.
"""

from __future__ import annotations

import hashlib
import json
import math
import sysconfig
import time
from contextlib import ExitStack
from importlib import resources
from pathlib import Path

import torch
from torch import nn

from . import rules
from .decoding import KVCache
from .modules import MultiHeadAttention, RMSNorm, _check_input, _dtype_name
from .relative_position_modules import RotaryPositionEmbedding

__all__ = [
    "CORPUS_MODULES",
    "load_corpus",
    "CharVocab",
    "GPTAttention",
    "swiglu_width",
    "SwiGLU",
    "GPTBlock",
    "TinyGPT",
    "batches",
    "train",
    "evaluate",
    "count_baseline",
    "top_k_probabilities",
    "generate",
    "load_trained",
]

# Modules of the standard library whose source is the corpus, in this order. Their text is
# the same in every Python 3.11 (chapter 8 checks it by its SHA-256 against the recorded one).
CORPUS_MODULES = (
    "textwrap", "heapq", "bisect", "colorsys", "fnmatch", "glob", "shlex", "calendar",
    "string", "fractions", "difflib", "statistics", "functools", "contextlib", "queue",
    "sched", "graphlib", "abc", "copy", "operator", "reprlib", "numbers", "pprint", "random",
)  # fmt: skip
VALIDATION_SHARE = 0.1  # the last tenth of the text is held out


def load_corpus(modules=CORPUS_MODULES) -> dict:
    """The corpus read from this interpreter's standard library: ``text`` (the modules' source,
    joined in order), ``train`` and ``validation`` (the text cut at 90 %: the last tenth is held
    out, whole lines of the last modules), ``sha256`` of the text and the ``python`` version."""
    import platform

    folder = Path(sysconfig.get_paths()["stdlib"])
    parts = []
    for name in modules:
        path = folder / f"{name.replace('.', '/')}.py"
        if not path.is_file():
            raise ValueError(f"the standard library of this Python has no {path}")
        parts.append(path.read_text(encoding="utf-8"))
    text = "".join(parts)
    cut = text.index("\n", int(len(text) * (1 - VALIDATION_SHARE))) + 1  # at a line's end
    return {
        "text": text,
        "train": text[:cut],
        "validation": text[cut:],
        "sha256": hashlib.sha256(text.encode("utf-8")).hexdigest(),
        "python": platform.python_version(),
    }


class CharVocab:
    """Characters as tokens: printable ASCII, newline and one token for every other character.

    ``encode(text)`` gives int64 ids ``(len(text),)``; ``decode(ids)`` the text (any other
    character comes back as ``"?"``).
    """

    UNKNOWN = "?"

    def __init__(self):
        self.chars = ["\n"] + [chr(c) for c in range(32, 127)] + ["\N{REPLACEMENT CHARACTER}"]
        self.index = {c: i for i, c in enumerate(self.chars)}

    def __len__(self) -> int:
        return len(self.chars)

    def encode(self, text: str) -> torch.Tensor:
        other = len(self.chars) - 1
        return torch.tensor([self.index.get(c, other) for c in text], dtype=torch.int64)

    def decode(self, ids) -> str:
        chars = self.chars[:-1] + [self.UNKNOWN]
        return "".join(chars[int(i)] for i in ids)


class GPTAttention(MultiHeadAttention):
    """Causal self-attention with RoPE and ``kv_heads`` key-value heads (grouped-query attention).

    The book's :class:`~attnkit.modules.MultiHeadAttention` without biases, with two changes:
    the queries and keys of every head are turned by rotary position embedding (chapter 5,
    adjacent pairs, base 10 000) after the split (and after QK-norm, if ``qk_norm``), and with
    ``kv_heads = g < h`` the key and value projections have ``g`` heads, each shared by
    ``h / g`` consecutive query heads (chapter 7; ``g = h`` is multi-head attention).

    ``forward(x, cache=None)`` takes ``x`` ``(b, m, d_model)``. Without a cache the tokens sit
    at positions ``0 .. m-1``; with a :class:`~attnkit.decoding.KVCache` that holds ``t``
    tokens they sit at ``t .. t+m-1``, their keys and values (``g`` heads: the cache is ``h/g``
    times smaller) are appended, and a call that raises leaves the cache as it was. Returns
    ``(output, weights)``: ``(b, m, d_model)`` and ``(b, h, m, t + m)``. ``causal=False``
    (an ablation) lets every token see every token; ``rope=False`` leaves positions out.
    """

    def __init__(
        self,
        d_model: int,
        h: int,
        kv_heads: int | None = None,
        *,
        max_len: int = 1024,
        qk_norm: bool = False,
        rope: bool = True,
        causal: bool = True,
    ):
        super().__init__(d_model, h, bias=False, qk_norm=qk_norm)
        self.g = self.h if kv_heads is None else rules.positive_int(kv_heads, "kv_heads")
        rules.check_kv_heads(self.h, self.g)
        if self.g != self.h:  # fewer key-value heads: narrower projections
            self.w_k = nn.Linear(d_model, self.g * self.d_k, bias=False)
            self.w_v = nn.Linear(d_model, self.g * self.d_k, bias=False)
        self.max_len = rules.positive_int(max_len, "max_len")
        self.rope = RotaryPositionEmbedding(self.d_k, self.max_len) if rope else None  # d_k even
        self.causal = bool(causal)

    def _split(self, x, heads: int):
        """``(..., n, heads*d_k) -> (..., heads, n, d_k)``."""
        return x.view(*x.shape[:-1], heads, self.d_k).transpose(-3, -2)

    def queries_keys_values(self, x, start: int = 0):
        """The queries ``(..., h, m, d_k)`` and the keys and values ``(..., g, m, d_k)`` of
        ``x`` ``(..., m, d_model)``: projected, split into heads, QK-normed if ``qk_norm``,
        and the queries and keys turned by RoPE at positions ``start .. start + m - 1``."""
        q = self._split(self.w_q(x), self.h)  # (..., h, m, d_k)
        k = self._split(self.w_k(x), self.g)  # (..., g, m, d_k)
        v = self._split(self.w_v(x), self.g)  # (..., g, m, d_k)
        if self.q_norm is not None:
            q, k = self.q_norm(q), self.k_norm(k)
        if self.rope is not None:
            positions = torch.arange(start, start + x.shape[-2], device=x.device)
            q, k = self.rope(q, positions), self.rope(k, positions)
        return q, k, v

    def forward(self, x, cache: KVCache | None = None):
        _check_input(x, "x")
        rules.check_tokens("x", x.shape, "(tokens, d_model)", self.d_model)
        t, m = (0 if cache is None else len(cache)), x.shape[-2]
        rules.check_max_len(t + m, self.max_len, "model")
        if cache is not None:
            new = tuple(x.shape[:-2]) + (self.g, m, self.d_k)
            cache.check_next(new, new, _dtype_name(self.w_k.weight), str(self.w_k.weight.device))
        q, k, v = self.queries_keys_values(x, t)
        with ExitStack() as undo:
            if cache is not None:  # an error after the append undoes it
                undo.enter_context(cache.transaction())
                k, v = cache.append(k, v)  # (..., g, t + m, d_k)
            k = k.repeat_interleave(self.h // self.g, dim=-3)  # (..., h, t + m, d_k)
            v = v.repeat_interleave(self.h // self.g, dim=-3)
            mask = None
            if self.causal:
                mask = torch.ones(m, t + m, dtype=torch.bool, device=x.device).tril(diagonal=t)
            heads, weights = self.attend(q, k, v, mask)  # (..., h, m, d_k), (..., h, m, t + m)
            return self.w_o(self.merge_heads(heads)), weights

    def extra_repr(self) -> str:
        return (
            f"d_model={self.d_model}, h={self.h}, kv_heads={self.g}, d_k={self.d_k}, "
            f"rope={self.rope is not None}, causal={self.causal}, "
            f"qk_norm={self.q_norm is not None}"
        )


def swiglu_width(d_model: int, multiple: int = 16) -> int:
    """The inner width of a gated MLP as Llama's reference code chooses it: two thirds of
    ``4 d_model`` (so that its three matrices hold as many parameters as an ungated MLP's two
    of width ``4 d_model``), rounded up to a multiple of ``multiple`` (Llama's code: 256).
    ``swiglu_width(64)`` is 176: ``8 * 64 // 3 = 170``, rounded up to a multiple of 16."""
    multiple = rules.positive_int(multiple, "multiple")
    inner = 8 * rules.positive_int(d_model, "d_model") // 3
    return multiple * ((inner + multiple - 1) // multiple)


class SwiGLU(nn.Module):
    """The gated MLP of Llama, Mistral and Qwen: ``(SiLU(x W_gate) * x W_up) W_down``.

    ``W_gate`` and ``W_up`` ``(d_model, d_ff)``, ``W_down`` ``(d_ff, d_model)``, no biases;
    ``SiLU(z) = z sigmoid(z)`` and ``*`` is the elementwise product, so the gate's branch
    scales every inner unit of the other. ``forward(x)`` maps ``(..., d_model)`` to
    ``(..., d_model)``.
    """

    def __init__(self, d_model: int, d_ff: int):
        super().__init__()
        d_model, d_ff = rules.positive_int(d_model, "d_model"), rules.positive_int(d_ff, "d_ff")
        self.w_gate = nn.Linear(d_model, d_ff, bias=False)
        self.w_up = nn.Linear(d_model, d_ff, bias=False)
        self.w_down = nn.Linear(d_ff, d_model, bias=False)

    def forward(self, x):
        return self.w_down(nn.functional.silu(self.w_gate(x)) * self.w_up(x))


class GPTBlock(nn.Module):
    """A pre-norm block: ``x + attention(RMSNorm(x))``, then ``x + SwiGLU(RMSNorm(x))``.

    The MLP is :class:`SwiGLU` of inner width ``d_ff``. ``forward(x, cache=None)`` returns
    ``(x, weights)``.
    """

    def __init__(self, d_model: int, h: int, d_ff: int, **attention):
        super().__init__()
        self.norm1 = RMSNorm(d_model)
        self.attn = GPTAttention(d_model, h, **attention)
        self.norm2 = RMSNorm(d_model)
        self.mlp = SwiGLU(d_model, d_ff)

    def forward(self, x, cache: KVCache | None = None):
        attended, weights = self.attn(self.norm1(x), cache)
        x = x + attended
        return x + self.mlp(self.norm2(x)), weights


class TinyGPT(nn.Module):
    """A decoder-only language model: embedding, pre-norm blocks, RMSNorm, tied read-out.

    ``forward(tokens, caches=None)`` takes integer tokens ``(b, n)`` and returns ``(logits,
    weights)``: the next-token logits ``(b, n, vocab)``, ``RMSNorm(x) E^T`` with the embedding
    matrix ``E`` ``(vocab, d_model)`` itself (tied embeddings), and a list of every layer's
    attention weights ``(b, h, n, t + n)``. With ``caches`` (one
    :class:`~attnkit.decoding.KVCache` per layer, :meth:`new_caches`) the tokens continue the
    cached sequence, and a call that raises leaves every cache as it was. Positions come from
    RoPE alone: there is no table of position embeddings. ``config`` holds the arguments.
    """

    def __init__(
        self,
        vocab: int,
        d_model: int = 64,
        h: int = 4,
        layers: int = 2,
        *,
        kv_heads: int | None = None,
        d_ff: int | None = None,
        max_len: int = 1024,
        qk_norm: bool = False,
        rope: bool = True,
        causal: bool = True,
    ):
        super().__init__()
        vocab, d_model = rules.positive_int(vocab, "vocab"), rules.positive_int(d_model, "d_model")
        d_ff = swiglu_width(d_model) if d_ff is None else d_ff
        self.config = dict(
            vocab=vocab,
            d_model=d_model,
            h=h,
            layers=layers,
            kv_heads=kv_heads,
            d_ff=d_ff,
            max_len=max_len,
            qk_norm=qk_norm,
            rope=rope,
            causal=causal,
        )
        self.max_len = rules.positive_int(max_len, "max_len")
        self.embed = nn.Embedding(vocab, d_model)
        nn.init.normal_(self.embed.weight, std=d_model**-0.5)  # logits of order 1 at the start
        self.blocks = nn.ModuleList(
            GPTBlock(
                d_model,
                h,
                d_ff,
                kv_heads=kv_heads,
                max_len=max_len,
                qk_norm=qk_norm,
                rope=rope,
                causal=causal,
            )
            for _ in range(rules.positive_int(layers, "layers"))
        )
        self.norm = RMSNorm(d_model)

    def new_caches(self) -> list[KVCache]:
        return [KVCache() for _ in self.blocks]

    def forward(self, tokens, caches: list[KVCache] | None = None):
        if not isinstance(tokens, torch.Tensor):
            raise TypeError(f"tokens must be a torch.Tensor, got {type(tokens).__name__}")
        rules.check_token_ids("tokens", tokens.shape, _dtype_name(tokens), ("int64", "int32"))
        low, high = int(tokens.min()), int(tokens.max())
        rules.check_token_range("tokens", tokens.shape, low, high, self.embed.num_embeddings)
        if caches is not None:
            check_caches(len(caches), len(self.blocks), [len(c) for c in caches])
        x = self.embed(tokens)  # (b, n, d_model)
        weights = []
        with ExitStack() as undo:  # all or nothing: an error in any layer undoes every append
            for i, block in enumerate(self.blocks):
                cache = None if caches is None else undo.enter_context(caches[i].transaction())
                x, w = block(x, cache)
                weights.append(w)
            return self.norm(x) @ self.embed.weight.T, weights  # (b, n, vocab)


# --- training ---------------------------------------------------------------------------------


def batches(ids, batch: int, context: int, generator: torch.Generator):
    """A batch of ``batch`` random windows of ``ids``: inputs and targets ``(batch, context)``,
    the targets one character later."""
    check_window(len(ids), rules.positive_int(context, "context"))
    starts = torch.randint(len(ids) - context, (rules.positive_int(batch, "batch"),),
                           generator=generator)  # fmt: skip
    window = starts[:, None] + torch.arange(context + 1)  # (batch, context + 1)
    chunk = ids[window]
    return chunk[:, :-1], chunk[:, 1:]


def _loss(model, x, y):
    logits, _ = model(x)  # (b, n, vocab)
    return nn.functional.cross_entropy(logits.flatten(0, 1), y.flatten())


def train(
    model: TinyGPT,
    ids,
    *,
    steps: int,
    batch: int = 32,
    context: int = 64,
    lr: float = 3e-3,
    warmup: int = 50,
    seed: int = 0,
    weight_decay: float = 0.01,
    progress: bool = False,
    draw=batches,
    after_step=None,
) -> list[float]:
    """Train ``model`` on random windows of the token ids ``ids`` with AdamW; return each
    step's training loss (nats per token).

    The learning rate rises linearly over ``warmup`` steps and falls along a cosine to a tenth
    of ``lr`` at the last step; gradients are clipped to norm 1. The windows are drawn from
    ``seed``, and the run uses one thread (restored after): on one machine, the same model
    from the same seed gives the same losses, step for step. ``progress=True`` prints the
    step, the loss and the time left ten times in the run (for a reader who waits on it).
    ``draw(ids, batch, context, generator)`` makes each batch (default :func:`batches`);
    ``after_step(step)``, if given, is called after every step (to measure the model on the way).
    """
    steps = rules.positive_int(steps, "steps")
    generator = torch.Generator().manual_seed(seed)
    optimiser = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=weight_decay)

    def rate(step):  # a factor of lr
        if step < warmup:
            return (step + 1) / warmup
        progress = (step - warmup) / max(1, steps - warmup)
        return 0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * progress))

    schedule = torch.optim.lr_scheduler.LambdaLR(optimiser, rate)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    losses = []
    began, every = time.perf_counter(), max(1, steps // 10)
    model.train()
    try:
        for step in range(1, steps + 1):
            x, y = draw(ids, batch, context, generator)
            loss = _loss(model, x, y)
            optimiser.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimiser.step()
            schedule.step()
            losses.append(loss.item())
            if after_step is not None:
                after_step(step)
            if progress and (step % every == 0 or step == steps):
                left = (time.perf_counter() - began) / step * (steps - step)
                print(f"step {step}/{steps}: loss {losses[-1]:.3f} nats per character, "
                      f"about {left:.0f} s left", flush=True)  # fmt: skip
    finally:
        torch.set_num_threads(threads)
        model.eval()
    return losses


def evaluate(model: TinyGPT, ids, context: int = 64, limit: int | None = None) -> float:
    """The mean loss (nats per character) of predicting every character of ``ids`` after the
    first, in consecutive windows of ``context`` (each window starts afresh), the first
    ``limit`` characters only if given."""
    ids = ids if limit is None else ids[:limit]
    n = (len(ids) - 1) // context * context
    check_window(len(ids), context)
    x = ids[:n].view(-1, context)  # (windows, context)
    y = ids[1 : n + 1].view(-1, context)
    with torch.no_grad():
        return _loss(model.eval(), x, y).item()


def count_baseline(train_ids, validation_ids, vocab: int, order: int, alpha: float = 1.0):
    """The cross-entropy, in bits per character, of a counting model on ``validation_ids``.

    ``order=1`` (unigram): ``p(c) = (count(c) + alpha) / (N + alpha V)`` from the training
    text; ``order=2`` (bigram): ``p(c | a) = (count(a c) + alpha) / (count(a .) + alpha V)``,
    scored on every validation character after the first. ``alpha`` (add-one smoothing by
    default) gives unseen characters and pairs a little probability.
    """
    vocab = rules.positive_int(vocab, "vocab")
    if order == 1:
        counts = torch.bincount(train_ids, minlength=vocab).double() + alpha  # (V,)
        log_p = (counts / counts.sum()).log2()
        return -log_p[validation_ids].mean().item()
    if order == 2:
        pairs = torch.bincount(train_ids[:-1] * vocab + train_ids[1:], minlength=vocab * vocab)
        counts = pairs.view(vocab, vocab).double() + alpha  # (V, V): row = previous
        log_p = (counts / counts.sum(dim=1, keepdim=True)).log2()
        return -log_p[validation_ids[:-1], validation_ids[1:]].mean().item()
    raise ValueError(f"order must be 1 (unigram) or 2 (bigram), got {order!r}")


# --- generation -------------------------------------------------------------------------------


def top_k_probabilities(logits, k: int | None = None, temperature: float = 1.0):
    """``softmax(logits / temperature)`` over the ``k`` largest logits of each row, 0 elsewhere.

    ``logits`` ``(..., vocab)``; ``k=None`` keeps every token. The ``k`` largest keep their
    ratios ``exp((l_i - l_j) / temperature)`` and sum to 1. Returns ``(..., vocab)``.
    """
    _check_input(logits, "logits")
    temperature = rules.positive_finite(temperature, "temperature")
    scaled = logits / temperature
    if k is not None:
        k = check_top_k(k, logits.shape[-1])
        kth = scaled.topk(k, dim=-1).values[..., -1:]  # (..., 1): the k-th largest
        scaled = scaled.masked_fill(scaled < kth, float("-inf"))
    return torch.softmax(scaled, dim=-1)


def generate(
    model: TinyGPT,
    prompt,
    steps: int,
    *,
    temperature: float = 1.0,
    top_k: int | None = None,
    seed: int = 0,
    use_cache: bool = True,
):
    """``prompt`` ``(b, n)`` followed by ``steps`` sampled tokens: ``(b, n + steps)``.

    Each token is drawn from :func:`top_k_probabilities` of the last position's logits, with a
    generator seeded by ``seed``, so a seed gives one text. Without the cache every step runs
    the model on the whole sequence so far; with it, the prompt fills the caches once and every
    later step feeds only the token just drawn. The two give the same text.
    """
    steps = rules.positive_int(steps, "steps")
    rules.check_max_len(prompt.shape[-1] + steps - 1, model.max_len, "model")
    generator = torch.Generator().manual_seed(seed)
    tokens = prompt
    with torch.no_grad():
        caches = model.new_caches() if use_cache else None
        logits, _ = model(prompt, caches)  # (b, n, vocab)
        for step in range(steps):
            p = top_k_probabilities(logits[:, -1].double(), top_k, temperature)  # (b, vocab)
            next_token = torch.multinomial(p, 1, generator=generator)  # (b, 1)
            tokens = torch.cat([tokens, next_token], dim=1)
            if step < steps - 1:
                logits, _ = model(next_token, caches) if use_cache else model(tokens)
    return tokens


# --- the shipped weights ----------------------------------------------------------------------

WEIGHTS = "tiny_gpt.pt"
RECORD = "tiny_gpt.json"


def load_trained() -> tuple[TinyGPT, dict]:
    """The model the book trained (``data/tiny_gpt.pt``, its float32 weights)
    and its record (``data/tiny_gpt.json``): the seed, the hyper-parameters, every step's
    loss, the validation loss, the corpus's SHA-256 and the revision that produced them."""
    data = resources.files("attnkit") / "data"
    record = json.loads((data / RECORD).read_text(encoding="utf-8"))
    model = TinyGPT(**record["model"])
    with resources.as_file(data / WEIGHTS) as path:
        state = torch.load(path, map_location="cpu", weights_only=True)
    model.load_state_dict(state)
    return model.eval(), record


# --- input rules only this module applies


def check_caches(count: int, layers: int, lengths: list) -> None:
    """ValueError unless there is one key-value cache per layer, all holding as many tokens."""
    if count != layers:
        raise ValueError(f"pass one KVCache per layer: {layers}, got {count}")
    if len(set(lengths)) > 1:
        raise ValueError(
            f"caches must hold as many tokens each, one sequence per layer, got {lengths}"
        )


def check_window(length: int, context: int) -> None:
    """ValueError unless a text of ``length`` tokens holds a window of ``context`` inputs and
    the target after them."""
    if length <= context:
        raise ValueError(
            f"a text of {length} tokens holds no window of context = {context} tokens and "
            "the token after them: use a longer text or a shorter context"
        )


def check_top_k(k, vocab: int) -> int:
    """``k`` as an ``int`` if it keeps between 1 and all ``vocab`` tokens, else ValueError."""
    k = rules.positive_int(k, "top_k")
    if k > vocab:
        raise ValueError(f"top_k = {k} is larger than the vocabulary of {vocab} tokens")
    return k
