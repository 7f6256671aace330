"""Every page of the book says what it teaches in its front matter, in the sentence search engines
show under its title and chat programs under a shared link (``<meta name="description">`` and
``og:description``, _ext/open_graph.py), and the link's card carries the site's own address. (In
the built pages: tests/book/test_page_markup.py.)

The description sits under ``myst: html_meta:`` (MyST's place for it; a top-level ``html_meta``
is deprecated and warns), is written from the page's learning goals, fits a search result (at
most 160 characters) and is plain text. It is not the page's first paragraph, which often
says where the page comes from rather than what a reader will learn.
"""

import re

import open_graph
import pytest
import yaml

from tests.support.book import REPOSITORY_URL, ROOT, SITE_URL, toc_files

FRONT_MATTER = re.compile(r"^---\n(.*?)\n---\n", re.S)
MIN_LENGTH, MAX_LENGTH = 70, 160
# Markup has no place in a meta tag's plain text: roles, math, inline code, emphasis, links.
MARKUP = re.compile(r"[{}$`*_\[\]<>]|\\[a-z]")
COPIED_WORDS = 6  # that many words in a row, taken from the first paragraph, make a copy


def front_matter(text: str) -> dict:
    found = FRONT_MATTER.match(text)
    return (yaml.safe_load(found[1]) or {}) if found else {}


def description(name: str) -> str | None:
    meta = front_matter((ROOT / f"{name}.md").read_text(encoding="utf-8"))
    return ((meta.get("myst") or {}).get("html_meta") or {}).get("description")


def first_paragraph(text: str) -> str:
    """The first paragraph of prose after the page's title (labels, front matter skipped)."""
    body = FRONT_MATTER.sub("", text, count=1)
    after_title = body.split("\n# ", 1)[-1] if not body.startswith("# ") else body[2:]
    blocks = re.split(r"\n\s*\n", after_title.split("\n", 1)[1])
    prose = [b for b in blocks if b.strip() and not re.match(r"\s*([#:`|(]|\{|-{3})", b)]
    return prose[0].strip()


def words(text: str) -> list[str]:
    return re.findall(r"[\w']+", text.lower())


def longest_shared_run(a: list[str], b: list[str]) -> int:
    """The length of the longest run of words that ``a`` and ``b`` have in common."""
    best, previous = 0, [0] * (len(b) + 1)
    for word in a:
        current = [0] * (len(b) + 1)
        for j, other in enumerate(b, start=1):
            if word == other:
                current[j] = previous[j - 1] + 1
                best = max(best, current[j])
        previous = current
    return best


@pytest.mark.parametrize("name", toc_files())
def test_every_page_describes_itself_in_its_front_matter(name):
    text = (ROOT / f"{name}.md").read_text(encoding="utf-8")
    assert "html_meta" not in front_matter(text), "put html_meta under myst: (top level warns)"
    found = description(name)
    assert isinstance(found, str) and found.strip(), (
        f"{name}.md: no description; add to its front matter, from its learning goals,\n"
        "myst:\n  html_meta:\n    description: >-\n      What a reader learns here ..."
    )
    assert MIN_LENGTH <= len(found) <= MAX_LENGTH, (
        f"{name}.md: the description has {len(found)} characters, not {MIN_LENGTH} to "
        f"{MAX_LENGTH}: {found!r}"
    )
    assert found == " ".join(found.split()), "one line of text: no doubled or trailing spaces"
    assert not MARKUP.search(found), f"{name}.md: markup in the description: {found!r}"


@pytest.mark.parametrize("name", toc_files())
def test_no_description_copies_the_first_paragraph(name):
    found = description(name)
    if not found:
        pytest.skip("no description (the test above fails)")
    paragraph = first_paragraph((ROOT / f"{name}.md").read_text(encoding="utf-8"))
    run = longest_shared_run(words(found), words(paragraph))
    assert run < COPIED_WORDS, (
        f"{name}.md: the description repeats {run} words in a row of the first paragraph; "
        f"write it from the learning goals instead.\n{found}\n---\n{paragraph}"
    )


def test_descriptions_differ_from_page_to_page():
    found = [description(name) for name in toc_files()]
    found = [text for text in found if text]
    assert len(set(found)) == len(found)


def test_the_first_paragraph_is_found():
    """The helper above reads what a reader reads first, not a label or a directive."""
    assert first_paragraph((ROOT / "intro.md").read_text()).startswith("This book teaches")
    assert first_paragraph((ROOT / "appendix/errata.md").read_text()).startswith("The book follows")
    assert longest_shared_run(words("a b c d"), words("x b c d y")) == 3


@pytest.mark.parametrize(
    "environ, repository, expected",
    [
        ({"BOOK_SITE_URL": "https://example.org/book"}, None, "https://example.org/book/"),
        (  # the variable wins over the repository's GitHub Pages address
            {"BOOK_SITE_URL": "https://example.org/"},
            {"github": "a/b"},
            "https://example.org/",
        ),
        ({}, {"github": "Some-Owner/a-book"}, "https://some-owner.github.io/a-book/"),
        ({}, {"github": "owner/Owner.github.io"}, "https://owner.github.io/"),  # a user's site
        ({}, {"url": "https://gitlab.com/a/b", "github": None}, ""),
        ({}, None, ""),
    ],
)
def test_the_site_url_comes_from_the_build_environment(environ, repository, expected):
    assert open_graph.site_url(environ, repository) == expected


def test_the_made_up_repository_is_served_from_its_github_pages():
    """What the book wing's build (for REPOSITORY_URL) writes into og:url: SITE_URL."""
    owner, name = REPOSITORY_URL.removeprefix("https://github.com/").split("/")
    assert open_graph.site_url({}, {"github": f"{owner}/{name}"}) == SITE_URL


def test_the_page_description_is_read_from_its_meta_tags():
    tags = '<meta charset="utf-8" />\n<meta content="Say &quot;hi&quot;." name="description" />'
    assert open_graph.meta_description(tags) == 'Say "hi".'
    assert open_graph.meta_description('<meta property="og:description" content="x" />') is None
