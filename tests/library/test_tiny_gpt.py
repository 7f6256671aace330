"""Chapter 8's tiny GPT (attnkit.gpt): its layers against PyTorch's, its cache, its generation,
its shipped weights and the run that produced them."""

import json
import math
from importlib import resources

import pytest
import torch
import torch.nn.functional as F

from attnkit.decoding import KVCache
from attnkit.gpt import (
    CharVocab,
    GPTAttention,
    TinyGPT,
    count_baseline,
    evaluate,
    generate,
    load_corpus,
    load_trained,
    swiglu_width,
    top_k_probabilities,
    train,
)
from attnkit.relative_position_modules import RotaryPositionEmbedding

F64 = torch.float64
# The margin, in bits per character, by which chapter 8 says the model beats the bigram counts.
MARGIN_BITS = 1.0


def small_model(**kwargs):
    torch.manual_seed(0)
    return TinyGPT(20, d_model=16, h=4, layers=2, max_len=32, **kwargs).double().eval()


# --- the layers equal PyTorch's ---------------------------------------------------------------


@pytest.mark.parametrize("kv_heads", [4, 2, 1])
def test_attention_equals_sdpa_with_is_causal_on_turned_queries_and_keys(kv_heads):
    torch.manual_seed(1)
    layer = GPTAttention(16, 4, kv_heads, max_len=32).double()
    x = torch.randn(2, 9, 16, dtype=F64)
    out, weights = layer(x)
    rope = RotaryPositionEmbedding(4, 32).double()
    q = rope(layer._split(layer.w_q(x), 4))  # (2, 4, 9, 4)
    k = rope(layer._split(layer.w_k(x), kv_heads))  # (2, g, 9, 4)
    v = layer._split(layer.w_v(x), kv_heads)
    heads = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
    expected = layer.w_o(heads.transpose(1, 2).reshape(2, 9, 16))
    assert torch.allclose(out, expected, rtol=0, atol=1e-12)
    assert torch.all(weights.triu(diagonal=1) == 0)
    assert weights.shape == (2, 4, 9, 9)


def test_norms_equal_rms_norm():
    block = small_model().blocks[0]
    with torch.no_grad():
        block.norm1.weight.uniform_(0.5, 1.5)
    x = torch.randn(3, 5, 16, dtype=F64)
    eps = torch.finfo(F64).eps
    assert torch.allclose(block.norm1(x), F.rms_norm(x, (16,), block.norm1.weight, eps), atol=1e-14)


def test_the_mlp_is_swiglu_written_out_and_with_torchs_functions():
    block = small_model().blocks[0]
    mlp = block.mlp
    x = torch.randn(3, 5, 16, dtype=F64)
    gate, up, down = mlp.w_gate.weight.T, mlp.w_up.weight.T, mlp.w_down.weight.T  # (16, 48) ...
    z = x @ gate
    written_out = ((z / (1 + torch.exp(-z))) * (x @ up)) @ down  # SiLU(z) = z sigmoid(z)
    with_torch = F.linear(F.silu(F.linear(x, mlp.w_gate.weight)) * F.linear(x, mlp.w_up.weight),
                          mlp.w_down.weight)  # fmt: skip
    assert torch.allclose(mlp(x), written_out, rtol=0, atol=1e-12)
    assert torch.allclose(mlp(x), with_torch, rtol=0, atol=1e-12)
    assert mlp.w_gate.weight.shape == (48, 16) and mlp.w_down.weight.shape == (16, 48)
    assert not any(name.endswith("bias") for name, _ in block.named_parameters())


@pytest.mark.parametrize("d, width", [(16, 48), (64, 176), (4096, 11008)])
def test_the_inner_width_is_llamas_rule(d, width):
    """8d/3 rounded up to a multiple: Llama 2 7B's 11008 with 256, this book's 176 with 16."""
    assert swiglu_width(d, 256 if d == 4096 else 16) == width
    assert small_model().config["d_ff"] == swiglu_width(16) == 48


