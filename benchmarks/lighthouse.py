"""Lighthouse's scores for every page of the book, beside a stock Jupyter Book's, in one run.

Serves a built book gzip-compressed, as GitHub Pages does, and runs Lighthouse with its default
mobile profile (a mid-range phone on a simulated slow 4G network) on every page of _toc.yml in
Debian's Chromium. For scale, a stock book made by ``jupyter-book create`` (the same
jupyter-book and theme, its example pages) is built into a temporary folder and measured in
the same run. Records, per page, the four category scores (performance, accessibility, best
practices, SEO), the first and largest contentful paint, the total blocking time and the
cumulative layout shift, with the machine and the git revision.

Lighthouse is a measuring tool, not one of the book's dependencies: it is installed in a
throw-away folder, never in the book's package.json, and make test never runs it.

    npm install --prefix /tmp/lighthouse lighthouse@13.5.0
    .venv/bin/python -m benchmarks.lighthouse [--site _build/html] [--before OTHER/_build/html]
        [--runs 1] [--lighthouse /tmp/lighthouse/node_modules/.bin/lighthouse] [--no-stock]
        [--pages chapters/attention ...] [--reports FOLDER]
        [--json benchmarks/results/lighthouse.json]

With --before, an earlier build of the book is measured too, page by page beside the new one;
the stock book's pages are spread among them, so that all three meet the machine in one state.
With --runs N, each page is measured N times and the run with the median performance score is
kept. Timings depend on the machine: Lighthouse simulates the phone's network and its 4x slower
CPU from the tasks it observes, so a busy machine lengthens every figure (each page records
Lighthouse's benchmark index of the machine, about 1000 or more when it is idle); compare only
figures of one run.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks.record import git, machine, write_json
from booktools.local_server import QuietHandler, served
from tests.support.book import toc_files

ROOT = Path(__file__).resolve().parent.parent
LIGHTHOUSE_VERSION = "13.5.0"
DEFAULT_LIGHTHOUSE = Path("/tmp/lighthouse/node_modules/.bin/lighthouse")
INSTALL = f"npm install --prefix /tmp/lighthouse lighthouse@{LIGHTHOUSE_VERSION}"
CHROME_FLAGS = "--headless=new --no-sandbox"
CATEGORIES = ("performance", "accessibility", "best-practices", "seo")
METRICS = {
    "fcp_ms": "first-contentful-paint",
    "lcp_ms": "largest-contentful-paint",
    "tbt_ms": "total-blocking-time",
    "cls": "cumulative-layout-shift",
    "speed_index_ms": "speed-index",
}
# What GitHub Pages compresses: text, not images or fonts that are compressed already.
COMPRESSED = (".html", ".css", ".js", ".mjs", ".json", ".svg", ".txt", ".xml", ".map", ".inv")
# A stock book's pages, as jupyter-book create writes them.
STOCK_PAGES = ("intro", "markdown", "notebooks", "markdown-notebooks")


class _GzipHandler(QuietHandler):
    """Files from a folder, text compressed with gzip when the client accepts it, over kept-alive
    HTTP/1.1 connections (GitHub Pages serves HTTP/2; Python's server, HTTP/1.0, would open a
    connection per file)."""

    protocol_version = "HTTP/1.1"

    def send_head(self):
        path = self.translate_path(self.path)
        if os.path.isdir(path):
            path = os.path.join(path, "index.html")
        accepts = "gzip" in self.headers.get("Accept-Encoding", "")
        if not (accepts and path.endswith(COMPRESSED) and os.path.isfile(path)):
            return super().send_head()
        body = _compressed(path, os.path.getmtime(path))
        self.send_response(200)
        self.send_header("Content-Type", self.guess_type(path))
        self.send_header("Content-Encoding", "gzip")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "max-age=600")  # GitHub Pages' own
        self.end_headers()
        return _Body(body)


class _Body:
    def __init__(self, data: bytes):
        self.data = data

    def read(self, *args):
        data, self.data = self.data, b""
        return data

    def close(self):
        pass


@functools.cache
def _compressed(path: str, mtime: float) -> bytes:
    return gzip.compress(Path(path).read_bytes(), compresslevel=6)


def serve_gzipped(folder: Path):
    """Serve ``folder`` on 127.0.0.1 at a free port, gzip-compressed; yields the base URL."""
    return served(folder, _GzipHandler)


def lighthouse(binary: Path, url: str, report: Path | None = None) -> dict:
    """One Lighthouse run on ``url`` with the default (mobile) profile: its JSON report."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "report.json"
        subprocess.run(
            [
                str(binary),
                url,
                "--output=json",
                f"--output-path={path}",
                f"--chrome-flags={CHROME_FLAGS}",
                "--quiet",
                # pictures of the page, which no score reads; a long page's took a minute
                "--skip-audits=full-page-screenshot,screenshot-thumbnails,final-screenshot",
            ],
            env={**os.environ, "CHROME_PATH": shutil.which("chromium") or "chromium"},
            check=True,
            capture_output=True,
        )
        if report:
            report.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(path, report)
        return json.loads(path.read_text())


def summary(report: dict) -> dict:
    audits = report["audits"]
    found = {c: round(report["categories"][c]["score"] * 100) for c in CATEGORIES}
    for name, audit in METRICS.items():
        value = audits[audit]["numericValue"]
        found[name] = round(value, 4) if name == "cls" else round(value)
    found["benchmark_index"] = round(report["environment"]["benchmarkIndex"])
    found["main_thread_ms"] = round(audits["mainthread-work-breakdown"]["numericValue"])
    found["transfer_kib"] = round(audits["total-byte-weight"]["numericValue"] / 1024)
    return found


