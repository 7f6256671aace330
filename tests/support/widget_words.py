"""The words of the book's widgets: each front end's table WORDS, {"en": {...}, "ja": {...}}, as
Node reads it, and what the tests ask of them (tests/library/test_widget_words.py,
tests/book/test_widget_words.py)."""

from __future__ import annotations

import re
from pathlib import Path

from tests.support.book import ROOT
from tests.support.node import module_runner

FRONT_ENDS = {
    "heatmap": ROOT / "chapters" / "attnkit" / "heatmap.js",
    "kv_calculator": ROOT / "chapters" / "attnkit" / "kv_calculator.js",
    "scrubber": ROOT / "chapters" / "attnkit" / "scrubber.js",
}
PLACEHOLDER = re.compile(r"\{(\w+)\}")
WORD = re.compile(r"[A-Za-z]{2,}")  # an English word; single letters are math (h, g, d_k, q[0])
JAPANESE = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]")
# The only Latin words the Japanese tables use: a key's name and units, as Japanese writes them
KEPT_IN_JAPANESE = {"enter", "float", "gib", "kv"}


def read_words(source: Path, folder: Path) -> dict:
    """The table WORDS of the front end ``source``, read in Node (skips where Node is missing)."""
    return module_runner(source, folder)("(m) => m.WORDS")


def flat(table: dict, prefix: str = "") -> dict[str, str]:
    """A nested table as {"inputs.layers": "layers", ...}."""
    found = {}
    for key, value in table.items():
        if isinstance(value, dict):
            found |= flat(value, f"{prefix}{key}.")
        else:
            found[prefix + key] = value
    return found


def placeholders(text: str) -> set[str]:
    return set(PLACEHOLDER.findall(text))


def ascii_words(text: str) -> set[str]:
    """The English-looking words of ``text``, lower case, its placeholders left out."""
    return {word.lower() for word in WORD.findall(PLACEHOLDER.sub(" ", text))}


def english_words(words: dict) -> set[str]:
    """The words of the English table, but those that Japanese keeps too: none of them may show
    on a Japanese page."""
    return set().union(*map(ascii_words, flat(words["en"]).values())) - KEPT_IN_JAPANESE


def fill(text: str, **values) -> str:
    """``text`` of a table with its placeholders filled in, as the front ends' ``say`` does."""
    return PLACEHOLDER.sub(lambda found: str(values[found[1]]), text)
