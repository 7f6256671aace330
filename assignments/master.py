"""A chapter's coding exercises as an Otter-Grader master notebook (Otter Assign's format).

Each exercise becomes a question worth the points the chapter's front matter gives it. The
student's cell is the chapter's stub; the solution is the chapter's reference solution, which
``otter assign`` removes from the student's notebook. The public tests (the front matter's
expressions) show a student whether the function runs and has the right shape; the hidden test
calls the chapter's own check, so the grade and the check a student runs cannot disagree. A
question scores all its points or none: a function that passes the public tests and fails the
check has not answered it.

The notebook opens with the book's set-up cell (``booktools/setup_cell.py``), which installs attnkit
and Otter where they are missing, so that it runs in Colab or a fresh Jupyter; Otter's own
first cell, which imports Otter, therefore comes after it instead of before.
"""

from __future__ import annotations

import ast
import re
import sys

import nbformat
import yaml

from assignments.exercises import CodingExercise
from booktools.setup_cell import setup_cell

# Role references such as {eq}`eq-scale-gqa` point into the book, which a notebook handed out
# alone cannot follow: an equation is shown in the prompt, anything else is named.
ROLE = re.compile(r"\{(?P<role>[\w:-]+)\}`(?P<target>[^`]+)`")


def _raw(source: str):
    return nbformat.v4.new_raw_cell(source)


def _yaml_cell(heading: str, config: dict):
    return _raw(f"{heading}\n{yaml.safe_dump(config, sort_keys=False)}")


def _plain_markdown(myst: str, equations: dict[str, str]) -> str:
    """``myst`` for a notebook: each equation it refers to is named, then shown after the text."""
    shown = []

    def plain(match: re.Match) -> str:
        target = match["target"]
        if match["role"] != "eq":
            return f"`{target}` (in the book)"
        if target not in equations:
            raise ValueError(f"{{eq}}`{target}`: the chapter has no equation labelled so")
        if target not in shown:
            shown.append(target)
        return f"({target})"

    text = ROLE.sub(plain, myst)
    return "\n\n".join(
        [text, *(f"Equation ({label}):\n\n$$\n{equations[label]}\n$$" for label in shown)]
    )


def _answer_cell(exercise: CodingExercise) -> str:
    """The stub's imports, the reference solution (removed for students), the stub's function
    (what students get in its place) and the call to the check."""
    header, prompt = [], []
    for node in ast.parse(exercise.stub).body:
        segment = ast.get_source_segment(exercise.stub, node)
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            header.append(segment)
        elif segment != f"{exercise.check}({exercise.function})":
            prompt.append(segment)
    prompt_code = "\n\n".join(prompt)
    if "'''" in prompt_code:
        raise ValueError(f"{exercise.label}: the stub may not contain ''' (it quotes the stub)")
    return "\n".join(
        [
            *header,
            "",
            "# BEGIN SOLUTION NO PROMPT",
            exercise.solution,
            "# END SOLUTION",
            "''' # BEGIN PROMPT",
            prompt_code,
            "''' # END PROMPT",
            "",
            f"{exercise.check}({exercise.function})",
        ]
    )


def _otter_cell(chapter: str):
    """The cell Otter would put first (``init_cell``), locked as Otter locks it."""
    cell = nbformat.v4.new_code_cell(
        f'# Initialize Otter\nimport otter\ngrader = otter.Notebook("{chapter}.ipynb")'
    )
    cell.metadata.update(editable=False, deletable=False)
    return cell


def _question_cells(exercise: CodingExercise, settings: dict, equations: dict[str, str]) -> list:
    points = settings.get("points")
    public = settings.get("public") or []
    if not isinstance(points, (int, float)) or points <= 0:
        raise ValueError(f"{exercise.label}: the front matter must give it a positive `points`")
    if not public:
        raise ValueError(f"{exercise.label}: the front matter must give it `public` tests")
    plural = "" if points == 1 else "s"
    hidden_test = "\n".join(
        [
            "# HIDDEN",
            f"from {exercise.check_module} import {exercise.check}",
            "",
            f"{exercise.check}({exercise.function}).assert_passed()",
        ]
    )
    return [
        _yaml_cell(
            "# BEGIN QUESTION",
            {"name": exercise.label, "points": points, "all_or_nothing": True},
        ),
        nbformat.v4.new_markdown_cell(
            f"### {exercise.title} ({points} point{plural})\n\n"
            + _plain_markdown(exercise.prompt, equations)
        ),
        _raw("# BEGIN SOLUTION"),
        nbformat.v4.new_code_cell(_answer_cell(exercise)),
        _raw("# END SOLUTION"),
        _raw("# BEGIN TESTS"),
        *(nbformat.v4.new_code_cell(f"assert {expression}") for expression in public),
        nbformat.v4.new_code_cell(hidden_test),
        _raw("# END TESTS"),
        _raw("# END QUESTION"),
    ]


def master_notebook(
    chapter: str,
    title: str,
    exercises: list[CodingExercise],
    settings: dict[str, dict],
    setup: str,
    equations: dict[str, str],
    repository: dict | None = None,
) -> nbformat.NotebookNode:
    """The master notebook of ``chapter`` (its slug), titled ``title``: its ``exercises``
    worth the points of ``settings`` (label -> points, public tests), after ``setup``; its
    set-up cell installs attnkit from ``repository`` (``booktools/repository.py``)."""
    unknown = set(settings) - {exercise.label for exercise in exercises}
    if unknown:
        raise ValueError(
            f"{chapter}: the front matter's assignment names no coding exercise {sorted(unknown)}"
        )
    missing = [exercise.label for exercise in exercises if exercise.label not in settings]
    if missing:
        raise ValueError(f"{chapter}: the front matter's assignment lacks {missing}")
    config = {
        "name": chapter,
        "requirements": "requirements.txt",
        # Gradescope builds the grading environment with this Python: the one building the
        # assignment, which is the book's own, so that both grade alike.
        "python_version": f"{sys.version_info.major}.{sys.version_info.minor}",
        "autograder_files": ["attnkit"],
        "init_cell": False,  # _otter_cell, after the set-up cell that installs Otter
        "export_cell": False,
        "check_all_cell": False,
        "run_tests": False,
        "generate": True,
    }
    total = sum(settings[exercise.label]["points"] for exercise in exercises)
    cells = [
        _yaml_cell("# ASSIGNMENT CONFIG", config),
        _otter_cell(chapter),
        nbformat.v4.new_markdown_cell(
            f"# {title}: exercises\n\n"
            f"{len(exercises)} coding exercises from the chapter *{title}*, {total} points in "
            "all. Write each function in place of the line that raises `NotImplementedError`, "
            "run its cell to see the chapter's check, then `grader.check(...)` for the public "
            "tests. Grading runs the chapter's checks again, with tests you do not see; a "
            "question scores its points when its check passes."
        ),
        nbformat.v4.new_code_cell(setup),
    ]
    for exercise in exercises:
        cells += _question_cells(exercise, settings[exercise.label], equations)
    code = "\n".join(cell.source for cell in cells if cell.cell_type == "code")
    cells.insert(1, nbformat.v4.new_code_cell(setup_cell(repository, code)))
    notebook = nbformat.v4.new_notebook(cells=cells)
    notebook.metadata["kernelspec"] = {
        "display_name": "Python 3",
        "language": "python",
        "name": "python3",
    }
    return notebook
