"""The lists that describe the chapters agree with _toc.yml and with the chapters themselves.

README.md's "Chapters", the preface's "What each chapter adds" and the instructors' page are
written by ``make lists`` (``booktools/chapter_lists.py``) from the table of contents and each
chapter's front matter; the first test fails where one is out of date, the others read the lists
as a reader would, so that a list the generator gets wrong fails too. Every count compared here
comes from the table of contents.
"""

import re

from booktools import chapter_lists
from tests.support.book import ROOT, chapter_files, part_files

REF = re.compile(r"\{ref\}`([\w-]+)`")


def source(name):
    return (ROOT / f"{name}.md").read_text(encoding="utf-8")


def label(name):
    return chapter_lists.heading(name, source(name))[0]


def title(name):
    return chapter_lists.heading(name, source(name))[1]


def exercises(name):
    return chapter_lists.exercises(name, source(name))


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


def notebook_appendices():
    """The appendices that are chapters of their own (in chapters/), described with them."""
    return [name for name in part_files("Appendices") if name.startswith("chapters/")]


def page_labels():
    """The labels of the chapters and appendices, the pages that the lists name."""
    return {label(name) for name in chapter_files() + part_files("Appendices")}


def test_the_lists_are_written_from_the_chapters_front_matter():
    for path, text in chapter_lists.generate().items():
        assert (ROOT / path).read_text(encoding="utf-8") == text, (
            f"{path}: its chapter lists are out of date; run make lists (CONTRIBUTING.md)"
        )


def test_exercises_are_found_in_every_chapter():
    for name in chapter_files():
        assert len(exercises(name)) >= 4, (
            f"{name}: {len(exercises(name))} exercises; the rule (CONTRIBUTING.md): at least 4"
        )


def test_readme_lists_the_chapters_in_order_with_their_titles():
    chapters = section((ROOT / "README.md").read_text(encoding="utf-8"), "Chapters")
    items = re.findall(r"^(\d+)\. \*\*(.+?)\*\* — ", chapters, re.M)
    assert [(int(n), listed) for n, listed in items] == [
        (i, title(name)) for i, name in enumerate(chapter_files(), 1)
    ]
    appendices = re.findall(r"^Appendix: \*\*(.+?)\*\* — ", chapters, re.M)
    assert appendices == [title(name) for name in notebook_appendices()]


def test_preface_lists_the_chapters_and_appendices_in_order():
    adds = section((ROOT / "intro.md").read_text(encoding="utf-8"), "What each chapter adds")
    numbered = re.findall(r"^(\d+)\. \*\*\{ref\}`([\w-]+)`\*\*", adds, re.M)
    assert [(int(n), ref) for n, ref in numbered] == [
        (i, label(name)) for i, name in enumerate(chapter_files(), 1)
    ]
    pages = [ref for ref in REF.findall(adds) if ref in page_labels()]
    assert pages == [label(name) for name in chapter_files() + part_files("Appendices")]


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
                ", ".join(f"`{c}`" for c in e.checks) or "no",
            )
            for e in exercises(name)
        ], f"### Chapter {number}"
