"""Every chapter's .ipynb download: its set-up cell first, then the chapter's own code; and a
downloaded notebook, like an assignment's student notebook, runs alone in an empty folder, where
attnkit is not installed."""

import os
import re
import subprocess
import sys

import jupytext
import nbformat
import pytest

from assignments.exercises import coding_exercises
from tests.support.book import REPOSITORY_URL, ROOT, page, pin, toc_files

pytestmark = pytest.mark.build

NOTEBOOK_PAGES = [name for name in toc_files() if name.startswith("chapters/")]
TORCH_PAGES = {
    "chapters/qkv-attention",
    "chapters/multi-head-attention",
    "chapters/positional-encoding",
    "chapters/tiny-transformer",
    "chapters/attention-at-scale",
}


@pytest.mark.parametrize("name", NOTEBOOK_PAGES)
def test_chapter_offers_a_notebook_with_a_set_up_cell_and_its_code(built_book, name):
    html_dir = built_book[0]
    assert f'href="../_sources/{name}.ipynb"' in page(html_dir, name)
    notebook = nbformat.read(html_dir / "_sources" / f"{name}.ipynb", as_version=4)
    nbformat.validate(notebook)
    setup, *cells = notebook.cells
    source = jupytext.read(ROOT / f"{name}.md")
    assert [c.source for c in cells] == [c.source for c in source.cells]  # the chapter itself
    assert all(not cell.get("outputs") for cell in notebook.cells if cell.cell_type == "code")
    assert notebook.metadata.kernelspec.name == "python3"
    assert "jupytext" not in notebook.metadata  # not paired with a file
    assert setup.cell_type == "code"
    assert f'os.environ.get("BOOK_REPOSITORY_URL", "{REPOSITORY_URL}")' in setup.source
    assert 'pip_install(f"git+{REPOSITORY}@{BRANCH}")' in setup.source
    installs_torch = (
        f'"{pin("torch")}", "--extra-index-url", "https://download.pytorch.org/whl/cpu"'
    )
    assert (installs_torch in setup.source) == (name in TORCH_PAGES)


def test_notebook_without_repository_says_how_to_install_attnkit(
    built_pages_with_and_without_repository,
):
    html_dir, _ = built_pages_with_and_without_repository["without"]
    notebook = nbformat.read(html_dir / "_sources" / "attention.ipynb", as_version=4)
    assert 'os.environ.get("BOOK_REPOSITORY_URL", None)' in notebook.cells[0].source
    assert "set BOOK_REPOSITORY_URL" in notebook.cells[0].source


@pytest.fixture(scope="module")
def local_clone(tmp_path_factory):
    """The repository, cloned: what `pip install git+URL` fetches, without a network."""
    clone = tmp_path_factory.mktemp("repository") / "clone"
    subprocess.run(["git", "clone", "--quiet", str(ROOT), str(clone)], check=True)
    commit = subprocess.run(
        ["git", "-C", str(clone), "rev-parse", "HEAD"], capture_output=True, text=True, check=True
    ).stdout.strip()
    return f"file://{clone}", commit


def without(python, packages):
    """The student's Python, which the tests that run a notebook alone share, as it started:
    without ``packages`` (module -> distribution), which a test before may have installed."""
    uninstall = [python, "-m", "pip", "uninstall", "--quiet", "--yes", *packages.values()]
    subprocess.run(uninstall, check=True)
    for module in packages:
        missing = subprocess.run([python, "-c", f"import {module}"], capture_output=True)
        assert missing.returncode != 0, f"the student's Python must start without {module}"


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


def test_downloaded_notebook_runs_alone_in_an_empty_folder(
    built_book, python_without_attnkit, local_clone, tmp_path
):
    without(python_without_attnkit, {"attnkit": "attnkit"})
    notebook = built_book[0] / "_sources" / "chapters" / "attention.ipynb"
    _, outputs = run_alone(python_without_attnkit, notebook, tmp_path, local_clone)
    errors = [(i, o.ename, o.evalue) for i, o in outputs if o.output_type == "error"]
    assert errors == []  # the exercises' stubs too: their checks report, they do not raise
    stderr = "".join(o.get("text", "") for _, o in outputs if o.get("name") == "stderr")
    assert not re.search(r"Glyph \d+ .*missing from font|findfont", stderr), (
        stderr
    )  # Japanese labels drawn
    assert any("application/vnd.jupyter.widget-view+json" in o.get("data", {}) for _, o in outputs)
    assert installed_for_the_student(python_without_attnkit, "attnkit")  # from the clone


def test_assignment_notebook_runs_alone_in_an_empty_folder(
    graded_assignments, python_without_attnkit, local_clone, tmp_path
):
    """The notebook an instructor hands out (make assignments), in a student's own Jupyter: its
    set-up cell, the book's, installs attnkit and Otter before Otter's own cell imports it."""
    without(python_without_attnkit, {"attnkit": "attnkit", "otter": "otter-grader"})
    notebook = graded_assignments.assignments / "attention" / "student" / "attention.ipynb"
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
