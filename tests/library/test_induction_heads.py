"""Chapter 9's induction heads (attnkit.induction): the attention-only model against PyTorch's
attention, the task, the scores against their formulas written out, ablation, the circuit read
from the weights, and the shipped record of the run."""

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from attnkit.induction import (
    AttentionOnly,
    composition_scores,
    copying_score,
    example_sequence,
    induction_scores,
    induction_targets,
    load_record,
    ov_circuit,
    phase_change_step,
    previous_token_scores,
    repeated_sequences,
    seen_tokens_loss,
    split_losses,
)
from attnkit.induction_train import MODEL, SEED, TRAINING, run
from attnkit.scrubber import TrainingScrubber, pack_weights
from tests.support.book import ROOT
from tests.support.node import module_runner

F64 = torch.float64


def small_model(layers=2):
    torch.manual_seed(0)
    return AttentionOnly(11, d_model=8, h=2, layers=layers, max_len=12).double().eval()


def test_the_model_is_sdpa_with_is_causal_layer_after_layer():
    model = small_model()
    tokens = torch.randint(11, (3, 10), generator=torch.Generator().manual_seed(1))
    logits, weights = model(tokens)
    x = model.embed(tokens) + model.position.weight[:10]  # (3, 10, 8)
    for layer, w in zip(model.layers, weights):
        q, k, v = (layer.split_heads(p(x)) for p in (layer.w_q, layer.w_k, layer.w_v))
        heads = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + layer.w_o(layer.merge_heads(heads))
        assert torch.all(w.triu(diagonal=1) == 0) and w.shape == (3, 2, 10, 10)
        assert torch.allclose(w.sum(-1), torch.ones(3, 2, 10, dtype=F64))
    assert torch.allclose(logits, x @ model.unembed.weight.T, rtol=0, atol=1e-12)


def test_without_weights_the_model_is_the_same_through_pytorchs_fused_attention():
    model = small_model()
    tokens = torch.randint(11, (3, 10), generator=torch.Generator().manual_seed(2))
    for ablate in ((), [(0, 1)], [(1, 0), (1, 1)]):
        logits, weights = model(tokens, ablate=ablate)
        fused, none = model(tokens, ablate=ablate, need_weights=False)
        assert none is None and len(weights) == 2
        assert torch.allclose(fused, logits, rtol=0, atol=1e-12)


def test_ablating_a_head_removes_exactly_its_term_from_the_residual_stream():
    model = small_model(layers=1)
    tokens = torch.tensor([[1, 2, 3, 1, 2, 3]])
    full, weights = model(tokens)
    cut, _ = model(tokens, ablate=[(0, 1)])
    layer = model.layers[0]
    x = model.embed(tokens) + model.position.weight[:6]
    v = layer.split_heads(layer.w_v(x))[0, 1]  # (6, 4): head 1's values
    head_term = (weights[0][0, 1] @ v) @ layer.w_o.weight[:, 4:].T  # (6, 8): its W_O rows
    assert torch.allclose(full - cut, head_term @ model.unembed.weight.T, atol=1e-12)
    with pytest.raises(ValueError, match=r"head must be one of 0 \.\. 1"):
        model(tokens, ablate=[(0, 2)])
    with pytest.raises(ValueError, match=r"layer must be one of 0 \.\. 0"):
        model(tokens, ablate=[(1, 0)])


def test_bad_tokens_raise_naming_the_shapes():
    model = small_model()
    with pytest.raises(ValueError, match="max_len"):
        model(torch.zeros(1, 13, dtype=torch.int64))
    with pytest.raises(ValueError, match="tokens"):
        model(torch.full((1, 3), 11))
    with pytest.raises(TypeError):
        model([[1, 2]])


def test_repeated_sequences_repeat_with_their_period_and_only_then():
    tokens, period = repeated_sequences(64, 30, 7, torch.Generator().manual_seed(0), (3, 9))
    assert tokens.shape == (64, 30) and period.min() >= 3 and period.max() <= 9
    assert len(set(period.tolist())) > 3  # the period varies: no fixed offset finds the next token
    for row, p in zip(tokens, period.tolist()):
        assert torch.equal(row[p:], row[:-p])
    with pytest.raises(ValueError, match="periods"):
        repeated_sequences(2, 10, 7, torch.Generator(), (3, 10))
    assert torch.equal(example_sequence(10, 4)[4:], example_sequence(10, 4)[:6])


