"""Shared fixtures: the whole book, built once per test session from a clean state."""

import subprocess
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def build(target: str, out) -> str:
    """Run ``make <target> OUT=<out>``; return its log, failing the test if the build fails."""
    start = time.perf_counter()
    result = subprocess.run(["make", "--no-print-directory", target, f"OUT={out}"], cwd=ROOT,
                            capture_output=True, text=True)
    log = result.stdout + result.stderr
    (out / f"{target}.log").write_text(log)
    assert result.returncode == 0, f"make {target} failed (log in {out}):\n{log[-6000:]}"
    print(f"\nmake {target}, every notebook executed: {time.perf_counter() - start:.1f} s")
    return log


@pytest.fixture(scope="session")
def built_book(tmp_path_factory):
    """Build the book with the README's command into a fresh folder; return its html folder.

    The folder is new, so every notebook is executed (no cache) and the build is clean.
    """
    out = tmp_path_factory.mktemp("book")
    log = build("book", out)
    return out / "_build" / "html", log


@pytest.fixture(scope="session")
def built_student_edition(tmp_path_factory):
    """The student edition (``make student``), built into a fresh folder; its html folder."""
    out = tmp_path_factory.mktemp("student")
    build("student", out)
    return out / "_build" / "student" / "_build" / "html"
