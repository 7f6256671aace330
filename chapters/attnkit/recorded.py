"""Benchmark figures recorded on a named machine, shipped with the helper, and the revision a
recorded run names.

A chapter that shows measurements too slow to repeat at build time (chapter 7's attention cost
up to 4096 tokens) loads them from here, so that it runs the same in the book's build, in a
downloaded notebook and in Colab. ``benchmarks/attention_cost.py --json`` writes them. The
trainings whose records the book ships (``gpt_train``, ``induction_train``, ``induction_gpt``)
name the code they ran with :func:`revision`.
"""

from __future__ import annotations

import json
import subprocess
from importlib import resources
from pathlib import Path

__all__ = ["recorded_benchmark", "revision"]


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
