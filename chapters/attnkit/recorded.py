"""Benchmark figures recorded on a named machine, shipped with the helper, and what a shipped
training record says of its run.

A chapter that shows measurements too slow to repeat at build time (chapter 7's attention cost
up to 4096 tokens) loads them from here, so that it runs the same in the book's build, in a
downloaded notebook and in Colab. ``benchmarks/attention_cost.py --json`` writes them. The
trainings whose records the book ships (``gpt_train``, ``induction_train``, ``induction_gpt``)
say how and where they ran with :func:`provenance`, and name the code with :func:`revision`.
"""

from __future__ import annotations

import contextlib
import json
import platform
import subprocess
import time
from importlib import resources
from pathlib import Path

__all__ = ["provenance", "recorded_benchmark", "revision"]


def recorded_benchmark(name: str) -> dict:
    """The recorded run ``name`` (e.g. ``"attention_cost"``): its machine and its results."""
    path = resources.files("attnkit") / "data" / f"{name}.json"
    if not path.is_file():
        raise ValueError(f"no recorded benchmark named {name!r} (looked for {path})")
    return json.loads(path.read_text(encoding="utf-8"))


def revision() -> str:
    """The git revision of the working tree, ``+changes`` if it differs from it, or
    ``unknown`` outside a git checkout."""
    here = Path(__file__).resolve().parent
    try:
        head = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=here, capture_output=True, text=True, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--", "."], cwd=here, capture_output=True, text=True
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head + ("+changes" if dirty else "")


@contextlib.contextmanager
def provenance():
    """Time the block that trains a model. The dict it yields holds, once the block ends, what
    a shipped record says of its run: PyTorch's version, the machine, the seconds the block took
    on the clock and of CPU time, and the revision of the code, read as the block begins (before
    anything changes in the checkout)."""
    import torch

    ran_at, found = revision(), {}
    began, began_cpu = time.perf_counter(), time.process_time()
    yield found
    found.update(
        torch=torch.__version__,
        machine=platform.machine(),
        processor=platform.processor(),
        seconds=round(time.perf_counter() - began, 1),  # which a busy machine lengthens
        cpu_seconds=round(time.process_time() - began_cpu, 1),  # the run's own, on one core
        revision=ran_at,
    )
