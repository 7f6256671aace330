"""The execution cache is emptied when the library the chapters import changes
(booktools/cache_stamp.py): jupyter-cache knows a chapter by its code alone."""

import shutil

from booktools import cache_stamp


def test_a_cache_filled_with_another_library_is_emptied_and_this_one_kept(tmp_path, monkeypatch):
    library = tmp_path / "attnkit"
    shutil.copytree(cache_stamp.LIBRARY, library, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(cache_stamp, "LIBRARY", library)
    cache = tmp_path / "cache"
    (cache / "executed").mkdir(parents=True)  # a cache of unknown provenance: no stamp
    assert cache_stamp.empty_if_stale(cache) is True
    assert not (cache / "executed").exists()
    (cache / "executed").mkdir()
    assert cache_stamp.empty_if_stale(cache) is False  # the same library: kept
    assert (cache / "executed").exists()
    (library / "core.py").write_text("# changed\n", encoding="utf-8", newline="\n")
    assert cache_stamp.empty_if_stale(cache) is True
    assert not (cache / "executed").exists()


def test_a_missing_cache_is_made_and_stamped(tmp_path):
    cache = tmp_path / "new" / "cache"
    assert cache_stamp.empty_if_stale(cache) is False  # nothing was there to empty
    stamp = (cache / cache_stamp.STAMP).read_text(encoding="utf-8")
    assert stamp == cache_stamp.library_fingerprint()


def test_the_fingerprint_ignores_bytecode(tmp_path, monkeypatch):
    library = tmp_path / "attnkit"
    shutil.copytree(cache_stamp.LIBRARY, library, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(cache_stamp, "LIBRARY", library)
    before = cache_stamp.library_fingerprint()
    (library / "__pycache__").mkdir(exist_ok=True)
    (library / "__pycache__" / "core.cpython-311.pyc").write_bytes(b"\0")
    assert cache_stamp.library_fingerprint() == before
