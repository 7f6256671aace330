"""The student's side of grading: run a notebook's cells, then call its functions on request.

The grader starts this inside the sandbox (:mod:`assignments.sandbox`) as ``python -m
assignments.notebook_process NOTEBOOK IN_FD OUT_FD [UID]``. With a ``UID`` (the sandbox was
entered as root) it first becomes that user, which drops every privilege. It runs the notebook's
code cells in order in an IPython shell, as a kernel would: a cell that raises is noted and the
next one runs. Otter's own cells and the calls to the chapter's checks are left out, since the
grader runs the checks itself. It then says it is ready and answers each request
``{"function", "args", "forbidden", "measure", "layout", "twice"}`` with the outcome of calling the notebook's
function of that name (:func:`attnkit.exercises.calling.invoke`), until the grader closes the
channel. Everything crosses as plain data (:mod:`assignments.wire`).
"""

from __future__ import annotations

import ast
import json
import os
import sys

from assignments import wire

# Taken before any student code runs, which may replace what the modules hold.
from attnkit.exercises.calling import LAYOUTS, invoke
from attnkit.exercises.tracing import packed, traced


def _leave_out(node: ast.stmt) -> bool:
    """Is this top-level statement Otter's (import, ``grader = otter.Notebook(...)``,
    ``grader.check(...)``) or a call to a chapter's check, ``check_x(fn)``?"""
    if isinstance(node, ast.Import):
        return any(alias.name.split(".")[0] == "otter" for alias in node.names)
    if isinstance(node, ast.ImportFrom):
        return (node.module or "").split(".")[0] == "otter"
    value = node.value if isinstance(node, (ast.Expr, ast.Assign)) else None
    if not isinstance(value, ast.Call):
        return False
    called = ast.unparse(value.func)
    return called.startswith(("otter.", "grader.")) or (
        isinstance(node, ast.Expr)
        and isinstance(value.func, ast.Name)
        and value.func.id.startswith("check_")
    )


def runnable(source: str, shell) -> str:
    """The cell's code as the shell will run it, without the statements :func:`_leave_out`
    names (blanked, so that line numbers stay)."""
    code = shell.transform_cell(source)
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return code  # the shell reports it when the cell runs
    lines = code.splitlines()
    for node in tree.body:
        if _leave_out(node):
            for number in range(node.lineno - 1, node.end_lineno):
                lines[number] = ""
    return "\n".join(lines) + "\n"


def run_cells(path: str, shell) -> list[str]:
    """Run the notebook's code cells; say which raised, as ``cell 3: NameError``."""
    with open(path, encoding="utf-8") as file:
        cells = json.load(file)["cells"]
    errors = []
    for number, cell in enumerate(cells, start=1):
        if cell.get("cell_type") != "code":
            continue
        source = cell.get("source", "")
        source = "".join(source) if isinstance(source, list) else str(source)
        result = shell.run_cell(runnable(source, shell), store_history=False, silent=True)
        if not result.success:
            error = result.error_in_exec or result.error_before_exec
            errors.append(f"cell {number}: {type(error).__name__}")
    return errors


def serve(shell, read, out_fd: int) -> None:
    """Answer calls until the grader closes the channel."""
    while True:
        try:
            request = wire.receive(read)
        except EOFError:
            return
        fn = shell.user_ns.get(request["function"])
        if not callable(fn):
            wire.send(out_fd, {"missing": True})
            continue
        if request.get("trace"):  # a rejected answer's trace, as plain strings
            found = traced(fn, str(request["trace"]), tuple(request["forbidden"]))
            wire.send(out_fd, {"trace": packed(found)})
            continue
        layout = request.get("layout")
        outcome = invoke(
            fn,
            tuple(request["args"]),
            tuple(request["forbidden"]),
            bool(request["measure"]),
            layout if layout in LAYOUTS else "C",
            bool(request.get("twice")),
        )
        wire.send(
            out_fd,
            {
                "result": outcome.result,
                "error": outcome.error,
                "forbidden": outcome.forbidden,
                "peak_bytes": outcome.peak_bytes,
                "args": outcome.args,
                "shared": outcome.shared,
            },
        )


def keep_the_graders_priority() -> None:
    """Give the sandbox's session the priority the grader runs at. The sandbox is a session of
    its own, and Linux schedules each session (an "autogroup") as one, beside the grader's, as an
    equal whatever the processes' nice values: a notebook graded by ``nice make grade`` that
    loops forever took a whole core from the rest of the machine. A session's nice value can
    only be raised without privileges, so the notebook cannot undo it."""
    try:
        with open("/proc/self/autogroup", "w") as autogroup:
            autogroup.write(str(os.getpriority(os.PRIO_PROCESS, 0)))
    except OSError:  # a kernel without autogroups schedules by nice values alone
        pass


def main(argv: list[str]) -> None:
    notebook, in_fd, out_fd, *user = argv
    in_fd, out_fd = int(in_fd), int(out_fd)
    keep_the_graders_priority()
    if user:  # entered as root: become a user of no account, which drops every capability
        uid = int(user[0])
        os.setgroups([])
        os.setgid(uid)
        os.setuid(uid)
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    for magic in ("matplotlib", "gui"):  # a kernel's display settings: nothing to display here
        shell.register_magic_function(lambda line: None, "line", magic)
    errors = run_cells(notebook, shell)
    functions = sorted(name for name, value in shell.user_ns.items() if callable(value))
    wire.send(out_fd, {"ready": True, "errors": errors, "functions": functions})
    serve(shell, wire.reader(in_fd), out_fd)


if __name__ == "__main__":
    main(sys.argv[1:])
