"""The code is kept by ruff (configured in pyproject.toml): the Python tree is lint-clean and
formatted, and so are the chapters' code cells, read through Jupytext as notebooks."""

import subprocess
import sys

import jupytext

from tests.support.book import ROOT, toc_files

RUFF = [sys.executable, "-m", "ruff"]


def ruff(*arguments, cwd=ROOT):
    return subprocess.run([*RUFF, *arguments], cwd=cwd, capture_output=True, text=True)


def test_python_files_pass_ruff_check():
    result = ruff("check", "--no-cache", ".")
    assert result.returncode == 0, f"`make format` fixes most of these:\n{result.stdout}"


def test_python_files_are_formatted():
    result = ruff("format", "--no-cache", "--check", ".")
    assert result.returncode == 0, f"run `make format`:\n{result.stdout}"


def test_chapter_code_cells_pass_ruff_check(tmp_path):
    """Each page with code, as the notebook a reader downloads (ruff knows notebook rules: a
    cell's last expression is displayed, imports may come in a later cell)."""
    for name in toc_files():
        source = ROOT / f"{name}.md"
        notebook = jupytext.read(source)
        if "kernelspec" in notebook.metadata:  # a notebook page, not plain Markdown
            jupytext.write(notebook, tmp_path / f"{source.stem}.ipynb")
    assert list(tmp_path.glob("*.ipynb"))
    result = ruff(
        "check", "--no-cache", "--config", str(ROOT / "pyproject.toml"), ".", cwd=tmp_path
    )
    assert result.returncode == 0, f"in the chapters' code cells:\n{result.stdout}"
