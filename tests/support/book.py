"""The repository, its table of contents, and what a built page holds."""

import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
# A made-up repository: the launch buttons and install cells must follow whatever is set.
REPOSITORY_URL = "https://github.com/example-owner/example-book"
# Its site, the GitHub Pages address (_ext/open_graph.py): og:url and the languages' alternates.
SITE_URL = "https://example-owner.github.io/example-book/"
# The href of a launch button (Binder, Colab) in a built page.
LAUNCH_LINK = re.compile(
    r'href="(https://(?:mybinder\.org/v2|colab\.research\.google\.com/github)/[^"]*)"'
)


def pin(package: str) -> str:
    """The lock's pin of ``package``, such as ``torch==X.Y.Z``: tests read it, never restate it."""
    lines = (ROOT / "requirements.txt").read_text(encoding="utf-8").splitlines()
    (found,) = [line for line in lines if line.startswith(f"{package}==")]
    return found


def toc_files():
    """Every page of the book, in the order of _toc.yml: the preface first."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    files = [toc["root"]]
    for part in toc["parts"]:
        files += [chapter["file"] for chapter in part["chapters"]]
    return files


def part_files(caption):
    """The pages of the part of _toc.yml with this caption."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    parts = [p for p in toc["parts"] if p["caption"] == caption]
    if len(parts) != 1:
        raise ValueError(f"_toc.yml has {len(parts)} parts captioned {caption!r}, not one")
    return [chapter["file"] for chapter in parts[0]["chapters"]]


def chapter_files():
    """The numbered chapters (not the appendices)."""
    return part_files("Chapters")


def page(html_dir, name):
    """The built HTML of the page ``name`` (a path of the table of contents, without suffix)."""
    return (html_dir / f"{name}.html").read_text(encoding="utf-8")
