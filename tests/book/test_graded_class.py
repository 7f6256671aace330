"""A class's notebooks graded by ``make grade`` (``make class-for-tests``, after the assignments
are built): the solutions score full marks, the untouched notebooks zero, each typical wrong
answer loses its question's points and no other's; and every notebook a real class hands in,
broken, copied or written to cheat or to reach outside its sandbox, gets the grade or the reason
a fair instructor would give, while the collected files stay as they were and nothing is left
behind.
"""

import csv
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from assignments.build import chapters_with_exercises
from assignments.grade import COLUMNS, GRADED, collect
from assignments.sheet import CELL_CHARACTERS, FORMULA_STARTS
from tests.support.book import ROOT, chapter_files
from tests.support.grading import (
    CLASS,
    REFERENCE,
    SLOW,
    SLOW_SECONDS,
    UNTOUCHED,
    WRONG_ANSWERS,
    exercises,
    wrong_at,
)

CHAPTERS = chapters_with_exercises()
WRONG_STUDENTS = ["wrong-even", "wrong-odd"]
SOFTMAX, SINGLE = "attention-ex-softmax", "attention-ex-single"


def points(graded, chapter):
    """Points per question as the chapter's master notebook states them."""
    master = nbformat.read(graded.assignments / chapter / "autograder" / f"{chapter}.ipynb", 4)
    return {name: test["points"] for name, test in master.metadata["otter"]["tests"].items()}


def test_every_coding_exercise_has_a_wrong_answer():
    labels = {exercise.label for chapter in CHAPTERS for exercise in exercises(chapter)}
    assert labels == set(WRONG_ANSWERS)
    assert sorted(CHAPTERS) == sorted(name.removeprefix("chapters/") for name in chapter_files())


def test_every_collected_notebook_is_graded_or_reported_once(graded_assignments):
    with graded_assignments.table.open(encoding="utf-8") as table:
        assert csv.DictReader(table).fieldnames == COLUMNS
    notebooks = collect([graded_assignments.collected])
    rows = [r for r in graded_assignments.rows if r["notebook"] in map(str, notebooks)]
    assert {row["notebook"] for row in rows} == {str(path) for path in notebooks}
    assert len(rows) == len({(row["notebook"], row["question"]) for row in rows})
    assert all(row["status"] and row["message"] for row in rows)
    faults = [row for row in graded_assignments.rows if row["status"] == "grader error"]
    assert faults == [], "\n".join(f"{r['notebook']}: {r['message']}" for r in faults)


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_the_reference_solutions_score_full_marks(graded_assignments, chapter):
    full = points(graded_assignments, chapter)
    assert graded_assignments.scores(REFERENCE, chapter) == full


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_the_untouched_student_notebook_scores_zero(graded_assignments, chapter):
    expected = dict.fromkeys(points(graded_assignments, chapter), 0)
    assert graded_assignments.scores(UNTOUCHED, chapter) == expected
    rows = graded_assignments.of(UNTOUCHED, chapter)
    assert {row["status"] for row in rows} == {GRADED}
    assert all("raised NotImplementedError" in row["message"] for row in rows)


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
        assert graded_assignments.scores(student, chapter) == expected, student
    wrongly_answered = {
        exercise.label
        for position, exercise in enumerate(questions)
        for student in WRONG_STUDENTS
        if wrong_at(student, position)
    }
    assert wrongly_answered == set(full)  # every question's wrong answer was graded


def test_the_grader_says_what_it_cannot_collect(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError, match="no notebook in"):
        collect([tmp_path / "empty"])
    (tmp_path / "notes.txt").write_text("")
    with pytest.raises(ValueError, match="neither a notebook nor a folder"):
        collect([tmp_path / "notes.txt"])


