"""The MyST directives of a Markdown text, read by the parser that reads the book.

myst-parser's markdown-it, with the book's ``colon_fence`` extension, finds every top-level
fenced directive (```` ```{name} ```` or ``:::{name}``) as Sphinx will: a fence inside another
fence, or inside a code block, is not one. The student edition cuts its solutions by these
(``_ext/student_edition.py``), the assignments take their exercises from them (``assignments``), and
the tests count them. This module imports nothing of Sphinx.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

NAME = re.compile(r"^\{(?P<name>[\w-]+)\}[ \t]*(?P<argument>.*)$")
OPTION = re.compile(r"^:(?P<key>[\w-]+):[ \t]*(?P<value>.*)$")


@dataclass(frozen=True)
class Directive:
    """A directive: its name, argument, ``:key: value`` options, the body after them, and the
    lines it spans, ``start`` (its opening fence) to ``end`` (after its closing fence)."""

    name: str
    argument: str
    options: dict
    body: str
    start: int
    end: int


@functools.cache
def _parser():
    from markdown_it.renderer import RendererHTML
    from myst_parser.config.main import MdParserConfig
    from myst_parser.parsers.mdit import create_md_parser

    return create_md_parser(MdParserConfig(enable_extensions={"colon_fence"}), RendererHTML)


def directives(text: str) -> list[Directive]:
    """Every top-level directive of the MyST Markdown ``text``, in order."""
    found = []
    for token in _parser().parse(text):
        named = NAME.match(token.info.strip()) if token.type in ("fence", "colon_fence") else None
        if named is None or token.level != 0 or token.map is None:
            continue
        lines = token.content.splitlines()
        options = {}
        while lines and (option := OPTION.match(lines[0])):
            options[option["key"]] = option["value"].strip()
            lines = lines[1:]
        found.append(
            Directive(
                named["name"],
                named["argument"].strip(),
                options,
                "\n".join(lines).strip(),
                *token.map,
            )
        )
    return found
