"""A notebook run alone in an empty folder with a student's own Python, as a student who
downloads it would: nothing of the book beside it, attnkit installed by its set-up cell."""

import os
import subprocess
import sys

import nbformat

from tests.support.book import ROOT


def run_alone(python, notebook, folder, repository):
    """Execute a copy of ``notebook`` alone in the empty ``folder`` with the student's
    ``python``, installing from ``repository`` (URL, commit); the executed notebook and its
    outputs (cell index, output)."""
    url, commit = repository
    copy = folder / notebook.name  # alone: no attnkit, no chapters/ beside it
    copy.write_bytes(notebook.read_bytes())
    env = {**os.environ, "BOOK_REPOSITORY_URL": url, "BOOK_BRANCH": commit, "MPLBACKEND": "Agg"}
    # nbclient runs the kernel from the student's Python; the cwd is the empty folder
    run = subprocess.run(
        [
            python,
            "-c",
            "import sys, nbformat; from nbclient import NotebookClient\n"
            "nb = nbformat.read(sys.argv[1], as_version=4)\n"
            "NotebookClient(nb, timeout=300, kernel_name='python3', allow_errors=True,\n"
            "               resources={'metadata': {'path': sys.argv[2]}}).execute()\n"
            "nbformat.write(nb, sys.argv[1])",
            str(copy),
            str(folder),
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    executed = nbformat.read(copy, as_version=4)
    outputs = [(i, o) for i, cell in enumerate(executed.cells) for o in cell.get("outputs", [])]
    return executed, outputs


def installed_for_the_student(python, module):
    """Whether ``module`` is imported from the student's own environment, not the book's."""
    location = subprocess.run(
        [python, "-c", f"import {module}; print({module}.__file__)"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return "site-packages" in location and str(ROOT) not in location and sys.prefix not in location
