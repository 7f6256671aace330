"""The lists written by hand agree with _toc.yml and with the chapters themselves.

The README, the preface and the instructors' page each describe the chapters in prose of their
own, which no build step can write; what they list (which chapters, in which order, under which
title or label), the instructors' tables of exercises and the numbers of exercises stated in
words are checked here instead, so that moving, renaming or adding a chapter or an exercise
fails until every list says so.
"""

import re
from dataclasses import dataclass

import pytest

from tests.support.book import ROOT, chapter_files, part_files, toc_files

NUMBERS = {
    "no": 0,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
}
EXERCISE = re.compile(r"^(?:`{3,}|:{3,})\{exercise\}[ \t]*(.*)\n((?::[\w-]+:.*\n)*)", re.M)
REF = re.compile(r"\{ref\}`([\w-]+)`")


@dataclass
class Exercise:
    label: str
    title: str
    checks: set  # the check_* functions called between this exercise and the next


def source(name):
    return (ROOT / f"{name}.md").read_text(encoding="utf-8")


def heading(name):
    """A page's label and title: the ``(label)=`` target and the ``# `` title below it."""
    match = re.search(r"^\(([\w-]+)\)=\n# (.+)$", source(name), re.M)
    if not match:
        raise ValueError(f"{name}.md has no (label)= line above its # title")
    return match.groups()


def label(name):
    return heading(name)[0]


def title(name):
    return heading(name)[1]


def exercises(name):
    """The sphinx-exercise directives of a page, in order."""
    text = source(name)
    matches = list(EXERCISE.finditer(text))
    found = []
    for match, following in zip(matches, matches[1:] + [None]):
        options = dict(re.findall(r"^:([\w-]+):[ \t]*(.*)$", match.group(2), re.M))
        if "label" not in options:
            raise ValueError(f"{name}.md: the exercise {match.group(1)!r} has no :label:")
        region = text[match.end() : following.start() if following else len(text)]
        found.append(
            Exercise(
                options["label"],
                match.group(1).strip(),
                set(re.findall(r"\b(check_\w+)\(", region)),
            )
        )
    return found


def section(text, title, level=2):
    """The body of the section ``## title`` (or another level), up to the next heading of
    that level or above."""
    hashes = "#" * level
    match = re.search(
        rf"^{hashes} {re.escape(title)}\n(.*?)(?=^#{{1,{level}}} |\Z)", text, re.M | re.S
    )
    if not match:
        raise ValueError(f"no section {hashes} {title!r}")
    return match.group(1)


def stated_counts(text):
    """The numbers of exercises a text states in words or digits ("six exercises", "It has no
    exercises")."""
    counts = []
    for word in re.findall(r"\b(\w+)\s+exercises?\b", text):
        word = word.lower()
        if word.isdigit():
            counts.append(int(word))
        elif word in NUMBERS:
            counts.append(NUMBERS[word])
    return counts


def notebook_appendices():
    """The appendices that are chapters of their own (in chapters/), described with them."""
    return [name for name in part_files("Appendices") if name.startswith("chapters/")]


def page_labels():
    """The labels of the chapters and appendices, the pages that the lists name."""
    return {label(name) for name in chapter_files() + part_files("Appendices")}


@pytest.mark.parametrize(
    "text, counts",
    [
        ("a heatmap; six exercises.", [6]),
        ("masks included; six\n   exercises.", [6]),
        ("It has no exercises and can be set as reading.", [0]),
        ("There are 36 exercises, 9 of them", [36]),
        ("Every chapter ends with exercises; the coding exercises need a kernel.", []),
    ],
)
def test_stated_counts_are_read(text, counts):
    assert stated_counts(text) == counts


def test_exercises_are_found_in_every_chapter():
    for name in chapter_files():
        assert len(exercises(name)) >= 4, name


