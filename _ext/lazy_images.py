"""Pictures below a page's first section load as the reader nears them (``loading="lazy"``),
in a box of their size from the start.

A chapter holds up to a dozen figures, 20 to 40 kB each. Loaded at once, as the browser does
without this attribute, they share a phone's slow network with the page and its style sheet
before anything is shown: on chapter 5, Lighthouse's mobile profile put the largest paint (the
first paragraph) at 3.0 s, and at 1.8 to 2.0 s with the later figures loaded lazily
(benchmarks/lighthouse.py). The figures of a page's first section, before its first
second-level heading, may be on the first screen: they load at once, so that none of them is
late. The page that ``make pdf`` prints (the singlehtml builder) loads every picture at once:
the printed page needs all of them.

Every picture drawn at a set size also gets that size as its ``width`` and ``height``
attributes, from which the browser knows its proportions before it has loaded (the style sheet
scales figures with the column, ``height: auto``): a picture that arrives late moves no text,
and the page has the same layout before and after its pictures arrive.

Relies on docutils' ``HTMLTranslator.visit_image`` writing its ``<img>`` through ``self.emptytag``
(and Sphinx's ``visit_image`` calling it): the size attributes are added there.
(tests/library/test_internals.py fails, naming it, if it moves.)
"""

from __future__ import annotations

import re

from docutils import nodes

LAZY_BUILDERS = frozenset({"html"})
PIXELS = re.compile(r"(\d+(?:\.\d+)?)(?:px)?")


def below_first_section(image: nodes.image) -> bool:
    """Whether the image sits in a section nested in the page's top section (after an h2)."""
    sections = 0
    parent = image.parent
    while parent is not None:
        sections += isinstance(parent, nodes.section)
        parent = parent.parent
    return sections > 1


def mark_lazy_images(app, doctree, docname):
    if app.builder.name not in LAZY_BUILDERS:
        return
    for image in doctree.findall(nodes.image):
        if below_first_section(image):
            image["loading"] = "lazy"


def drawn_size(image: nodes.image) -> tuple[str, str] | None:
    """The picture's width and height in CSS pixels, where both are set in pixels."""
    found = [PIXELS.fullmatch(str(image.get(side, ""))) for side in ("width", "height")]
    if "scale" in image or not all(found):
        return None
    return found[0][1], found[1][1]


def visit_image(translator, node):
    """The translator's own visit, whose <img> also carries the drawn size as attributes.
    (docutils builds the tag's attributes inside visit_image: they are added where it writes
    the tag.)"""
    size = drawn_size(node)
    if size is None:
        return type(translator).visit_image(translator, node)
    write_tag = translator.emptytag

    def with_size(element, tagname, suffix="\n", **attributes):
        if tagname == "img":
            attributes["width"], attributes["height"] = size
        return write_tag(element, tagname, suffix, **attributes)

    translator.emptytag = with_size
    try:
        type(translator).visit_image(translator, node)
    finally:
        del translator.emptytag


def setup(app):
    app.connect("doctree-resolved", mark_lazy_images)
    handlers = (visit_image, None)  # the writer's own depart_image
    app.add_node(nodes.image, override=True, html=handlers, singlehtml=handlers)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
