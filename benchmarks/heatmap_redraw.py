"""How long the heatmap takes to recompute and redraw after a control changes.

Loads chapters/attnkit/heatmap.js in headless Chromium with a 64×64 self-attention
heatmap (a stand-in for the widget manager supplies the model), moves the temperature
slider the way a reader drags it, and prints the median and 95th percentile of the
time from the input event to the end of the browser's style and layout work.
The target is one frame: 16 ms.

    .venv/bin/python -m benchmarks.heatmap_redraw [--size 64] [--steps 120]
"""

from __future__ import annotations

import argparse
import json
import platform
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

import numpy as np

from tests.support.browser import CHROMIUM, INSTALL_HINT, PageLog, launch, serve

ROOT = Path(__file__).resolve().parent.parent

# A minimal anywidget host: get/set/on/off/save_changes on a plain object.
PAGE = """<!doctype html><meta charset="utf-8"><link rel="stylesheet" href="heatmap.css">
<div id="host"></div>
<script type="module">
import widget from "./heatmap.js";
const state = %s;
const listeners = {};
const model = {
  get: (name) => state[name],
  set: (name, value) => { state[name] = value; (listeners["change:" + name] || []).forEach((f) => f()); },
  on: (event, f) => { (listeners[event] = listeners[event] || []).push(f); },
  off: () => {},
  save_changes: () => {},
};
widget.render({ model, el: document.getElementById("host") });
window.ready = true;
</script>
"""

MEASURE = """async (values) => {
  const slider = document.querySelector("input.attn-temperature");
  const root = document.querySelector("[data-attn-widget]");
  const times = [];
  for (const value of values) {
    await new Promise((done) => requestAnimationFrame(() => setTimeout(done, 0)));
    const start = performance.now();
    slider.value = value;
    slider.dispatchEvent(new Event("input", { bubbles: true }));
    void root.offsetHeight;  // force style and layout now, inside the measurement
    times.push(performance.now() - start);
  }
  return times;
}"""


def state(n: int) -> dict:
    rng = np.random.default_rng(0)
    tokens = [f"t{i}" for i in range(n)]
    return {"query_tokens": tokens, "key_tokens": tokens, "query_vectors": rng.normal(size=(n, 16)).tolist(),
            "key_vectors": [], "self_attention": True, "heads": [], "head": 0, "temperature": 1.0,
            "scale": True, "causal": False, "padding": [False] * n, "positional": False,
            "permutation": [], "query_row": 0, "controls": ["temperature", "scale", "causal"],
            "weights": []}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=64, help="tokens (the heatmap is size × size)")
    parser.add_argument("--steps", type=int, default=120, help="slider steps to time")
    args = parser.parse_args()
    if CHROMIUM is None:
        sys.exit(f"Chromium not found: {INSTALL_HINT}")
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as folder:
        folder = Path(folder)
        for name in ["heatmap.js", "heatmap.css"]:
            shutil.copy(ROOT / "chapters" / "attnkit" / name, folder / name)
        (folder / "index.html").write_text(PAGE % json.dumps(state(args.size)))
        with serve(folder) as base, sync_playwright() as playwright:
            browser = launch(playwright)
            page = browser.new_page(viewport={"width": 1280, "height": 1000})
            log = PageLog(page)
            page.goto(base + "index.html")
            page.wait_for_function("() => window.ready")
            cells = page.locator(".attn-cell").count()
            # a reader dragging: log10(τ) in steps of 0.01 across the slider and back
            drag = [f"{-0.6 + 0.01 * (k % 120 if k // 120 % 2 == 0 else 119 - k % 120):.2f}"
                    for k in range(args.steps)]
            times = page.evaluate(MEASURE, drag)
            version = browser.version
            browser.close()
    if log.problems():
        sys.exit(f"the page had problems: {log.problems()}")
    times.sort()
    print(f"heatmap {args.size}×{args.size} ({cells} cells), {len(times)} temperature-slider steps")
    print(f"machine: {platform.machine()}, {platform.system()}; browser: Chromium {version} (headless)")
    print(f"recompute + redraw + style/layout: median {statistics.median(times):.1f} ms, "
          f"95th percentile {times[int(0.95 * len(times))]:.1f} ms, max {times[-1]:.1f} ms "
          f"(target: one frame, 16 ms)")


if __name__ == "__main__":
    main()
