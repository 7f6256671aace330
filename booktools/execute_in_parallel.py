"""Run the chapters that the execution cache lacks side by side, with jupyter-cache's own project
and its local-parallel executor (one process per core), before the build reads the cache
(``make book`` runs this first). myst-nb runs them one after another as it reads each page; then
it only finds their outputs.

Each chapter joins the cache's project through myst-nb's reader plugin, as the build names it, and
runs as myst-nb runs it: in its own folder, with _config.yml's timeout and allow_errors. A chapter
whose cells fail is left out of the cache, and the build runs it again and reports the error as it
always does. The cache is emptied first if the library the chapters import has changed
(booktools.cache_stamp).

    python -m booktools.execute_in_parallel CACHE_FOLDER
"""

from __future__ import annotations

import sys
from pathlib import Path

import yaml

from booktools import toc
from booktools.cache_stamp import empty_if_stale

ROOT = Path(__file__).resolve().parent.parent
READ_DATA = {"type": "plugin", "name": "myst_nb_md"}  # how myst-nb names its reader to the cache


def notebooks() -> list[Path]:
    """The pages of the table of contents that are notebooks (MyST with a kernel)."""
    from myst_nb.core.read import is_myst_markdown_notebook

    sources = [ROOT / f"{name}.md" for name in toc.pages()]
    return [path for path in sources if is_myst_markdown_notebook(path.read_text("utf-8"))]


def main(cache_folder: Path) -> None:
    from jupyter_cache import get_cache
    from jupyter_cache.executors import load_executor

    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    if empty_if_stale(cache_folder):
        print("attnkit or the lock changed since the cache was filled: every chapter runs again")
    cache = get_cache(str(cache_folder))
    uris = [cache.add_nb_to_project(str(path), read_data=READ_DATA).uri for path in notebooks()]
    # only this table of contents' pages: the project keeps every page it was ever given
    execute = config["execute"]
    result = load_executor("local-parallel", cache).run_and_cache(
        filter_uris=uris, timeout=execute["timeout"], allow_errors=execute["allow_errors"]
    )
    for uri in result.succeeded:
        print(f"{Path(uri).name}: executed")
    for uri in result.excepted + result.errored:
        print(f"{Path(uri).name}: failed; the build runs it again and says why")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