def test_the_read_out_is_the_embedding_matrix():
    model = small_model()
    tokens = torch.randint(0, 20, (2, 7))
    logits, weights = model(tokens)
    x = model.embed(tokens)
    for block in model.blocks:
        x, _ = block(x)
    assert torch.allclose(logits, model.norm(x) @ model.embed.weight.T, atol=1e-12)
    assert len(weights) == 2 and weights[0].shape == (2, 4, 7, 7)
    names = [name for name, _ in model.named_parameters()]
    assert not any("read_out" in name or "position" in name for name in names)


# --- the cache and generation -----------------------------------------------------------------


@pytest.mark.parametrize("kv_heads", [None, 2])
def test_cached_steps_give_the_rows_of_the_whole_pass(kv_heads):
    model = small_model(kv_heads=kv_heads)
    tokens = torch.randint(0, 20, (2, 12))
    full, _ = model(tokens)
    caches = model.new_caches()
    rows = [model(tokens[:, :5], caches)[0]] + [
        model(tokens[:, t : t + 1], caches)[0] for t in range(5, 12)
    ]
    assert torch.allclose(torch.cat(rows, dim=1), full, rtol=0, atol=1e-12)
    g = kv_heads or 4
    assert caches[0].keys.shape == (2, g, 12, 4)  # g key-value heads are cached


def test_generation_with_and_without_the_cache_gives_the_same_text_and_a_seed_one_text():
    model = small_model()
    prompt = torch.randint(0, 20, (2, 4))
    kwargs = dict(steps=25, temperature=0.8, top_k=5, seed=3)
    cached = generate(model, prompt, use_cache=True, **kwargs)
    assert torch.equal(cached, generate(model, prompt, use_cache=False, **kwargs))
    assert torch.equal(cached, generate(model, prompt, **kwargs))
    assert not torch.equal(cached, generate(model, prompt, **(kwargs | {"seed": 4})))
    assert cached.shape == (2, 29) and torch.equal(cached[:, :4], prompt)


def test_top_k_probabilities_keeps_k_tokens_and_their_ratios():
    logits = torch.tensor([[2.0, -1.0, 0.5, 3.0, 1.0]], dtype=F64)
    p = top_k_probabilities(logits, 3, temperature=0.5)
    assert torch.equal(p > 0, torch.tensor([[True, False, False, True, True]]))
    assert torch.isclose(p.sum(), torch.tensor(1.0, dtype=F64))
    assert torch.isclose(p[0, 3] / p[0, 0], torch.tensor(math.exp((3.0 - 2.0) / 0.5), dtype=F64))
    assert torch.equal(top_k_probabilities(logits, 1), torch.tensor([[0.0, 0, 0, 1, 0]], dtype=F64))
    assert torch.allclose(top_k_probabilities(logits), torch.softmax(logits, -1))


def test_bad_inputs_raise_and_leave_the_caches_as_they_were():
    with pytest.raises(ValueError, match="multiple of the number of key-value heads"):
        GPTAttention(16, 4, 3)
    with pytest.raises(ValueError, match="larger than the vocabulary"):
        top_k_probabilities(torch.zeros(1, 5), 6)
    with pytest.raises(ValueError, match="temperature"):
        top_k_probabilities(torch.zeros(1, 5), 2, temperature=0.0)
    model = small_model()
    caches = model.new_caches()
    model(torch.randint(0, 20, (1, 30)), caches)
    with pytest.raises(ValueError, match="max_len"):
        model(torch.randint(0, 20, (1, 3)), caches)  # positions 30 .. 32 of max_len 32
    with pytest.raises(ValueError, match="vocabulary"):
        model(torch.tensor([[1, 25]]), caches)
    with pytest.raises(ValueError, match="one KVCache per layer"):
        model(torch.tensor([[1]]), caches[:1])
    assert [len(c) for c in caches] == [30, 30]
    with pytest.raises(ValueError, match="as many tokens"):
        model(torch.tensor([[1]]), [caches[0], KVCache()])


