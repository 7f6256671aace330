"""The line a coding exercise's stub raises until the student replaces it, in the student's
language.

The chapters write it in English (``raise NotImplementedError("replace this line with your
code")``); the Japanese edition's notebooks and pages show it in Japanese (``_ext/notebooks.py``,
``_ext/translated_verdicts.py``), and a check that quotes it in a verdict quotes it as a message,
which the book's Japanese pages write again in Japanese although the cell ran in English.
"""

from __future__ import annotations

from .wording import Message, _, catalogue

STUB = "replace this line with your code"  # as the chapters' stubs raise it
ERROR = "NotImplementedError"


def message() -> Message:
    """The stub's words in the student's language."""
    return _("replace this line with your code")


def words(code: str) -> str:
    """The stub's words in the language ``code``."""
    return catalogue(code).gettext(STUB)


def stub_line(code: str) -> str:
    """The stub's line in the language ``code``."""
    return f'raise {ERROR}("{words(code)}")'


def in_language(source: str, code: str) -> str:
    """``source`` with each stub's line in it written in the language ``code``."""
    return source.replace(stub_line("en"), stub_line(code))


def quoted(error: str, languages: tuple[str, ...] = ("en", "ja")) -> Message | str:
    """What a function raised (``"NotImplementedError: ..."``), as a message if it is the stub's
    in any of ``languages``, so that a verdict can write it in another."""
    stubs = {f"{ERROR}: {words(code)}" for code in languages}
    return f"{ERROR}: " + message() if error in stubs else error
