"""Chapter 8's GPT trained longer, and on text with repetitions, measured as chapter 9 measures.

``python -m attnkit.induction_gpt`` trains :class:`attnkit.gpt.TinyGPT` (chapter 8's model,
corpus, seed and recipe) in two settings, 3000 steps each, five times chapter 8's run:

- ``longer``: chapter 8's training, the cosine schedule stretched over the longer run;
- ``repeated``: the same, but every window of text is a piece of random length ``p`` (16 to 64
  characters) followed by its repeats (:func:`repeated_windows`). Every character after the
  first ``p`` can be copied from ``p`` places back; as in chapter 9's task, ``p`` changes from
  window to window, so that no fixed offset (which RoPE could learn) finds the copy, only
  matching content does.

Every 250 steps, and before the first, it measures (:func:`measure`): the validation loss, the
in-context-learning score (the loss late in a context minus early, on chapter 9's windows), the
loss on the second half of a repeated random sequence, and every head's previous-token and
induction scores (:mod:`attnkit.induction`'s functions). It writes ``data/induction_gpt.json``:
each setting's seed, settings, every step's training loss, the measures, the PyTorch version,
the machine, the seconds it took and the git revision. The weights are not kept.
``--out FOLDER`` writes elsewhere; ``--steps N`` shortens the runs.
"""

from __future__ import annotations

import argparse
import json
from importlib import resources
from pathlib import Path

import torch
from torch import nn

from . import rules
from .gpt import CharVocab, TinyGPT, batches, check_window, evaluate, load_corpus, train
from .gpt_train import MODEL, SEED, TRAINING
from .induction import induction_scores, previous_token_scores
from .recorded import provenance

__all__ = ["SETTINGS", "EVERY", "repeated_windows", "measure", "run", "load_record"]

RECORD = "induction_gpt.json"
EVERY = 250  # steps between measures
SETTINGS = {
    "longer": {"steps": 3000, "periods": None},
    "repeated": {"steps": 3000, "periods": (16, 64)},
}
ICL_EARLY, ICL_LATE = slice(8, 16), slice(96, 128)  # positions of a 128-character context


def repeated_windows(ids, batch: int, context: int, generator: torch.Generator,
                     periods: tuple[int, int] = (16, 64)):  # fmt: skip
    """Like :func:`attnkit.gpt.batches`, but each window is ``p`` characters of ``ids`` (from a
    random start, ``p`` drawn uniformly from ``periods``, both included) repeated to fill it:
    inputs and targets ``(batch, context)``, the targets one character later."""
    low, high = periods
    if not 1 <= low <= high <= context:
        raise ValueError(
            f"periods must satisfy 1 <= low <= high <= context={context}, got {periods}"
        )
    check_window(len(ids), high)
    batch = rules.positive_int(batch, "batch")
    period = torch.randint(low, high + 1, (batch, 1), generator=generator)  # (batch, 1)
    starts = torch.randint(len(ids) - high, (batch, 1), generator=generator)
    chunk = ids[starts + torch.arange(context + 1) % period]  # (batch, context + 1)
    return chunk[:, :-1], chunk[:, 1:]


def _probes(validation_ids):
    """Chapter 9's probes: 64 consecutive validation windows of 128 characters, and 16 random
    sequences of 50 characters (ids 1 to 95, from seed 0) each followed by its repeat."""
    text = validation_ids[: 64 * 128 + 1]
    random_text = torch.randint(1, 96, (16, 50), generator=torch.Generator().manual_seed(0))
    return text, torch.cat([random_text, random_text], dim=1)  # (8193,), (16, 100)


