"""A chapter's MyST Markdown in the edition's language, from the page's catalogue: the text of the
Japanese edition's downloadable notebooks (notebooks.py).

Sphinx translates the page it reads; a notebook is made from the Markdown source, so its prose is
translated here, block by block, with the same catalogue. Each paragraph, heading, list item and
table cell is a message whose id is its Markdown with the lines joined (as Sphinx extracts it:
``node.rawsource``); its translation replaces it in the source, its container's marks (a list's
number, a quotation's ``>``) kept. A directive's title is translated as its message (sphinx-proof's
titles are in brackets), and its body as Markdown in turn. Code, maths, labels and options stay as
they are; text the catalogue lacks stays English, as it would on the page.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from markdown_it import MarkdownIt
from markdown_it.renderer import RendererHTML
from myst_parser.parsers.mdit import create_md_parser

Translate = Callable[[str], str | None]
OPTION = re.compile(r"^:[\w-]+:")
ALT = re.compile(r"^(:alt:\s*)(.+)$")  # a picture's alternative text, a message of its own
# the titles of sphinx-proof's directives are messages in brackets
PROOF_TITLE = "({})"
# sphinx-proof begins a proof's first paragraph with its word for "Proof." in each language
PROOF_WORD = re.compile(r"^(Proof\.|証明。)\s*")


def parser(config) -> MarkdownIt:
    """Markdown as MyST reads it, with the book's extensions (myst_enable_extensions)."""
    return create_md_parser(config, RendererHTML)


def message(text: str) -> str:
    return text.replace("\n", " ").strip()


def translate_title(title: str, translate: Translate) -> str:
    if not title:
        return title
    found = translate(title)
    if found is None:
        bracketed = translate(PROOF_TITLE.format(title))
        if bracketed and bracketed[:1] in "(（" and bracketed[-1:] in ")）":
            found = bracketed[1:-1]
    return found or title


def replace_block(lines: list[str], start: int, end: int, content: str, translated: str) -> None:
    """Lines start..end of a block whose inline text is ``content``: its text replaced by
    ``translated`` on the first line, after whatever marks precede the text there."""
    first = content.split("\n", 1)[0]
    column = lines[start].find(first)
    if column < 0:
        return
    lines[start] = lines[start][:column] + translated + lines[start][column + len(first) :]
    if "\n" in content:  # the text's other lines go: the translation is one line
        last = content.rsplit("\n", 1)[1]
        tail = lines[end - 1]
        rest = tail[tail.rfind(last) + len(last) :] if last in tail else ""
        lines[start] += rest
        del lines[start + 1 : end]


def translate_markdown(text: str, translate: Translate, md: MarkdownIt) -> str:
    """``text`` with every block the catalogue translates (``translate``: the translation of a
    message, or None) replaced by its translation."""
    lines = text.split("\n")
    tokens = md.parse(text)
    edits = []  # (kind, first line, end line, what, translation), made from the bottom up
    for token in tokens:
        if token.type == "inline" and token.map is not None:
            found = translate(message(token.content))
            if found is not None:
                edits.append(("block", token.map[0], token.map[1], token.content, found))
        elif token.type in ("fence", "colon_fence") and token.info.startswith("{"):
            if token.map is None or lines[token.map[0]] != lines[token.map[0]].lstrip():
                continue  # a directive inside a list or quotation stays as it is
            edits.append(("directive", token.map[0], token.map[1], token, None))
    for kind, start, end, item, found in sorted(edits, key=lambda e: -e[1]):
        if kind == "block":
            replace_block(lines, start, end, item, found)
            continue
        token = item
        title = token.info.partition("}")[2]
        opening = lines[start]
        title = title.strip()
        if title and opening.endswith(title):
            opening = opening[: len(opening) - len(title)] + translate_title(title, translate)
        body = token.content.removesuffix("\n").split("\n") if token.content else []
        options = 0
        while options < len(body) and OPTION.match(body[options]):
            options += 1
        for line, option in enumerate(body[:options]):
            alt = ALT.match(option)
            found = alt and translate(alt[2].strip())
            if found:
                body[line] = alt[1] + found
        rest = body[options:]
        translated = translate_markdown("\n".join(rest), translate, md).split("\n") if rest else []
        closed = end - start >= 2 and lines[end - 1].strip().startswith(token.markup[:3])
        closing = [lines[end - 1]] if closed else []
        lines[start:end] = [opening, *body[:options], *translated, *closing]
    return "\n".join(lines)


def proof_aware(translate: Translate) -> Translate:
    """``translate``, also finding a proof's first paragraph, which sphinx-proof's message begins
    with "Proof." (and its translation with the word in the other language)."""

    def find(text: str) -> str | None:
        found = translate(text)
        if found is not None:
            return found
        proved = translate(f"Proof. {text}")
        return PROOF_WORD.sub("", proved) if proved else None

    return find
