"""Share one execution cache between builds.

``BOOK_EXECUTION_CACHE`` (set by the Makefile) names the jupyter-cache folder: the student
edition and test builds into other folders then reuse the outputs of the normal build instead of
running every notebook again. Unset, myst-nb keeps its cache beside the build's html folder.
Kept because jupyter-book 1 takes the cache's path only from ``_config.yml`` (``execute:
cache``, one fixed path): ``jupyter-book build`` has no option that sets it or any Sphinx value,
and the book's builds (both editions, the student edition, the tests' builds into their own
folders) share one cache whose place the Makefile chooses. A cache filled with another version of
attnkit is emptied first (booktools.cache_stamp): it knows a chapter by its code alone.
"""

from __future__ import annotations

import os
from pathlib import Path

from booktools.cache_stamp import empty_if_stale


def use_shared_cache(app, config):
    if os.environ.get("BOOK_EXECUTION_CACHE"):
        config.nb_execution_cache_path = os.environ["BOOK_EXECUTION_CACHE"]
        empty_if_stale(Path(config.nb_execution_cache_path))


def setup(app):
    app.connect("config-inited", use_shared_cache)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
