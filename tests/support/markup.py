"""A built page read as elements and text, with the standard library's HTML parser."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from html.parser import HTMLParser

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "wbr"}


@dataclass(frozen=True)
class Element:
    tag: str
    attrs: dict

    @functools.cached_property
    def classes(self) -> frozenset:
        return frozenset((self.attrs.get("class") or "").split())

    def has_class(self, name):
        return name in self.classes


class _Reader(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.open: list[Element] = []
        self.texts: list[tuple[str, tuple[Element, ...]]] = []
        self.images: list[tuple[Element, tuple[Element, ...]]] = []
        self.elements: list[tuple[Element, tuple[Element, ...]]] = []

    def handle_starttag(self, tag, attrs):
        element = Element(tag, dict(attrs))
        self.elements.append((element, tuple(self.open)))
        if tag == "img":
            self.images.append((element, tuple(self.open)))
        if tag not in VOID:
            self.open.append(element)

    def handle_startendtag(self, tag, attrs):
        element = Element(tag, dict(attrs))
        self.elements.append((element, tuple(self.open)))
        if tag == "img":
            self.images.append((element, tuple(self.open)))

    def handle_endtag(self, tag):
        # close up to the innermost open element of that name (HTML lets some end tags go)
        for depth in range(len(self.open) - 1, -1, -1):
            if self.open[depth].tag == tag:
                del self.open[depth:]
                break

    def handle_data(self, data):
        if data.strip():
            self.texts.append((data, tuple(self.open)))


@functools.lru_cache(maxsize=64)
def read(html: str) -> _Reader:
    """The page's elements, images and pieces of text, in order, each with the elements that
    enclose it. A page is read once a process (the tests only look): several tests read each
    page, and reading is most of their time."""
    reader = _Reader()
    reader.feed(html)
    reader.close()
    return reader
