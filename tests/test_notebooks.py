"""Every chapter is offered as a .ipynb download that opens, matches its source, and runs."""

import jupytext
import nbformat
import pytest
from nbclient import NotebookClient

from conftest import ROOT
from test_book import page, toc_files

pytestmark = pytest.mark.build

NOTEBOOK_PAGES = [name for name in toc_files() if name.startswith("chapters/")]


@pytest.mark.parametrize("name", NOTEBOOK_PAGES)
def test_chapter_offers_a_valid_notebook_with_its_code(built_book, name):
    html_dir = built_book[0]
    assert f'href="../_sources/{name}.ipynb"' in page(html_dir, name)
    notebook = nbformat.read(html_dir / "_sources" / f"{name}.ipynb", as_version=4)
    nbformat.validate(notebook)
    source = jupytext.read(ROOT / f"{name}.md")
    code = [cell.source for cell in notebook.cells if cell.cell_type == "code"]
    assert code == [cell.source for cell in source.cells if cell.cell_type == "code"]
    assert all(not cell.get("outputs") for cell in notebook.cells if cell.cell_type == "code")
    assert "attnkit" in notebook.cells[0].source          # says where the helper lives
    assert notebook.metadata.kernelspec.name == "python3"


@pytest.mark.parametrize("name", ["chapters/attention", "chapters/self-attention"])
def test_downloaded_notebook_executes(built_book, name):
    notebook = nbformat.read(built_book[0] / "_sources" / f"{name}.ipynb", as_version=4)
    client = NotebookClient(notebook, timeout=120, kernel_name="python3",
                            resources={"metadata": {"path": str(ROOT / "chapters")}})
    client.execute()
    errors = [o for cell in notebook.cells for o in cell.get("outputs", []) if o.output_type == "error"]
    assert errors == []
