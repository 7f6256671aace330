"""The words of the checks' messages, in the language the student reads.

Every message a check writes is an English template given to :func:`_`, which looks it up in the
catalogue of the language that the environment variable ``ATTNKIT_LANGUAGE`` names (``ja``:
Japanese; unset or unknown: English) and then fills in its ``{fields}``. A Japanese chapter
notebook sets the variable in its set-up cell; a grader may set it too. It is read at every
message, so it can be changed while a kernel runs.

The catalogues are gettext catalogues beside this module,
``locales/<language>/LC_MESSAGES/checks.po``, extracted and updated with the book's own and
compiled into the ``checks.mo`` beside each (``make catalogues``, ``booktools/
compiled_catalogues.py``), which the standard library's :mod:`gettext` reads here: attnkit is
installed on its own, with the ``.mo`` as package data. An entry that is untranslated or marked
fuzzy is left out of the ``.mo``, so it reads in English.

What ``_()`` returns is a :class:`Message`: the text, which remembers its template and fields
(:meth:`Message.parts`), so that it can be written again in another language with
:func:`written_in`. The book runs its chapters once, in English, and its Japanese edition
shows the verdicts of their cells in Japanese so.
"""

from __future__ import annotations

import functools
import gettext
import os
import string
from pathlib import Path

LANGUAGE_VARIABLE = "ATTNKIT_LANGUAGE"
LOCALES = Path(__file__).resolve().parent / "locales"
DOMAIN = "checks"
FORMATTER = string.Formatter()  # what str.format does, a step at a time


def catalogue_path(code: str) -> Path:
    """The compiled catalogue of the language ``code``."""
    return LOCALES / code / "LC_MESSAGES" / f"{DOMAIN}.mo"


def language() -> str:
    """The language of the checks' messages: ``ja`` or ``en`` (``ja_JP.UTF-8`` reads ``ja``)."""
    code = os.environ.get(LANGUAGE_VARIABLE, "").split(".")[0].split("_")[0].lower()
    return code if code and catalogue_path(code).is_file() else "en"


@functools.cache
def catalogue(code: str) -> gettext.NullTranslations:
    """The translations into the language ``code``; English has none, so it gives every
    message back as it is."""
    return gettext.translation(DOMAIN, LOCALES, languages=[code], fallback=True)


class Message(str):
    """A message that ``_()`` wrote: its text, in the language of the moment, and the template
    and fields it was written from. Adding it to text keeps them, as a join of the two."""

    def __new__(cls, text: str, template: str, fields: dict):
        message = super().__new__(cls, text)
        message.template, message.fields = template, fields
        return message

    def __add__(self, other):
        return _join(self, other)

    def __radd__(self, other):
        return _join(other, self)

    def parts(self) -> dict:
        """The template and its fields, a field a text or the parts of a message: plain data
        (JSON) from which :func:`written_in` writes the message in any language."""
        fields = {
            name: value.parts() if isinstance(value, Message) else value
            for name, value in self.fields.items()
        }
        return {"template": self.template, "fields": fields}


JOIN = "{left}{right}"  # two messages added together: the same in every language


def _join(left, right) -> Message:
    return Message(str.__add__(str(left), str(right)), JOIN, {"left": left, "right": right})


def _(message: str, **fields) -> Message:
    """``message`` in the student's language, its ``{fields}`` filled in."""
    # each field as it is shown, unless it is a message of its own, which can change language
    shown = {
        field: value
        if isinstance(value, Message)
        else FORMATTER.format_field(FORMATTER.convert_field(value, conversion), spec)
        for _text, field, spec, conversion in _parse(message)
        if field is not None
        for value in [fields[field]]
    }
    text = catalogue(language()).gettext(message).format(**fields)
    return Message(text, message, shown)


def joined(separator: Message, items: list) -> Message | str:
    """``separator.join(items)`` that stays a message (``str.join`` makes plain text)."""
    result = items[0] if items else ""
    for item in items[1:]:
        result = result + separator + item
    return result


@functools.cache
def _parse(template: str) -> tuple:
    """The template's parts, as ``str.format`` reads them: (text, field, spec, conversion)."""
    return tuple(FORMATTER.parse(template))


def written_in(parts: dict | str, code: str) -> str:
    """The message whose :meth:`Message.parts` are ``parts``, written in the language
    ``code``."""
    if isinstance(parts, str):
        return parts
    template = parts["template"]
    translation = template if template == JOIN else catalogue(code).gettext(template)
    return "".join(
        text + (written_in(parts["fields"][field], code) if field is not None else "")
        for text, field, _spec, _conversion in _parse(translation)
    )
