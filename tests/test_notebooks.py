"""Every chapter's .ipynb download: its set-up cell first, then the chapter's own code; and a
downloaded notebook runs alone in an empty folder, where attnkit is not installed."""

import os
import re
import subprocess
import sys

import jupytext
import nbformat
import pytest

from tests.support.book import REPOSITORY_URL, ROOT, page, toc_files

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
    installs_torch = '"torch==2.13.0", "--extra-index-url", "https://download.pytorch.org/whl/cpu"'
    assert (installs_torch in setup.source) == (name in TORCH_PAGES)


def test_notebook_without_repository_says_how_to_install_attnkit(built_book_without_repository):
    notebook = nbformat.read(
        built_book_without_repository[0] / "_sources" / "chapters" / "attention.ipynb", as_version=4
    )
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


def test_downloaded_notebook_runs_alone_in_an_empty_folder(
    built_book, python_without_attnkit, local_clone, tmp_path
):
    url, commit = local_clone
    missing = subprocess.run([python_without_attnkit, "-c", "import attnkit"], capture_output=True)
    assert missing.returncode != 0, "the student's Python must start without attnkit"
    notebook = tmp_path / "attention.ipynb"  # alone: no attnkit, no chapters/ beside it
    notebook.write_bytes((built_book[0] / "_sources" / "chapters" / "attention.ipynb").read_bytes())
    env = {**os.environ, "BOOK_REPOSITORY_URL": url, "BOOK_BRANCH": commit, "MPLBACKEND": "Agg"}
    # nbclient runs the kernel from the student's Python; the cwd is the empty folder
    run = subprocess.run(
        [
            python_without_attnkit,
            "-c",
            "import sys, nbformat; from nbclient import NotebookClient\n"
            "nb = nbformat.read(sys.argv[1], as_version=4)\n"
            "NotebookClient(nb, timeout=300, kernel_name='python3', allow_errors=True,\n"
            "               resources={'metadata': {'path': sys.argv[2]}}).execute()\n"
            "nbformat.write(nb, sys.argv[1])",
            str(notebook),
            str(tmp_path),
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    executed = nbformat.read(notebook, as_version=4)
    outputs = [(i, o) for i, cell in enumerate(executed.cells) for o in cell.get("outputs", [])]
    errors = [(i, o.ename, o.evalue) for i, o in outputs if o.output_type == "error"]
    assert errors == []  # the exercises' stubs too: their checks report, they do not raise
    stderr = "".join(o.get("text", "") for _, o in outputs if o.get("name") == "stderr")
    assert not re.search(r"Glyph \d+ .*missing from font|findfont", stderr), (
        stderr
    )  # Japanese labels drawn
    assert any("application/vnd.jupyter.widget-view+json" in o.get("data", {}) for _, o in outputs)
    location = subprocess.run(
        [python_without_attnkit, "-c", "import attnkit; print(attnkit.__file__)"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "site-packages" in location and str(ROOT) not in location  # installed from the clone
    assert sys.prefix not in location