def measure(model: TinyGPT, validation_ids, step: int) -> dict:
    """The model's measures at ``step``: ``validation_loss`` (nats per character, windows of
    128), ``icl`` (the mean loss at positions 96-127 of 64 validation windows minus that at
    positions 8-15), ``repeat_loss`` (the mean loss on the second half of 16 repeated random
    sequences, targets 51-99; chance is about ln 95), ``previous`` (each head's previous-token
    score on the validation windows) and ``induction`` (each head's induction score on the
    repeated sequences), both ``(layers, h)``."""
    text, repeated = _probes(validation_ids)
    was_training = model.training
    model.eval()
    with torch.no_grad():
        logits, text_weights = model(text[:-1].view(64, 128))  # (64, 128, vocab)
        by_position = nn.functional.cross_entropy(
            logits.transpose(1, 2), text[1:].view(64, 128), reduction="none"
        ).mean(0)  # (128,)
        repeated_logits, repeated_weights = model(repeated)  # (16, 100, vocab)
        repeat_loss = nn.functional.cross_entropy(
            repeated_logits[:, 50:-1].transpose(1, 2), repeated[:, 51:]
        )
        result = {
            "step": step,
            "validation_loss": evaluate(model, validation_ids, 128),
            "icl": (by_position[ICL_LATE].mean() - by_position[ICL_EARLY].mean()).item(),
            "repeat_loss": repeat_loss.item(),
            "previous": [previous_token_scores(w).tolist() for w in text_weights],
            "induction": [induction_scores(w, repeated).tolist() for w in repeated_weights],
        }
    model.train(was_training)
    return result


def run(setting: str, steps: int | None = None, seed: int = SEED) -> dict:
    """Train chapter 8's model from ``seed`` in ``setting`` (a key of :data:`SETTINGS`;
    ``steps`` overrides its number of steps) and return the record of the run."""
    if setting not in SETTINGS:
        raise ValueError(f"setting must be one of {sorted(SETTINGS)}, got {setting!r}")
    periods = SETTINGS[setting]["periods"]
    settings = TRAINING | {"steps": SETTINGS[setting]["steps"] if steps is None else steps}
    corpus, vocab = load_corpus(), CharVocab()
    train_ids, validation_ids = vocab.encode(corpus["train"]), vocab.encode(corpus["validation"])
    torch.manual_seed(seed)
    model = TinyGPT(len(vocab), **MODEL)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # the measures too, as train() runs: one core
    try:
        measures = [measure(model, validation_ids, 0)]
    finally:
        torch.set_num_threads(threads)

    def after_step(step):
        if step % EVERY == 0 or step == settings["steps"]:
            measures.append(measure(model, validation_ids, step))

    def draw(ids, batch, context, generator):
        return repeated_windows(ids, batch, context, generator, periods)

    with provenance() as ran:  # training and measures, on one core
        losses = train(model, train_ids, seed=seed, draw=batches if periods is None else draw,
                       after_step=after_step, **settings)  # fmt: skip
    return {
        "seed": seed,
        "model": model.config,
        "training": settings | {"periods": None if periods is None else list(periods)},
        "losses": [round(loss, 6) for loss in losses],
        "measures": measures,
        "corpus": {"sha256": corpus["sha256"], "python": corpus["python"]},
        **ran,
    }


def load_record() -> dict:
    """The runs the book recorded (``data/induction_gpt.json``): one record per setting."""
    data = resources.files("attnkit") / "data" / RECORD
    return json.loads(data.read_text(encoding="utf-8"))


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "data")
    parser.add_argument("--steps", type=int, default=None)
    args = parser.parse_args(argv)
    records = {}
    for setting in SETTINGS:
        records[setting] = record = run(setting, args.steps)
        last = record["measures"][-1]
        print(
            f"{setting}: {record['training']['steps']} steps in {record['seconds']} s "
            f"({record['cpu_seconds']} s of CPU time): validation loss "
            f"{last['validation_loss']:.3f}, ICL {last['icl']:+.3f}, loss on repeats "
            f"{last['repeat_loss']:.2f} nats, largest induction score "
            f"{max(max(row) for row in last['induction']):.2f}",
            flush=True,
        )
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / RECORD).write_text(json.dumps(records, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {args.out / RECORD}")


if __name__ == "__main__":
    main()
