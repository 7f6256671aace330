"""attnkit's compiled catalogues (``booktools/compiled_catalogues.py``): the committed ``.mo``
of the checks' messages and of the figure labels is its ``.po`` compiled, and attnkit ships it."""

import tomllib

from attnkit import figure_text
from attnkit.exercises import wording
from booktools import compiled_catalogues
from tests.support.book import ROOT

# what attnkit reads, as each module names it
READ = [wording.catalogue_path("ja"), figure_text.catalogue_path("ja")]


def test_every_catalogue_attnkit_reads_is_compiled():
    assert [po.with_suffix(".mo") for po in compiled_catalogues.catalogues()] == sorted(READ)


def test_the_compiled_catalogues_are_their_catalogues_compiled():
    for po in compiled_catalogues.catalogues():
        mo = po.with_suffix(".mo")
        assert mo.is_file() and mo.read_bytes() == compiled_catalogues.compiled(po), (
            f"{mo} is not {po.name} compiled: run make catalogues"
        )


def package_of(path):
    """The folder of the Python package that holds ``path``."""
    folder = path.parent
    while not (folder / "__init__.py").is_file():
        folder = folder.parent
    return folder


def test_attnkit_ships_the_compiled_catalogues():
    """A student who installs attnkit from the repository gets each ``.mo`` as package data
    (setuptools globs each pattern in its package's folder)."""
    with open(ROOT / "pyproject.toml", "rb") as file:
        package_data = tomllib.load(file)["tool"]["setuptools"]["package-data"]
    for mo in READ:
        folder = package_of(mo)
        package = ".".join(folder.relative_to(ROOT / "chapters").parts)
        patterns = package_data.get(package, [])
        assert any(mo in folder.glob(pattern) for pattern in patterns), (
            f"pyproject.toml's package data for {package} leaves out {mo.relative_to(folder)}"
        )