def test_readme_lists_the_chapters_in_order_with_their_titles_and_exercise_counts():
    chapters = section((ROOT / "README.md").read_text(encoding="utf-8"), "Chapters")
    items = re.findall(r"^(\d+)\. \*\*(.+?)\*\* — (.*?)(?=^\d+\. |^\S|\Z)", chapters, re.M | re.S)
    assert [(int(n), listed) for n, listed, _ in items] == [
        (i, title(name)) for i, name in enumerate(chapter_files(), 1)
    ]
    for (_, listed, text), name in zip(items, chapter_files()):
        assert stated_counts(text) == [len(exercises(name))], f"README, chapter {listed!r}"
    appendices = re.findall(r"^Appendix: \*\*(.+?)\*\* — (.*?)(?=^\S|\Z)", chapters, re.M | re.S)
    assert [listed for listed, _ in appendices] == [title(name) for name in notebook_appendices()]
    for (listed, text), name in zip(appendices, notebook_appendices()):
        assert stated_counts(text) in ([], [len(exercises(name))]), f"README, appendix {listed!r}"


def test_preface_lists_the_chapters_and_appendices_in_order():
    adds = section((ROOT / "intro.md").read_text(encoding="utf-8"), "What each chapter adds")
    numbered = re.findall(r"^(\d+)\. \*\*\{ref\}`([\w-]+)`\*\*", adds, re.M)
    assert [(int(n), ref) for n, ref in numbered] == [
        (i, label(name)) for i, name in enumerate(chapter_files(), 1)
    ]
    pages = [ref for ref in REF.findall(adds) if ref in page_labels()]
    assert pages == [label(name) for name in chapter_files() + part_files("Appendices")]
    ((count, listed),) = re.findall(
        r"(\w+) (?:more )?appendices serve as reference: (.*?)\.\n", adds, re.S
    )
    assert NUMBERS[count.lower()] == len(REF.findall(listed))


def test_instructors_page_describes_and_times_the_chapters_in_order():
    text = (ROOT / "appendix" / "for-instructors.md").read_text(encoding="utf-8")
    expected = [(str(i), label(name)) for i, name in enumerate(chapter_files(), 1)]
    expected += [("appendix", label(name)) for name in notebook_appendices()]
    teaches = section(text, "What each chapter teaches")
    paragraphs = re.findall(
        r"^\*\*(?:Chapter (\d+)|(Appendix)), \{ref\}`([\w-]+)`\.\*\*(.*?)(?=^\*\*|\Z)",
        teaches,
        re.M | re.S,
    )
    assert [(number or kind.lower(), ref) for number, kind, ref, _ in paragraphs] == expected
    for (*_, ref, paragraph), name in zip(paragraphs, chapter_files() + notebook_appendices()):
        assert stated_counts(paragraph) in ([], [len(exercises(name))]), f"instructors' page, {ref}"
    times = section(text, "Estimated time")
    assert re.findall(r"^\| (\d+|appendix) \{ref\}`([\w-]+)` \|", times, re.M) == expected


def test_instructors_tables_list_every_exercise_with_its_title_label_and_check():
    text = (ROOT / "appendix" / "for-instructors.md").read_text(encoding="utf-8")
    text = section(text, "The exercises")
    tables = re.findall(r"^### Chapter (\d+): ([^\n]+)\n(.*?)(?=^### |\Z)", text, re.M | re.S)
    assert [int(n) for n, _, _ in tables] == list(range(1, len(chapter_files()) + 1))
    for (number, short_title, table), name in zip(tables, chapter_files()):
        assert title(name).startswith(short_title), f"### Chapter {number}: {short_title}"
        rows = [
            [cell.strip() for cell in line.strip().strip("|").split("|")]
            for line in table.splitlines()
            if line.startswith("| {ref}")
        ]
        listed = [(ref, row_title, code, auto) for ref, row_title, code, _kind, auto in rows]
        assert listed == [
            (
                f"{{ref}}`{e.label}`",
                e.title,
                f"`{e.label}`",
                ", ".join(f"`{c}`" for c in sorted(e.checks)) or "no",
            )
            for e in exercises(name)
        ], f"### Chapter {number}"


def test_instructors_page_states_the_number_of_exercises_and_of_checked_ones():
    text = (ROOT / "appendix" / "for-instructors.md").read_text(encoding="utf-8")
    ((total, checked),) = re.findall(
        r"There are (\d+) exercises,\s+(\d+)\s+of\s+them\s+checked\s+automatically", text
    )
    every = [e for name in toc_files() for e in exercises(name)]
    assert (int(total), int(checked)) == (len(every), sum(bool(e.checks) for e in every))