def test_count_baselines_are_the_formulas():
    train_ids, validation_ids = torch.tensor([0, 1, 0, 1, 2]), torch.tensor([0, 1, 2])
    unigram = count_baseline(train_ids, validation_ids, 3, order=1)
    p = torch.tensor([3.0, 3.0, 2.0], dtype=F64) / 8  # counts + 1 over 5 + 3
    assert math.isclose(unigram, -p[validation_ids].log2().mean().item(), rel_tol=1e-12)
    bigram = count_baseline(train_ids, validation_ids, 3, order=2)
    # after 0: (0, 1) twice of two; after 1: (1, 0) once, (1, 2) once, of two
    expected = -(math.log2(3 / 5) + math.log2(2 / 5)) / 2
    assert math.isclose(bigram, expected, rel_tol=1e-12)


# --- the shipped weights and the run that produced them -------------------------------------


@pytest.fixture(scope="module")
def shipped():
    model, record = load_trained()
    corpus = load_corpus()
    if corpus["sha256"] != record["corpus"]["sha256"]:
        pytest.skip(
            f"this Python's standard library ({corpus['python']}) is not the corpus the weights "
            f"were trained on (Python {record['corpus']['python']})"
        )
    return model, record, corpus


def test_the_shipped_files_are_small_and_say_how_they_were_made():
    data = resources.files("attnkit") / "data"
    assert (data / "tiny_gpt.pt").stat().st_size < 2 * 2**20  # type: ignore[attr-defined]
    record = json.loads((data / "tiny_gpt.json").read_text(encoding="utf-8"))
    for key in ("seed", "model", "training", "losses", "validation_loss", "corpus", "revision"):
        assert key in record, key
    assert len(record["losses"]) == record["training"]["steps"]


def test_the_shipped_weights_give_the_recorded_validation_loss(shipped):
    model, record, corpus = shipped
    ids = CharVocab().encode(corpus["validation"])
    loss = evaluate(model, ids, record["training"]["context"])
    assert abs(loss - record["validation_loss"]) < 1e-5


def test_the_model_beats_the_bigram_counts_by_the_stated_margin(shipped):
    _, record, corpus = shipped
    vocab = CharVocab()
    bigram = count_baseline(
        vocab.encode(corpus["train"]), vocab.encode(corpus["validation"]), len(vocab), order=2
    )
    assert bigram - record["validation_loss"] / math.log(2) > MARGIN_BITS


def test_training_from_scratch_reproduces_the_recorded_first_steps(shipped):
    """Training is a deterministic function of the seed, the corpus, the settings and the code:
    on one CPU thread the same initial weights, the same windows of text and the same
    arithmetic give the same losses, step after step. A full retrain takes a minute of CI; its
    first ten steps take about a second. They run every part of the computation that the other
    590 steps repeat (the initialisation from the seed, the windows drawn from it, the forward
    and backward passes, the clipping, AdamW, the warm-up of the learning rate) on the recorded
    corpus, so a change of the code or of the data that matters makes the losses part within
    these steps; when they agree to 1e-5, this code makes the recorded run, and the test above
    ties the shipped weights to that run's recorded validation loss. Two things ten steps
    cannot see: a change that acts only later (the cosine decay of the learning rate after the
    warm-up), and a machine whose arithmetic rounds differently (another CPU's kernels), where
    even a faithful rerun parts from the record by more than 1e-5."""
    _, record, corpus = shipped
    steps = 10
    torch.manual_seed(record["seed"])
    model = TinyGPT(**record["model"])
    settings = record["training"] | {"steps": steps}
    losses = train(model, CharVocab().encode(corpus["train"]), seed=record["seed"], **settings)
    recorded = record["losses"][:steps]
    assert max(abs(a - b) for a, b in zip(losses, recorded)) < 1e-5, (losses, recorded)
