"""Pictures below a page's first section load lazily (``_ext/lazy_images.py``): on a one-page
project with the extension, built by Sphinx as the book's pages (html) and as the page that ``make
pdf`` prints (singlehtml), a few seconds each. (The built book: tests/book/test_page_markup.py.)"""

import re

import pytest

from tests.support.sphinx_project import sphinx_build

CONF = """
extensions = ["myst_parser", "lazy_images"]
"""
PAGE = """# Pictures

![The first picture, above every second-level heading](dot.svg)

## A section

![The second picture, in a section](dot.svg)

### A subsection

```{figure} dot.svg
:width: 300px
:height: 150px

The third picture, a figure in a subsection, drawn at a set size.
```
"""
DOT = '<svg xmlns="http://www.w3.org/2000/svg" width="4" height="4"><circle r="2"/></svg>'


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """{builder: the <img> tags of the page, in order}."""
    source = tmp_path_factory.mktemp("pictures")
    (source / "conf.py").write_text(CONF, encoding="utf-8")
    (source / "index.md").write_text(PAGE, encoding="utf-8")
    (source / "dot.svg").write_text(DOT, encoding="utf-8")
    images = {}
    for builder in ("html", "singlehtml"):
        sphinx_build(source, builder, source.parent / builder)
        html = (source.parent / builder / "index.html").read_text(encoding="utf-8")
        images[builder] = re.findall(r"<img [^>]*>", html)
    return images


def test_pictures_after_the_first_heading_load_lazily(built):
    lazy = ['loading="lazy"' in tag for tag in built["html"]]
    assert lazy == [False, True, True], built["html"]


def test_a_picture_drawn_at_a_set_size_has_its_proportions_before_it_loads(built):
    for tags in built.values():
        sized = [' width="300"' in tag and ' height="150"' in tag for tag in tags]
        assert sized == [False, False, True], tags
        assert 'style="width: 300px; height: 150px;"' in tags[2]


def test_the_printed_page_loads_every_picture_at_once(built):
    assert len(built["singlehtml"]) == 3
    assert not any("loading=" in tag for tag in built["singlehtml"]), built["singlehtml"]
