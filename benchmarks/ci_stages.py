"""What CI costs: `.ci/run` on a fresh clone of the committed state, each stage timed.

`.ci/run` prints a line per stage (``ci: tests took 412 s (575 s so far)``) and make test a line
per build it makes for the book wing; this runs it on a fresh clone (or reads the output of such
a run, --log), reads those lines and the number of tests passed, and records them with the
machine and the revision, so that the README need not keep a log of them.

    .venv/bin/python -m benchmarks.ci_stages [--log LOG] [--json benchmarks/results/ci_stages.json]
"""

from __future__ import annotations

import argparse
import re
import subprocess
import tempfile
from pathlib import Path

from benchmarks.record import ROOT, git, machine, write_json

STAGE = re.compile(r"^ci: (?P<stage>.+) took (?P<seconds>\d+) s \((?P<so_far>\d+) s so far\)", re.M)
BUILT = re.compile(r"^built for tests: (?P<name>.+) in (?P<seconds>\d+) s", re.M)
# make test runs pytest once for the library wing and once per part of the book wing
PASSED = re.compile(r"^=+ (\d+) passed.*? in [\d.]+s", re.M)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path, default=ROOT / "benchmarks/results/ci_stages.json")
    parser.add_argument(
        "--log",
        type=Path,
        help="the output of a run already made on a fresh clone of HEAD, read instead of running",
    )
    args = parser.parse_args()
    if args.log:
        log = args.log.read_text(encoding="utf-8")
    else:
        with tempfile.TemporaryDirectory() as scratch:
            clone = Path(scratch) / "book"
            subprocess.run(["git", "clone", "--quiet", f"file://{ROOT}", str(clone)], check=True)
            run = subprocess.run(["bash", ".ci/run"], cwd=clone, capture_output=True, text=True)
        log = run.stdout + run.stderr
        if run.returncode:
            raise SystemExit(f".ci/run failed:\n{log[-4000:]}")
    stages = list(STAGE.finditer(log))
    result = {
        "what": ".ci/run on a fresh clone: seconds per stage (Debian's packages install beside the environment)",
        "revision": git("rev-parse", "--short", "HEAD").strip(),
        "machine": machine(),
        "seconds": {m["stage"]: int(m["seconds"]) for m in stages},
        "total seconds": int(stages[-1]["so_far"]),
        "built for the book wing's tests (seconds, side by side)": {
            m["name"]: int(m["seconds"]) for m in BUILT.finditer(log)
        },
        "tests passed": sum(map(int, PASSED.findall(log))),
    }
    write_json(args.json, result)


if __name__ == "__main__":
    main()
