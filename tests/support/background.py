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
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

from tests.support.book import REPOSITORY_URL, ROOT, build
from tests.support.browser import CHROMIUM

# The fixtures that wait for background work: tests that use one run after all the others.
BUILD_FIXTURES = frozenset(
    {
        "built_book",
        "built_student_edition",
        "built_pages_with_and_without_repository",
        "page_readings",
    }
)
BACKGROUND_FIXTURES = BUILD_FIXTURES | {"python_without_attnkit", "graded_assignments"}


def make_python_without_attnkit(folder: Path) -> Path:
    """A new virtual environment with Jupyter's kernel and nothing of the book, like a student's
    own Jupyter: a downloaded notebook's set-up cell must bring the rest. Returns its python."""
    uv = Path(sys.executable).with_name("uv")  # the book's environment has it (Makefile)
    subprocess.run(
        [uv, "venv", "--quiet", "--seed", "--python", sys.executable, folder], check=True
    )
    python = folder / "bin" / "python"
    # pip comes with it (--seed): the notebooks' set-up cell installs with pip, as students' do
    subprocess.run(
        [uv, "pip", "install", "--quiet", "--python", python, "ipykernel", "nbclient"], check=True
    )
    return python


# The page built with and without a repository: whether a build finds one does not depend on
# how many pages it has, and one page, its cells cached by the book's build, takes seconds.
PAGE = "chapters/attention.md"


def build_pages(folder: Path, cache: Path) -> dict[str, tuple[Path, str]]:
    """:data:`PAGE` built alone with the made-up repository and where none can be found (no
    variable, no git checkout): ``{"with": (html folder, log), "without": ...}``."""
    built = {}
    for kind, environment in [
        ("with", {"BOOK_REPOSITORY_URL": REPOSITORY_URL}),
        ("without", {"GIT_DIR": str(folder / "no-git-here")}),
    ]:
        out = folder / kind
        out.mkdir()
        log = build("page", out, cache=cache, page=PAGE, **environment)
        built[kind] = (out / "_build" / "_page" / Path(PAGE).stem / "html", log)
    return built


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
        self.book = self.student = self.pages = self.python = None
        self.assignments = self.readings = None
        if needed & BUILD_FIXTURES:
            self.book_folder = folders("book")
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
        if "built_pages_with_and_without_repository" in needed:
            self.pages_folder = folders("pages")
            self.pages = self._start(
                "a page with and without a repository",
                build_pages,
                self.pages_folder,
                self.book_folder / "_build" / ".jupyter_cache",
                after=self.book,
            )
        if "page_readings" in needed and CHROMIUM is not None:
            self.readings = self._start(
                "page readings", read_pages, self.book_folder, folders("readings"), after=self.book
            )
        if "graded_assignments" in needed:
            # imported here: the assignments' modules load nbformat, seconds that a session
            # without a graded class (the library wing's) need not spend
            from assignments.build import chapters_with_exercises
            from tests.support.grading import build_and_grade

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
