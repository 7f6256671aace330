"""Tiny Sphinx projects, built the way the library tests check one of the book's extensions
without building the book."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def sphinx_build(source: Path, builder: str, out: Path, strict=True, **environment) -> str:
    """Build the project in ``source`` with ``builder`` into ``out``, every page read afresh
    (with warnings as errors where ``strict``); the build's warnings. A build that fails fails
    the test, with the end of what it said."""
    run = subprocess.run(
        [sys.executable, "-m", "sphinx", "-b", builder, "-E", *(["-W"] if strict else [])]
        + [str(source), str(out)],
        capture_output=True,
        text=True,
        env={**os.environ, **environment},
        timeout=300,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    return run.stderr
