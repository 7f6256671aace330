"""Chapter 8's GPT trained longer and on repeated text (attnkit.induction_gpt): the repeated
windows, the measures, and the shipped record of the two runs, whose first steps a rerun
matches."""

import math

import pytest
import torch

from attnkit.gpt import CharVocab, TinyGPT, load_corpus
from attnkit.gpt_train import MODEL, SEED, TRAINING
from attnkit.induction import induction_scores, previous_token_scores
from attnkit.induction_gpt import EVERY, SETTINGS, load_record, measure, repeated_windows, run


def test_repeated_windows_repeat_a_piece_of_the_text_with_its_period():
    ids = torch.arange(1000)
    x, y = repeated_windows(ids, 8, 40, torch.Generator().manual_seed(0), periods=(5, 12))
    assert x.shape == y.shape == (8, 40)
    assert torch.equal(x[:, 1:], y[:, :-1])
    for row, target in zip(x, y):
        period = int((row[1:] < row[:-1]).nonzero()[0]) + 1  # where the piece starts again
        assert 5 <= period <= 12
        assert torch.equal(row[:period], torch.arange(row[0], row[0] + period))  # the text
        whole = torch.cat([row, target[-1:]])
        assert torch.equal(whole[period:], whole[:-period])  # then its repeats


def test_repeated_windows_refuse_periods_that_do_not_fit():
    ids, generator = torch.arange(100), torch.Generator()
    with pytest.raises(ValueError, match="periods"):
        repeated_windows(ids, 2, 16, generator, periods=(8, 17))
    with pytest.raises(ValueError, match="periods"):
        repeated_windows(ids, 2, 16, generator, periods=(0, 4))


def test_the_measures_are_the_chapters_formulas_on_the_chapters_probes():
    torch.manual_seed(0)
    model = TinyGPT(len(CharVocab()), **MODEL).eval()
    ids = CharVocab().encode(load_corpus()["validation"])
    result = measure(model, ids, 7)
    text = ids[: 64 * 128 + 1]
    with torch.no_grad():
        logits, weights = model(text[:-1].view(64, 128))
    loss = torch.nn.functional.cross_entropy(
        logits.reshape(-1, logits.shape[-1]), text[1:], reduction="none"
    ).view(64, 128)
    icl = loss[:, 96:].mean() - loss[:, 8:16].mean()
    assert result["step"] == 7 and math.isclose(result["icl"], icl.item(), abs_tol=1e-5)
    previous = [previous_token_scores(w).tolist() for w in weights]
    assert torch.allclose(torch.tensor(result["previous"]), torch.tensor(previous), atol=1e-6)
    sequence = torch.randint(1, 96, (16, 50), generator=torch.Generator().manual_seed(0))
    repeated = torch.cat([sequence, sequence], dim=1)
    with torch.no_grad():
        logits, weights = model(repeated)
    second_half = torch.nn.functional.cross_entropy(logits[:, 50:99].reshape(-1, 97),
                                                    repeated[:, 51:].reshape(-1))  # fmt: skip
    assert math.isclose(result["repeat_loss"], second_half.item(), abs_tol=1e-5)
    induction = [induction_scores(w, repeated).tolist() for w in weights]
    assert torch.allclose(torch.tensor(result["induction"]), torch.tensor(induction), atol=1e-6)


# --- the shipped record -----------------------------------------------------------------------


@pytest.fixture(scope="module")
def record():
    record = load_record()
    corpus = load_corpus()
    for setting in record.values():
        if setting["corpus"]["sha256"] != corpus["sha256"]:
            pytest.skip(f"this Python's standard library ({corpus['python']}) is not the corpus "
                        f"of the record (Python {setting['corpus']['python']})")  # fmt: skip
    return record


def test_the_record_says_how_each_run_was_made_and_holds_every_measure(record):
    assert set(record) == set(SETTINGS)
    for name, run_record in record.items():
        steps = SETTINGS[name]["steps"]
        periods = SETTINGS[name]["periods"]
        assert run_record["seed"] == SEED
        assert run_record["training"] == TRAINING | {
            "steps": steps, "periods": None if periods is None else list(periods)
        }  # fmt: skip
        assert len(run_record["losses"]) == steps
        for key in ("torch", "machine", "seconds", "cpu_seconds", "revision"):
            assert run_record[key], key
        measures = run_record["measures"]
        assert [m["step"] for m in measures] == list(range(0, steps + 1, EVERY))
        layers, heads = run_record["model"]["layers"], run_record["model"]["h"]
        for m in measures:
            assert 0 < m["validation_loss"] < math.log(run_record["model"]["vocab"]) + 0.5
            for key in ("previous", "induction"):
                scores = torch.tensor(m[key])
                assert scores.shape == (layers, heads) and ((0 <= scores) & (scores <= 1)).all()


@pytest.mark.parametrize("setting", sorted(SETTINGS))
def test_training_from_scratch_reproduces_the_recorded_first_steps(record, setting):
    """As chapter 8's test does for its GPT (see its docstring): on one thread the same seed,
    corpus, settings and code give the same losses step after step. The first ten steps are
    all warm-up, whose learning rate does not depend on the run's length, so the rerun's ten
    steps are the recorded run's first ten; the measures before training tie the recorded
    measures to this code."""
    rerun = run(setting, steps=10)
    recorded = record[setting]
    assert max(abs(a - b) for a, b in zip(rerun["losses"], recorded["losses"][:10])) < 1e-5
    first, again = recorded["measures"][0], rerun["measures"][0]
    for key in ("validation_loss", "icl", "repeat_loss"):
        assert math.isclose(first[key], again[key], abs_tol=1e-5), key
    for key in ("previous", "induction"):
        assert torch.allclose(torch.tensor(first[key]), torch.tensor(again[key]), atol=1e-5)
