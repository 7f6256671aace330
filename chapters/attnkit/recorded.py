"""Benchmark figures recorded on a named machine, shipped with the helper.

A chapter that shows measurements too slow to repeat at build time (chapter 7's attention cost
up to 4096 tokens) loads them from here, so that it runs the same in the book's build, in a
downloaded notebook and in Colab. ``benchmarks/attention_cost.py --json`` writes them.
"""

from __future__ import annotations

import json
from importlib import resources

__all__ = ["recorded_benchmark"]


def recorded_benchmark(name: str) -> dict:
    """The recorded run ``name`` (e.g. ``"attention_cost"``): its machine and its results."""
    path = resources.files("attnkit") / "data" / f"{name}.json"
    if not path.is_file():
        raise ValueError(f"no recorded benchmark named {name!r} (looked for {path})")
    return json.loads(path.read_text(encoding="utf-8"))
