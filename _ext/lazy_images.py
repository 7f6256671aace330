"""Pictures below a page's first section load as the reader nears them (``loading="lazy"``).

A chapter holds up to a dozen figures, 20 to 40 kB each. Loaded at once, as the browser does
without this attribute, they share a phone's slow network with the page and its style sheet
before anything is shown: on chapter 5, Lighthouse's mobile profile put the largest paint (the
first paragraph) at 3.0 s, and at 1.8 to 2.0 s with the later figures loaded lazily
(benchmarks/lighthouse.py). The figures of a page's first section, before its first
second-level heading, may be on the first screen: they load at once, so that none of them is
late or moves the text when it arrives. The page that ``make pdf`` prints (the singlehtml
builder) loads every picture at once: the printed page needs all of them.
"""

from __future__ import annotations

from docutils import nodes

LAZY_BUILDERS = frozenset({"html"})


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


def setup(app):
    app.connect("doctree-resolved", mark_lazy_images)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
