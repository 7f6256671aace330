"""How soon a page's first heatmap answers, and how much its layout moves while it loads.

Opens every page of a built book in headless Chromium (a fresh browser context each time, so
nothing is cached; no network but the page's own server) and records, per page:
- the time from navigation to the first heatmap drawn with its controls live (the widget's
  ``data-drawn`` attribute; the target is 1 s on every chapter page with a heatmap);
- the layout shifts of the load, summed (the cumulative layout shift, without the session windows
  that only make it smaller; the target is 0.05 or less), until the network is idle and a second
  has passed;
- the JavaScript the page fetched, in kB.
With --baseline REV the book at that git revision is built too (a git worktree with its own
npm packages, this checkout's .venv and execution cache) and measured in the same run, page by
page, for a before-and-after comparison. Prints a table of medians; with --json, writes them.

    .venv/bin/python -m benchmarks.page_load [--site _build/html] [--runs 5] [--baseline REV]
        [--json benchmarks/results/page_load.json]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks.record import git, machine, write_json
from tests.support.book import toc_files
from tests.support.browser import CHROMIUM, INSTALL_HINT, WATCH_LAYOUT_SHIFTS, launch, serve

ROOT = Path(__file__).resolve().parent.parent

# Before the page's own scripts: note layout shifts and the moment the first heatmap is drawn.
WATCH = (
    WATCH_LAYOUT_SHIFTS
    + """
window.firstWidget = null;
new MutationObserver((changes, observer) => {
  if (document.querySelector("[data-drawn]")) {
    window.firstWidget = performance.now();
    observer.disconnect();
  }
}).observe(document, { subtree: true, childList: true, attributes: true, attributeFilter: ["data-drawn"] });
"""
)
READ = """() => ({
  shift: window.layoutShift,
  firstWidget: window.firstWidget,
  scriptKB: performance.getEntriesByType("resource").filter((r) => /\\.m?js(\\?|$)/.test(r.name))
    .reduce((sum, r) => sum + r.encodedBodySize, 0) / 1024,
})"""


def load(browser, url: str, has_widget: bool) -> dict:
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    context.add_init_script(WATCH)
    page = context.new_page()
    page.goto(url, wait_until="load")
    if has_widget:
        page.wait_for_function("() => window.firstWidget !== null", timeout=60_000)
    page.wait_for_load_state("networkidle")
    page.wait_for_timeout(1000)
    reading = page.evaluate(READ)
    context.close()
    return reading


def built_at(revision: str, folder: Path) -> Path:
    """The book as it was at ``revision``, built in a worktree under ``folder`` with this
    checkout's environment (the Makefile would reinstall it) and an execution cache of its own:
    a chapter whose code is unchanged would otherwise show the outputs of this checkout's
    attnkit, its widgets' scripts included."""
    tree = folder / "tree"
    git("worktree", "add", "--detach", str(tree), revision)
    subprocess.run(
        ["npm", "ci", "--ignore-scripts", "--no-audit", "--no-fund"],
        cwd=tree,
        check=True,
        capture_output=True,
    )
    env = {
        **os.environ,
        "PYTHONPATH": str(tree / "chapters"),  # that revision's attnkit in the build's kernels
        "BOOK_EXECUTION_CACHE": str(folder / "execution-cache"),
    }
    subprocess.run(
        [ROOT / ".venv" / "bin" / "jupyter-book", "build", str(tree), "--path-output", str(tree)],
        env=env,
        check=True,
        capture_output=True,
    )
    return tree / "_build" / "html"


def median_row(readings: list[dict]) -> dict:
    widget = [r["firstWidget"] for r in readings if r["firstWidget"] is not None]
    return {
        "first_widget_ms": statistics.median(widget) if widget else None,
        "layout_shift": statistics.median(r["shift"] for r in readings),
        "script_kB": statistics.median(r["scriptKB"] for r in readings),
    }


def measure(browser, sites: dict[str, Path], runs: int) -> list[dict]:
    rows = []
    with contextlib.ExitStack() as stack:
        bases = {label: stack.enter_context(serve(path)) for label, path in sites.items()}
        for name in toc_files():
            found = {label: [] for label in sites}
            for _ in range(runs):  # the sites take turns, so a busy moment hits both alike
                for label, base in bases.items():
                    html = (sites[label] / f"{name}.html").read_text(encoding="utf-8")
                    has_widget = "widget-view+json" in html
                    found[label].append(load(browser, f"{base}{name}.html", has_widget))
            rows += [{"page": name, "site": label, **median_row(r)} for label, r in found.items()]
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--site",
        type=Path,
        default=ROOT / "_build" / "html",
        help="the built book to measure (make book)",
    )
    parser.add_argument("--runs", type=int, default=5, help="loads of each page per site")
    parser.add_argument("--baseline", metavar="REV", help="also build and measure this revision")
    parser.add_argument("--json", type=Path, help="write the results to this file")
    args = parser.parse_args()
    if CHROMIUM is None:
        sys.exit(f"Chromium not found: {INSTALL_HINT}")
    if not (args.site / "index.html").exists():
        sys.exit(f"no book in {args.site}: run `make book` first")
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as folder, sync_playwright() as playwright:
        current = git("rev-parse", "--short", "HEAD").strip()
        if git("status", "--porcelain", "--untracked-files=no"):
            current += " with changes"
        sites = {current: args.site}
        try:
            if args.baseline:
                sites = {args.baseline: built_at(args.baseline, Path(folder)), **sites}
            browser = launch(playwright)
            rows = measure(browser, sites, args.runs)
            result = {"machine": machine(browser.version), "runs": args.runs, "results": rows}
            browser.close()
        finally:
            if args.baseline:
                git("worktree", "remove", "--force", str(Path(folder) / "tree"))
    print(f"medians of {args.runs} loads at 1280 × 800; {result['machine']}")
    print(
        f"{'page':<34} {'site':>20} {'first heatmap (ms)':>19} {'layout shift':>13} {'JS (kB)':>8}"
    )
    for row in rows:
        first = "" if row["first_widget_ms"] is None else f"{row['first_widget_ms']:.0f}"
        print(
            f"{row['page']:<34} {row['site']:>20} {first:>19} {row['layout_shift']:>13.3f} "
            f"{row['script_kB']:>8.0f}"
        )
    if args.json:
        write_json(args.json, result)


if __name__ == "__main__":
    main()
