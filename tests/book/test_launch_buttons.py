"""Launch buttons in the built book: every chapter page opens in Binder and Colab, and the notebook
a button names is the one the publish workflow pushes: the chapter's in the book, its Japanese
notebook in the Japanese edition, its notebook without solutions in the student edition (whose
links tests/book/test_student_edition.py reads)."""

import re
import subprocess
import sys
from html import unescape
from urllib.parse import parse_qs, urlsplit

import launch_buttons
import pytest

from tests.support.book import (
    LAUNCH_LINK,
    REPOSITORY_URL,
    ROOT,
    page,
    toc_files,
)

CHAPTER_PAGES = [name for name in toc_files() if name.startswith("chapters/")]


OTHER_PAGES = [name for name in toc_files() if not name.startswith("chapters/")]


find_repository = launch_buttons.find_repository


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
def test_no_page_carries_a_thebe_configuration(built_book):
    for path in built_book[0].rglob("*.html"):
        html = path.read_text(encoding="utf-8")
        assert "thebe" not in html.lower() and "binder-examples" not in html, path


def opened_notebook(link):
    """The branch and path of the notebook a launch link opens: Colab's from GitHub, the student
    edition's Binder's from what nbgitpuller pulls; None for the book's Binder link, which opens
    the chapter's Markdown (test_every_chapter_opens_in_binder_and_colab)."""
    url = urlsplit(unescape(link))
    if url.netloc == "colab.research.google.com":
        return re.fullmatch(r".*/blob/([^/]+)/(.+)", url.path).groups()
    (urlpath,) = parse_qs(url.query)["urlpath"]
    if urlpath.startswith("lab/tree/"):
        return None
    route, query = urlpath.split("?", 1)
    assert route == "git-pull", link
    pull = {key: value for key, (value,) in parse_qs(query).items()}
    folder = f"lab/tree/{pull['targetpath']}/"  # where nbgitpuller puts the branch
    assert pull["urlpath"].startswith(folder), link
    return pull["branch"], pull["urlpath"].removeprefix(folder)


@pytest.mark.build
def test_every_button_opens_the_notebook_the_publish_step_pushes(
    built_book, built_student_edition, tmp_path
):
    """Run the workflow's publish step against a local bare repository, then follow each link of
    every edition: it opens the notebook that the page itself offers for download."""
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "--quiet", "--bare", str(remote)], check=True)
    checkout = tmp_path / "checkout"
    subprocess.run(["git", "init", "--quiet", str(checkout)], check=True)
    subprocess.run(
        [
            sys.executable,
            "-m",
            "booktools.publish_notebooks",
            str(built_book[0]),
            "--student",
            str(built_student_edition),
            "--remote",
            str(remote),
        ],
        cwd=checkout,
        check=True,
    )
    editions = {
        "book": built_book[0],
        "Japanese edition": built_book[0] / "ja",
        "student edition": built_student_edition,
        "Japanese student edition": built_student_edition / "ja",
    }
    for edition, html_dir in editions.items():
        for name in CHAPTER_PAGES:
            opened = [opened_notebook(link) for link in LAUNCH_LINK.findall(page(html_dir, name))]
            followed = [notebook for notebook in opened if notebook is not None]
            # the book's Binder button opens the chapter's Markdown; the others, notebooks
            assert len(followed) == (1 if edition == "book" else 2), (edition, name)
            for branch, path in followed:
                published = subprocess.run(
                    ["git", "--git-dir", str(remote), "show", f"{branch}:{path}"],
                    capture_output=True,
                    check=True,
                ).stdout
                offered = (html_dir / "_sources" / f"{name}.ipynb").read_bytes()
                assert published == offered, (edition, name, branch, path)
