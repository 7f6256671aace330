"""How long chapter 9's training scrubber takes to answer its slider.

Opens chapters/induction-heads.html of a built book in headless Chromium, light mode, 1280 px
wide, and moves the scrubber's slider as a reader drags it, across every recorded step and back,
``--rounds`` times. Each move is timed as benchmarks/heatmap_redraw.py times the heatmap's: from
the input event to the end of the browser's style and layout work, and to the end of the next
frame's rendering (paint included). The target is one frame: 16 ms. Prints the summary; with
--json, writes it.

    .venv/bin/python -m benchmarks.scrubber_redraw [--site _build/html] [--rounds 5]
        [--json benchmarks/results/scrubber_redraw.json]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from benchmarks.heatmap_redraw import MEASURE, summary
from benchmarks.record import ROOT, git, machine, write_json
from tests.support.browser import CHROMIUM, INSTALL_HINT, PageLog, launch, serve

PAGE = "chapters/induction-heads.html"
SLIDER, WIDGET = "[data-scrubber] input.scrub-slider", "[data-scrubber]"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--site", type=Path, default=ROOT / "_build" / "html", help="built book")
    parser.add_argument("--rounds", type=int, default=5, help="drags across and back")
    parser.add_argument("--json", type=Path, help="write the results to this file")
    args = parser.parse_args()
    if CHROMIUM is None:
        sys.exit(f"Chromium not found: {INSTALL_HINT}")
    if not (args.site / PAGE).is_file():
        sys.exit(f"{args.site / PAGE} not found: build the book first (make book)")
    from playwright.sync_api import sync_playwright

    with serve(args.site) as base, sync_playwright() as playwright:
        browser = launch(playwright)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        log = PageLog(page)
        page.add_init_script("localStorage.setItem('mode', 'light')")
        page.goto(base + PAGE)
        root = page.locator(f"{WIDGET}[data-drawn]")
        root.scroll_into_view_if_needed()
        steps = int(root.locator("input.scrub-slider").get_attribute("max")) + 1
        across = [str(i) for i in [*range(steps), *range(steps - 1, -1, -1)]]
        times = page.evaluate(MEASURE, [across * args.rounds, SLIDER, WIDGET])
        version = browser.version
        browser.close()
    if log.problems():
        sys.exit(f"the page had problems: {log.problems()}")
    result = {
        "machine": machine(version),
        "revision": git("rev-parse", "--short", "HEAD").strip(),
        "recorded_steps": steps,
        "moves": len(times["frame"]),
        "to_layout_ms": summary(times["layout"]),
        "to_frame_ms": summary(times["frame"]),
    }
    print(f"{result['moves']} slider moves over {steps} recorded steps ({result['machine']})")
    for what in ("to_layout_ms", "to_frame_ms"):
        ms = result[what]
        print(f"  {what}: median {ms['median']:.1f}, p95 {ms['p95']:.1f}, max {ms['max']:.1f}")
    print("  target: 16 ms to the frame")
    if args.json:
        write_json(args.json, result)


if __name__ == "__main__":
    main()
