"""A Japanese catalogue of a test's own, written and compiled in the test's folder as ``make
catalogues`` compiles the book's, for the tests of what a compiled catalogue leaves out."""

from __future__ import annotations

from pathlib import Path

from booktools import compiled_catalogues


def compiled_catalogue(folder: Path, domain: str, entries: list[str]) -> Path:
    """``folder/ja/LC_MESSAGES/<domain>.po``, its header then the lines of ``entries``, and the
    ``.mo`` compiled from it; returns ``folder``, where ``gettext`` finds the catalogue."""
    po = folder / "ja" / "LC_MESSAGES" / f"{domain}.po"
    po.parent.mkdir(parents=True)
    po.write_text("\n".join(['msgid ""', 'msgstr "Language: ja\\n"', "", *entries]), "utf-8")
    po.with_suffix(".mo").write_bytes(compiled_catalogues.compiled(po))
    return folder
