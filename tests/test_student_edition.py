"""The student edition keeps every exercise and contains no solution, not even hidden."""

import re

import pytest

from test_book import chapter_files, page

pytestmark = pytest.mark.build



def solution_snippets(html):
    """Distinctive lines of the solutions in a page of the normal edition."""
    snippets = []
    for block in re.findall(r'class="solution[ "].*?(?=class="exercise[ "]|<footer|\Z)', html, re.S):
        text = re.sub(r"<[^>]+>", "", block)
        snippets += [line.strip() for line in text.splitlines() if len(line.strip()) > 30][:3]
    return snippets


@pytest.mark.parametrize("chapter", chapter_files())
def test_student_edition_has_the_exercises_but_no_solution(built_book, built_student_edition,
                                                          chapter):
    teacher = page(built_book[0], chapter)
    student = page(built_student_edition, chapter)
    assert teacher.count('class="exercise admonition"') >= 4
    assert student.count('class="exercise admonition"') == teacher.count('class="exercise admonition"')
    assert 'class="solution' in teacher and 'class="solution' not in student
    assert "Answers to" not in student
    snippets = solution_snippets(teacher)
    assert len(snippets) >= 4
    leaked = [s for s in snippets if s in re.sub(r"<[^>]+>", "", student)]
    assert leaked == []
