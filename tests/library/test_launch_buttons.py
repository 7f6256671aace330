"""Launch buttons: the repository comes from the build environment, in the documented order, and
neither edition has buttons without a GitHub repository. (In the built pages, and the notebook each
button names: tests/book/test_launch_buttons.py.)"""

from types import SimpleNamespace

import launch_buttons
import pytest

from tests.support.book import (
    REPOSITORY_URL,
)

find_repository = launch_buttons.find_repository


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


@pytest.mark.parametrize("student, language", [(False, None), (True, None), (False, "ja")])
def test_buttons_need_a_github_repository_in_every_edition(student, language):
    def buttons(repository):
        app = SimpleNamespace(
            config=SimpleNamespace(
                book_repository=repository, student_edition=student, language=language
            ),
            env=SimpleNamespace(metadata={"chapters/attention": {"kernelspec": {}}}),
        )
        context = {"header_buttons": []}
        launch_buttons.add_launch_buttons(app, "chapters/attention", "page.html", context, [])
        return [button["text"] for menu in context["header_buttons"] for button in menu["buttons"]]

    assert buttons(None) == []
    assert buttons(find_repository({"BOOK_REPOSITORY_URL": "https://gitlab.com/a/b"}, None)) == []
    assert buttons(find_repository({"BOOK_REPOSITORY_URL": REPOSITORY_URL}, None)) == [
        "Binder",
        "Colab",
    ]
