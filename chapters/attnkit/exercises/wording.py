"""The words of the checks' messages, in the language the student reads.

Every message a check writes is an English template given to :func:`_`, which looks it up in the
catalogue of the language that the environment variable ``ATTNKIT_LANGUAGE`` names (``ja``:
Japanese; unset or unknown: English) and then fills in its ``{fields}``. A Japanese chapter
notebook sets the variable in its set-up cell; a grader may set it too. It is read at every
message, so it can be changed while a kernel runs.

The catalogues are gettext ``.po`` files beside this module,
``locales/<language>/LC_MESSAGES/checks.po``, extracted and updated with the book's own
(``make catalogues``). An entry that is untranslated or marked fuzzy reads in English. They are
read here with no library beyond Python's, since attnkit is installed on its own.
"""

from __future__ import annotations

import ast
import functools
import os
from pathlib import Path

LANGUAGE_VARIABLE = "ATTNKIT_LANGUAGE"
LOCALES = Path(__file__).resolve().parent / "locales"
DOMAIN = "checks"


def language() -> str:
    """The language of the checks' messages: ``ja`` or ``en`` (``ja_JP.UTF-8`` reads ``ja``)."""
    code = os.environ.get(LANGUAGE_VARIABLE, "").split(".")[0].split("_")[0].lower()
    return code if (LOCALES / code / "LC_MESSAGES" / f"{DOMAIN}.po").is_file() else "en"


def read_po(text: str) -> dict[str, str]:
    """The translated entries of a ``.po`` file's ``text``, ``msgid: msgstr``; fuzzy entries,
    empty ones and the header are left out."""
    entries: dict[str, str] = {}
    fields: dict[str, str] = {}
    field = None
    fuzzy = False

    def finish():
        if fields.get("msgid") and fields.get("msgstr") and not fuzzy:
            entries[fields["msgid"]] = fields["msgstr"]

    for line in [*text.splitlines(), ""]:
        line = line.strip()
        if not line:
            finish()
            fields, field, fuzzy = {}, None, False
        elif line.startswith("#,"):
            fuzzy = fuzzy or "fuzzy" in (flag.strip() for flag in line[2:].split(","))
        elif line.startswith("#"):
            continue
        elif line.startswith('"'):
            fields[field] += ast.literal_eval(line)
        else:
            field, _space, quoted = line.partition(" ")
            fields[field] = ast.literal_eval(quoted)
    return entries


@functools.cache
def catalogue(code: str) -> dict[str, str]:
    """The catalogue of the language ``code``; English has none."""
    path = LOCALES / code / "LC_MESSAGES" / f"{DOMAIN}.po"
    return read_po(path.read_text(encoding="utf-8")) if path.is_file() else {}


def _(message: str, **fields) -> str:
    """``message`` in the student's language, its ``{fields}`` filled in."""
    return catalogue(language()).get(message, message).format(**fields)
