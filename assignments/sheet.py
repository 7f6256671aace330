"""Text a student controls, made safe for a grade sheet and a terminal.

A check's message may quote what a notebook raised, and a collected file's name is the
student's: either may hold terminal escape sequences, carriage returns, text a spreadsheet runs
as a formula, or millions of characters. :func:`printable` shows every control or invisible
formatting character escaped; :func:`safe_cell` also neutralises formulas as OWASP's CSV-injection
guidance says (a leading ``'``) and keeps within a spreadsheet cell's 32,767 characters.
"""

from __future__ import annotations

import unicodedata

CELL_CHARACTERS = 32_767  # the most a spreadsheet cell holds (Excel, LibreOffice)
# OWASP's characters that make a spreadsheet read a cell as a formula, their full-width forms
# (which some spreadsheets read alike), and a tab or carriage return, escaped by printable().
FORMULA_STARTS = ("=", "+", "-", "@", "\uff1d", "\uff0b", "\uff0d", "\uff20", "\t", "\r")
# control, invisible formatting (bidirectional overrides), surrogates, private use, unassigned,
# line and paragraph separators
UNPRINTABLE = {"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"}


def printable(text: str) -> str:
    """``text`` with every unprintable character written as its Python escape (``\\x1b``)."""
    if text.isprintable():
        return text
    return "".join(
        c if unicodedata.category(c) not in UNPRINTABLE else ascii(c)[1:-1] for c in text
    )


def cut(text: str, limit: int, where: str) -> str:
    """``text`` within ``limit`` characters; when it is longer, its start and a note that says
    how long it was and ``where`` the whole is."""
    if len(text) <= limit:
        return text
    note = f" … [cut: {len(text):,} characters in all; {where}]"
    return text[: max(limit - len(note), 0)] + note


def safe_cell(value) -> str:
    """``value`` as one safe cell: printable, no formula, within a cell's size."""
    text = printable(str(value))
    if text.startswith(FORMULA_STARTS):
        text = "'" + text
    return cut(text, CELL_CHARACTERS, "the rest is not kept")
