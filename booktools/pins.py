"""The pins of the book's lock, ``requirements.txt`` (``make lock`` writes it), or of another
requirements file: the set-up cell installs them, and the tests compare with them."""

from __future__ import annotations

import re
from pathlib import Path

LOCK = Path(__file__).resolve().parent.parent / "requirements.txt"
PIN = re.compile(r"([A-Za-z0-9][\w.-]*)==(\S+)")


def normalised(name: str) -> str:
    """A package's name as PyPI compares names (and pip-compile writes them)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def pins(path: Path = LOCK) -> dict[str, str]:
    """``{name: version}`` for each ``name==version`` line of ``path``, names normalised."""
    return {
        normalised(found[1]): found[2]
        for line in path.read_text(encoding="utf-8").splitlines()
        if (found := PIN.match(line))
    }


def pin(package: str, path: Path = LOCK) -> str:
    """The pin of ``package``, such as ``torch==2.13.0``; KeyError where the file has none."""
    name = normalised(package)
    return f"{name}=={pins(path)[name]}"
