"""Shared fixtures: the book, built once per test session from a clean state.

The normal edition is built first, with every notebook executed; the other builds (the student
edition, a build without a repository URL) reuse its execution cache, as `make student` does.
"""

import os
import subprocess
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# A made-up repository: the launch buttons and install cells must follow whatever is set.
REPOSITORY_URL = "https://github.com/example-owner/example-book"
REPOSITORY_VARIABLES = ["BOOK_REPOSITORY_URL", "BOOK_BRANCH", "GITHUB_ACTIONS", "GITHUB_REPOSITORY",
                        "GITHUB_SERVER_URL", "GITHUB_REF_NAME", "GITHUB_HEAD_REF"]


def build(target: str, out: Path, cache: Path | None = None, **environment) -> str:
    """Run ``make <target> OUT=<out>``; return its log, failing the test if the build fails."""
    env = {k: v for k, v in os.environ.items() if k not in REPOSITORY_VARIABLES} | environment
    command = ["make", "--no-print-directory", target, f"OUT={out}"]
    if cache is not None:
        command.append(f"CACHE={cache}")
    start = time.perf_counter()
    result = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)
    log = result.stdout + result.stderr
    (out / f"{target}.log").write_text(log)
    assert result.returncode == 0, f"make {target} failed (log in {out}):\n{log[-6000:]}"
    print(f"\nmake {target}: {time.perf_counter() - start:.1f} s")
    return log


@pytest.fixture(scope="session")
def book_folder(tmp_path_factory):
    return tmp_path_factory.mktemp("book")


@pytest.fixture(scope="session")
def built_book(book_folder):
    """The book built with the README's command into a fresh folder, for REPOSITORY_URL.

    The folder is new, so every notebook is executed (no cache) and the build is clean.
    Returns the html folder and the build's log.
    """
    log = build("book", book_folder, BOOK_REPOSITORY_URL=REPOSITORY_URL)
    return book_folder / "_build" / "html", log


@pytest.fixture(scope="session")
def built_student_edition(built_book, book_folder):
    """The student edition (``make student``) beside the normal build; its html folder."""
    build("student", book_folder, BOOK_REPOSITORY_URL=REPOSITORY_URL)
    return book_folder / "_build" / "student"


@pytest.fixture(scope="session")
def built_book_without_repository(built_book, book_folder, tmp_path_factory):
    """The book built where no repository URL can be found: no variable, no git checkout."""
    out = tmp_path_factory.mktemp("book-without-repository")
    log = build("book", out, cache=book_folder / "_build" / ".jupyter_cache",
                GIT_DIR=str(out / "no-git-here"))
    return out / "_build" / "html", log
