"""Dropdowns written as ``<details>`` (``_ext/dropdown_details.py``): on a one-page project with
the extension, built by Sphinx as the book's pages (html, closed) and as the page that ``make
pdf`` prints (singlehtml, open), a few seconds each. (The built book: tests/book/test_dropdowns.py.)"""

import re

import pytest

from tests.support.sphinx_project import sphinx_build

CONF = """
extensions = ["myst_parser", "sphinx_exercise", "dropdown_details"]
myst_enable_extensions = ["colon_fence"]
"""
PAGE = """# Dropdowns

```{exercise} Shapes
:label: ex-shapes

What shape is it?
```

```{solution} ex-shapes
:class: dropdown

A matrix of three rows.
```

```{solution-start} ex-shapes
:class: dropdown
```
The gated solution's text.
```{solution-end}
```

:::{admonition} Answers to "Predict first"
:class: dropdown
The first answer.
:::

:::{note}
:class: dropdown
A note that opens.
:::

```{solution} ex-shapes
A solution shown as it is.
```

:::{admonition} Shown too
Not a dropdown.
:::
"""
# (start tag, summary's text, content) of each dropdown, as the book's pages write it
DETAILS = re.compile(
    r'(<details class="[^"]*"[^>]*>)\s*<summary class="admonition-title">(.*?)'
    r'<span class="dropdown-chevron" aria-hidden="true"></span></summary>(.*?)</details>',
    re.S,
)


def text(html):
    return " ".join(re.sub(r"<[^>]+>", " ", html).split())


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """{builder: the page's HTML} for the book's builder and the one-page build's."""
    source = tmp_path_factory.mktemp("dropdowns")
    (source / "conf.py").write_text(CONF, encoding="utf-8")
    (source / "index.md").write_text(PAGE, encoding="utf-8")
    pages = {}
    for builder in ("html", "singlehtml"):
        sphinx_build(source, builder, source.parent / builder)
        pages[builder] = (source.parent / builder / "index.html").read_text(encoding="utf-8")
    return pages


def test_each_dropdown_is_a_closed_details_titled_by_its_summary(built):
    found = DETAILS.findall(built["html"])
    assert [(text(title), text(content)) for _, title, content in found] == [
        ("Solution to Exercise 1 (Shapes)", "A matrix of three rows."),
        ("Solution to Exercise 1 (Shapes)", "The gated solution’s text."),
        ("Answers to “Predict first”", "The first answer."),
        ("Note", "A note that opens."),
    ]
    # the summary opens the box: the solution's link to its exercise is text in it
    assert all("<a " not in title for _, title, _ in found)
    starts = [start for start, _, _ in found]
    assert all(" open" not in start for start in starts), starts
    # the admonition's classes kept for the theme's colours and icon, and a solution's anchor
    assert re.match(r'<details class="solution dropdown admonition" id="[\w-]+"', starts[0])
    assert starts[2] == '<details class="dropdown admonition">'
    assert starts[3] == '<details class="dropdown admonition note">'  # as Sphinx's <div>


def test_what_is_no_dropdown_is_written_as_before(built):
    html = built["html"]
    assert html.count("<details") == 4
    for title in ("Solution to", "Shown too"):
        assert re.search(
            rf'<div class="[^"]*admonition"[^>]*>\s*<p class="admonition-title">{title}', html
        )


def test_the_page_that_is_printed_has_them_open(built):
    starts = [start for start, _, _ in DETAILS.findall(built["singlehtml"])]
    assert len(starts) == 4 and all(start.endswith(' open="open">') for start in starts), starts
