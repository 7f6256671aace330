"""How long the heatmap takes to recompute and redraw after a control changes.

Loads chapters/attnkit/heatmap.js in headless Chromium with an n × n self-attention heatmap
(d = 16; drawn by the book's widget host, tests/support/heatmap_page.py) for each size, moves the
temperature slider the way a reader drags it, and times each step twice: from the input event
to the end of the browser's style and layout work, and to the end of the next frame's rendering
(paint included; the wait for that frame is left out). The target is one frame: 16 ms.
With --baseline REV, the front end of that git revision is measured in the same run, size by
size, for a before-and-after comparison. Prints a table; with --json, writes the results.

    .venv/bin/python -m benchmarks.heatmap_redraw [--sizes 64 128 256 512] [--steps 120]
        [--baseline main] [--json benchmarks/results/heatmap_redraw.json]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

import numpy as np

from attnkit.heatmap import AttentionHeatmap
from benchmarks.record import git, machine, write_json
from tests.support.browser import CHROMIUM, INSTALL_HINT, PageLog, launch, serve
from tests.support.heatmap_page import FRONT_END, write_page

ROOT = Path(__file__).resolve().parent.parent
SIZES = [64, 128, 256, 512]

# The slider and the widget's root found by their selectors (the scrubber's benchmark uses it too).
MEASURE = """async ([values, sliderSelector, rootSelector]) => {
  const slider = document.querySelector(sliderSelector);
  const root = document.querySelector(rootSelector);
  const layout = [], frame = [];
  for (const value of values) {
    await new Promise((done) => requestAnimationFrame(() => setTimeout(done, 0)));
    const start = performance.now();
    slider.value = value;
    slider.dispatchEvent(new Event("input", { bubbles: true }));
    void root.offsetHeight;  // force style and layout now, inside the measurement
    layout.push(performance.now() - start);
    // rAF callbacks run just before the frame's rendering; a message posted from one runs after it
    const rendering = await new Promise((done) => requestAnimationFrame(() => {
      const begin = performance.now();
      const channel = new MessageChannel();
      channel.port1.onmessage = () => done(performance.now() - begin);
      channel.port2.postMessage(null);
    }));
    frame.push(layout.at(-1) + rendering);
  }
  return { layout, frame };
}"""


def heatmap(n: int) -> AttentionHeatmap:
    rng = np.random.default_rng(0)
    return AttentionHeatmap(
        [f"t{i}" for i in range(n)],
        rng.normal(size=(n, 16)),
        scale=True,
        controls=["temperature", "scale", "causal"],
    )


def drag(steps: int) -> list[str]:
    """A reader dragging: log10(τ) in steps of 0.01 across the slider and back."""
    return [
        f"{-0.6 + 0.01 * (k % 120 if k // 120 % 2 == 0 else 119 - k % 120):.2f}"
        for k in range(steps)
    ]


def summary(times: list[float]) -> dict:
    times = sorted(times)
    return {
        "median": statistics.median(times),
        "p95": times[int(0.95 * len(times))],
        "max": times[-1],
    }


def measure(browser, front_end: Path, n: int, steps: int) -> dict:
    with tempfile.TemporaryDirectory() as folder:
        write_page(Path(folder), heatmap(n), front_end)
        with serve(Path(folder)) as base:
            page = browser.new_page(viewport={"width": 1280, "height": 1000})
            log = PageLog(page)
            page.goto(base + "index.html")
            page.wait_for_selector("[data-attn-widget][data-drawn]", timeout=120_000)
            times = page.evaluate(
                MEASURE, [drag(steps), "input.attn-temperature", "[data-attn-widget]"]
            )
            page.close()
    if log.problems():
        sys.exit(f"the page had problems: {log.problems()}")
    return {
        "n": n,
        "cells": n * n,
        "to_layout_ms": summary(times["layout"]),
        "to_frame_ms": summary(times["frame"]),
    }


def working_tree() -> str:
    """The front end being measured: its commit, and whether it has changed since."""
    changed = git(
        "status", "--porcelain", "chapters/attnkit/heatmap.js", "chapters/attnkit/heatmap.css"
    )
    return git("rev-parse", "--short", "HEAD").strip() + (" with changes" if changed else "")


def checkout(revision: str, folder: Path) -> Path:
    """heatmap.js and heatmap.css as they are at a git revision, in ``folder``."""
    for name in ["heatmap.js", "heatmap.css"]:
        (folder / name).write_text(
            git("show", f"{revision}:chapters/attnkit/{name}"), encoding="utf-8"
        )
    return folder


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--sizes", type=int, nargs="+", default=SIZES, help="tokens (each heatmap is n × n)"
    )
    parser.add_argument("--steps", type=int, default=120, help="slider steps to time per size")
    parser.add_argument(
        "--baseline", metavar="REV", help="also measure the front end of this git revision"
    )
    parser.add_argument("--json", type=Path, help="write the results to this file")
    args = parser.parse_args()
    if CHROMIUM is None:
        sys.exit(f"Chromium not found: {INSTALL_HINT}")
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as folder, sync_playwright() as playwright:
        front_ends = {working_tree(): FRONT_END}
        if args.baseline:
            front_ends = {args.baseline: checkout(args.baseline, Path(folder)), **front_ends}
        browser = launch(playwright)
        rows = [
            {"front_end": name, **measure(browser, path, n, args.steps)}
            for n in args.sizes
            for name, path in front_ends.items()
        ]
        result = {"machine": machine(browser.version), "steps": args.steps, "results": rows}
        browser.close()
    print(f"temperature-slider steps: {args.steps} per size; {result['machine']}")
    print(
        f"{'n':>5} {'front end':>20} {'to layout: median':>18} {'p95 (ms)':>9} "
        f"{'to frame: median':>17} {'p95 (ms)':>9}"
    )
    for row in rows:
        layout, frame = row["to_layout_ms"], row["to_frame_ms"]
        print(
            f"{row['n']:>5} {row['front_end']:>20} {layout['median']:>18.1f} {layout['p95']:>9.1f} "
            f"{frame['median']:>17.1f} {frame['p95']:>9.1f}"
        )
    if args.json:
        write_json(args.json, result)


if __name__ == "__main__":
    main()
