"""Offer every chapter as a Jupyter notebook (.ipynb) that runs on its own, anywhere.

When a page is written, its MyST Markdown source is converted with Jupytext into a notebook
without outputs at ``_sources/<page>.ipynb``, and the theme's download menu links to it
(sphinx-book-theme shows an ".ipynb" entry when ``ipynb_source`` is set). In the student
edition the notebook is made from the source with its solutions removed.

The notebook starts with a set-up cell (:func:`setup_cell`): where ``attnkit`` is missing
(Colab, a student's own Jupyter) it installs the helper from the book's repository, and PyTorch's
CPU build where a chapter needs torch and has none; in the book's own environment and on Binder
it does nothing. The notebooks are generated at build time and never committed.
"""

from __future__ import annotations

import re
from pathlib import Path

import jupytext
import nbformat
from student_edition import strip_solutions

ROOT = Path(__file__).resolve().parent.parent
TORCH_CPU_INDEX = "https://download.pytorch.org/whl/cpu"
USES_TORCH = re.compile(
    r"^\s*(import torch|from torch\b|from attnkit\.(modules|reversal|decoding)\b)", re.M
)


def pinned_torch() -> str:
    """The book's own torch pin, e.g. ``torch==2.13.0``, from requirements.txt."""
    lines = (ROOT / "requirements.txt").read_text().splitlines()
    return next(line for line in lines if line.startswith("torch=="))


def setup_cell(repository: dict | None, needs_torch: bool) -> str:
    url = f'"{repository["url"]}"' if repository else "None"
    branch = repository["branch"] if repository else "main"
    torch = ""
    if needs_torch:
        torch = f"""
if importlib.util.find_spec("torch") is None:  # the CPU build, not the multi-GB CUDA one
    pip_install("{pinned_torch()}", "--extra-index-url", "{TORCH_CPU_INDEX}")"""
    return f"""\
# Set-up. Where this chapter's helper library `attnkit` is missing (Colab, your own Jupyter),
# this cell installs it from the book's repository; in the book's environment it does nothing.
import importlib, importlib.util, os, subprocess, sys

REPOSITORY = os.environ.get("BOOK_REPOSITORY_URL", {url})
BRANCH = os.environ.get("BOOK_BRANCH", "{branch}")


def pip_install(*arguments):
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", *arguments], check=True)
{torch}
if importlib.util.find_spec("attnkit") is None:
    if not REPOSITORY:
        raise RuntimeError("attnkit is missing: set BOOK_REPOSITORY_URL to the book's repository")
    pip_install(f"git+{{REPOSITORY}}@{{BRANCH}}")
importlib.invalidate_caches()
if "google.colab" in sys.modules:  # Colab shows third-party widgets only when asked to
    from google.colab import output

    output.enable_custom_widget_manager()
"""


def chapter_notebook(text: str, repository: dict | None, student: bool):
    """The notebook of a chapter's MyST ``text``, set-up cell first."""
    notebook = jupytext.reads(strip_solutions(text) if student else text, fmt="md:myst")
    notebook.metadata.pop("jupytext", None)  # a standalone notebook, not paired with a file
    code = "\n".join(cell.source for cell in notebook.cells if cell.cell_type == "code")
    notebook.cells.insert(
        0,
        nbformat.v4.new_code_cell(
            setup_cell(repository, needs_torch=bool(USES_TORCH.search(code)))
        ),
    )
    return notebook


def is_chapter(app, pagename) -> bool:
    return (Path(app.srcdir) / f"{pagename}.md").exists() and "kernelspec" in app.env.metadata.get(
        pagename, {}
    )


def offer_notebook(app, pagename, templatename, context, doctree):
    if doctree is not None and is_chapter(app, pagename):
        context["ipynb_source"] = f"{pagename}.ipynb"


def write_notebook(app, pagename, templatename, context, doctree):
    if doctree is None or not is_chapter(app, pagename):
        return
    text = (Path(app.srcdir) / f"{pagename}.md").read_text(encoding="utf-8")
    notebook = chapter_notebook(text, app.config.book_repository, app.config.student_edition)
    target = Path(app.outdir) / "_sources" / f"{pagename}.ipynb"
    target.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(notebook, target)


def setup(app):
    app.setup_extension("student_edition")
    app.setup_extension("launch_buttons")  # the book_repository config value
    # the download menu is built at priority 501; the file is written after anything else
    # (the theme's launch buttons would copy the executed notebook there) has run
    app.connect("html-page-context", offer_notebook, priority=400)
    app.connect("html-page-context", write_notebook, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
