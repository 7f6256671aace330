"""``make assignments``: an Otter-Grader assignment for every chapter with coding exercises.

For each such chapter, the master notebook (:mod:`assignments.master`) is written beside the
book's pinned requirements (:func:`grading_requirements`) and a copy of the helper ``attnkit``,
and ``otter assign`` turns it into ``<out>/<chapter>/student`` (the notebook to hand out, with the public tests) and
``<out>/<chapter>/autograder`` (the solutions and the autograder zip, which grades with the
book's environment and this helper). The masters stay in ``<out>/.masters``. The notebooks'
set-up cell installs attnkit from the repository found as the launch buttons find it
(``BOOK_REPOSITORY_URL``, GitHub Actions, the ``origin`` remote), or says how to set one.

    python -m assignments.build [--out _build/assignments] [chapter ...]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
from pathlib import Path

import nbformat

from assignments.exercises import (
    assignment_settings,
    coding_exercises,
    labelled_equations,
    setup_code,
)
from assignments.master import master_notebook
from booktools.repository import find_repository, origin_remote

ROOT = Path(__file__).resolve().parent.parent
CHAPTERS = ROOT / "chapters"


def chapters_with_exercises() -> list[str]:
    """The slugs of the chapters that have coding exercises."""
    return [
        path.stem
        for path in sorted(CHAPTERS.glob("*.md"))
        if coding_exercises(path.read_text(encoding="utf-8"))
    ]


def grading_requirements() -> str:
    """The book's pinned requirements with the package index options of its hosted environments
    (Binder's: PyTorch's CPU wheels, not the CUDA build a plain pin pulls on Linux), inlined
    because the autograder zip cannot refer to a file outside it."""
    binder = (ROOT / "binder" / "requirements.txt").read_text(encoding="utf-8").splitlines()
    options = [line for line in binder if line.startswith("--")]
    return "\n".join([*options, (ROOT / "requirements.txt").read_text(encoding="utf-8")])


def write_master(chapter: str, folder: Path, repository: dict | None = None) -> Path:
    """The master notebook of ``chapter`` and the files it needs, in ``folder``; its set-up
    cell installs attnkit from ``repository``."""
    source = CHAPTERS / f"{chapter}.md"
    if not source.exists():
        raise ValueError(f"there is no chapter {chapter!r} ({source} is missing)")
    text = source.read_text(encoding="utf-8")
    exercises = coding_exercises(text)
    if not exercises:
        raise ValueError(f"the chapter {chapter!r} has no coding exercise")
    title = re.search(r"^# (.+)$", text, re.M)[1]
    settings = assignment_settings(text)
    used = "\n".join(
        [exercise.solution for exercise in exercises]
        + [test for setting in settings.values() for test in setting.get("public") or []]
    )
    notebook = master_notebook(
        chapter,
        title,
        exercises,
        settings,
        setup_code(text, used),
        labelled_equations(text),
        repository,
    )
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    (folder / "requirements.txt").write_text(grading_requirements(), encoding="utf-8")
    shutil.copytree(
        CHAPTERS / "attnkit",
        folder / "attnkit",
        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"),
    )
    master = folder / f"{chapter}.ipynb"
    nbformat.write(notebook, master)
    return master


def build(chapter: str, out: Path, repository: dict | None = None) -> Path:
    """``otter assign`` for ``chapter`` into ``out/<chapter>``; returns that folder.

    Otter is imported here, once per process: the import takes seconds, an assignment a tenth of
    one. Otter Assign changes the working directory while it runs, so call this from a process's
    main thread, never beside other threads."""
    from otter.assign import main as otter_assign

    master = write_master(chapter, out / ".masters" / chapter, repository)
    result = out / chapter
    shutil.rmtree(result, ignore_errors=True)
    otter_assign(str(master), str(result))
    return result


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("chapters", nargs="*", help="slugs (default: every chapter with exercises)")
    parser.add_argument("--out", type=Path, default=ROOT / "_build" / "assignments")
    args = parser.parse_args(argv)
    repository = find_repository(os.environ, origin_remote(ROOT))
    if repository is None:
        print(
            "set-up cells: no repository URL (set BOOK_REPOSITORY_URL=https://github.com/"
            "OWNER/NAME); where attnkit is missing, the notebooks will ask for it"
        )
    for chapter in args.chapters or chapters_with_exercises():
        print(f"{chapter}: {build(chapter, args.out.resolve(), repository)}")


if __name__ == "__main__":
    main()
