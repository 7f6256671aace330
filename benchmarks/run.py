"""The book's performance benchmark: one command, one table.

Measures, on this machine:
- a clean build of the book (every notebook executed) and a rebuild from the cache;
- each chapter's execution time and peak memory (its code run as a script, in a fresh process
  pinned to one core; Binder gives about one core and 2 GB: every chapter must run in 10 s and
  stay well under 1 GB), optionally beside the same chapter at an earlier git revision;
- the helper's NumPy multi-head attention against torch.nn.MultiheadAttention on the CPU for
  (sequence length 256, d_model 256, 8 heads), as a ratio of times measured in one run;
- attention's time and memory as the sequence grows (benchmarks/attention_cost.py).

    .venv/bin/python benchmarks/run.py [--json benchmarks/results/benchmark.json] [--skip-build]
                                       [--compare REVISION]

``--page chapters/x`` (repeatable) times only those pages, and with ``--json`` replaces their
rows in that file, keeping the rest: a new or changed chapter measured without the others.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
import timeit
from pathlib import Path

import numpy as np

from booktools import toc

ROOT = Path(__file__).resolve().parent.parent
CHAPTERS = ROOT / "chapters"


def build_times() -> dict:
    with tempfile.TemporaryDirectory() as out:
        times = {}
        for kind in ("clean", "cached"):
            start = time.perf_counter()
            subprocess.run(
                ["make", "--no-print-directory", "book", f"OUT={out}"],
                cwd=ROOT,
                check=True,
                capture_output=True,
            )
            times[kind] = time.perf_counter() - start
    return {"clean_build_s": times["clean"], "cached_rebuild_s": times["cached"]}


def chapter_pages() -> list[str]:
    return [name for name in toc.pages() if name.startswith("chapters/")]


def pin_to_one_core():
    """Binder gives a reader about one core: a chapter is timed on one."""
    os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})


def run_page(source: Path, script: Path, chapters: Path = CHAPTERS) -> dict:
    """Run one page's code as a script in a fresh process on one core, in ``chapters`` (the
    folder whose ``attnkit`` it imports)."""
    subprocess.run(
        [
            sys.executable,
            "-m",
            "jupytext",
            "--quiet",
            "--to",
            "py:percent",
            "-o",
            str(script),
            str(source),
        ],
        check=True,
    )
    env = {**os.environ, "MPLBACKEND": "Agg", "PYTHONPATH": str(chapters)}
    start = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, str(script)],
        cwd=chapters,
        env=env,
        stdout=subprocess.DEVNULL,
        preexec_fn=pin_to_one_core,
    )
    _, status, usage = os.wait4(process.pid, 0)
    seconds = time.perf_counter() - start
    if status != 0:
        raise RuntimeError(f"{source} failed when run as a script")
    return {"seconds": seconds, "peak_memory_mib": usage.ru_maxrss / 1024}


def checkout(revision: str, folder: Path) -> Path:
    """The repository's files at ``revision``, unpacked into ``folder``."""
    folder.mkdir(parents=True)
    archive = subprocess.run(
        ["git", "archive", revision], cwd=ROOT, check=True, capture_output=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive, check=True)
    return folder


def chapter_runs(compare: str | None = None, pages: list[str] | None = None) -> list[dict]:
    """Each page's time and peak memory, run as a script; with ``compare``, the same page as it
    was at that git revision (with the helper as it was) runs right before it, so both are
    measured under the same conditions. A page that did not exist then has no "before"."""
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        folder = Path(folder)
        old = checkout(compare, folder / "old") if compare else None
        for page in pages or chapter_pages():
            row = {"page": page}
            if old is not None and (old / f"{page}.md").exists():
                before = run_page(old / f"{page}.md", folder / "old.py", old / "chapters")
                row["before"] = {"revision": compare, **before}
            rows.append(row | run_page(ROOT / f"{page}.md", folder / "page.py"))
    return rows


