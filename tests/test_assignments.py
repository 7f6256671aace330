"""The Otter-Grader assignments (``make assignments``), built and graded with real Otter runs.

Every chapter's assignment is built once per session, and a folder of collected notebooks
(tests.support.grading) is graded in one run of ``python -m assignments.grade``, as an
instructor would: the solutions notebook scores full marks, the untouched student notebook
zero without stopping the grader, and each typical wrong answer loses its question's points
and no other's.
"""

import csv
import re
import sys
import zipfile

import nbformat
import pytest
import yaml

from assignments.build import chapters_with_exercises, write_master
from assignments.exercises import labelled_equations
from assignments.grade import assignment_of, autograder_of, collect
from tests.support.book import ROOT
from tests.support.grading import REFERENCE, UNTOUCHED, WRONG_ANSWERS, exercises, wrong_at

CHAPTERS = chapters_with_exercises()
WRONG_STUDENTS = ["wrong-even", "wrong-odd"]


def points(graded, chapter):
    """Points per question as the chapter's master notebook states them."""
    master = nbformat.read(graded.assignments / chapter / "autograder" / f"{chapter}.ipynb", 4)
    return {name: test["points"] for name, test in master.metadata["otter"]["tests"].items()}


def test_every_coding_exercise_has_a_wrong_answer():
    labels = {exercise.label for chapter in CHAPTERS for exercise in exercises(chapter)}
    assert labels == set(WRONG_ANSWERS)
    assert len(CHAPTERS) == 7


def test_every_collected_notebook_is_graded_once(graded_assignments):
    graded = collect([graded_assignments.collected])
    with graded_assignments.table.open(encoding="utf-8") as table:
        rows = list(csv.DictReader(table))
    assert {row["notebook"] for row in rows} == {str(path) for path in graded}
    assert len(rows) == len({(row["notebook"], row["question"]) for row in rows})
    assert graded_assignments.errors == {}


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_the_reference_solutions_score_full_marks(graded_assignments, chapter):
    full = points(graded_assignments, chapter)
    assert graded_assignments.points[chapter] == full
    assert graded_assignments.scores[REFERENCE][chapter] == full


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_the_untouched_student_notebook_scores_zero(graded_assignments, chapter):
    expected = dict.fromkeys(points(graded_assignments, chapter), 0)
    assert graded_assignments.scores[UNTOUCHED][chapter] == expected
    assert (UNTOUCHED, chapter) not in graded_assignments.errors


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_a_wrong_answer_loses_exactly_its_points(graded_assignments, chapter):
    full = points(graded_assignments, chapter)
    questions = exercises(chapter)
    for student in WRONG_STUDENTS:
        if not any(wrong_at(student, position) for position in range(len(questions))):
            continue
        expected = {
            exercise.label: 0 if wrong_at(student, position) else full[exercise.label]
            for position, exercise in enumerate(questions)
        }
        assert graded_assignments.scores[student][chapter] == expected, student
    wrongly_answered = {
        exercise.label
        for position, exercise in enumerate(questions)
        for student in WRONG_STUDENTS
        if wrong_at(student, position)
    }
    assert wrongly_answered == set(full)  # every question's wrong answer was graded


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_the_student_folder_holds_no_hidden_test_and_no_solution(graded_assignments, chapter):
    student = graded_assignments.assignments / chapter / "student"
    files = [path for path in student.rglob("*") if path.is_file()]
    assert files
    text = "\n".join(path.read_text(encoding="utf-8") for path in files)
    for exercise in exercises(chapter):
        assert exercise.check in text  # the student's own check is there
        assert f"{exercise.check}({exercise.function}).assert_passed()" not in text
        for line in exercise.solution.splitlines():
            if line.strip() and line.strip() not in exercise.stub:
                assert line not in text, f"{exercise.label}: {line!r} is in student/"
    assert '"hidden": true' not in text


def test_the_grader_says_what_it_cannot_grade(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError, match="no notebook in"):
        collect([tmp_path / "empty"])
    (tmp_path / "notes.txt").write_text("")
    with pytest.raises(ValueError, match="neither a notebook nor a folder"):
        collect([tmp_path / "notes.txt"])
    plain = tmp_path / "plain.ipynb"
    nbformat.write(nbformat.v4.new_notebook(), plain)
    with pytest.raises(ValueError, match=r"plain\.ipynb names no assignment"):
        assignment_of(plain)
    with pytest.raises(ValueError, match="run `make assignments` first"):
        autograder_of(tmp_path, "attention")


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_gradescope_grades_in_the_books_environment(graded_assignments, chapter):
    """The autograder zip's environment (what Gradescope installs) is the book's: its Python, every
    pin of requirements.txt, PyTorch's CPU wheels, and this attnkit."""
    (autograder,) = (graded_assignments.assignments / chapter / "autograder").glob("*.zip")
    with zipfile.ZipFile(autograder) as archive:
        environment = yaml.safe_load(archive.read("environment.yml"))
        shipped = {name for name in archive.namelist() if name.startswith("files/attnkit/")}
    python, pip = environment["dependencies"][0], environment["dependencies"][-1]["pip"]
    assert python == f"python={sys.version_info.major}.{sys.version_info.minor}"
    assert "--extra-index-url https://download.pytorch.org/whl/cpu" in pip
    lock = (ROOT / "requirements.txt").read_text(encoding="utf-8").splitlines()
    assert {line for line in lock if "==" in line and not line.startswith(" ")} <= set(pip)
    assert "torch==2.13.0" in pip
    assert "files/attnkit/core.py" in shipped and "files/attnkit/exercises/harness.py" in shipped


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_exercise_text_shows_the_equations_it_refers_to(chapter, tmp_path):
    """A handed-out notebook cannot follow the book's cross-references: none is left, and each
    equation an exercise refers to is shown under it."""
    text = (ROOT / "chapters" / f"{chapter}.md").read_text(encoding="utf-8")
    master = nbformat.read(write_master(chapter, tmp_path), 4)
    markdown = "\n".join(cell.source for cell in master.cells if cell.cell_type == "markdown")
    assert not re.search(r"\{[\w:-]+\}`", markdown)
    for exercise in exercises(chapter):
        for label in re.findall(r"\{eq\}`([^`]+)`", exercise.prompt):
            assert f"Equation ({label}):\n\n$$\n{labelled_equations(text)[label]}\n$$" in markdown
