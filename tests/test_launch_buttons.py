"""Launch buttons: the repository comes from the build environment, every chapter page opens in
Binder and Colab, and the notebook a Colab button names is the one the publish workflow pushes."""

import re
import subprocess
import sys

import pytest

from tests.support.book import REPOSITORY_URL, ROOT, load_extension, page, toc_files

CHAPTER_PAGES = [name for name in toc_files() if name.startswith("chapters/")]
OTHER_PAGES = [name for name in toc_files() if not name.startswith("chapters/")]
LAUNCH_LINK = re.compile(
    r'href="(https://(?:mybinder\.org/v2|colab\.research\.google\.com/github)/[^"]*)"'
)


find_repository = load_extension("launch_buttons").find_repository


@pytest.mark.parametrize(
    "environ, origin, expected",
    [
        (
            {"BOOK_REPOSITORY_URL": "https://github.com/a/b"},
            None,
            ("https://github.com/a/b", "main", "a/b"),
        ),
        (
            {"BOOK_REPOSITORY_URL": "https://github.com/a/b/", "BOOK_BRANCH": "dev"},
            "git@github.com:c/d.git",
            ("https://github.com/a/b", "dev", "a/b"),
        ),
        (
            {"BOOK_REPOSITORY_URL": "https://gitlab.com/a/b"},
            None,
            ("https://gitlab.com/a/b", "main", None),
        ),
        (
            {
                "GITHUB_ACTIONS": "true",
                "GITHUB_SERVER_URL": "https://github.com",
                "GITHUB_REPOSITORY": "fork/book",
                "GITHUB_REF_NAME": "main",
            },
            None,
            ("https://github.com/fork/book", "main", "fork/book"),
        ),
        (
            {
                "GITHUB_ACTIONS": "true",
                "GITHUB_REPOSITORY": "fork/book",
                "GITHUB_REF_NAME": "7/merge",
                "GITHUB_HEAD_REF": "topic",
            },
            None,
            ("https://github.com/fork/book", "topic", "fork/book"),
        ),
        (
            {
                "GITHUB_ACTIONS": "true",
                "GITHUB_REPOSITORY": "fork/book",
                "GITHUB_REF_NAME": "main",
                "BOOK_REPOSITORY_URL": "https://github.com/a/b",
            },
            None,
            ("https://github.com/a/b", "main", "a/b"),
        ),
        ({}, "https://github.com/o/n.git", ("https://github.com/o/n", "main", "o/n")),
        ({}, "git@github.com:o/n.git", ("https://github.com/o/n", "main", "o/n")),
        (
            {},
            "ssh://git@github.com/o/my.book",
            ("https://github.com/o/my.book", "main", "o/my.book"),
        ),
        (
            {"BOOK_BRANCH": "dev"},
            "https://github.com/o/n",
            ("https://github.com/o/n", "dev", "o/n"),
        ),
        ({}, "/home/me/attention-book", None),
        ({}, "https://example.org/o/n.git", None),
        ({}, None, None),
    ],
)
def test_repository_is_found_in_the_documented_order(environ, origin, expected):
    found = find_repository(environ, origin)
    assert (found and (found["url"], found["branch"], found["github"])) == expected


@pytest.mark.build
@pytest.mark.parametrize("name", CHAPTER_PAGES)
def test_every_chapter_opens_in_binder_and_colab(built_book, name):
    links = LAUNCH_LINK.findall(page(built_book[0], name))
    github = REPOSITORY_URL.removeprefix("https://github.com/")
    assert sorted(set(links)) == [
        f"https://colab.research.google.com/github/{github}/blob/notebooks/{name}.ipynb",
        f"https://mybinder.org/v2/gh/{github}/main?urlpath=lab/tree/{name}.md",
    ]
    assert (ROOT / f"{name}.md").is_file()  # what the Binder link opens exists in the repository


@pytest.mark.build
@pytest.mark.parametrize("name", OTHER_PAGES)
def test_pages_that_are_not_notebooks_have_no_launch_buttons(built_book, name):
    assert LAUNCH_LINK.findall(page(built_book[0], name)) == []


@pytest.mark.build
def test_no_repository_means_no_launch_buttons_and_one_line_in_the_log(
    built_book_without_repository,
):
    html_dir, log = built_book_without_repository
    for name in toc_files():
        assert LAUNCH_LINK.findall(page(html_dir, name)) == [], name
    assert len(re.findall(r"^launch buttons: no repository URL", log, re.M)) == 1


@pytest.mark.build
def test_no_page_carries_a_thebe_configuration(built_book):
    for path in built_book[0].rglob("*.html"):
        html = path.read_text(encoding="utf-8")
        assert "thebe" not in html.lower() and "binder-examples" not in html, path


@pytest.mark.build
def test_colab_opens_the_notebook_the_publish_step_pushes(built_book, tmp_path):
    """Run the workflow's publish step against a local bare repository, then follow each link."""
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "--quiet", "--bare", str(remote)], check=True)
    checkout = tmp_path / "checkout"
    subprocess.run(["git", "init", "--quiet", str(checkout)], check=True)
    subprocess.run(
        [
            sys.executable,
            str(ROOT / "_ext" / "publish_notebooks.py"),
            str(built_book[0]),
            "--remote",
            str(remote),
        ],
        cwd=checkout,
        check=True,
    )
    for name in CHAPTER_PAGES:
        (colab,) = [u for u in LAUNCH_LINK.findall(page(built_book[0], name)) if "colab" in u]
        branch, path = re.fullmatch(r".*/blob/([^/]+)/(.+)", colab).groups()
        published = subprocess.run(
            ["git", "--git-dir", str(remote), "show", f"{branch}:{path}"],
            capture_output=True,
            check=True,
        ).stdout
        assert published == (built_book[0] / "_sources" / path).read_bytes()
