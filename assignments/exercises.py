"""A chapter's coding exercises, read from its MyST source.

A coding exercise is an ``{exercise}`` directive with a ``:label:``, followed by a code cell
whose stub raises ``NotImplementedError("replace this line with your code")`` and ends by calling
the chapter's ``check_*`` function on the student's function; its reference solution is the
code between ``{solution-start} <label>`` and ``{solution-end}``. What the assignment needs of
the chapter besides (its imports, the points of each question and its public tests) comes from
:func:`setup_code` and :func:`assignment_settings`.
"""

from __future__ import annotations

import ast
import functools
import re
from dataclasses import dataclass

import jupytext
import yaml

from booktools.myst_directives import directives

STUB_MARK = 'raise NotImplementedError("replace this line with your code")'


@dataclass(frozen=True)
class CodingExercise:
    label: str
    title: str
    prompt: str  # the exercise's Markdown, its options left out
    stub: str  # the student's code cell, as the chapter gives it
    solution: str  # the reference solution's code, without the call to the check
    function: str  # the name of the function the student writes
    check: str  # the name of the check the stub calls on it
    check_module: str  # where the check is imported from


def _without_check_call(code: str, check: str, function: str) -> str:
    call = f"{check}({function})"
    return "\n".join(line for line in code.splitlines() if line.strip() != call).strip()


def _stub_parts(stub: str, label: str) -> tuple[str, str, str]:
    """The student's function, the check the stub calls on it, and the check's module."""
    tree = ast.parse(stub)
    functions = [node.name for node in tree.body if isinstance(node, ast.FunctionDef)]
    calls = [
        node.value
        for node in tree.body
        if isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Call)
        and isinstance(node.value.func, ast.Name)
        and node.value.func.id.startswith("check_")
    ]
    if len(functions) != 1 or len(calls) != 1:
        raise ValueError(
            f"{label}: a coding exercise's cell defines one function and calls one check on it, "
            f"found functions {functions} and {len(calls)} check calls"
        )
    check = calls[0].func.id
    modules = [
        node.module
        for node in tree.body
        if isinstance(node, ast.ImportFrom) and check in {alias.name for alias in node.names}
    ]
    if not modules:
        raise ValueError(f"{label}: the cell calls {check} without importing it")
    return functions[0], check, modules[0]


@functools.lru_cache(maxsize=16)
def notebook_cells(text: str) -> tuple:
    """The cells of the MyST notebook ``text``, read once: building an assignment, grading and
    the tests ask for the same chapter many times, and jupytext takes about 60 ms to read one.
    The cells are shared: read them, never change them."""
    return tuple(jupytext.reads(text, fmt="md:myst").cells)


def coding_exercises(text: str) -> list[CodingExercise]:
    """The coding exercises of the MyST notebook ``text``, in the chapter's order."""
    cells = notebook_cells(text)
    exercises, solutions = [], {}
    for index, cell in enumerate(cells):
        if cell.cell_type != "markdown":
            continue
        found = directives(cell.source)
        for directive in found:
            if directive.name == "solution-start":
                solutions[directive.argument] = _solution_code(cells, index)
        # the stub is the code cell right after the exercise, so the exercise ends its cell
        following = cells[index + 1] if index + 1 < len(cells) else None
        if found and found[-1].name == "exercise" and following is not None:
            if STUB_MARK in following.source:
                exercise = found[-1]
                exercises.append(
                    (exercise.options["label"], exercise.argument, exercise.body, following.source)
                )
    found = []
    for label, title, prompt, stub in exercises:
        if label not in solutions:
            raise ValueError(f"{label}: a coding exercise needs a {{solution-start}} {label} block")
        function, check, module = _stub_parts(stub, label)
        solution = _without_check_call(solutions[label], check, function)
        found.append(CodingExercise(label, title, prompt, stub, solution, function, check, module))
    return found


def labelled_equations(text: str) -> dict[str, str]:
    """The TeX of every ``{math}`` directive with a ``:label:`` in the MyST notebook ``text``."""
    equations = {}
    for cell in notebook_cells(text):
        if cell.cell_type == "markdown":
            for directive in directives(cell.source):
                if directive.name == "math" and "label" in directive.options:
                    equations[directive.options["label"]] = directive.body
    return equations


def _solution_code(cells, start: int) -> str:
    """The code cells from the markdown cell ``start`` to the one that ends the solution."""
    code = []
    for cell in cells[start + 1 :]:
        if cell.cell_type == "markdown" and "{solution-end}" in cell.source:
            return "\n\n".join(code)
        if cell.cell_type == "code":
            code.append(cell.source)
    raise ValueError("a {solution-start} block has no {solution-end}")


def setup_code(text: str, code: str) -> str:
    """The imports of the chapter's code cells before its first exercise that ``code`` (the
    solutions and the tests) uses, so that they find the names the chapter gives them."""
    cells = notebook_cells(text)
    imports = []
    for cell in cells:
        if cell.cell_type == "markdown" and "{exercise}" in cell.source:
            break
        if cell.cell_type != "code":
            continue
        for node in ast.parse(cell.source).body:
            if not isinstance(node, (ast.Import, ast.ImportFrom)):
                continue
            names = [(alias.asname or alias.name).split(".")[0] for alias in node.names]
            used = [name for name in names if re.search(rf"\b{name}\b", code)]
            if used:
                node.names = [a for a in node.names if (a.asname or a.name).split(".")[0] in used]
                statement = ast.unparse(node)
                if statement not in imports:
                    imports.append(statement)
    return "\n".join(imports)


def assignment_settings(text: str) -> dict[str, dict]:
    """The front matter's ``assignment`` mapping: for each coding exercise's label, its
    ``points`` and its ``public`` tests (Python expressions that must be true)."""
    front = re.match(r"^---\n(.*?)\n---\n", text, re.S)
    settings = (yaml.safe_load(front[1]) if front else {}).get("assignment") or {}
    if not isinstance(settings, dict):
        raise ValueError("the front matter's assignment is a mapping from labels to settings")
    return settings
