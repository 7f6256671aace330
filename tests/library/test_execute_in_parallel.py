"""make book's first step runs the chapters with jupyter-cache's local-parallel executor, which
reads each one through myst-nb's reader plugin; the build then finds them in the cache only if
that plugin reads the same code cells as the build's reader, configured by _config.yml."""

import pytest
import yaml
from jupyter_cache.entry_points import get_entry_point
from myst_nb.core.read import myst_nb_reader_plugin, read_myst_markdown_notebook
from myst_parser.config.main import MdParserConfig

from booktools import execute_in_parallel, toc
from tests.support.book import ROOT


def test_the_executor_and_the_reader_are_installed_under_the_names_used():
    assert get_entry_point("jcache.executors", "local-parallel") is not None, (
        "jupyter-cache has no local-parallel executor: booktools/execute_in_parallel.py needs one"
    )
    name = execute_in_parallel.READ_DATA["name"]
    assert get_entry_point("jcache.readers", name) is not None, (
        f"myst-nb no longer registers the jupyter-cache reader {name!r}"
    )


def test_every_chapter_is_run():
    run = {
        path.relative_to(ROOT).with_suffix("").as_posix()
        for path in execute_in_parallel.notebooks()
    }
    assert set(toc.chapters()) <= run


@pytest.mark.parametrize("chapter", toc.chapters())
def test_the_reader_plugin_reads_the_code_cells_the_build_reads(chapter):
    path = ROOT / f"{chapter}.md"
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    extensions = set(config["parse"]["myst_enable_extensions"])
    built = read_myst_markdown_notebook(
        path.read_text(encoding="utf-8"), config=MdParserConfig(enable_extensions=extensions)
    )
    plugin = myst_nb_reader_plugin(str(path))

    def code(notebook):
        return [cell.source for cell in notebook.cells if cell.cell_type == "code"]

    assert code(plugin) == code(built), f"{chapter}: the cache would not know the build's notebook"
    assert plugin.metadata.kernelspec == built.metadata.kernelspec, chapter