# What a fair instructor gives each notebook of chapter 1 that a real class hands in:
# student -> ({question: score}, status of every row, a phrase of the messages).
FULL = {SOFTMAX: 2.0, SINGLE: 2.0}
NONE = {SOFTMAX: 0.0, SINGLE: 0.0}
HALF = {SOFTMAX: 0.0, SINGLE: 2.0}
FAIR = {
    "copy": (FULL, GRADED, ""),
    "other-metadata": (
        FULL,
        GRADED,
        "its metadata names the assignment 'self-attention', but its cells are those of "
        "'attention': graded as 'attention'",
    ),
    "julia-kernel": (FULL, GRADED, ""),
    "error-in-another-cell": (FULL, GRADED, ""),
    "no-check-cells": (FULL, GRADED, ""),
    "renamed": ({SOFTMAX: 0.0, SINGLE: 2.0}, GRADED, "defines no function `my_softmax`"),
    "forbidden-helper": ({SOFTMAX: 0.0, SINGLE: 2.0}, GRADED, "uses `attnkit.core.softmax`"),
    "patched-check": (NONE, GRADED, ""),
    "patched-checks-module": (NONE, GRADED, ""),
    "patched-harness": (NONE, GRADED, ""),
    "patched-numpy": (NONE, GRADED, ""),
    "fake-results": (NONE, GRADED, "should be a NumPy array, got a Anything"),
    "snoops": (NONE, GRADED, ""),
    "exhausts-memory": (FULL, GRADED, ""),
    "exhausts-disk": (FULL, GRADED, ""),
    "exhausts-processes": (FULL, GRADED, ""),
    "outlives-grading": (FULL, GRADED, ""),
    "kills-its-grader": (FULL, GRADED, ""),
    "dies": (NONE, "kernel died", "killed by SIGABRT while running the notebook"),
    "raises-a-formula": (HALF, GRADED, 'your function raised ValueError: =HYPERLINK("http'),
    "raises-escapes": (HALF, GRADED, "ValueError: \\x1b[2J\\x1b]0;all clear\\x07\\rgraded"),
    "raises-megabytes": (HALF, GRADED, "characters in all; the whole message: "),
    "on-time": (FULL, GRADED, ""),
    "endless-cell": (
        NONE,
        "time limit",
        f"time limit: {SLOW_SECONDS} s passed while running the notebook",
    ),
    "endless-function": (
        {SOFTMAX: 0.0, SINGLE: 2.0},
        None,
        f"time limit: {SLOW_SECONDS} s passed while calling my_softmax",
    ),
}


def test_every_kind_of_notebook_a_class_hands_in_is_judged():
    assert set(FAIR) == set(CLASS) | set(SLOW)


@pytest.mark.parametrize("student", FAIR)
def test_each_notebook_gets_the_grade_a_fair_instructor_gives(graded_assignments, student):
    scores, status, phrase = FAIR[student]
    rows = graded_assignments.of(student, "attention")
    assert graded_assignments.scores(student, "attention") == scores, rows
    if status is not None:
        assert {row["status"] for row in rows} == {status}, rows
    assert any(phrase in row["message"] for row in rows), rows


def test_a_notebook_that_loops_in_one_function_loses_that_question_only(graded_assignments):
    rows = {row["question"]: row for row in graded_assignments.of("endless-function", "attention")}
    assert rows[SOFTMAX]["status"] == "time limit" and rows[SINGLE]["status"] == GRADED


@pytest.mark.parametrize(
    "student, reason",
    [
        ("corrupt", "unreadable"),
        ("not-an-assignment", "not an assignment"),
        ("nested-json", "unreadable"),
        ("huge-number", "unreadable"),
    ],
)
def test_a_file_that_cannot_be_graded_is_reported_with_its_reason(
    graded_assignments, student, reason
):
    (row,) = graded_assignments.of(student, "attention")
    assert row["status"] == reason and float(row["score"]) == 0
    assert row["message"].startswith(("not a notebook", "not an assignment"))


def test_every_field_of_the_grade_sheet_is_safe_to_open_in_a_spreadsheet(graded_assignments):
    """Printable text only, nothing a spreadsheet runs as a formula, every field within a cell;
    a message cut to fit is whole in the notebook's log beside the CSV."""
    for table in (graded_assignments.table, graded_assignments.slow_table):
        with table.open(newline="", encoding="utf-8") as file:
            for line in csv.reader(file):
                for field in line:
                    assert field.isprintable(), repr(field[:80])
                    assert not field.startswith(FORMULA_STARTS), repr(field[:80])
                    assert len(field) <= CELL_CHARACTERS
    (row,) = [
        r for r in graded_assignments.of("raises-megabytes", "attention") if float(r["score"]) == 0
    ]
    log = Path(row["message"].rsplit("the whole message: ", 1)[1].removesuffix("]"))
    assert log.parent == graded_assignments.table.with_name("grades-logs")
    assert "x" * 10_000_000 in log.read_text(encoding="utf-8")


