"""The set-up cell (booktools/setup_cell.py) that opens the chapters' notebooks and the assignments':
each assignment starts with it, before Otter's own cell, and in the book's own environment it
installs nothing. The notebooks run alone in a fresh Python in test_notebooks.py."""

import subprocess
import sys

import nbformat
import pytest

from assignments.build import chapters_with_exercises, write_master
from booktools.repository import find_repository
from booktools.setup_cell import setup_cell, uses_torch
from tests.support.book import REPOSITORY_URL

REPOSITORY = find_repository({"BOOK_REPOSITORY_URL": REPOSITORY_URL}, None)


@pytest.mark.parametrize("chapter", chapters_with_exercises())
def test_every_assignment_opens_with_the_books_set_up_cell(chapter, tmp_path):
    master = nbformat.read(write_master(chapter, tmp_path, REPOSITORY), as_version=4)
    config, setup, otter, *_ = master.cells
    # Otter would put its own cell, which imports otter, before everything
    assert config.source.startswith("# ASSIGNMENT CONFIG") and "init_cell: false" in config.source
    code = "\n".join(cell.source for cell in master.cells if cell.cell_type == "code")
    assert setup.source == setup_cell(REPOSITORY, code)
    assert f'os.environ.get("BOOK_REPOSITORY_URL", "{REPOSITORY_URL}")' in setup.source
    assert 'pip_install("otter-grader==7.0.0")' in setup.source
    assert otter.source.splitlines()[1:] == [
        "import otter",
        f'grader = otter.Notebook("{chapter}.ipynb")',
    ]


@pytest.mark.parametrize("code", ["", "import torch\nimport otter"])
def test_set_up_cell_installs_nothing_in_the_books_environment(code, tmp_path):
    cell = tmp_path / "setup.py"
    cell.write_text(setup_cell(REPOSITORY, code))
    assert "pip_install(" in cell.read_text()
    # every install goes through subprocess.run: here any call to it fails
    run = subprocess.run(
        [
            sys.executable,
            "-c",
            "import subprocess, sys\nsubprocess.run = None\nexec(open(sys.argv[1]).read())",
            cell,
        ],
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stderr


@pytest.mark.parametrize("language, verdict", [(None, "✗ failed: "), ("ja", "✗ 不合格: ")])
def test_set_up_cell_sets_the_language_of_the_checks(language, verdict, tmp_path, monkeypatch):
    monkeypatch.delenv("ATTNKIT_LANGUAGE", raising=False)
    cell = tmp_path / "notebook.py"
    cell.write_text(
        setup_cell(REPOSITORY, "", language)
        + "\nfrom attnkit.exercises import check_softmax\nprint(repr(check_softmax(abs)))"
    )
    run = subprocess.run(
        [sys.executable, "-c", "import sys\nexec(open(sys.argv[1]).read())", cell],
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith(verdict), run.stdout


@pytest.mark.parametrize(
    "code, torch",
    [
        ("import numpy as np\nfrom attnkit.core import softmax", False),
        ("from attnkit.plots import plot_attention", False),
        ("import torch", True),
        ("    from torch import nn", True),
        ("from attnkit.modules import EncoderLayer", True),
        ("import attnkit.modules", True),
        ("from attnkit import core, modules", True),
        ("from attnkit.transformer import EncoderDecoderTransformer", True),  # via .modules too
        ("from attnkit.exercises.attention import check_softmax", False),
    ],
)
def test_the_set_up_cell_installs_pytorch_where_the_code_needs_it(code, torch):
    """Read from attnkit's own modules, followed through their imports: no list to keep."""
    assert uses_torch(code) == torch
    assert ('pip_install("torch==' in setup_cell(REPOSITORY, code)) == torch
