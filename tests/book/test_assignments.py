"""The Otter-Grader assignments that ``make assignments`` builds (``make
assignments-for-tests``), as an instructor hands them out: the student's folder holds no hidden
test and no solution, each exercise shows the equations it refers to, the autograder grades in
the book's environment, and the notebook runs alone in a student's own Jupyter. (A class graded
with them: test_graded_class.py.)
"""

import re
import sys
import zipfile

import nbformat
import pytest
import yaml

from assignments.build import chapters_with_exercises, write_master
from assignments.exercises import coding_exercises, labelled_equations
from booktools.pins import pins
from tests.support.alone import installed_for_the_student, run_alone
from tests.support.book import ROOT, pin
from tests.support.grading import exercises

CHAPTERS = chapters_with_exercises()


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_the_student_folder_holds_no_hidden_test_and_no_solution(built_assignments, chapter):
    student = built_assignments / chapter / "student"
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


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_gradescope_grades_in_the_books_environment(built_assignments, chapter):
    """The autograder zip's environment (what Gradescope installs) is the book's: its Python, every
    pin of requirements.txt, PyTorch's CPU wheels, and this attnkit."""
    (autograder,) = (built_assignments / chapter / "autograder").glob("*.zip")
    with zipfile.ZipFile(autograder) as archive:
        environment = yaml.safe_load(archive.read("environment.yml"))
        shipped = {name for name in archive.namelist() if name.startswith("files/attnkit/")}
    python, pip = environment["dependencies"][0], environment["dependencies"][-1]["pip"]
    assert python == f"python={sys.version_info.major}.{sys.version_info.minor}"
    assert "--extra-index-url https://download.pytorch.org/whl/cpu" in pip
    assert {f"{name}=={version}" for name, version in pins().items()} <= set(pip)
    assert pin("torch") in pip
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


def test_assignment_notebook_runs_alone_in_an_empty_folder(
    built_assignments, python_without_attnkit, local_clone, tmp_path
):
    """The notebook an instructor hands out (make assignments), in a student's own Jupyter: its
    set-up cell, the book's, installs attnkit and Otter before Otter's own cell imports it."""
    notebook = built_assignments / "attention" / "student" / "attention.ipynb"
    executed, outputs = run_alone(python_without_attnkit, notebook, tmp_path, local_clone)
    setup, otter, title, *_ = executed.cells
    assert setup.source.startswith("# Set-up.") and 'pip_install("otter-grader==' in setup.source
    assert "grader = otter.Notebook(" in otter.source and title.source.startswith("# Attention")
    errors = [(i, o.ename, o.evalue) for i, o in outputs if o.output_type == "error"]
    assert errors == []
    # each stub raises NotImplementedError inside its check, which reports it; so do the public
    # tests that grader.check runs
    reports = [o.data["text/plain"] for _, o in outputs if o.output_type == "execute_result"]
    public = [report for report in reports if "Test case failed" in report]
    checks = [report for report in reports if report not in public]
    questions = len(coding_exercises((ROOT / "chapters" / "attention.md").read_text()))
    assert len(checks) == len(public) == questions >= 2
    assert all("NotImplementedError" in report for report in reports)
    assert installed_for_the_student(python_without_attnkit, "attnkit")
    assert installed_for_the_student(python_without_attnkit, "otter")
