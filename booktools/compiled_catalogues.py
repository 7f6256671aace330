"""attnkit's catalogues compiled (``make catalogues``): each language's exercise checks'
messages, ``chapters/attnkit/exercises/locales/<language>/LC_MESSAGES/checks.po``, and figure
labels, ``chapters/attnkit/locales/<language>/LC_MESSAGES/figures.po``, into the ``.mo`` beside
it, which ``attnkit.exercises.wording`` and ``attnkit.figure_text`` read with the standard
library's ``gettext``.

The ``.mo`` is committed, so that attnkit finds it wherever it goes without a build step: the
book's build and tests, a student's notebook that installed attnkit from the repository (it is
package data), the grader's copy. ``tests/library/test_check_messages.py`` fails while a
committed ``.mo`` is not what compiling its ``.po`` gives. Untranslated and fuzzy entries are
left out, so they read in English (and a figure label so left out is one the catalogue lacks).
"""

from __future__ import annotations

import io
from pathlib import Path

from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po

from booktools.toc import ROOT

ATTNKIT = ROOT / "chapters" / "attnkit"
# each catalogue's folder of languages and its domain
DOMAINS = [(ATTNKIT / "exercises" / "locales", "checks"), (ATTNKIT / "locales", "figures")]


def catalogues() -> list[Path]:
    """Every language's ``checks.po`` and ``figures.po``."""
    return sorted(
        po for locales, domain in DOMAINS for po in locales.glob(f"*/LC_MESSAGES/{domain}.po")
    )


def compiled(po: Path) -> bytes:
    """The ``.mo`` of the catalogue ``po``: its translated entries, fuzzy ones left out. (Its
    header names its dates: babel writes the clock's time for one it lacks.)"""
    with open(po, "rb") as file:
        catalogue = read_po(file)
    mo = io.BytesIO()
    write_mo(mo, catalogue, use_fuzzy=False)
    return mo.getvalue()


def main() -> None:
    for po in catalogues():
        po.with_suffix(".mo").write_bytes(compiled(po))
        print(f"compiled {po.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
