"""Shared fixtures: the book, built once per test session from a clean state.

Slow preparations (the builds, a student's fresh Python) start in the background at the
session's start (tests.support.background), and the tests that need none of them run first,
so that the two overlap on two cores.
"""

import pytest
from hypothesis import settings

from tests.support.background import BACKGROUND_FIXTURES, BUILD_FIXTURES, Background
from tests.support.browser import require_chromium

# Property tests share the CPU with the builds: an example's time says nothing about its result.
settings.register_profile("shared-cpu", deadline=None)
settings.load_profile("shared-cpu")

BACKGROUND = pytest.StashKey[Background]()


def pytest_collection_modifyitems(items):
    """Tests that need no background work first, then those that need only the quick jobs (a
    student's Python), then those that wait for a build, then those that wait for the graded
    assignments, which run at low priority (a stable sort keeps each group's order)."""

    def waits_for(item):
        needs = set(item.fixturenames)
        if "graded_assignments" in needs:
            return 3
        return 2 if needs & BUILD_FIXTURES else 1 if needs & BACKGROUND_FIXTURES else 0

    items.sort(key=waits_for)


def pytest_terminal_summary(terminalreporter, config):
    if BACKGROUND in config.stash and config.stash[BACKGROUND].seconds:
        terminalreporter.write_line(config.stash[BACKGROUND].summary())


@pytest.fixture(scope="session", autouse=True)
def background(request, tmp_path_factory):
    """Starts, before the first test, what the collected tests will need."""
    needed = set().union(*(item.fixturenames for item in request.session.items))
    work = Background(tmp_path_factory.mktemp, needed & BACKGROUND_FIXTURES)
    request.config.stash[BACKGROUND] = work
    yield work
    work.close()


@pytest.fixture(scope="session")
def built_book(background):
    """The book built with the README's command into a fresh folder, for REPOSITORY_URL.

    The folder is new, so every notebook is executed (no cache) and the build is clean.
    Returns the html folder and the build's log.
    """
    return background.book_folder / "_build" / "html", background.book.result()


@pytest.fixture(scope="session")
def built_student_edition(background):
    """The student edition (``make student``) beside the normal build; its html folder."""
    background.student.result()
    return background.book_folder / "_build" / "student"


@pytest.fixture(scope="session")
def built_pages_with_and_without_repository(background):
    """Chapter 1's page built alone with the made-up repository URL, and where none can be found
    (no variable, no git checkout): {"with": (html folder, log), "without": (...)}."""
    return background.pages.result()


@pytest.fixture(scope="session")
def python_without_attnkit(background):
    """The python of a fresh environment with Jupyter's kernel and nothing of the book."""
    return background.python.result()


@pytest.fixture(scope="session")
def graded_assignments(background):
    """Every chapter's Otter-Grader assignment, built and graded (tests.support.grading.Graded)."""
    return background.assignments.result()


@pytest.fixture(scope="session")
def page_readings(background):
    """Every page read in a browser: ({"width mode page": reading}, the screenshots' folder)."""
    require_chromium()
    return background.readings.result()
