"""Train chapter 8's tiny GPT from its seed and write the weights the book ships.

``python -m attnkit.gpt_train`` (``make gpt-weights``) trains :class:`attnkit.gpt.TinyGPT` on
the standard-library corpus on one CPU thread, then writes ``data/tiny_gpt.pt`` (the float32
weights) and ``data/tiny_gpt.json``: the seed, the model's and the training's settings, every
step's training loss, the validation loss, the corpus's SHA-256 and size, the Python and
PyTorch versions, the machine, the seconds it took (on the clock and on the CPU) and the git
revision it ran at.
``--out FOLDER`` writes elsewhere (the tests do); ``--steps N`` shortens the run.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import torch

from .gpt import RECORD, WEIGHTS, CharVocab, TinyGPT, evaluate, load_corpus, train
from .recorded import provenance

__all__ = ["MODEL", "TRAINING", "run"]

SEED = 0
MODEL = dict(d_model=64, h=4, layers=2, kv_heads=None, d_ff=176, max_len=128)
TRAINING = dict(steps=600, batch=16, context=128, lr=3e-3, warmup=50, weight_decay=0.01)


def run(steps: int | None = None, seed: int = SEED, progress: bool = False):
    """Train the model from ``seed`` (``steps`` overrides the recorded number; ``progress``
    prints how the run goes); return it and its record."""
    settings = TRAINING | ({} if steps is None else {"steps": steps})
    corpus, vocab = load_corpus(), CharVocab()
    train_ids, validation_ids = vocab.encode(corpus["train"]), vocab.encode(corpus["validation"])
    torch.manual_seed(seed)
    model = TinyGPT(len(vocab), **MODEL)
    with provenance() as ran:
        losses = train(model, train_ids, seed=seed, progress=progress, **settings)
    record = {
        "seed": seed,
        "model": model.config,
        "training": settings,
        "losses": losses,
        "validation_loss": evaluate(model, validation_ids, settings["context"]),
        "corpus": {
            "sha256": corpus["sha256"],
            "characters": len(corpus["text"]),
            "train": len(corpus["train"]),
            "validation": len(corpus["validation"]),
            "python": corpus["python"],
        },
        **ran,
    }
    return model, record


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "data")
    parser.add_argument("--steps", type=int, default=None)
    args = parser.parse_args(argv)
    model, record = run(args.steps, progress=True)
    args.out.mkdir(parents=True, exist_ok=True)
    torch.save(model.state_dict(), args.out / WEIGHTS)
    (args.out / RECORD).write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    print(
        f"trained {record['training']['steps']} steps in {record['seconds']} s "
        f"({record['cpu_seconds']} s of CPU time): training loss "
        f"{record['losses'][-1]:.3f}, validation loss {record['validation_loss']:.3f} nats per "
        f"character; wrote {args.out / WEIGHTS} and {args.out / RECORD}"
    )


if __name__ == "__main__":
    main()
