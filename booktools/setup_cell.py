"""The set-up cell that opens every notebook the book hands out: the chapters' downloads
(``_ext/notebooks.py``) and the Otter-Grader assignments (``assignments/master.py``).

Where ``attnkit`` is missing (Colab, a student's own Jupyter) the cell installs it from the book's
repository; where the notebook's code needs PyTorch or Otter and finds none, it installs the
book's own pin (PyTorch's CPU build). In the book's environment and on Binder it installs nothing.
In an edition in another language it also sets the language of the exercise checks' messages
(``ATTNKIT_LANGUAGE``, ``attnkit/exercises/wording.py``).
This module imports nothing of Sphinx, so that both the build and ``assignments`` can use it.
"""

from __future__ import annotations

import re
from pathlib import Path

from booktools.pins import pin

ROOT = Path(__file__).resolve().parent.parent
TORCH_CPU_INDEX = "https://download.pytorch.org/whl/cpu"
IMPORTS_TORCH = re.compile(r"^\s*(import torch|from torch\b)", re.M)
# attnkit's modules as a notebook or a module of attnkit imports them: from attnkit.x (or .x)
# import ..., import attnkit.x, from attnkit (or .) import x, y
IMPORTS_ATTNKIT = re.compile(
    r"^\s*(?:from (?:attnkit)?\.(\w+)|import attnkit\.(\w+)|from (?:attnkit|\.) import ([\w, ()]+))",
    re.M,
)
ATTNKIT = ROOT / "chapters" / "attnkit"
USES_OTTER = re.compile(r"^\s*(import otter|from otter\b)", re.M)


def uses_torch(code: str, seen: frozenset = frozenset()) -> bool:
    """Whether ``code`` imports PyTorch, itself or through the attnkit modules it imports (read
    from their files, so that a new module that needs PyTorch is found without a list)."""
    if IMPORTS_TORCH.search(code):
        return True
    modules = {
        name
        for match in IMPORTS_ATTNKIT.findall(code)
        for name in re.findall(r"\w+", " ".join(match))
    } - seen
    return any(
        uses_torch((ATTNKIT / f"{module}.py").read_text(encoding="utf-8"), seen | modules)
        for module in modules
        if (ATTNKIT / f"{module}.py").is_file()
    )


def setup_cell(repository: dict | None, code: str, language: str | None = None) -> str:
    """The cell's source, for the repository found at build time (``launch_buttons``), the
    ``code`` of the notebook it opens and the ``language`` of its edition (None: English)."""
    url = f'"{repository["url"]}"' if repository else "None"
    branch = repository["branch"] if repository else "main"
    installs = ""
    if uses_torch(code):
        installs += f"""
if importlib.util.find_spec("torch") is None:  # the CPU build, not the multi-GB CUDA one
    pip_install("{pin("torch")}", "--extra-index-url", "{TORCH_CPU_INDEX}")"""
    if language not in (None, "en"):
        installs += f"""
os.environ["ATTNKIT_LANGUAGE"] = "{language}"  # the exercise checks' messages"""
    if USES_OTTER.search(code):
        installs += f"""
if importlib.util.find_spec("otter") is None:  # Otter-Grader, for grader.check
    pip_install("{pin("otter-grader")}")"""
    return f"""\
# Set-up. Where this chapter's helper library `attnkit` is missing (Colab, your own Jupyter),
# this cell installs it from the book's repository; in the book's environment it does nothing.
import importlib, importlib.util, os, subprocess, sys

REPOSITORY = os.environ.get("BOOK_REPOSITORY_URL", {url})
BRANCH = os.environ.get("BOOK_BRANCH", "{branch}")


def pip_install(*arguments):
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", *arguments], check=True)
{installs}
if importlib.util.find_spec("attnkit") is None:
    if not REPOSITORY:
        raise RuntimeError("attnkit is missing: set BOOK_REPOSITORY_URL to the book's repository")
    pip_install(f"git+{{REPOSITORY}}@{{BRANCH}}")
importlib.invalidate_caches()
if "google.colab" in sys.modules:  # Colab shows third-party widgets only when asked to
    from google.colab import output

    output.enable_custom_widget_manager()
"""
