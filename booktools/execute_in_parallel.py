"""Run the chapters that the execution cache lacks side by side, one process per core, and put
them in the cache the build reads (``make book`` runs this first). myst-nb runs them one after
another as it reads each page; then it only finds their outputs.

A chapter is read into a notebook the way myst-nb reads it (its MyST reader, with the book's
syntax extensions), so that the cache knows it again: jupyter-cache matches a notebook by its
code cells and kernel. A chapter whose cells fail is left out, and the build runs it again and
reports the error as it always does.

    python -m booktools.execute_in_parallel CACHE_FOLDER
"""

from __future__ import annotations

import os
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import yaml

from booktools import toc

ROOT = Path(__file__).resolve().parent.parent
READ_DATA = {"type": "plugin", "name": "myst_nb_md"}  # how myst-nb names its reader to the cache


def read(path: Path):
    """``path`` as the notebook myst-nb reads from it, or None where it is no notebook."""
    from myst_nb.core.read import is_myst_markdown_notebook, read_myst_markdown_notebook
    from myst_parser.config.main import MdParserConfig

    text = path.read_text(encoding="utf-8")
    if not is_myst_markdown_notebook(text):
        return None
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    extensions = config["parse"]["myst_enable_extensions"]
    md_config = MdParserConfig(enable_extensions=set(extensions))
    return read_myst_markdown_notebook(text, config=md_config, add_source_map=True, path=path)


def execute(path: Path, notebook, timeout: int):
    from jupyter_cache.executors.utils import single_nb_execution

    result = single_nb_execution(
        notebook, cwd=str(path.parent), allow_errors=False, timeout=timeout, meta_override=True
    )
    return path, notebook, result.time, result.err is None


def pages() -> list[Path]:
    """The sources of the pages of the table of contents."""
    return [ROOT / f"{name}.md" for name in toc.pages()]


def main(cache_folder: Path) -> None:
    from jupyter_cache import get_cache
    from jupyter_cache.base import CacheBundleIn

    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    timeout = config["execute"]["timeout"]
    cache = get_cache(str(cache_folder))
    missing = []
    for path in pages():
        notebook = read(path)
        if notebook is None:
            continue
        try:
            cache.match_cache_notebook(notebook)
        except KeyError:
            missing.append((path, notebook))
    if not missing:
        return
    workers = min(len(missing), os.cpu_count() or 1)
    print(f"executing {len(missing)} chapters, {workers} at a time")
    with ProcessPoolExecutor(workers) as pool:
        runs = [pool.submit(execute, path, notebook, timeout) for path, notebook in missing]
        for run in runs:
            path, notebook, seconds, succeeded = run.result()
            if not succeeded:
                print(f"{path.name}: failed; the build runs it again and says why")
                continue
            record = cache.add_nb_to_project(str(path), read_data=READ_DATA)
            bundle = CacheBundleIn(notebook, record.uri, data={"execution_seconds": seconds})
            cache.cache_notebook_bundle(bundle, check_validity=False, overwrite=True)
            print(f"{path.name}: executed in {seconds:.1f} s")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
