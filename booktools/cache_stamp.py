"""The execution cache emptied when the library the chapters import has changed.

jupyter-cache knows a chapter by the code of its cells alone: after a change to attnkit (its code,
its recorded data, its messages) or to the lock, a chapter whose cells did not change would keep
the outputs the old library gave. The cache folder keeps a stamp, a hash of those files; where
the stamp is missing or differs, the cache is emptied, and every chapter runs again.
``make book`` checks it before running the chapters (booktools.execute_in_parallel), and every
build that reads the shared cache (_ext/execution_cache.py: ``make page``, ``make student``) too.
"""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LIBRARY = ROOT / "chapters" / "attnkit"
STAMP = "library.sha256"


def library_fingerprint() -> str:
    """A SHA-256 of attnkit's files (not its bytecode) and of requirements.txt."""
    digest = hashlib.sha256()
    files = [p for p in LIBRARY.rglob("*") if p.is_file() and "__pycache__" not in p.parts]
    named = [(p.relative_to(LIBRARY).as_posix(), p) for p in sorted(files)]
    for name, path in [*named, ("requirements.txt", ROOT / "requirements.txt")]:
        digest.update(name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def empty_if_stale(cache_folder: Path) -> bool:
    """Empty ``cache_folder`` unless its stamp is this library's, then stamp it; whether it was
    emptied."""
    stamp, fingerprint = cache_folder / STAMP, library_fingerprint()
    if stamp.is_file() and stamp.read_text(encoding="utf-8") == fingerprint:
        return False
    emptied = cache_folder.exists()
    shutil.rmtree(cache_folder, ignore_errors=True)
    cache_folder.mkdir(parents=True, exist_ok=True)  # two builds side by side may both empty it
    stamp.write_text(fingerprint, encoding="utf-8")
    return emptied