def test_split_losses_are_cross_entropy_over_first_occurrences_and_repeats():
    tokens, period = repeated_sequences(4, 12, 5, torch.Generator().manual_seed(2), (3, 6))
    logits = torch.randn(4, 12, 5, generator=torch.Generator().manual_seed(3))
    first, repeat = split_losses(logits, tokens, period)
    firsts, repeats = [], []
    for b in range(4):
        for t in range(11):
            loss = F.cross_entropy(logits[b, t], tokens[b, t + 1]).item()
            (repeats if t + 1 >= period[b] else firsts).append(loss)
    assert math.isclose(first, sum(firsts) / len(firsts), rel_tol=1e-6)
    assert math.isclose(repeat, sum(repeats) / len(repeats), rel_tol=1e-6)


def test_seen_tokens_loss_is_the_log_of_the_distinct_tokens_seen():
    tokens, period = torch.tensor([[0, 1, 0, 1, 0, 1], [2, 2, 3, 2, 2, 3]]), torch.tensor([2, 3])
    # repeats of row 0 at t = 1..4 see {0,1}; row 1 at t = 2..4 see {2,3}
    assert math.isclose(seen_tokens_loss(tokens, period), math.log(2))


def test_previous_token_and_induction_scores_are_their_formulas():
    tokens = torch.tensor([[4, 7, 2, 4, 7, 2, 4, 1]])  # period 3, then a new token
    weights = torch.rand(1, 3, 8, 8, generator=torch.Generator().manual_seed(0)).tril()
    weights = weights / weights.sum(-1, keepdim=True)
    previous = [sum(weights[0, h, t, t - 1] for t in range(1, 8)) / 7 for h in range(3)]
    assert torch.allclose(previous_token_scores(weights), torch.stack(previous))
    targets = induction_targets(tokens)[0]
    # query 3 (a 4) looks for what followed the 4 at 0: key 1; query 6 for keys 1 and 4
    assert targets[3].nonzero().flatten().tolist() == [1]
    assert targets[6].nonzero().flatten().tolist() == [1, 4]
    assert not targets[:3].any() and not targets[7].any()  # no earlier occurrence
    by_hand = [sum(weights[0, h, t][targets[t]].sum() for t in range(3, 7)) / 4 for h in range(3)]
    assert torch.allclose(induction_scores(weights, tokens), torch.stack(by_hand))
    with pytest.raises(ValueError, match=r"tokens \(1, 7\) do not match weights"):
        induction_scores(weights, tokens[:, :7])


def test_the_ov_circuit_is_the_embedding_through_the_head_to_the_logits():
    model = small_model()
    layer, head, d_k = model.layers[1], 1, 4
    tokens = torch.arange(11)[None]
    # a head that attends to token a with weight 1 adds  E[a] W_V W_O  to the stream
    v = layer.w_v(model.embed(tokens))[0, :, head * d_k : (head + 1) * d_k]  # (11, 4)
    added = v @ layer.w_o.weight[:, head * d_k : (head + 1) * d_k].T  # (11, 8)
    assert torch.allclose(ov_circuit(model, 1, head), model.unembed(added), atol=1e-12)


def test_copying_score_is_one_for_copying_and_minus_one_for_anti_copying():
    q = torch.linalg.qr(torch.randn(6, 6, generator=torch.Generator().manual_seed(0)))[0]
    positive = q @ torch.diag(torch.arange(1.0, 7.0)) @ q.T
    assert math.isclose(copying_score(positive), 1.0, abs_tol=1e-9)
    assert math.isclose(copying_score(-positive), -1.0, abs_tol=1e-9)
    mixed = torch.diag(torch.tensor([3.0, -1.0]))
    assert math.isclose(copying_score(mixed), 0.5)
    with pytest.raises(ValueError, match="square"):
        copying_score(torch.zeros(2, 3))


def test_composition_scores_are_normalised_frobenius_norms_of_the_products():
    model = small_model()
    early, late = model.layers
    d_k = 4
    for kind in "QKV":
        scores = composition_scores(model, kind)
        for i in range(2):
            cols_i = slice(i * d_k, (i + 1) * d_k)
            ov = early.w_v.weight[cols_i].T @ early.w_o.weight[:, cols_i].T  # (8, 8)
            for j in range(2):
                cols = slice(j * d_k, (j + 1) * d_k)
                qk = late.w_q.weight[cols].T @ late.w_k.weight[cols]  # W_Q W_K^T (8, 8)
                ov2 = late.w_v.weight[cols].T @ late.w_o.weight[:, cols].T
                product, b = {"K": (qk @ ov.T, qk), "Q": (ov @ qk, qk), "V": (ov @ ov2, ov2)}[kind]
                expected = product.norm() / (ov.norm() * b.norm())
                assert math.isclose(scores[i, j].item(), expected.item(), rel_tol=1e-9)
    # K-composition: a later key that reads the earlier head's output is a score of one
    assert ((0 < composition_scores(model, "K")) & (composition_scores(model, "K") <= 1)).all()
    with pytest.raises(ValueError, match="kind"):
        composition_scores(model, "O")


