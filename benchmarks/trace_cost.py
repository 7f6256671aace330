"""What tracing costs: chapter 4's layer (attnkit.modules.MultiHeadAttention) traced with
attnkit.trace against the same call untraced, on the same input.

Two inputs: the tracer's own example (B = 2, T = 5, d_model = 21, h = 3; the sizes a learner
traces at) and the chapter's (b = 1, n = 128, d_model = 512, h = 8). Each call is timed `--repeats`
times, alternating traced and untraced, without gradients; the median of each and their ratio
are printed (the target: tracing costs at most twice the call). With --json, writes the results.

    .venv/bin/python -m benchmarks.trace_cost [--repeats 200]
        [--json benchmarks/results/trace_cost.json]
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import torch

import attnkit
from attnkit.modules import MultiHeadAttention
from attnkit.trace import SIZES
from benchmarks.record import git, machine, write_json

INPUTS = {
    "the tracer's example": (2, SIZES["T"], SIZES["H"] * SIZES["d_k"], SIZES["H"]),
    "chapter 4's size": (1, 128, 512, 8),
}


def timed(call, repeats: int) -> list[float]:
    return [_once(call) for _ in range(repeats)]


def _once(call) -> float:
    start = time.perf_counter()
    call()
    return time.perf_counter() - start


def measure(b: int, n: int, d_model: int, h: int, repeats: int) -> dict:
    torch.manual_seed(0)
    layer = MultiHeadAttention(d_model, h).eval()
    x = torch.randn(b, n, d_model)
    found = attnkit.trace(layer, x, torch=True)
    assert found.flags == [] and len(found.steps) > 10, str(found)
    plain, traced = [], []
    with torch.no_grad():
        for _ in range(5):  # warm both paths up
            layer(x)
            attnkit.trace(layer, x, torch=True)
        for _ in range(repeats):
            plain.append(_once(lambda: layer(x)))
            traced.append(_once(lambda: attnkit.trace(layer, x, torch=True)))
    run, trace = statistics.median(plain), statistics.median(traced)
    return {
        "b": b,
        "n": n,
        "d_model": d_model,
        "h": h,
        "steps": len(found.steps),
        "run_ms": round(1e3 * run, 4),
        "trace_ms": round(1e3 * trace, 4),
        "ratio": round(trace / run, 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=200, help="timed calls of each kind")
    parser.add_argument("--json", type=Path, help="write the results to this file")
    args = parser.parse_args()
    torch.set_num_threads(1)  # one core, as a learner's notebook on a shared machine gets
    results = []
    for name, sizes in INPUTS.items():
        result = {"input": name, **measure(*sizes, args.repeats)}
        results.append(result)
        print(
            f"{name:>22}: run {result['run_ms']:.3f} ms, traced {result['trace_ms']:.3f} ms "
            f"({result['steps']} steps): {result['ratio']:.2f}×"
        )
    if args.json:
        write_json(
            args.json,
            {
                "machine": machine(),
                "revision": git("rev-parse", "--short", "HEAD").strip(),
                "torch_threads": 1,
                "repeats": args.repeats,
                "results": results,
            },
        )


if __name__ == "__main__":
    main()
