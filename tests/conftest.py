"""Shared fixtures: the whole book, built once per test session from a clean state."""

import subprocess
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="session")
def built_book(tmp_path_factory):
    """Build the book with the README's command into a fresh folder; return its html folder.

    The folder is new, so every notebook is executed (no cache) and the build is clean.
    """
    out = tmp_path_factory.mktemp("book")
    start = time.perf_counter()
    build = subprocess.run(["make", "--no-print-directory", "book", f"OUT={out}"], cwd=ROOT,
                           capture_output=True, text=True)
    seconds = time.perf_counter() - start
    log = build.stdout + build.stderr
    (out / "build.log").write_text(log)
    assert build.returncode == 0, f"the book did not build (log in {out / 'build.log'}):\n{log[-6000:]}"
    print(f"\nclean build with every notebook executed: {seconds:.1f} s")
    return out / "_build" / "html", log
