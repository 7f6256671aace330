"""Shared fixtures: the book, built once per test session from a clean state.

The builds start in the background at the session's start (tests.support.builds), and the tests
that need no build run first, so that the two overlap on two cores.
"""

import pytest
from hypothesis import settings

from tests.support.builds import BUILD_FIXTURES, BackgroundBuilds

# Property tests share the CPU with the builds: an example's time says nothing about its result.
settings.register_profile("shared-cpu", deadline=None)
settings.load_profile("shared-cpu")

BUILDS = pytest.StashKey[BackgroundBuilds]()


def pytest_collection_modifyitems(items):
    """Tests that need no build first (a stable sort keeps the files' order in each group)."""
    items.sort(key=lambda item: bool(BUILD_FIXTURES & set(item.fixturenames)))


def pytest_terminal_summary(terminalreporter, config):
    if BUILDS in config.stash:
        terminalreporter.write_line(config.stash[BUILDS].summary())


@pytest.fixture(scope="session", autouse=True)
def background_builds(request, tmp_path_factory):
    """Starts the builds before the first test, if any collected test needs one."""
    if not any(BUILD_FIXTURES & set(item.fixturenames) for item in request.session.items):
        yield None
        return
    builds = BackgroundBuilds(tmp_path_factory.mktemp("book"),
                              tmp_path_factory.mktemp("book-without-repository"))
    request.config.stash[BUILDS] = builds
    yield builds
    builds.close()


@pytest.fixture(scope="session")
def built_book(background_builds):
    """The book built with the README's command into a fresh folder, for REPOSITORY_URL.

    The folder is new, so every notebook is executed (no cache) and the build is clean.
    Returns the html folder and the build's log.
    """
    return background_builds.book / "_build" / "html", background_builds.normal.result()


@pytest.fixture(scope="session")
def built_student_edition(background_builds):
    """The student edition (``make student``) beside the normal build; its html folder."""
    background_builds.student.result()
    return background_builds.book / "_build" / "student"


@pytest.fixture(scope="session")
def built_book_without_repository(background_builds):
    """The book built where no repository URL can be found: no variable, no git checkout."""
    return (background_builds.without_repository / "_build" / "html",
            background_builds.no_repository.result())