def test_phase_change_step_is_the_first_measure_below_the_fraction_of_chance():
    record = {"steps": [0, 10, 20, 30], "repeat": [3.9, 3.0, 1.5, 0.5]}
    assert phase_change_step(record, 50) == 20  # 0.5 ln 50 = 1.96
    assert phase_change_step(record, 50, fraction=0.1) is None


# --- the shipped record -----------------------------------------------------------------------


def test_the_record_says_how_it_was_made_and_shows_the_phase_change():
    record = load_record()
    assert record["model"] == MODEL and record["seed"] == SEED
    assert record["training"] == TRAINING | {"periods": list(TRAINING["periods"])}
    assert len(record["losses"]) == TRAINING["steps"]
    assert record["steps"] == list(range(0, TRAINING["steps"] + 1, TRAINING["every"]))
    chance = math.log(MODEL["vocab"])
    assert record["repeat"][0] > 0.95 * chance and record["repeat"][-1] < 0.3 * chance
    assert 150 <= record["phase_change"] <= 260  # the band chapter 9 asserts


def test_training_from_scratch_reproduces_the_recorded_first_steps():
    """As chapter 8's test does for its GPT (see its docstring): training is a deterministic
    function of the seed, the settings and the code on one thread, so the first 20 steps,
    which run every part of it (initialisation, the task's draws, forward and backward, Adam,
    every measure), agree with the record to 1e-5 when this code makes the recorded run."""
    record = load_record()
    _, rerun = run(steps=20)
    assert max(abs(a - b) for a, b in zip(rerun["losses"], record["losses"][:20])) < 1e-5
    for key in ("first", "repeat", "previous", "induction"):
        assert torch.allclose(torch.tensor(rerun[key]), torch.tensor(record[key][:3]), atol=1e-5), (
            key
        )


def test_the_record_holds_the_one_layer_run_which_a_rerun_matches():
    """The chapter reads the one-layer run from the record rather than training it; its first
    20 steps, rerun, agree with the record as the two-layer run's do."""
    one_layer = load_record()["one_layer"]
    assert one_layer["model"] == MODEL | {"layers": 1} and one_layer["seed"] == SEED
    assert len(one_layer["losses"]) == TRAINING["steps"]
    assert one_layer["steps"] == list(range(0, TRAINING["steps"] + 1, TRAINING["every"]))
    _, rerun = run(steps=20, layers=1)
    assert max(abs(a - b) for a, b in zip(rerun["losses"], one_layer["losses"][:20])) < 1e-5
    for key in ("first", "repeat", "previous", "induction"):
        assert torch.allclose(
            torch.tensor(rerun[key]), torch.tensor(one_layer[key][:3]), atol=1e-5
        ), key


# --- the scrubber's data ----------------------------------------------------------------------


def tiny_record():
    """Two steps of a causal ``(1 layer, 2 heads, 3, 3)`` attention, as train() records it."""
    rng = torch.Generator().manual_seed(0)
    attention = torch.rand(2, 1, 2, 3, 3, generator=rng).tril()
    attention = attention / attention.sum(-1, keepdim=True)
    return {"steps": [0, 10], "first": [3.9, 3.8], "repeat": [3.9, 1.2],
            "attention": attention.tolist()}  # fmt: skip


def test_the_scrubber_ships_each_step_s_weights_as_whole_percentages():
    record = tiny_record()
    scrubber = TrainingScrubber(record, ["a", "b", "c"], chance=math.log(50))
    assert scrubber.step == 1 and len(scrubber.weights[0]) == 2 * 6  # lower triangles
    for index in range(2):
        expected = torch.tensor(record["attention"][index]).mul(100).round().div(100)
        assert torch.allclose(torch.from_numpy(scrubber.weights_at(index)), expected.double())
    assert pack_weights(record["attention"][0])[:6] == [
        round(100 * record["attention"][0][0][0][q][k]) for q in range(3) for k in range(q + 1)
    ]
    with pytest.raises(ValueError, match="labels"):
        TrainingScrubber(record, ["a", "b"], chance=1.0)
    with pytest.raises(ValueError, match="step must be one of 0 \\.\\. 1"):
        scrubber.step = 2


def test_the_front_end_unpacks_what_python_packs(tmp_path):
    record = tiny_record()
    scrubber = TrainingScrubber(record, ["a", "b", "c"], chance=1.0)
    run_js = module_runner(ROOT / "chapters" / "attnkit" / "scrubber.js", tmp_path)
    for index in range(2):
        unpacked = run_js("(m, d) => m.unpack(d, 1, 2, 3)", scrubber.weights[index])
        assert np.allclose(np.array(unpacked), scrubber.weights_at(index), atol=1e-12)
