"""The bibliography in the edition's language: a field of ``references.bib`` written with the
language's suffix (``note_ja``, ``author_ja``) stands in the edition in that language for the
field of that name, so that a Japanese page cites 「佐藤拓真」 and 「本書の元記事000」 where the
English one cites "佐藤拓真 (Takuma Sato)" and "Article 000 of the book's sources; in Japanese".
An empty one removes the field there. The edition reads a copy of each bibliography file with
these in place, written in ``_build/bibliography``; the English edition reads the file itself,
whose suffixed fields no style prints.
"""

from __future__ import annotations

import re
from pathlib import Path

from pybtex.database import Person, parse_file
from pybtex.utils import OrderedCaseInsensitiveDict

PEOPLE = ("author", "editor")
IN_A_LANGUAGE = re.compile(r"^(\w+)_([a-z]{2})$", re.I)  # note_ja: note, ja


def translated_entry(entry, language: str) -> None:
    """``entry`` with its fields in ``language`` in place of the others, in place; the fields of
    every language left out."""
    fields = OrderedCaseInsensitiveDict()
    ours = {}
    for name, value in entry.fields.items():
        found = IN_A_LANGUAGE.match(name)
        if found is None:
            fields[name] = value
        elif found[2].lower() == language:
            ours[found[1].lower()] = value
    for base, value in ours.items():
        if base in PEOPLE:
            entry.persons[base] = [Person(part) for part in split_people(value)]
        elif value.strip():
            fields[base] = value
        elif base in fields:
            del fields[base]
    entry.fields = fields


def split_people(value: str) -> list[str]:
    """The names of a BibTeX name list, split at its top-level "and"s."""
    names, depth, current = [], 0, ""
    for word in value.split(" "):
        depth += word.count("{") - word.count("}")
        if word == "and" and depth == 0:
            names.append(current.strip())
            current = ""
        else:
            current += " " + word
    return [*names, current.strip()]


def bibtex(key: str, entry) -> str:
    """``entry`` as BibTeX, each value in braces as the source writes it (pybtex's own writer
    quotes values and doubles their backslashes: apply\\_scaling would print two)."""
    lines = [
        f"{name} = {{{' and '.join(map(str, people))}}}" for name, people in entry.persons.items()
    ]
    lines += [f"{name} = {{{value}}}" for name, value in entry.fields.items()]
    return f"@{entry.type}{{{key},\n  " + ",\n  ".join(lines) + "\n}\n"


def bibliography_in_language(app, config) -> None:
    language = config.language
    if language in (None, "en"):
        return
    # one place for every build of the edition (the student edition starts from the book's
    # read pages, which name the file they were read with)
    folder = Path(app.srcdir) / "_build" / "bibliography"
    folder.mkdir(parents=True, exist_ok=True)
    files = []
    for name in config.bibtex_bibfiles:
        source = Path(app.confdir) / name
        data = parse_file(str(source), "bibtex")
        for entry in data.entries.values():
            translated_entry(entry, language)
        target = folder / f"{source.stem}.{language}.bib"
        text = "\n".join(bibtex(key, entry) for key, entry in data.entries.items())
        if not target.is_file() or target.read_text(encoding="utf-8") != text:
            target.write_text(text, encoding="utf-8")  # unchanged, it keeps the parsed cache
        files.append(str(target))
    config.bibtex_bibfiles = files


def setup(app):
    app.connect("config-inited", bibliography_in_language)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
