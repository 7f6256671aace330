"""What the Japanese edition has not translated yet, page by page (``make untranslated``).

A page's passages that its catalogue (``locales/ja/LC_MESSAGES/<page>.po``) does not translate,
or marks fuzzy, show in English under a notice in the Japanese edition
(``_ext/edition_language.py``), so that a chapter can land before its translation. What was
published stays translated: ``locales/ja/translated.json`` records, by a hash of its English,
each message translated when the edition was last published (``--record``, run by the
publishing workflow), and ``tests/library/test_catalogues.py`` and ``test_check_messages.py``
fail where one of those loses its translation. The publishing workflow (``--strict``, and the
build with ``BOOK_REQUIRE_TRANSLATION=1``) refuses an edition with anything untranslated.
"""

from __future__ import annotations

import json
import os
import sys
import zlib
from pathlib import Path

from babel.messages.pofile import read_po

from booktools import toc

ROOT = toc.ROOT
LOCALE = ROOT / "locales" / "ja" / "LC_MESSAGES"
CHECKS = ROOT / "chapters" / "attnkit" / "exercises" / "locales" / "ja" / "LC_MESSAGES"
RECORD = ROOT / "locales" / "ja" / "translated.json"
# The catalogues of the interface's words, besides one per page.
INTERFACE = ["sphinx", "booktheme", "exercise"]


def strict() -> bool:
    """Whether every message must be translated: the publishing workflow's check."""
    return os.environ.get("BOOK_REQUIRE_TRANSLATION") == "1"


def catalogue_path(name: str) -> Path:
    return CHECKS / "checks.po" if name == "checks" else LOCALE / f"{name}.po"


def catalogues() -> list[str]:
    """Every catalogue: one per page of ``_toc.yml``, the interface's, the checks'."""
    return [*toc.pages(), *INTERFACE, "checks"]


def key(message_id: str) -> str:
    return f"{zlib.crc32(message_id.encode('utf-8')):08x}"


def entries(name: str) -> list | None:
    """The catalogue's messages (babel's), or None where the page has no catalogue yet."""
    path = catalogue_path(name)
    if not path.is_file():
        return None
    with open(path, "rb") as file:
        return [message for message in read_po(file) if message.id]


def translated(message) -> bool:
    return bool(message.string) and not message.fuzzy


def recorded() -> dict[str, set[str]]:
    if not RECORD.is_file():
        return {}
    return {name: set(keys) for name, keys in json.loads(RECORD.read_text("utf-8")).items()}


def lost(name: str) -> list[str]:
    """The messages of ``name`` recorded as translated that no longer are (their English
    start): what the tests refuse."""
    keys = recorded().get(name, set())
    return [m.id[:80] for m in entries(name) or [] if key(m.id) in keys and not translated(m)]


def untranslated(name: str) -> list[str] | None:
    """The messages of ``name`` without a translation, or fuzzy (None: no catalogue)."""
    found = entries(name)
    return None if found is None else [m.id[:80] for m in found if not translated(m)]


def record() -> None:
    """Add every message translated now to the record (none leaves it but by hand)."""
    keys = recorded()
    for name in catalogues():
        for message in entries(name) or []:
            if translated(message):
                keys.setdefault(name, set()).add(key(message.id))
    text = json.dumps({name: sorted(k) for name, k in sorted(keys.items())}, indent=0)
    RECORD.write_text(text + "\n", encoding="utf-8")


def main(argv: list[str]) -> int:
    missing = 0
    for name in catalogues():
        left = untranslated(name)
        if left is None:
            print(f"{name}: no catalogue (make catalogues writes it)")
            missing += 1
        elif left:
            print(f"{name}: {len(left)} untranslated or fuzzy, first {left[0]!r}")
            missing += len(left)
    print(f"{missing} untranslated" if missing else "every page is translated")
    if "--record" in argv and not missing:
        record()
    return 1 if missing and "--strict" in argv else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
