"""The capstone's tasks: train() and batch() take any task, and copying needs no positions."""

import pytest
import torch

from attnkit.reversal import TinyTransformer, accuracy, batch, reversal_batch, reverse, train

LENGTH, VOCAB = 8, 10


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
    threads = torch.get_num_threads()
    torch.set_num_threads(1)                 # as in the chapter: faster for this tiny model
    try:
        torch.manual_seed(0)
        model = TinyTransformer(VOCAB, LENGTH, positional=False)
        losses = train(model, steps=60, seed=0, length=LENGTH, vocab=VOCAB, task=copy_input)
    finally:
        torch.set_num_threads(threads)
    x, y = batch(2000, LENGTH, VOCAB, torch.Generator().manual_seed(2024), task=copy_input)
    assert accuracy(model, x, y) > 0.99
    assert losses[-1] < 0.1 * losses[0]
