"""The student edition, in English and in Japanese (``ja/``), keeps every exercise and serves no
solution from any of its files: pages, page sources, notebooks, search index, inventory
(objects.inv), contents menus, anything; and its launch buttons open its own notebooks."""

import html as html_lib
import json
import re
import zlib
from urllib.parse import parse_qs, urlsplit

import nbformat
import pytest
from sphinx.util.inventory import InventoryFile

from tests.support.book import (
    LAUNCH_LINK,
    REPOSITORY_URL,
    ROOT,
    chapter_files,
    page,
    toc_files,
)

pytestmark = pytest.mark.build

BINARY = {".woff", ".woff2", ".ttf", ".eot", ".png", ".svg", ".ico"}  # files with no text to scan
SHINGLE = 8  # a run of this many words from a solution, found nowhere else in the book, is a leak
SHINGLE_JA = 16  # Japanese has no spaces between words: a run of this many letters
ERRATA = "appendix/errata"
# the title of an "Answers to" dropdown in the book and in its Japanese edition
ANSWERS_TITLE = r'<summary class="admonition-title">(?:Answers to|「[^」<]+」の答え)'
WITHHELD_JA = "このページの残りは学生版では省かれています"


def words(text):
    return re.findall(r"\w+", text.lower())


def letters(text):
    """Japanese letter by letter. Formulas and code are left out: a page shows a formula
    typeset, a notebook as TeX, so that the same sentence would not read alike in both."""
    return re.findall(r"[^\W\x00-\x7f]", text)


def tokens_and_size(text, japanese):
    return (letters(text), SHINGLE_JA) if japanese else (words(text), SHINGLE)


def shingles(text, japanese=False):
    """Runs of SHINGLE words (SHINGLE_JA Japanese letters), of which at least half are words or
    letters (not numbers: arrays repeat)."""
    tokens, size = tokens_and_size(text, japanese)
    runs = (tokens[i : i + size] for i in range(len(tokens) - size + 1))
    return {" ".join(run) for run in runs if sum(not t.isdigit() for t in run) * 2 >= size}


def runs_found(text, runs, first_tokens, japanese=False):
    """``runs & shingles(text)``, joining only the runs of ``text`` that begin with one of
    ``first_tokens`` (the first tokens of ``runs``): the student edition's files are long."""
    tokens, size = tokens_and_size(text, japanese)
    starts = (i for i in range(len(tokens) - size + 1) if tokens[i] in first_tokens)
    return runs.intersection(" ".join(tokens[i : i + size]) for i in starts)


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
            rf'<details class="solution[ "]|<details class="[^"]*dropdown[^"]*">\s*{ANSWERS_TITLE}',
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


def distinctive_runs(html_dir, japanese=False):
    """Every solution's word runs that appear nowhere in the normal edition outside answers."""
    answers, rest = {}, set()
    for name in toc_files():
        html = page(html_dir, name)
        blocks = answer_blocks(html, name)
        for block in blocks:
            html = html.replace(block, " ")
        rest |= shingles(visible_text(html), japanese)
        answers[name] = [shingles(visible_text(block), japanese) for block in blocks]
    distinctive = {name: [runs - rest for runs in blocks] for name, blocks in answers.items()}
    for name in chapter_files():
        assert len(distinctive[name]) >= 4, name
        assert all(distinctive[name]), f"{name}: an answer with no distinctive words"
    assert len(distinctive[ERRATA]) >= 10
    return set().union(*(runs for blocks in distinctive.values() for runs in blocks))


@pytest.fixture(scope="module")
def leaks(built_book):
    return distinctive_runs(built_book[0])


@pytest.fixture(scope="module")
def japanese_leaks(built_book):
    return distinctive_runs(built_book[0] / "ja", japanese=True)


def served_texts(path):
    """A file's texts as a reader or a program reads them: a notebook's cells, the search
    index's strings one by one (its titles must not run into each other), the inventory's
    labels and titles (zlib-compressed after its header), a page's text."""
    if path.name == "objects.inv":
        return [zlib.decompress(path.read_bytes().split(b"\n", 4)[4]).decode("utf-8")]
    text = path.read_bytes().decode("utf-8", errors="ignore")
    if path.suffix == ".ipynb":
        return [cell.source for cell in nbformat.reads(text, as_version=4).cells]
    if path.name == "searchindex.js":
        return strings(json.loads(text[text.index("(") + 1 : text.rindex(")")]))
    if path.suffix == ".html":
        return [visible_text(text), text]
    return [text]


@pytest.mark.parametrize("language", ["en", "ja"])
def test_no_file_of_the_student_edition_contains_a_solution(
    built_student_edition, request, language
):
    """The English solutions are looked for in both editions, the Japanese ones in theirs."""
    japanese = language == "ja"
    folder = built_student_edition / "ja" if japanese else built_student_edition
    runs = request.getfixturevalue("japanese_leaks" if japanese else "leaks")
    first_tokens = {run.split(" ", 1)[0] for run in runs}
    files = [path for path in folder.rglob("*") if path.is_file()]
    assert len(files) > 100
    found = {}
    for path in files:
        if path.suffix in BINARY:
            continue
        texts = served_texts(path)
        hits = set().union(*(runs_found(text, runs, first_tokens, japanese) for text in texts))
        if hits:
            found[str(path.relative_to(built_student_edition))] = sorted(hits)[:3]
    assert found == {}


def ids_in(html):
    return set(re.findall(r'\bid="([^"]+)"', html))


