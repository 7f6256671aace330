"""An instructor's whole cycle, timed: clone, student edition, assignments, a class graded.

In a fresh clone of this repository's committed state, runs the commands of the instructors'
page one after the other, each timed: ``make book`` (the environment and the normal build,
whose execution cache the student edition reuses), ``make student``, ``make assignments``, then
``make grade`` on a class of 30 notebooks (every chapter's solutions, untouched and wrong
notebooks, and two of chapter 1's that are copied or renamed), in a sandbox each.

    .venv/bin/python -m benchmarks.grade_class [--json benchmarks/results/grade_class.json]
                                               [--reuse-environment]

``--reuse-environment`` links the clone to this checkout's ``.venv`` and ``node_modules``
instead of installing them (the environment stage then measures nothing).
"""

from __future__ import annotations

import argparse
import csv
import subprocess
import tempfile
import time
from pathlib import Path

from benchmarks.record import ROOT, git, machine, write_json
from tests.support.grading import CLASS, collect, collect_class

CLASS_SIZE = 30


def timed(stages: dict, name: str, command: list[str], cwd: Path) -> None:
    start = time.perf_counter()
    run = subprocess.run(command, cwd=cwd, capture_output=True, text=True)
    if run.returncode:
        raise SystemExit(f"{name} failed:\n{run.stdout[-3000:]}{run.stderr[-3000:]}")
    stages[name] = round(time.perf_counter() - start, 1)
    print(f"{name}: {stages[name]} s", flush=True)


def a_class(built: Path, folder: Path) -> list[Path]:
    """30 notebooks: every chapter's solutions, untouched and half-wrong notebooks, and as many
    of chapter 1's as a real class hands in (tests.support.grading.CLASS) as make 30."""
    chapters = sorted(p.name for p in built.iterdir() if not p.name.startswith("."))
    for chapter in chapters:
        collect(chapter, built / chapter, folder)
    more = CLASS_SIZE - len(list(folder.rglob("*.ipynb")))
    collect_class({name: CLASS[name] for name in list(CLASS)[:more]}, built, folder)
    notebooks = sorted(folder.rglob("*.ipynb"))
    assert len(notebooks) == CLASS_SIZE, f"{len(notebooks)} notebooks, not {CLASS_SIZE}"
    return notebooks


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path, default=ROOT / "benchmarks/results/grade_class.json")
    parser.add_argument("--reuse-environment", action="store_true")
    args = parser.parse_args()
    stages: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as scratch:
        clone = Path(scratch) / "book"
        start = time.perf_counter()
        timed(stages, "clone", ["git", "clone", "--quiet", f"file://{ROOT}", str(clone)], ROOT)
        if args.reuse_environment:
            for shared in (".venv", "node_modules"):
                (clone / shared).symlink_to(ROOT / shared)
        timed(stages, "make book", ["make", "book"], clone)
        timed(stages, "make student", ["make", "student"], clone)
        timed(stages, "make assignments", ["make", "assignments"], clone)
        notebooks = a_class(clone / "_build" / "assignments", Path(scratch) / "collected")
        grades = Path(scratch) / "grades.csv"
        grade = ["make", "grade", f"SUBMISSIONS={Path(scratch) / 'collected'}", f"GRADES={grades}"]
        timed(stages, f"make grade ({len(notebooks)} notebooks)", grade, clone)
        stages["whole cycle"] = round(time.perf_counter() - start, 1)
        with grades.open(encoding="utf-8") as file:
            statuses = sorted({row["status"] for row in csv.DictReader(file)})
    result = {
        "what": "an instructor's cycle from a fresh clone: seconds per stage",
        "revision": git("rev-parse", "--short", "HEAD").strip(),
        "machine": machine(),
        "environment reused": args.reuse_environment,
        "seconds": stages,
        "statuses in grades.csv": statuses,
    }
    write_json(args.json, result)


if __name__ == "__main__":
    main()
