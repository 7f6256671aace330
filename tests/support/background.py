"""Slow preparations that run in the background from the session's start.

A clean build executes every notebook and takes about a minute; on two cores it can run while
the tests that need no build do, instead of before them. The same holds for the fresh Python
environment in which a downloaded notebook is run, and for the Otter-Grader assignments (built
and graded: tests.support.grading). The normal build comes first; the student edition and a build without a repository URL then run side by side, both reusing its execution
cache, as ``make student`` does.
"""

import json
import subprocess
import sys
import time
import venv
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

from assignments.build import chapters_with_exercises
from tests.support.book import REPOSITORY_URL, ROOT, build
from tests.support.browser import CHROMIUM
from tests.support.grading import build_and_grade

# The fixtures that wait for background work: tests that use one run after all the others.
BUILD_FIXTURES = frozenset(
    {"built_book", "built_student_edition", "built_book_without_repository", "page_readings"}
)
BACKGROUND_FIXTURES = BUILD_FIXTURES | {"python_without_attnkit", "graded_assignments"}


def make_python_without_attnkit(folder: Path) -> Path:
    """A new virtual environment with Jupyter's kernel and nothing of the book, like a student's
    own Jupyter: a downloaded notebook's set-up cell must bring the rest. Returns its python."""
    venv.create(folder, with_pip=True)
    python = folder / "bin" / "python"
    subprocess.run([python, "-m", "pip", "install", "--quiet", "ipykernel", "nbclient"], check=True)
    return python


def read_pages(book: Path, folder: Path) -> tuple[dict, Path]:
    """Every built page read in a browser (tests.support.readings), in a process of its own so
    that it runs beside the tests; the readings and the folder of screenshots."""
    shots, results = folder / "screenshots", folder / "readings.json"
    shots.mkdir()
    command = [
        sys.executable,
        "-m",
        "tests.support.readings",
        book / "_build" / "html",
        shots,
        results,
    ]
    run = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    assert run.returncode == 0, (
        f"reading the pages failed:\n{run.stdout[-3000:]}{run.stderr[-3000:]}"
    )
    return json.loads(results.read_text(encoding="utf-8")), shots


class Background:
    """Starts what the collected tests need; each job's result is a future, waited for by the
    fixture that needs it (see tests/conftest.py)."""

    def __init__(self, folders, needed: set[str]):
        self.seconds: dict[str, float] = {}
        # A thread per job: jobs that wait for the build must not hold back those that do not.
        self._pool = ThreadPoolExecutor(max_workers=6, thread_name_prefix="background")
        self.book = self.student = self.no_repository = self.python = None
        self.assignments = self.readings = None
        if needed & BUILD_FIXTURES:
            self.book_folder, self.other_folder = (
                folders("book"),
                folders("book-without-repository"),
            )
            self.book = self._start(
                "book", build, "book", self.book_folder, BOOK_REPOSITORY_URL=REPOSITORY_URL
            )
        if "built_student_edition" in needed:
            self.student = self._start(
                "student edition",
                build,
                "student",
                self.book_folder,
                after=self.book,
                BOOK_REPOSITORY_URL=REPOSITORY_URL,
            )
        if "built_book_without_repository" in needed:
            self.no_repository = self._start(
                "book without a repository",
                build,
                "book",
                self.other_folder,
                after=self.book,
                cache=self.book_folder / "_build" / ".jupyter_cache",
                GIT_DIR=str(self.other_folder / "no-git-here"),
            )
        if "page_readings" in needed and CHROMIUM is not None:
            self.readings = self._start(
                "page readings", read_pages, self.book_folder, folders("readings"), after=self.book
            )
        if "graded_assignments" in needed:
            self.assignments = self._start(
                "assignments", build_and_grade, chapters_with_exercises(), folders("assignments")
            )
        if "python_without_attnkit" in needed:
            self.python = self._start(
                "a student's Python", make_python_without_attnkit, folders("student-python")
            )

    def _start(self, name, function, *args, after: Future | None = None, **kwargs) -> Future:
        def job():
            if after is not None:
                after.result()  # a failed build fails what depends on it, with its message
            start = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                self.seconds[name] = time.perf_counter() - start

        return self._pool.submit(job)

    def summary(self) -> str:
        return "prepared in the background: " + ", ".join(
            f"{name} {seconds:.0f} s" for name, seconds in self.seconds.items()
        )

    def close(self):
        self._pool.shutdown(wait=True, cancel_futures=True)
