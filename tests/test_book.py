"""The built book: a clean build, every notebook executed, no warnings, no errors in any cell."""

import json
import re

import pytest
import yaml

from conftest import ROOT

pytestmark = pytest.mark.build


def toc_files():
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    files = [toc["root"]]
    for part in toc["parts"]:
        files += [chapter["file"] for chapter in part["chapters"]]
    return files


def chapter_files():
    return [f for f in toc_files() if f.startswith("chapters/")]


def page(html_dir, name):
    return (html_dir / f"{name}.html").read_text(encoding="utf-8")


def test_build_has_no_warnings(built_book):
    _, log = built_book
    problems = [line for line in log.splitlines()
                if re.search(r"\b(WARNING|ERROR|CRITICAL)\b", line)
                and "Kernel is running over TCP" not in line           # ipykernel's own notice
                and "Location 'file:" not in line]                      # pip's local mirrors
    assert problems == []


def test_every_page_of_the_toc_is_built(built_book):
    html_dir, _ = built_book
    for name in toc_files():
        target = "index" if name == "intro" else name
        assert (html_dir / f"{target}.html").is_file() or (html_dir / f"{name}.html").is_file(), name


@pytest.mark.parametrize("chapter", chapter_files())
def test_chapter_was_executed_without_errors(built_book, chapter):
    html = page(built_book[0], chapter)
    assert html.count('class="cell_output') >= 5, "the chapter's cells were not executed"
    assert "output traceback" not in html
    assert "output stderr" not in html
    assert "Traceback (most recent call last)" not in html


@pytest.mark.parametrize("chapter", chapter_files())
def test_chapter_has_math_exercises_and_solutions(built_book, chapter):
    html = page(built_book[0], chapter)
    assert html.count('class="math notranslate nohighlight"') >= 5
    assert html.count('class="exercise admonition"') >= 4
    assert html.count("solution dropdown admonition") >= 4


def test_attention_explorer_embeds_its_widget_state(built_book):
    html = page(built_book[0], "chapters/attention")
    state_json = re.search(
        r'<script type="application/vnd.jupyter.widget-state\+json">(.*?)</script>', html, re.S)
    assert state_json, "no widget state in the page"
    models = json.loads(state_json.group(1))["state"]
    names = {model["model_name"] for model in models.values()}
    assert {"FloatSliderModel", "FloatLogSliderModel", "DropdownModel", "OutputModel"} <= names
    views = re.findall(
        r'<script type="application/vnd.jupyter.widget-view\+json">(.*?)</script>', html, re.S)
    assert views and all(json.loads(v)["model_id"] in models for v in views)


def test_bibliography_lists_the_sources(built_book):
    html = page(built_book[0], "references")
    for title in ["Attention Is All You Need", "Attention might be something you need",
                  "Scaled Dot Product Attention"]:
        assert title in html
