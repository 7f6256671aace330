"""The bibliography in the edition's language: a field of ``references.bib`` written with the
language's suffix (``note_ja``, ``author_ja``) stands in the edition in that language for the
field of that name, so that a Japanese page lists 「佐藤拓真」 and 「本書の元記事000」 where the
English one lists "佐藤拓真 (Takuma Sato)" and "Article 000 of the book's sources; in Japanese".
An empty one removes the field there. The edition reads a copy of each bibliography file with
these in place, written in ``_build/bibliography``; the English edition reads the file itself,
whose suffixed fields no style prints.

The Japanese edition also cites as a Japanese text does: a Japanese name (written "佐藤, 拓真"
in ``author_ja``) by its family name, 「佐藤 [63]」, three or more authors as the first and ほか
or ら, 「岡崎ほか [64]」「Vaswani ら [2]」, two joined by と; its bibliography writes a Japanese
name family name first and unspaced, 「佐藤拓真」, and a list of them joined by 「、」.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pybtex.plugin
from pybtex.database import Person, parse_file
from pybtex.style.formatting.plain import Style as PlainStyle
from pybtex.style.names import name_part
from pybtex.style.names.plain import NameStyle as PlainNameStyle
from pybtex.style.template import (
    FieldIsMissing,
    field,
    first_of,
    join,
    names,
    node,
    optional,
    sentence,
    tag,
)
from pybtex.utils import OrderedCaseInsensitiveDict
from sphinxcontrib.bibtex.plugin import register_plugin
from sphinxcontrib.bibtex.style.referencing import PersonStyle
from sphinxcontrib.bibtex.style.referencing.label import LabelReferenceStyle

PEOPLE = ("author", "editor")
IN_A_LANGUAGE = re.compile(r"^(\w+)_([a-z]{2})$", re.I)  # note_ja: note, ja
JAPANESE_SCRIPT = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff]")
# the Japanese edition's styles (registered in setup), in place of the book's plain and label
STYLES = {"ja": {"bibtex_default_style": "plain_ja", "bibtex_reference_style": "label_ja"}}


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


def japanese(person: Person) -> bool:
    """Whether ``person``'s name is written in Japanese, family name first."""
    return bool(JAPANESE_SCRIPT.search(str(person)))


class JapaneseNameOrder(PlainNameStyle):
    """The plain style's names (Ashish Vaswani), a Japanese one family name first and with no
    space (佐藤拓真)."""

    def format(self, person, abbr=False):
        if not japanese(person):
            return super().format(person, abbr)
        return join[name_part[person.rich_last_names], name_part[person.rich_first_names]]


@node
def listed_names(children, context, role, **kwargs):
    """pybtex's ``names``, a list of Japanese names joined by 「、」 (岡崎直観、荒瀬由紀)."""
    people = context["entry"].persons.get(role, ())
    if people and all(map(japanese, people)):
        kwargs = {"sep": "、", "sep2": "、", "last_sep": "、"}
    return names(role, **kwargs).format_data(context)


class JapaneseBibliographyStyle(PlainStyle):
    """The plain style, with Japanese names in their order and lists of them."""

    def __init__(self, **options):
        super().__init__(**options)
        self.name_style = JapaneseNameOrder()
        self.format_name = self.name_style.format

    def format_names(self, role, as_sentence=True):
        formatted = listed_names(role, sep=", ", sep2=" and ", last_sep=", and ")
        return sentence[formatted] if as_sentence else formatted


@node
def cited_names(children, data, role, full=False):
    """The names a Japanese text cites a work by: one or two (佐藤, 岡崎と荒瀬, Glorot と
    Bengio), or the first of more and ほか for a Japanese name, ら for another (岡崎ほか,
    Vaswani ら); every name when ``full``."""
    assert not children
    try:
        people = data["entry"].persons[role]
    except KeyError:
        raise FieldIsMissing(role, data["entry"]) from None
    person_style = data["style"].person
    formatted = [person_style.style_plugin.format(p, person_style.abbreviate) for p in people]
    # Japanese is set without spaces; a Latin name keeps a space on each side
    pair, others = ("と", "ほか") if japanese(people[0]) else (" と ", " ら")
    if len(people) > 2 and not full:
        return join[formatted[0], others].format_data(data)
    return join(sep="、", sep2=pair)[formatted].format_data(data)


@dataclasses.dataclass
class JapanesePersonStyle(PersonStyle):
    """sphinxcontrib-bibtex's person style, with the names cited as ``cited_names`` says."""

    def names(self, role, full):
        return cited_names(role=role, full=full)

    def author_or_editor_or_title(self, full):
        return first_of[
            optional[cited_names("author", full=full)],
            optional[cited_names("editor", full=full)],
            tag("em")[field("title")],
        ]


@dataclasses.dataclass
class JapaneseLabelStyle(LabelReferenceStyle):
    """The label style (「佐藤 [63]」), its names cited in Japanese."""

    person: PersonStyle = dataclasses.field(default_factory=JapanesePersonStyle)


def bibliography_in_language(app, config) -> None:
    language = config.language
    if language in (None, "en"):
        return
    for name, value in STYLES.get(language, {}).items():
        setattr(config, name, value)
    # one place for every build of the edition (the student edition starts from the book's
    # read pages, which name the file they were read with)
    folder = Path(app.srcdir) / "_build" / "bibliography"
    folder.mkdir(parents=True, exist_ok=True)
    files = []
    for name in config.bibtex_bibfiles:
        source = Path(app.confdir) / name
        if not source.is_file():
            files.append(name)  # one page built alone: sphinxcontrib-bibtex says it is missing
            continue
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
    pybtex.plugin.register_plugin("pybtex.style.formatting", "plain_ja", JapaneseBibliographyStyle)
    register_plugin("sphinxcontrib.bibtex.style.referencing", "label_ja", JapaneseLabelStyle)
    app.connect("config-inited", bibliography_in_language)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
