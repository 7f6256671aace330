"""The exercise checks' catalogues compiled (``make catalogues``): each
``chapters/attnkit/exercises/locales/<language>/LC_MESSAGES/checks.po`` into the ``checks.mo``
beside it, which ``attnkit.exercises.wording`` reads with the standard library's ``gettext``.

The ``.mo`` is committed, so that attnkit finds it wherever it goes without a build step: the
book's build and tests, a student's notebook that installed attnkit from the repository (it is
package data), the grader's copy. ``tests/library/test_check_messages.py`` fails while a
committed ``.mo`` is not what compiling its ``.po`` gives. Untranslated and fuzzy entries are
left out, so they read in English.
"""

from __future__ import annotations

import io
from pathlib import Path

from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po

from booktools.toc import ROOT

LOCALES = ROOT / "chapters" / "attnkit" / "exercises" / "locales"


def catalogues() -> list[Path]:
    """Every language's ``checks.po``."""
    return sorted(LOCALES.glob("*/LC_MESSAGES/checks.po"))


def compiled(po: Path) -> bytes:
    """The ``.mo`` of the catalogue ``po``: its translated entries, fuzzy ones left out."""
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