def test_identical_submissions_are_flagged(graded_assignments):
    copy = graded_assignments.of("copy", "attention")
    reference = graded_assignments.of(REFERENCE, "attention")
    assert {row["duplicate_of"] for row in copy} == {reference[0]["notebook"]}
    assert {row["duplicate_of"] for row in reference} == {copy[0]["notebook"]}
    assert not any(row["duplicate_of"] for row in graded_assignments.of(UNTOUCHED, "attention"))


# Run under nice: a notebook that asks its sandbox's session how it is scheduled.
PRIORITY_OF_A_SANDBOX = """
import nbformat, sys, time
from assignments.sandbox import Limits, NotebookProcess
code = "def priority():\\n    return open('/proc/self/autogroup').read().split()[-1]"
notebook = nbformat.writes(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(code)]))
with NotebookProcess(notebook.encode(), Limits(seconds=60)) as process:
    process.wait_ready()
    print(process.call("priority", (), (), {"measure": False}, time.monotonic() + 60)["result"])
"""


@pytest.mark.skipif(
    not Path("/proc/self/autogroup").exists(), reason="this kernel schedules no sessions apart"
)
def test_a_notebook_graded_at_low_priority_runs_at_low_priority():
    """Linux schedules each session apart, and the sandbox is a session of its own: it takes the
    grader's nice value, or an endless loop graded by ``nice make grade`` takes a whole core."""
    run = subprocess.run(
        ["nice", "-n", "7", sys.executable, "-c", PRIORITY_OF_A_SANDBOX],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.split() == ["7"]


def test_grading_changes_no_collected_file_and_leaves_nothing_behind(graded_assignments):
    assert graded_assignments.after == graded_assignments.before
    assert not graded_assignments.outside_written
    assert graded_assignments.leftovers == []
    built = graded_assignments.assignments / "attention" / "autograder"
    tests = [p for p in built.rglob("*.py") if "rewritten by a classmate" in p.read_text()]
    assert tests == []
    assert "rewritten by a classmate" not in (ROOT / "chapters" / "attention.md").read_text()


def test_a_second_run_resumes_and_grades_only_what_changed(graded_assignments, tmp_path):
    collected = tmp_path / "collected"
    for student in (REFERENCE, UNTOUCHED):
        (collected / student).mkdir(parents=True)
        shutil.copy(graded_assignments.collected / student / "attention.ipynb", collected / student)
    table = tmp_path / "grades.csv"
    command = [sys.executable, "-m", "assignments.grade", collected, "--out", table, "--seed", "1"]
    first = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=True)
    assert len(first.stdout.splitlines()) == 3  # a line per notebook graded, and the summary
    again = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=True)
    assert again.stdout.splitlines()[-1] == first.stdout.splitlines()[-1]
    assert len(again.stdout.splitlines()) == 1  # nothing graded again
    changed = collected / UNTOUCHED / "attention.ipynb"
    shutil.copy(graded_assignments.collected / REFERENCE / "attention.ipynb", changed)
    third = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=True)
    assert [line.split()[0] for line in third.stdout.splitlines()[:-1]] == [str(changed)]
    with table.open(encoding="utf-8") as file:
        rows = [row for row in csv.DictReader(file) if row["notebook"] == str(changed)]
    assert {float(row["score"]) for row in rows} == {2.0}
    assert {row["duplicate_of"] for row in rows} == {str(collected / REFERENCE / "attention.ipynb")}


# A notebook whose split of heads mixes tokens with heads, graded across the sandbox's wall.
TRACE_ACROSS_THE_SANDBOX = """
import nbformat, time
from assignments.grade import StudentFunction
from assignments.sandbox import Limits, NotebookProcess
from attnkit.exercises.multi_head_attention import check_split_heads
code = "def my_split_heads(X, h):\\n    b, n, d = X.shape\\n    return X.reshape(b, h, n, d // h)"
notebook = nbformat.writes(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(code)]))
with NotebookProcess(notebook.encode(), Limits(seconds=60)) as process:
    process.wait_ready()
    print(check_split_heads(StudentFunction(process, "my_split_heads", time.monotonic() + 60)))
"""


def test_the_graders_report_holds_the_trace_made_in_the_sandbox():
    run = subprocess.run(
        [sys.executable, "-c", TRACE_ACROSS_THE_SANDBOX],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    assert "trace of my_split_heads" in run.stdout
    assert "line 3             reshape" in run.stdout and "mixes T and H" in run.stdout