@pytest.fixture(scope="module")
def withheld_labels(built_book):
    """The labels of the normal edition (its objects.inv) that point into an answer, with their
    titles: the solutions' and those of the errata's entries."""
    html_dir = built_book[0]
    with (html_dir / "objects.inv").open("rb") as file:
        inventory = InventoryFile.load(file, "", lambda base, uri: uri)
    answers = {
        name: set().union(*map(ids_in, answer_blocks(page(html_dir, name), name)))
        for name in toc_files()
    }
    withheld = {}
    for label, (_, _, uri, title) in inventory["std:label"].items():
        name, _, anchor = uri.partition("#")
        if anchor in answers.get(name.removesuffix(".html"), ()):
            withheld[label] = title
    assert sum(label.startswith("chapters/") for label in withheld) >= 40  # one per solution
    assert sum(label.startswith("errata-") for label in withheld) >= 13
    return withheld


def test_no_file_of_the_student_edition_names_a_withheld_label(
    built_student_edition, withheld_labels
):
    """No label or title of an answer is left, in objects.inv or anywhere else. The titles of
    the errata's entries are short (the scan above looks for runs of 8 words), and some give
    the answer away."""
    names = "|".join(re.escape(label) for label in withheld_labels)
    label = re.compile(rf"(?<![\w/-])({names})(?![\w-])")
    titles = {title for title in withheld_labels.values() if len(words(title)) >= 4}
    found = {}
    for path in built_student_edition.rglob("*"):
        if not path.is_file() or path.suffix in BINARY:
            continue
        texts = served_texts(path)
        hits = {m for text in texts for m in label.findall(text)}
        hits |= {title for title in titles if any(title in text for text in texts)}
        if hits:
            found[str(path.relative_to(built_student_edition))] = sorted(hits)[:3]
    assert found == {}


def contents_menu(html):
    """The titles that a page's contents menu ("On this page") lists."""
    entries = re.findall(r'<li class="toc-h\d[^"]*">\s*<a [^>]*>(.*?)</a>', html, re.S)
    return [" ".join(visible_text(entry).split()) for entry in entries]


def intro_only_pages():
    return [
        name
        for name in toc_files()
        if re.search(r"^student-edition: intro-only$", (ROOT / f"{name}.md").read_text(), re.M)
    ]


@pytest.mark.parametrize("folder", ["", "ja"])
@pytest.mark.parametrize("name", intro_only_pages())
def test_intro_only_page_lists_no_section_in_its_contents_menu(
    built_book, built_student_edition, name, folder
):
    # every erratum, in the book; the introduction has none
    assert len(contents_menu(page(built_book[0] / folder, name))) >= 13
    assert contents_menu(page(built_student_edition / folder, name)) == []


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


@pytest.mark.parametrize("chapter", chapter_files())
def test_japanese_student_edition_has_every_exercise_and_check(
    built_book, built_student_edition, chapter
):
    teacher = page(built_book[0] / "ja", chapter)
    student = page(built_student_edition / "ja", chapter)
    exercises = teacher.count('class="exercise admonition"')
    assert exercises >= 4 and student.count('class="exercise admonition"') == exercises
    assert 'class="solution' in teacher and 'class="solution' not in student
    answers = re.findall(ANSWERS_TITLE, teacher)  # as many as the English source has
    assert len(answers) == (ROOT / f"{chapter}.md").read_text().count("{admonition} Answers to")
    assert not re.search(ANSWERS_TITLE, student)
    # its notebook: the exercises in Japanese, their checks answering in Japanese, no solution
    path = built_student_edition / "ja" / "_sources" / f"{chapter}.ipynb"
    notebook = nbformat.read(path, as_version=4)
    text = "\n".join(cell.source for cell in notebook.cells)
    assert "{exercise}" in text and "{solution" not in text and "Answers to" not in text
    assert "演習" in text
    assert 'os.environ["ATTNKIT_LANGUAGE"] = "ja"' in notebook.cells[0].source


@pytest.mark.parametrize(
    "folder, note", [("", "withheld in the student edition"), ("ja", WITHHELD_JA)]
)
def test_student_edition_holds_back_the_errata(built_student_edition, folder, note):
    errata = page(built_student_edition / folder, ERRATA)
    assert note in errata
    assert 'id="errata-wo-shape"' not in errata
    assert intro_only_pages() == [ERRATA]


@pytest.mark.parametrize("folder", ["", "ja/"])
@pytest.mark.parametrize("name", toc_files())
def test_student_edition_launch_buttons_open_its_own_notebooks(built_student_edition, name, folder):
    """Colab opens the chapter's student notebook on the branch the publish workflow fills;
    Binder starts the book's environment and pulls that branch into it (nbgitpuller), then
    opens the same notebook, never the chapter's Markdown with its solutions.
    tests/book/test_launch_buttons.py follows both to what the workflow publishes."""
    links = LAUNCH_LINK.findall(page(built_student_edition / folder, name))
    if not name.startswith("chapters/"):
        assert links == []
        return
    github = REPOSITORY_URL.removeprefix("https://github.com/")
    colab, binder = sorted(links)
    assert colab == (
        f"https://colab.research.google.com/github/{github}/blob/notebooks/student/{folder}{name}.ipynb"
    )
    binder = urlsplit(html_lib.unescape(binder))
    assert (binder.netloc, binder.path) == ("mybinder.org", f"/v2/gh/{github}/main")
    assert (ROOT / "binder" / "postBuild").is_file()  # the environment Binder builds
    (urlpath,) = parse_qs(binder.query)["urlpath"]
    route, query = urlpath.split("?", 1)
    assert route == "git-pull"
    assert {key: value for key, (value,) in parse_qs(query).items()} == {
        "repo": REPOSITORY_URL,
        "branch": "notebooks",
        "targetpath": "notebooks",
        "urlpath": f"lab/tree/notebooks/student/{folder}{name}.ipynb",
    }
