"""Train chapter 9's attention-only model from its seed and write the record the book ships.

``python -m attnkit.induction_train`` trains :class:`attnkit.induction.AttentionOnly` on
repeated random sequences on one CPU thread, then writes ``data/induction_heads.json``: the
seed, the model's and the training's settings, every step's training loss, every measure
(losses on first occurrences and repeats, the heads' scores; not the example's attention, which
the chapter records again as it trains), the step of the phase change, the PyTorch version, the
seconds it took and the git revision; under ``one_layer``, the same for the model with one
layer, trained the same way, which the chapter reads rather than trains (its page's budget).
``--out FOLDER`` writes elsewhere (the tests do).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import torch

from .induction import RECORD, AttentionOnly, phase_change_step, train
from .recorded import provenance

__all__ = ["SEED", "MODEL", "TRAINING", "run"]

SEED = 0
MODEL = dict(vocab=50, d_model=64, h=4, layers=2, max_len=48)
TRAINING = dict(steps=400, batch=32, length=48, periods=(8, 24), lr=3e-3, every=10)


def run(steps: int | None = None, seed: int = SEED, **changes) -> tuple[AttentionOnly, dict]:
    """Train the model from ``seed`` (``steps`` overrides the recorded number, ``changes`` the
    model's settings); return it and its record (with every head's attention on the example,
    which the shipped record leaves out)."""
    settings = TRAINING | ({} if steps is None else {"steps": steps})
    torch.manual_seed(seed)
    model = AttentionOnly(**(MODEL | changes))
    with provenance() as ran:
        measured = train(model, seed=seed, **settings)
    record = {
        "seed": seed,
        "model": model.config,
        "training": settings | {"periods": list(settings["periods"])},
        "phase_change": phase_change_step(measured, model.config["vocab"]),
        **measured,
        **ran,
    }
    return model, record


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "data")
    parser.add_argument("--steps", type=int, default=None)
    args = parser.parse_args(argv)
    _, record = run(args.steps)
    _, one_layer = run(args.steps, layers=1)
    args.out.mkdir(parents=True, exist_ok=True)
    shipped = {key: value for key, value in record.items() if key != "attention"}
    shipped["one_layer"] = {key: value for key, value in one_layer.items() if key != "attention"}
    (args.out / RECORD).write_text(json.dumps(shipped, indent=1) + "\n", encoding="utf-8")
    print(
        f"trained {record['training']['steps']} steps in {record['seconds']} s "
        f"({record['cpu_seconds']} s of CPU time): phase change at step "
        f"{record['phase_change']}, repeat loss {record['repeat'][-1]:.3f} nats; one layer in "
        f"{one_layer['cpu_seconds']} s of CPU time, repeat loss {one_layer['repeat'][-1]:.3f} "
        f"nats; wrote {args.out / RECORD}"
    )


if __name__ == "__main__":
    main()
