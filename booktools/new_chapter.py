"""``make chapter SLUG=<slug> TITLE="<title>"``: a new chapter that builds and passes the tests.

Writes, from the templates in ``booktools/chapter_template/``, the chapter
(``chapters/<slug>.md``), its checks (``chapters/attnkit/exercises/<module>.py``, exported from
the package), its right and wrong answers (``tests/support/answers/<module>.py``) and its tests
(``tests/library/test_<module>.py``), where ``<module>`` is the slug with ``_`` for ``-``; lists
it last among the chapters of ``_toc.yml``; and writes the chapter lists again
(:mod:`booktools.chapter_lists`). It changes nothing if one of those files exists already.
"""

from __future__ import annotations

import re
import subprocess
import sys

from booktools import chapter_lists, toc

ROOT = toc.ROOT
TEMPLATES = ROOT / "booktools" / "chapter_template"
EXERCISES = ROOT / "chapters" / "attnkit" / "exercises"
SLUG = re.compile(r"^[a-z][a-z0-9]*(-[a-z0-9]+)*$")


def files(slug: str) -> dict[str, str]:
    """Each file the chapter gets, relative to the repository, and its template."""
    module = slug.replace("-", "_")
    return {
        f"chapters/{slug}.md": "chapter.md",
        f"chapters/attnkit/exercises/{module}.py": "checks.py",
        f"tests/support/answers/{module}.py": "answers.py",
        f"tests/library/test_{module}.py": "test.py",
    }


def filled(template: str, slug: str, title: str) -> str:
    text = (TEMPLATES / template).read_text(encoding="utf-8")
    for key, value in {
        "__SLUG__": slug,
        "__MODULE__": slug.replace("-", "_"),
        "__PREFIX__": slug,
        "__TITLE__": title,
    }.items():
        text = text.replace(key, value)
    return text


def listed_in_toc(slug: str) -> None:
    """The chapter after the last chapter of ``_toc.yml``, which numbers it."""
    path = ROOT / "_toc.yml"
    last = f"chapters/{toc.chapters()[-1].split('/')[-1]}"
    text = path.read_text(encoding="utf-8")
    line = re.search(rf"^( *)- file: {re.escape(last)}\n", text, re.M)
    if line is None:
        raise ValueError(f"_toc.yml: no line '- file: {last}'")
    entry = f"{line[1]}- file: chapters/{slug}\n"
    path.write_text(text[: line.end()] + entry + text[line.end() :], encoding="utf-8")


def exported(module: str) -> None:
    """``check_<module>`` importable from ``attnkit.exercises``, as every check is."""
    path = EXERCISES / "__init__.py"
    text = path.read_text(encoding="utf-8")
    imports = list(re.finditer(r"^from \.\w+ import .*?(?:\)\n|\n)", text, re.M | re.S))
    text = (
        text[: imports[-1].end()]
        + f"from .{module} import check_{module}\n"
        + text[imports[-1].end() :]
    )
    text = re.sub(r"(__all__ = \[\n(?:    .*\n)*)\]", rf'\1    "check_{module}",\n]', text)
    listed = list(re.finditer(r"^- ``\w+``: .*\n(?:  \S.*\n)*", text, re.M))  # the docstring's
    entry = f"- ``{module}``: ``check_{module}``\n"
    text = text[: listed[-1].end()] + entry + text[listed[-1].end() :]
    path.write_text(text, encoding="utf-8")
    ruff = [sys.executable, "-m", "ruff"]
    subprocess.run([*ruff, "check", "--quiet", "--fix", "--select", "I", str(path)], check=True)
    subprocess.run([*ruff, "format", "--quiet", str(path)], check=True)


def main(slug: str, title: str) -> int:
    if not SLUG.match(slug) or not title.strip():
        print('usage: make chapter SLUG=<lower-case-words-with-hyphens> TITLE="<title>"')
        return 2
    if slug in [name.split("/")[-1] for name in toc.pages()]:
        print(f"{slug}: _toc.yml lists it already")
        return 1
    existing = [path for path in files(slug) if (ROOT / path).exists()]
    if existing:
        print(f"{slug}: exists already: {', '.join(existing)}")
        return 1
    for path, template in files(slug).items():
        (ROOT / path).write_text(filled(template, slug, title.strip()), encoding="utf-8")
    listed_in_toc(slug)
    exported(slug.replace("-", "_"))
    chapter_lists.main([])
    for path in files(slug):
        print(f"wrote {path}")
    print("listed it in _toc.yml, exported its check, and wrote the chapter lists again")
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:3]) if len(sys.argv) == 3 else main("", ""))
