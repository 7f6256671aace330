"""The student edition keeps every exercise and serves no solution from any of its files:
pages, page sources, notebooks, search index, anything."""

import html as html_lib
import json
import re

import nbformat
import pytest

from tests.support.book import chapter_files, page, toc_files

pytestmark = pytest.mark.build

SHINGLE = 8  # a run of this many words from a solution, found nowhere else in the book, is a leak
ERRATA = "appendix/errata"


def words(text):
    return re.findall(r"\w+", text.lower())


def shingles(text):
    """Runs of SHINGLE words, of which at least half are words (not numbers: arrays repeat)."""
    tokens = words(text)
    runs = (tokens[i : i + SHINGLE] for i in range(len(tokens) - SHINGLE + 1))
    return {" ".join(run) for run in runs if sum(not t.isdigit() for t in run) * 2 >= SHINGLE}


def strings(value):
    """Every string in a JSON value, keys included."""
    if isinstance(value, str):
        return [value]
    items = (
        value.items()
        if isinstance(value, dict)
        else enumerate(value)
        if isinstance(value, list)
        else []
    )
    return [
        s
        for key, item in items
        for s in (strings(key) if isinstance(key, str) else []) + strings(item)
    ]


def visible_text(html):
    html = re.sub(r"<(script|style)\b.*?</\1>", " ", html, flags=re.S)
    return html_lib.unescape(re.sub(r"<[^>]+>", " ", html))


def answer_blocks(html, name):
    """The HTML of every answer in a page of the normal edition: sphinx-exercise's solutions,
    the "Answers to" dropdowns, and the errata's entries (they answer spot-the-error exercises)."""
    starts = [
        m.start()
        for m in re.finditer(
            r'<div class="solution[ "]|<div class="[^"]*dropdown[^"]*">\s*<p class="admonition-title">Answers to',
            html,
        )
    ]
    if name == ERRATA:
        starts += [
            m.start() for m in re.finditer(r'<section id="(?!errata"|summary")[\w-]+">', html)
        ]
    blocks = []
    for start in starts:  # each block runs to its closing tag: count nested tags of its kind
        tag = re.match(r"<(\w+)", html[start:]).group(1)
        depth, position = 0, start
        for match in re.finditer(rf"<(/?){tag}\b[^>]*>", html[start:]):
            depth += -1 if match.group(1) else 1
            if depth == 0:
                position = start + match.end()
                break
        blocks.append(html[start:position])
    return blocks


@pytest.fixture(scope="module")
def leaks(built_book):
    """Every solution's word runs that appear nowhere in the normal edition outside answers."""
    html_dir = built_book[0]
    answers, rest = {}, set()
    for name in toc_files():
        html = page(html_dir, name)
        blocks = answer_blocks(html, name)
        for block in blocks:
            html = html.replace(block, " ")
        rest |= shingles(visible_text(html))
        answers[name] = [shingles(visible_text(block)) for block in blocks]
    distinctive = {name: [runs - rest for runs in blocks] for name, blocks in answers.items()}
    for name in chapter_files():
        assert len(distinctive[name]) >= 4, name
        assert all(distinctive[name]), f"{name}: an answer with no distinctive words"
    assert len(distinctive[ERRATA]) >= 10
    return set().union(*(runs for blocks in distinctive.values() for runs in blocks))


def served_texts(path):
    """A file's texts as a reader or a program reads them: a notebook's cells, the search
    index's strings one by one (its titles must not run into each other), a page's text."""
    text = path.read_bytes().decode("utf-8", errors="ignore")
    if path.suffix == ".ipynb":
        return [cell.source for cell in nbformat.reads(text, as_version=4).cells]
    if path.name == "searchindex.js":
        return strings(json.loads(text[text.index("(") + 1 : text.rindex(")")]))
    if path.suffix == ".html":
        return [visible_text(text), text]
    return [text]


def test_no_file_of_the_student_edition_contains_a_solution(built_student_edition, leaks):
    files = [path for path in built_student_edition.rglob("*") if path.is_file()]
    assert len(files) > 100
    found = {}
    for path in files:
        if path.suffix in {".woff", ".woff2", ".ttf", ".eot", ".png", ".svg", ".ico"}:
            continue
        hits = set().union(*(leaks & shingles(text) for text in served_texts(path)))
        if hits:
            found[str(path.relative_to(built_student_edition))] = sorted(hits)[:3]
    assert found == {}


@pytest.mark.parametrize("chapter", chapter_files())
def test_student_edition_has_every_exercise_and_check(built_book, built_student_edition, chapter):
    teacher = page(built_book[0], chapter)
    student = page(built_student_edition, chapter)
    assert teacher.count('class="exercise admonition"') >= 4
    assert student.count('class="exercise admonition"') == teacher.count(
        'class="exercise admonition"'
    )
    assert 'class="solution' in teacher and 'class="solution' not in student
    assert "Answers to" not in student
    # the downloadable notebook is the one to hand out: exercises and their checks, no solution
    notebook = nbformat.read(built_student_edition / "_sources" / f"{chapter}.ipynb", as_version=4)
    text = "\n".join(cell.source for cell in notebook.cells)
    assert "{exercise}" in text and "{solution" not in text and "Answers to" not in text
    for check in re.findall(r"^(check_\w+)\(\w+\)$", text, re.M):
        assert text.count(f"{check}(") == 1, f"{check}: the stub's check only, once"
    assert 'pip_install(f"git+{REPOSITORY}@{BRANCH}")' in notebook.cells[0].source


def test_student_edition_holds_back_the_errata_and_has_no_launch_buttons(built_student_edition):
    errata = page(built_student_edition, ERRATA)
    assert "withheld in the student edition" in errata
    assert 'id="errata-wo-shape"' not in errata
    for name in toc_files():
        assert not re.search(
            r"mybinder\.org/v2/|colab\.research\.google\.com/github/",
            page(built_student_edition, name),
        ), name
