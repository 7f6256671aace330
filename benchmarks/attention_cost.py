"""Time and memory of one attention call as the sequence grows: the quadratic cost.

For each sequence length n, one process computes single-head attention on random
(n, 64) float32 queries, keys and values, either by materialising the n × n weight
matrix (softmax(Q Kᵀ / √d) V, written out) or through PyTorch's fused
F.scaled_dot_product_attention. Each measurement runs in a fresh process, so its
peak resident memory is its own. Prints a table; with --json, writes the results.

    .venv/bin/python benchmarks/attention_cost.py [--json chapters/attnkit/data/attention_cost.json]

The book's chapter 7 shows the figures recorded in chapters/attnkit/data/ (shipped with attnkit).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
from pathlib import Path

LENGTHS = [128, 256, 512, 1024, 2048, 4096]
D = 64
REPEATS = 5

# Runs in a child process: prints a JSON line with seconds (best of REPEATS) and its
# peak resident memory before and after attention ran (the difference is attention's).
CHILD = r"""
import json, math, resource, sys, time
import torch
import torch.nn.functional as F
torch.manual_seed(0)
torch.set_num_threads(2)
method, n, d, repeats = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
# (batch, heads, n, d): with this 4-D layout the CPU uses its fused (flash) kernel
q, k, v = (torch.randn(1, 1, n, d) for _ in range(3))       # float32

def naive():
    weights = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(d), dim=-1)  # (1, 1, n, n)
    return weights @ v

def fused():
    return F.scaled_dot_product_attention(q, k, v)

run = naive if method == "materialised" else fused
with torch.no_grad():
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    run()                                                   # warm up
    best = math.inf
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - start)
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"seconds": best, "peak_rss_kib": after, "rss_before_kib": before}))
"""


def measure(method: str, n: int) -> dict:
    # glibc keeps freed blocks below its mmap threshold for reuse, which inflates
    # peak RSS across repeats; a low threshold returns every large block at once.
    env = {**os.environ, "MALLOC_MMAP_THRESHOLD_": "65536"}
    out = subprocess.run(
        [sys.executable, "-c", CHILD, method, str(n), str(D), str(REPEATS)],
        capture_output=True,
        text=True,
        check=True,
        env=env,
    )
    result = json.loads(out.stdout.strip().splitlines()[-1])
    return {
        "method": method,
        "n": n,
        "seconds": result["seconds"],
        "extra_memory_mib": (result["peak_rss_kib"] - result["rss_before_kib"]) / 1024,
        "weights_mib": 4 * n * n / 2**20,
    }


def machine() -> dict:
    import torch

    return {
        "machine": platform.machine(),
        "system": platform.system(),
        "processor": platform.processor() or platform.machine(),
        "cpus": len(os.sched_getaffinity(0)),
        "python": platform.python_version(),
        "torch": torch.__version__,
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path, help="write the results to this file")
    args = parser.parse_args()
    rows = [measure(method, n) for n in LENGTHS for method in ("materialised", "fused")]
    print(f"single-head attention, d = {D}, float32, best of {REPEATS}; {machine()}")
    print(
        f"{'n':>6} {'method':>13} {'time (ms)':>10} {'extra memory (MiB)':>19} "
        f"{'one n×n float32 matrix (MiB)':>29}"
    )
    for row in rows:
        print(
            f"{row['n']:>6} {row['method']:>13} {1000 * row['seconds']:>10.2f} "
            f"{row['extra_memory_mib']:>19.1f} {row['weights_mib']:>29.1f}"
        )
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(
            json.dumps({"machine": machine(), "d": D, "results": rows}, indent=1) + "\n"
        )
        print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
