"""Every chapter's .ipynb download: its set-up cell first, then the chapter's own code; and a
downloaded notebook, like an assignment's student notebook, runs alone in an empty folder, where
attnkit is not installed."""

import re

import jupytext
import nbformat
import pytest

from attnkit.exercises import stub
from tests.support.alone import installed_for_the_student, run_alone
from tests.support.book import REPOSITORY_URL, ROOT, page, pin, toc_files

pytestmark = pytest.mark.build

NOTEBOOK_PAGES = [name for name in toc_files() if name.startswith("chapters/")]
TORCH_PAGES = {
    "chapters/qkv-attention",
    "chapters/multi-head-attention",
    "chapters/positional-encoding",
    "chapters/tiny-transformer",
    "chapters/attention-at-scale",
    "chapters/tiny-gpt",
    "chapters/induction-heads",
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


def verdicts(outputs) -> list[str]:
    """The exercise checks' verdicts among a notebook's outputs, as text."""
    return [
        o.data["text/plain"]
        for _, o in outputs
        if o.output_type == "execute_result" and o.data["text/plain"].startswith(("✓", "✗"))
    ]


def test_downloaded_notebook_runs_alone_in_an_empty_folder(
    built_book, python_without_attnkit, local_clone, tmp_path
):
    """The English notebook, then the Japanese one in another empty folder, with the student's
    Python that the first one's set-up cell installed attnkit into."""
    notebook = built_book[0] / "_sources" / "chapters" / "attention.ipynb"
    (tmp_path / "en").mkdir()
    _, outputs = run_alone(python_without_attnkit, notebook, tmp_path / "en", local_clone)
    errors = [(i, o.ename, o.evalue) for i, o in outputs if o.output_type == "error"]
    assert errors == []  # the exercises' stubs too: their checks report, they do not raise
    stderr = "".join(o.get("text", "") for _, o in outputs if o.get("name") == "stderr")
    assert not re.search(r"Glyph \d+ .*missing from font|findfont", stderr), (
        stderr
    )  # Japanese labels drawn
    assert any("application/vnd.jupyter.widget-view+json" in o.get("data", {}) for _, o in outputs)
    assert installed_for_the_student(python_without_attnkit, "attnkit")  # from the clone
    english = verdicts(outputs)

    notebook = built_book[0] / "ja" / "_sources" / "chapters" / "attention.ipynb"
    (tmp_path / "ja").mkdir()
    _, outputs = run_alone(python_without_attnkit, notebook, tmp_path / "ja", local_clone)
    assert [o for _, o in outputs if o.output_type == "error"] == []
    # the same verdicts, in Japanese, from the catalogue installed with attnkit
    japanese = verdicts(outputs)
    assert len(japanese) == len(english)
    assert {v[0] for v in english} == {"✓", "✗"}  # the stubs fail, the solutions pass
    for english_verdict, japanese_verdict in zip(english, japanese):
        mark = "✓ 正解です" if english_verdict.startswith("✓") else "✗ 不合格: "
        assert japanese_verdict.startswith(mark), japanese_verdict
    # the stubs raise in Japanese, and their verdicts quote that
    stubbed = [v for v in japanese if "NotImplementedError" in v]
    assert stubbed and all(stub.words("ja") in v for v in stubbed), stubbed
