"""What the Make targets built for the book wing's tests, found where they put it.

``make test-book`` runs the targets first (``make built-for-tests``: the book and the student
edition for a made-up repository, every page read in Chromium, every assignment built and a
class's notebooks graded) into ``BOOK_TESTS_OUT`` (default ``_build/tests``), then the tests,
which read what is there and never build. A test whose build is missing fails and names the
target that makes it.
"""

import os
from pathlib import Path

import pytest

from tests.support.book import ROOT

TESTS_OUT = Path(os.environ.get("BOOK_TESTS_OUT", ROOT / "_build" / "tests"))

# The fixtures of tests/conftest.py that read a build: the library wing takes none of them.
BUILT_FIXTURES = frozenset(
    {
        "built_book",
        "built_student_edition",
        "page_readings",
        "built_assignments",
        "graded_assignments",
    }
)


def built(path: str, target: str) -> Path:
    """``TESTS_OUT/path``, which ``make target`` makes; the test fails if it is not there."""
    found = TESTS_OUT / path
    if not found.exists():
        pytest.fail(f"{found} is missing: `make {target}` builds it (make test runs it)")
    return found


def log(name: str, target: str) -> str:
    """The output of the build that ``make target`` ran, kept in ``TESTS_OUT/name.log``."""
    return built(f"{name}.log", target).read_text(encoding="utf-8")
