"""Tiny Sphinx projects, built the way the library tests check one of the book's extensions
without building the book."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

EXTENSIONS = Path(__file__).resolve().parents[2] / "_ext"


def sphinx_build(source: Path, builder: str, out: Path, strict=True, **environment) -> str:
    """Build the project in ``source`` with ``builder`` into ``out``, every page read afresh
    (with warnings as errors where ``strict``); the build's warnings. A build that fails fails
    the test, with the end of what it said. The book's extensions are found by their names, as
    the book's build finds them (jupyter-book puts _ext/ on the path)."""
    path = os.pathsep.join(filter(None, [str(EXTENSIONS), os.environ.get("PYTHONPATH")]))
    run = subprocess.run(
        [sys.executable, "-m", "sphinx", "-b", builder, "-E", *(["-W"] if strict else [])]
        + [str(source), str(out)],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": path, **environment},
        timeout=300,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    return run.stderr
