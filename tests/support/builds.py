"""The session's builds of the book, run in the background from the session's start.

A clean build executes every notebook and takes about a minute; on two cores it can run while
the tests that need no build do, instead of before them. The normal build comes first; the
student edition and a build without a repository URL then run side by side, both reusing its
execution cache, as ``make student`` does.
"""

import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from tests.support.book import REPOSITORY_URL, build

# The fixtures that wait for a build: tests that use one run after all the others.
BUILD_FIXTURES = frozenset({"built_book", "built_student_edition", "built_book_without_repository"})


class BackgroundBuilds:
    """Starts the three builds on creation; each attribute is a future of that build's log."""

    def __init__(self, book: Path, without_repository: Path):
        self.book, self.without_repository = book, without_repository
        self.seconds: dict[str, float] = {}
        self._pool = ThreadPoolExecutor(max_workers=3, thread_name_prefix="build")
        self.normal = self._pool.submit(self._timed, "book", "book", book,
                                        BOOK_REPOSITORY_URL=REPOSITORY_URL)
        self.student = self._pool.submit(self._after_normal, "student edition", "student", book,
                                         BOOK_REPOSITORY_URL=REPOSITORY_URL)
        self.no_repository = self._pool.submit(
            self._after_normal, "book without a repository", "book", without_repository,
            cache=book / "_build" / ".jupyter_cache", GIT_DIR=str(without_repository / "no-git-here"))

    def _timed(self, name, *args, **kwargs) -> str:
        start = time.perf_counter()
        try:
            return build(*args, **kwargs)
        finally:
            self.seconds[name] = time.perf_counter() - start

    def _after_normal(self, name, *args, **kwargs) -> str:
        self.normal.result()   # a failed normal build fails the others with its own message
        return self._timed(name, *args, **kwargs)

    def summary(self) -> str:
        return "builds in the background: " + ", ".join(
            f"{name} {seconds:.0f} s" for name, seconds in self.seconds.items())

    def close(self):
        self._pool.shutdown(wait=True, cancel_futures=True)
