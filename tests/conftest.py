"""Shared fixtures. The book wing's read what the Make targets built (tests.support.built):
``make test`` builds it first, and no test builds it."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import settings

from tests.support.book import ROOT, pin
from tests.support.browser import Tabs, launch, require_chromium, serve
from tests.support.built import built, log

# Property tests share the CPU with the builds: an example's time says nothing about its result.
settings.register_profile("shared-cpu", deadline=None)
settings.load_profile("shared-cpu")


# The book's test files whose tests take longest, most of it waiting (for JupyterLab's server, a
# notebook run alone with its installs, a chapter scaffolded and built, traces read in four
# ways), first: make test-site's two workers take files in this order (pytest-xdist's
# --no-loadscope-reorder; it would otherwise take the files with the most tests first, and
# leave these, a few long tests each, to one worker at the end).
FIRST = ["test_trace_drawing.py", "test_jupyterlab.py", "test_notebooks.py", "test_new_chapter.py"]


def pytest_collection_modifyitems(items):
    """The files of FIRST before the others, each file's tests in their own order."""
    first = {name: rank for rank, name in enumerate(FIRST)}
    items.sort(key=lambda item: first.get(item.path.name, len(first)))


@pytest.fixture(scope="session")
def built_book():
    """The book built with the README's command for the made-up REPOSITORY_URL (``make
    book-for-tests``): its html folder and the build's log."""
    return built("book/_build/html", "book-for-tests"), log("book", "book-for-tests")


@pytest.fixture(scope="session")
def built_student_edition():
    """The student edition (``make student``) beside that book; its html folder."""
    return built("book/_build/student", "student-for-tests")


@pytest.fixture
def python_without_attnkit(tmp_path):
    """The python of a new virtual environment like a student's own Jupyter: Jupyter's kernel
    and the scientific stack (what attnkit and Otter-Grader depend on, at the lock's versions),
    but neither attnkit nor Otter, which a notebook's set-up cell must install. The stack comes
    through uv's cache, so that the tests wait on the set-up cell, not on downloads."""
    uv = Path(sys.executable).with_name("uv")  # the book's environment has it (Makefile)
    folder = tmp_path / "student-python"
    subprocess.run(
        [uv, "venv", "--quiet", "--seed", "--python", sys.executable, folder], check=True
    )
    python = folder / "bin" / "python"
    # pip comes with it (--seed): the notebooks' set-up cell installs with pip, as students' do
    uv_pip = [uv, "pip", "--quiet"]
    stack = ["ipykernel", "nbclient", "numpy", "matplotlib", "anywidget", "japanize-matplotlib"]
    lock = ["--constraint", ROOT / "requirements.txt", "--python", python]
    subprocess.run([*uv_pip, "install", *lock, *stack, pin("otter-grader")], check=True)
    subprocess.run([*uv_pip, "uninstall", "--python", python, "otter-grader"], check=True)
    return python


@pytest.fixture(scope="session")
def built_assignments():
    """Every chapter's assignment built with ``make assignments`` (``make
    assignments-for-tests``): the folder of one folder per chapter."""
    return built("class/_build/assignments", "assignments-for-tests")


@pytest.fixture(scope="session")
def graded_assignments():
    """Every chapter's assignment built and a class's notebooks graded (``make
    class-for-tests``): tests.support.grading.Graded."""
    from tests.support.grading import Graded

    return Graded.load(built("class/graded.json", "class-for-tests"))


@pytest.fixture(scope="session")
def page_readings():
    """Every page read in a browser (``make readings-for-tests``): ({"width mode page":
    reading}, the screenshots' folder)."""
    require_chromium()
    found = built("readings/readings.json", "readings-for-tests")
    return json.loads(found.read_text(encoding="utf-8")), found.parent / "screenshots"


@pytest.fixture(scope="session")
def local_clone(tmp_path_factory):
    """The repository, cloned: what `pip install git+URL` fetches, without a network."""
    clone = tmp_path_factory.mktemp("repository") / "clone"
    subprocess.run(["git", "clone", "--quiet", str(ROOT), str(clone)], check=True)
    commit = subprocess.run(
        ["git", "-C", str(clone), "rev-parse", "HEAD"], capture_output=True, text=True, check=True
    ).stdout.strip()
    return f"file://{clone}", commit


@pytest.fixture(scope="session")
def browser():
    """Chromium, started once a test process: each module opens its pages in a context of its
    own (``chromium``, ``site``). A launch costs about 1.3 CPU-s, once a module before."""
    require_chromium()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = launch(playwright)
        yield browser
        browser.close()


@pytest.fixture(scope="module")
def chromium(browser):
    """Tabs of a context of the module's own, for tests that serve pages of their own."""
    tabs = Tabs(browser)  # each test serves its pages on a port, an origin, of its own
    yield tabs
    tabs.context.close()


@pytest.fixture(scope="module")
def site(built_book, browser):
    """The built book served on 127.0.0.1 and tabs of a context of the module's own: (Tabs,
    base URL)."""
    html_dir, _ = built_book
    with serve(html_dir) as base:
        tabs = Tabs(browser, base)
        yield tabs, base
        tabs.context.close()
