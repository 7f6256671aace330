"""Grade collected notebooks with the assignments' autograders, here and without Docker.

``otter grade`` needs Docker; ``otter run`` grades one notebook per call and imports Otter each
time (about four seconds). This grades a whole collection in a few worker processes that import
Otter once each, in the book's own environment (the one the autograders' requirements pin). Each
notebook names its assignment in its metadata (``otter assign`` writes it), so one folder may
hold several chapters' submissions. The scores go to one CSV, a row per notebook and question.

    python -m assignments.grade collected/ [--assignments _build/assignments] [--out grades.csv]
"""

from __future__ import annotations

import argparse
import csv
import multiprocessing
import os
from collections.abc import Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
# Otter sums the public tests' results under this name for Gradescope; it is not a question.
PUBLIC_SUMMARY = "Public Tests"


@dataclass(frozen=True)
class Grade:
    """One notebook's result: points per question and what each question is worth."""

    notebook: Path
    assignment: str
    scores: dict[str, float]
    points: dict[str, float]
    error: str | None = None  # set when the grader could not run the notebook at all

    @property
    def total(self) -> float:
        return sum(self.scores.values())


def assignment_of(notebook: Path) -> str:
    """The name ``otter assign`` wrote into the notebook's metadata."""
    metadata = nbformat.read(notebook, as_version=4).metadata
    try:
        return metadata["otter"]["assignment_name"]
    except KeyError:
        raise ValueError(
            f"{notebook} names no assignment: is it an assignment's notebook?"
        ) from None


def autograder_of(assignments: Path, name: str) -> Path:
    """The autograder zip of the assignment ``name`` built in ``assignments``."""
    zips = sorted((assignments / name / "autograder").glob("*.zip"))
    if len(zips) != 1:
        raise ValueError(
            f"expected one autograder zip in {assignments / name / 'autograder'}, found "
            f"{len(zips)}: run `make assignments` first"
        )
    return zips[0]


def _grade_one(notebook: Path, autograder: Path) -> tuple[dict, dict, str | None]:
    # Imported here: in a worker process, once, not in the process that hands out the work.
    from otter.api import grade_submission

    results = grade_submission(str(notebook), str(autograder), quiet=True)
    tests = {name: result for name, result in results.results.items() if name != PUBLIC_SUMMARY}
    error = results.catastrophic_error
    return (
        {name: result.score for name, result in tests.items()},
        {name: result.possible for name, result in tests.items()},
        None if error is None else repr(error),
    )


def grade(notebooks: Sequence[Path], assignments: Path, jobs: int = 2) -> list[Grade]:
    """Grade ``notebooks`` with the autograders built in ``assignments``, ``jobs`` at a time."""
    names = [assignment_of(notebook) for notebook in notebooks]
    autograders = [autograder_of(assignments, name) for name in names]
    # Otter changes the working directory while it grades: each grade runs in a process of its
    # own making (spawn), never in a thread of the caller's.
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=jobs, mp_context=context) as pool:
        results = list(pool.map(_grade_one, notebooks, autograders))
    return [
        Grade(notebook, name, scores, points, error)
        for notebook, name, (scores, points, error) in zip(notebooks, names, results, strict=True)
    ]


def collect(paths: Iterable[Path]) -> list[Path]:
    """The notebooks named, and those in the folders named (at any depth), in a stable order."""
    found = []
    for path in paths:
        if path.is_dir():
            found += sorted(p for p in path.rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts)
        elif path.suffix == ".ipynb":
            found.append(path)
        else:
            raise ValueError(f"{path} is neither a notebook nor a folder")
    if not found:
        raise ValueError(f"no notebook in {', '.join(map(str, paths))}")
    return found


def write_csv(grades: Sequence[Grade], out: Path) -> None:
    with out.open("w", newline="", encoding="utf-8") as file:
        writer = csv.writer(file)
        writer.writerow(["notebook", "assignment", "question", "score", "points", "error"])
        for g in grades:
            if not g.points:  # the grader gave up before it could name the questions
                writer.writerow([g.notebook, g.assignment, "", 0, 0, g.error or "no question"])
            for question, points in g.points.items():
                writer.writerow(
                    [g.notebook, g.assignment, question, g.scores[question], points, g.error or ""]
                )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="+", type=Path, help="notebooks, or folders of them")
    parser.add_argument("--assignments", type=Path, default=ROOT / "_build" / "assignments")
    parser.add_argument("--out", type=Path, default=Path("grades.csv"))
    parser.add_argument("--jobs", type=int, default=min(4, os.cpu_count() or 1))
    args = parser.parse_args(argv)
    grades = grade(collect(args.paths), args.assignments.resolve(), args.jobs)
    write_csv(grades, args.out)
    for g in grades:
        verdict = f"error: {g.error}" if g.error else f"{g.total:g} / {sum(g.points.values()):g}"
        print(f"{g.notebook}  {g.assignment}  {verdict}")
    print(f"{len(grades)} notebooks graded; scores per question in {args.out}")


if __name__ == "__main__":
    main()
