"""Shared fixtures: the book, built once per test session from a clean state.

The normal edition is built first, with every notebook executed; the other builds (the student
edition, a build without a repository URL) reuse its execution cache, as `make student` does.
"""

import pytest

from tests.support.book import REPOSITORY_URL, build


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
