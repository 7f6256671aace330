"""What CI costs: `.ci/run` on a fresh clone of the committed state, each stage timed.

`.ci/run` prints a line per stage (``ci: tests took 412 s (575 s so far)``); this runs it on a
fresh clone, reads those lines and the test count, and records them with the machine and the
revision, so that the README need not keep a log of them.

    .venv/bin/python -m benchmarks.ci_stages [--json benchmarks/results/ci_stages.json]
"""

from __future__ import annotations

import argparse
import re
import subprocess
import tempfile
import time
from pathlib import Path

from benchmarks.record import ROOT, git, machine, write_json

STAGE = re.compile(r"^ci: (?P<stage>.+) took (?P<seconds>\d+) s", re.M)
SUMMARY = re.compile(r"=+ (?P<summary>\d+ passed.*?) in [\d.]+s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path, default=ROOT / "benchmarks/results/ci_stages.json")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        clone = Path(scratch) / "book"
        subprocess.run(["git", "clone", "--quiet", f"file://{ROOT}", str(clone)], check=True)
        start = time.perf_counter()
        run = subprocess.run(["bash", ".ci/run"], cwd=clone, capture_output=True, text=True)
        seconds = round(time.perf_counter() - start)
    log = run.stdout + run.stderr
    if run.returncode:
        raise SystemExit(f".ci/run failed:\n{log[-4000:]}")
    summaries = SUMMARY.findall(log)
    result = {
        "what": ".ci/run on a fresh clone: seconds per stage",
        "revision": git("rev-parse", "--short", "HEAD").strip(),
        "machine": machine(),
        "seconds": {m["stage"]: int(m["seconds"]) for m in STAGE.finditer(log)},
        "total seconds": seconds,
        "tests": summaries[-1] if summaries else None,
    }
    write_json(args.json, result)


if __name__ == "__main__":
    main()
