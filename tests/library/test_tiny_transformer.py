"""The capstone: the tiny Transformer learns reversal, its attention shows it, and train() takes any task."""

import pytest
import torch

from attnkit.exercises.tiny_transformer import check_diagonal_mass
from attnkit.reversal import (
    TinyTransformer,
    accuracy,
    anti_diagonal_mass,
    batch,
    progress_bar,
    reversal_batch,
    reverse,
    train,
)
from tests.support.answers.tiny_transformer import diagonal_mass_reference

LENGTH, VOCAB = 8, 10


def held_out(n=2000):
    return reversal_batch(n, LENGTH, VOCAB, torch.Generator().manual_seed(2024))


@pytest.fixture(scope="module", autouse=True)
def one_thread():
    """As in the chapter: two threads gain little on this tiny model and stall under load."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture(scope="module")
def trained():
    torch.manual_seed(0)
    model = TinyTransformer(VOCAB, LENGTH)
    untrained = TinyTransformer(VOCAB, LENGTH)
    untrained.load_state_dict(model.state_dict())
    losses = train(model, steps=200, seed=0, length=LENGTH, vocab=VOCAB)
    return model, untrained, losses


def test_reversal_batches_reverse():
    x, y = reversal_batch(4, LENGTH, VOCAB, torch.Generator().manual_seed(1))
    assert x.shape == y.shape == (4, LENGTH)
    assert torch.equal(y, x.flip(-1)) and x.min() >= 0 and x.max() < VOCAB


def test_trained_model_reverses_unseen_sequences(trained):
    model, untrained, losses = trained
    x, y = held_out()
    assert accuracy(model, x, y) >= 0.95
    assert accuracy(untrained, x, y) < 0.2
    assert losses[-1] < 0.1 * losses[0]


def test_a_head_learns_the_anti_diagonal(trained):
    model, untrained, _ = trained
    x, _ = held_out(500)
    with torch.no_grad():
        after = torch.stack([anti_diagonal_mass(w) for w in model(x)[1]])  # (layers, h)
        before = torch.stack([anti_diagonal_mass(w) for w in untrained(x)[1]])
    assert after.max() > 0.5  # most of that head's weight is on the mirror key
    assert before.max() < 0.3  # no head attends there before training


def test_without_positional_encoding_the_model_is_equivariant_and_fails():
    torch.manual_seed(0)
    model = TinyTransformer(VOCAB, LENGTH, positional=False)
    train(model, steps=100, seed=0, length=LENGTH, vocab=VOCAB)
    x, y = held_out()
    assert accuracy(model, x, y) < 0.5
    perm = torch.randperm(LENGTH, generator=torch.Generator().manual_seed(3))
    with torch.no_grad():
        assert torch.allclose(model(x[:, perm])[0], model(x)[0][:, perm], atol=1e-5)


def test_attention_weights_are_the_books_formula_without_biases():
    torch.manual_seed(0)
    model = TinyTransformer(VOCAB, LENGTH)
    x, _ = held_out(3)
    layer = model.layers[0].self_attn
    X = model.inputs(x)  # (3, 8, 64)
    with torch.no_grad():
        w = model(x)[1][0]  # (3, h, 8, 8)
        for i in range(layer.h):
            cols = slice(i * layer.d_k, (i + 1) * layer.d_k)
            Q, K = X @ layer.w_q.weight.T[:, cols], X @ layer.w_k.weight.T[:, cols]
            expected = torch.softmax(Q @ K.transpose(-1, -2) / layer.d_k**0.5, dim=-1)
            assert torch.allclose(w[:, i], expected, atol=1e-6)


def test_anti_diagonal_mass_and_progress_bar():
    n = 4
    perfect = torch.eye(n).flip(-1).expand(2, 3, n, n)  # (b, h, n, n)
    assert torch.allclose(anti_diagonal_mass(perfect), torch.ones(3))
    assert torch.allclose(
        anti_diagonal_mass(torch.full((1, 2, n, n), 1 / n)), torch.full((2,), 1 / n)
    )
    assert progress_bar(0.5, width=10) == "[#####.....]  50%"


def rows_in_int8(weights, offset):
    n = weights.shape[-1]
    rows = torch.arange(max(0, -offset), min(n, n - offset)).to(torch.int8).long()
    return weights[..., rows, rows + offset].mean(dim=(0, -1))


def test_check_diagonal_mass_accepts_correct_answers():
    assert check_diagonal_mass(diagonal_mass_reference).passed
    by_diagonal = lambda w, k: torch.diagonal(w, k, dim1=-2, dim2=-1).mean(dim=(0, -1))  # noqa: E731
    assert check_diagonal_mass(by_diagonal).passed


@pytest.mark.parametrize(
    "wrong, advice",
    [
        (lambda w, k: diagonal_mass_reference(w, k).mean(), "averaged over the heads too"),
        (lambda w, k: diagonal_mass_reference(w, -k), "key i - offset"),
        (
            lambda w, k: torch.diagonal(w, k, dim1=-2, dim2=-1).mean(0).sum(-1),
            "summed over the queries",
        ),
        (
            lambda w, k: w[..., torch.arange(w.shape[-1]), torch.arange(w.shape[-1]) + k].mean(
                (0, -1)
            ),
            "wraps around",
        ),
        (
            lambda w, k: torch.roll(w, -k, dims=-1).diagonal(dim1=-2, dim2=-1).mean((0, -1)),
            "wraps around",
        ),
        (lambda w, k: w[..., 0, :].mean((0, -1)), "should be"),
        (
            lambda w, k: w[..., torch.arange(2), torch.arange(2) + k + 10].mean((0, -1)),
            "raised IndexError",
        ),
        (
            lambda w, k: torch.diagonal(w, k, dim1=-2, dim2=-1).sum(-1).mean(0) / w.shape[-1],
            "you divided by all n = 5 queries; only the 4 queries",
        ),
        (
            lambda w, k: diagonal_mass_reference(w, k).float(),
            "dtype torch.float64, and offset 0 you returned dtype torch.float32",
        ),
        (lambda w, k: diagonal_mass_reference(w, k).numpy(), "return a torch tensor"),
        (lambda w, k: diagonal_mass_reference(w, k).tolist(), "you returned a list"),
        (
            lambda w, k: diagonal_mass_reference(w, k).sort().values,
            "offset -4, the result should be [0.189, 0.1606], you returned [0.1606, 0.189]",
        ),
        (
            lambda w, k: diagonal_mass_reference(w, k).to(torch.int8).long(),
            "you returned dtype torch.int64",
        ),
        (rows_in_int8, "int8 holds only -128 .. 127"),
        (
            lambda w, k: anti_diagonal_mass(w.flip(-1)),
            "uses `attnkit.reversal.anti_diagonal_mass`",
        ),
        (
            lambda w, k: diagonal_mass_reference(w.mul_(2), k) / 2,
            "changed its input array in place",
        ),
    ],
)
def test_check_diagonal_mass_rejects_typical_mistakes(wrong, advice):
    result = check_diagonal_mass(wrong)
    assert not result
    assert advice in result.message, result.message


def copy_input(inputs):
    return inputs


def test_batch_applies_the_task_and_reversal_is_its_default():
    x, y = batch(4, LENGTH, VOCAB, torch.Generator().manual_seed(1), task=copy_input)
    assert torch.equal(x, y) and x.shape == (4, LENGTH)
    x_rev, y_rev = reversal_batch(4, LENGTH, VOCAB, torch.Generator().manual_seed(1))
    assert torch.equal(x_rev, x) and torch.equal(y_rev, reverse(x))
    x_default, y_default = batch(4, LENGTH, VOCAB, torch.Generator().manual_seed(1))
    assert torch.equal(x_default, x) and torch.equal(y_default, x.flip(-1))


def test_batch_rejects_a_task_that_changes_the_shape():
    with pytest.raises(ValueError, match="one target per input token"):
        batch(4, LENGTH, VOCAB, torch.Generator().manual_seed(1), task=lambda x: x[:, :-1])


def test_copying_is_learned_without_positional_encoding():
    """Copying is permutation equivariant, so unlike reversal it needs no positions."""
    torch.manual_seed(0)
    model = TinyTransformer(VOCAB, LENGTH, positional=False)
    losses = train(model, steps=60, seed=0, length=LENGTH, vocab=VOCAB, task=copy_input)
    x, y = batch(2000, LENGTH, VOCAB, torch.Generator().manual_seed(2024), task=copy_input)
    assert accuracy(model, x, y) > 0.99
    assert losses[-1] < 0.1 * losses[0]
