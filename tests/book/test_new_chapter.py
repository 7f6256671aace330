"""``make chapter`` on a fresh copy of the repository: the new chapter builds alone, the tests
that enumerate the chapters pass with it, and every list shows it, with no file edited by hand.

The one test file of this wing that builds something itself: a git worktree of the repository's
last commit, beside this one's environment (its .venv and node_modules, linked), with the copy
first on ``sys.path``. ``make page`` runs the new chapter alone into an empty execution cache,
where no repository can be found (no variable names one, git finds no checkout): as a reader
builds a page of a copy that is no clone, so the page has no launch buttons and says why once,
and its notebook says how to install attnkit without one.
"""

import os
import re
import subprocess
import sys

import nbformat
import pytest

from tests.support.book import LAUNCH_LINK, ROOT

SLUG, TITLE = "scaffold-probe", "A chapter from the scaffold"
MODULE = SLUG.replace("-", "_")
# What make must not rebuild in the copy: the environment is this checkout's.
OLD = ["-o", ".venv/installed", "-o", "node_modules/.package-lock.json"]
# The library wing's tests that go through every chapter, and the new chapter's own.
ENUMERATING = [
    f"tests/library/test_{MODULE}.py",
    "tests/library/test_indexes.py",
    "tests/library/test_descriptions.py",
    "tests/library/test_figure_code.py",
    "tests/library/test_catalogues.py",
    "tests/library/test_answers.py",
    "tests/library/test_exercises.py",
    "tests/library/test_grading.py",
]
# Of the two files that try every check many times, only the new chapter's check and the tests
# that go through every chapter (the library wing tries the others).
SELECTED = (
    f"{MODULE} or not (test_answers or test_exercises) or every_check or module or exports"
    " or stub_and_one"
)


# Where no repository can be found: no variable names one, and git finds no checkout.
NO_REPOSITORY = ("BOOK_REPOSITORY_URL", "BOOK_BRANCH", "GITHUB_ACTIONS", "BOOK_SITE_URL")


def run(command, cwd, env):
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True)
    assert done.returncode == 0, f"{' '.join(command)}:\n{done.stdout[-3000:]}{done.stderr[-3000:]}"
    return done.stdout + done.stderr


@pytest.fixture(scope="module")
def copy(tmp_path_factory):
    folder = tmp_path_factory.mktemp("copy") / "book"
    subprocess.run(
        ["git", "worktree", "add", "--detach", str(folder), "HEAD"], cwd=ROOT, check=True
    )
    try:
        for linked in (".venv", "node_modules"):
            (folder / linked).symlink_to(ROOT / linked)
        env = {
            **os.environ,
            "PYTHONPATH": f"{folder}{os.pathsep}{folder / 'chapters'}",
            "PYTHONDONTWRITEBYTECODE": "1",
        }
        yield folder, env
    finally:
        subprocess.run(["git", "worktree", "remove", "--force", str(folder)], cwd=ROOT)


@pytest.fixture(scope="module")
def scaffolded(copy):
    """The copy after ``make chapter``, and the new chapter built alone where no repository can
    be found: (folder, env, the page's html folder, the build's log)."""
    folder, env = copy
    run(["make", *OLD, "chapter", f"SLUG={SLUG}", f"TITLE={TITLE}"], folder, env)
    alone = {key: value for key, value in env.items() if key not in NO_REPOSITORY}
    alone["GIT_DIR"] = str(folder / "no-git-here")
    cache = folder / "_build" / "probe-cache"
    log = run(["make", *OLD, "page", f"PAGE=chapters/{SLUG}.md", f"CACHE={cache}"], folder, alone)
    return folder, env, folder / "_build" / "_page" / SLUG / "html", log


def test_make_chapter_puts_the_chapter_in_every_list(scaffolded):
    folder, env, _, _ = scaffolded
    changed = run(["git", "status", "--porcelain"], folder, env)
    for path in ["README.md", "intro.md", "appendix/for-instructors.md", "_toc.yml"]:
        assert f" M {path}" in changed, f"make chapter left {path} as it was"

    chapters = run([sys.executable, "-m", "booktools.toc"], folder, env).split()
    assert chapters[-1] == f"chapters/{SLUG}", "not the last chapter of _toc.yml"
    readme = (folder / "README.md").read_text(encoding="utf-8")
    assert re.search(rf"^\d+\. \*\*{TITLE}\*\* — ", readme, re.M)
    assert f"**{{ref}}`{SLUG}`**" in (folder / "intro.md").read_text(encoding="utf-8")
    instructors = (folder / "appendix" / "for-instructors.md").read_text(encoding="utf-8")
    assert re.search(rf"^### Chapter \d+: {TITLE}$", instructors, re.M)
    assert f"| {{ref}}`{SLUG}-ex-attend` |" in instructors


def test_the_new_chapter_builds_alone_its_stub_failing_and_its_solution_passing(scaffolded):
    html = (scaffolded[2] / f"{SLUG}.html").read_text("utf-8")
    assert "✗ failed" in html and "✓" in html  # the stub fails quietly, the solution passes


def test_no_repository_means_no_launch_buttons_and_one_line_in_the_log(scaffolded):
    _, _, html_dir, log = scaffolded
    assert LAUNCH_LINK.findall((html_dir / f"{SLUG}.html").read_text("utf-8")) == []
    assert len(re.findall(r"^launch buttons: no repository URL", log, re.M)) == 1


def test_notebook_without_repository_says_how_to_install_attnkit(scaffolded):
    notebook = nbformat.read(scaffolded[2] / "_sources" / f"{SLUG}.ipynb", as_version=4)
    assert 'os.environ.get("BOOK_REPOSITORY_URL", None)' in notebook.cells[0].source
    assert "set BOOK_REPOSITORY_URL" in notebook.cells[0].source


def test_the_library_tests_pass_with_the_new_chapter(scaffolded):
    folder, env, _, _ = scaffolded
    run([sys.executable, "-m", "ruff", "check", "."], folder, env)
    pytest = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-k", SELECTED]
    run([*pytest, *ENUMERATING], folder, env)