def mha_ratio(n=256, d_model=256, heads=8, repeats=20) -> dict:
    """The helper's NumPy multi-head attention against nn.MultiheadAttention, same weights."""
    import torch

    from attnkit.core import multi_head_attention

    torch.manual_seed(0)
    torch.set_num_threads(len(os.sched_getaffinity(0)))
    mha = torch.nn.MultiheadAttention(d_model, heads, bias=False, batch_first=True).eval()
    x = torch.randn(1, n, d_model)
    W_Q, W_K, W_V = (w.T.detach().numpy() for w in mha.in_proj_weight.chunk(3))
    W_O = mha.out_proj.weight.T.detach().numpy()
    X = x[0].numpy()

    def numpy_mha():
        return multi_head_attention(X, X, W_Q, W_K, W_V, W_O, heads)[0]  # (n, d_model)

    def torch_fused():  # output only: PyTorch's fastest path
        with torch.no_grad():
            return mha(x, x, x, need_weights=False)[0]

    def torch_per_head():  # also returns every head's weights, as the helper does
        with torch.no_grad():
            return mha(x, x, x, need_weights=True, average_attn_weights=False)[0]

    assert np.allclose(numpy_mha(), torch_fused()[0].numpy(), atol=1e-4), "the two disagree"
    best = {
        name: 1e3 * min(timeit.repeat(fn, number=1, repeat=repeats))
        for name, fn in [
            ("numpy", numpy_mha),
            ("torch_fused", torch_fused),
            ("torch_per_head", torch_per_head),
        ]
    }
    return {
        "n": n,
        "d_model": d_model,
        "heads": heads,
        **{f"{k}_ms": v for k, v in best.items()},
        "ratio_to_fused": best["numpy"] / best["torch_fused"],
        "ratio_to_per_head": best["numpy"] / best["torch_per_head"],
    }


def machine() -> dict:
    import torch

    return {
        "machine": platform.machine(),
        "cpus": len(os.sched_getaffinity(0)),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "torch": torch.__version__,
    }


def time_pages(args) -> None:
    """Time the pages of ``--page`` alone; with ``--json``, put their rows into that file in the
    book's order, in place of the rows it had for them."""
    rows = chapter_runs(args.compare, args.page)
    for row in rows:
        print(f"{row['page']:<32} {row['seconds']:>9.2f} s {row['peak_memory_mib']:>9.0f} MiB")
    if args.json:
        result = json.loads(args.json.read_text()) if args.json.exists() else {}
        if result.get("machine", machine()) != machine():
            raise SystemExit(f"{args.json} was recorded on another machine: run it all afresh")
        kept = {row["page"]: row for row in result.get("pages", [])}
        kept |= {row["page"]: row for row in rows}
        result = {"machine": machine()} | result
        result["pages"] = [kept[page] for page in chapter_pages() if page in kept]
        args.json.write_text(json.dumps(result, indent=1) + "\n")
        print(f"wrote {args.json}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path, help="write the results to this file")
    parser.add_argument("--skip-build", action="store_true", help="skip the two book builds")
    parser.add_argument(
        "--compare",
        metavar="REVISION",
        help="also run each page as it was at this git revision (before/after)",
    )
    parser.add_argument("--page", action="append", help="time only this page (repeatable)")
    args = parser.parse_args()
    if args.page:
        time_pages(args)
        return

    result = {"machine": machine()}
    print("machine:", result["machine"])
    if not args.skip_build:
        result["build"] = build_times()
        print(
            f"clean build (every notebook executed): {result['build']['clean_build_s']:.1f} s; "
            f"cached rebuild: {result['build']['cached_rebuild_s']:.1f} s"
        )
    result["pages"] = chapter_runs(args.compare)
    before = f" {'before (s)':>10}" if args.compare else ""
    print(
        f"\none core; target 10 s a page\n{'page':<32}{before} {'time (s)':>9} {'peak memory (MiB)':>18}"
    )
    for row in result["pages"]:
        before = row.get("before", {}).get("seconds")
        before = (f" {before:>10.2f}" if before else f" {'-':>10}") if args.compare else ""
        print(f"{row['page']:<32}{before} {row['seconds']:>9.2f} {row['peak_memory_mib']:>18.0f}")
    result["multi_head"] = mha_ratio()
    m = result["multi_head"]
    print(
        f"\nmulti-head attention, n = {m['n']}, d_model = {m['d_model']}, h = {m['heads']}, "
        f"float32, best of 20: NumPy helper {m['numpy_ms']:.2f} ms; torch "
        f"{m['torch_fused_ms']:.2f} ms (output only, ratio {m['ratio_to_fused']:.2f}), "
        f"{m['torch_per_head_ms']:.2f} ms (with per-head weights, like the helper, ratio "
        f"{m['ratio_to_per_head']:.2f}); target: within 2×"
    )
    print()
    cost = [sys.executable, str(ROOT / "benchmarks" / "attention_cost.py")]
    if args.json:
        cost += ["--json", str(ROOT / "chapters" / "attnkit" / "data" / "attention_cost.json")]
    subprocess.run(cost, check=True)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(result, indent=1) + "\n")
        print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