def schedule(books: dict[str, list[str]]) -> list[tuple[str, str]]:
    """The order of the runs: each page of the book beside its earlier version, the stock
    book's pages spread among them, so that all three meet the machine in the same state."""
    main = [
        (name, page)
        for page in books.get("book", [])
        for name in ("before", "book")
        if page in books.get(name, [])
    ]
    stock = [("stock", page) for page in books.get("stock", [])]
    order, step = [], max(1, len(main) // max(1, len(stock)))
    for i, run in enumerate(main):
        if stock and i % step == 0:
            order.append(stock.pop(0))
        order.append(run)
    return order + stock


def measure(
    binary: Path,
    sites: dict[str, Path],
    books: dict[str, list[str]],
    runs: int,
    reports: Path | None,
) -> dict[str, dict]:
    """Lighthouse on every page of every site, ``runs`` times; the median run of each."""
    kept = {name: {page: [] for page in pages} for name, pages in books.items()}
    with contextlib.ExitStack() as stack:
        bases = {name: stack.enter_context(serve_gzipped(site)) for name, site in sites.items()}
        for run in range(runs):
            for name, page in schedule(books):
                report = None
                if reports:
                    report = reports / name / f"{page.replace('/', '__')}.{run}.json"
                found = summary(lighthouse(binary, f"{bases[name]}{page}.html", report))
                kept[name][page].append(found)
                print(f"  {name:6} {page:30} {_row(found)}", flush=True)
    results = {}
    for name, pages in kept.items():
        results[name] = {}
        for page, found in pages.items():
            median = sorted(found, key=lambda r: r["performance"])[len(found) // 2]
            if runs > 1:
                median["performance_runs"] = [r["performance"] for r in found]
            results[name][page] = median
    return results


def stock_book(folder: Path) -> Path:
    """A book made by ``jupyter-book create``, built with this environment's jupyter-book."""
    jupyter_book = Path(sys.executable).parent / "jupyter-book"
    subprocess.run([str(jupyter_book), "create", str(folder)], check=True, capture_output=True)
    subprocess.run(
        [str(jupyter_book), "build", str(folder), "--path-output", str(folder)],
        check=True,
        capture_output=True,
    )
    return folder / "_build" / "html"


def _row(r: dict) -> str:
    return (
        f"perf {r['performance']:3}  a11y {r['accessibility']:3}  bp {r['best-practices']:3}  "
        f"seo {r['seo']:3}  FCP {r['fcp_ms'] / 1000:4.1f} s  LCP {r['lcp_ms'] / 1000:4.1f} s  "
        f"TBT {r['tbt_ms']:4} ms  CLS {r['cls']:.3f}"
    )


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--site", type=Path, default=ROOT / "_build" / "html")
    parser.add_argument("--lighthouse", type=Path, default=DEFAULT_LIGHTHOUSE)
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--pages", nargs="*", help="pages of _toc.yml (default: all)")
    parser.add_argument(
        "--before", type=Path, help="an earlier build of the book, measured page by page beside it"
    )
    parser.add_argument("--no-stock", action="store_true", help="skip the stock book")
    parser.add_argument("--reports", type=Path, help="keep Lighthouse's JSON reports here")
    parser.add_argument("--json", type=Path, help="write the results here")
    args = parser.parse_args(argv)

    if not args.lighthouse.exists():
        sys.exit(f"{args.lighthouse} is missing: {INSTALL}")
    if not (args.site / "index.html").exists():
        sys.exit(f"{args.site} holds no built book: make book")
    version = subprocess.run(
        [str(args.lighthouse), "--version"], capture_output=True, text=True, check=True
    ).stdout.strip()
    chromium = subprocess.run(
        [shutil.which("chromium") or "chromium", "--version"], capture_output=True, text=True
    ).stdout.split()
    pages = args.pages or [f.removesuffix(".md") for f in toc_files()]

    print(f"Lighthouse {version}, mobile profile, each site served gzip-compressed")
    sites, books = {"book": args.site}, {"book": pages}
    if args.before:  # the pages it has (a page may be new)
        sites["before"] = args.before
        books["before"] = [page for page in pages if (args.before / f"{page}.html").exists()]
    with tempfile.TemporaryDirectory() as folder:
        if not args.no_stock:
            print("building a stock book (jupyter-book create)")
            sites["stock"] = stock_book(Path(folder) / "stock")
            books["stock"] = list(STOCK_PAGES)
        results = measure(args.lighthouse, sites, books, args.runs, args.reports)

    for name, found in results.items():
        performance = [r["performance"] for r in found.values()]
        print(f"{name}: performance {min(performance)}-{max(performance)}")
    if args.json:
        write_json(
            args.json,
            {
                "what": "Lighthouse, default mobile profile (simulated slow 4G, 4x CPU "
                "slowdown), every page served gzip-compressed from 127.0.0.1; the stock "
                "book is jupyter-book create's, built and measured in the same run",
                "lighthouse": version,
                "machine": machine(chromium[1] if len(chromium) > 1 else None),
                "revision": git("rev-parse", "HEAD").strip(),
                "working_tree_clean": not git("status", "--porcelain").strip(),
                "runs_per_page": args.runs,
                "sites": {name: str(site) for name, site in sites.items()},
                **results,
            },
        )


if __name__ == "__main__":
    main()
