"""The book's Sphinx extensions as _config.yml lists them: jupyter-book's defaults in its order,
less the three the book leaves out, then the stock ones the chapters use, then every extension
of _ext/, each once. A jupyter-book whose defaults change fails here, by name."""

import yaml
from jupyter_book.config import get_default_sphinx_config, get_final_config

from tests.support.book import ROOT

CONFIG = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
EXTENSIONS = CONFIG["sphinx"]["config"]["extensions"]
LEFT_OUT = {"sphinx_thebe", "sphinx_design", "sphinx_togglebutton"}  # _config.yml says why
CHAPTERS_USE = ["sphinxcontrib.bibtex", "sphinx_exercise", "sphinx_proof"]
# first, the other extensions load their words in the edition's language, and the book's word
# for an exercise comes before sphinx-exercise's own
FIRST = ["edition_language", "exercise_labels"]
OWN = sorted(path.stem for path in (ROOT / "_ext").glob("*.py"))


def test_the_stock_extensions_are_jupyter_books_defaults_less_three():
    defaults = get_default_sphinx_config()["extensions"]
    assert LEFT_OUT <= set(defaults), (
        f"jupyter-book's defaults no longer load {sorted(LEFT_OUT - set(defaults))}: "
        f"_config.yml's extensions may follow its defaults again ({defaults})"
    )
    kept = [name for name in defaults if name not in LEFT_OUT]
    start = len(FIRST)
    stock = EXTENSIONS[start : start + len(kept)]
    assert stock == kept, f"_config.yml's stock extensions {stock} are not jupyter-book's {kept}"
    assert EXTENSIONS[start + len(kept) : start + len(kept) + len(CHAPTERS_USE)] == CHAPTERS_USE


def test_every_extension_of_ext_is_loaded_once_and_edition_language_first():
    assert EXTENSIONS[: len(FIRST)] == FIRST
    assert len(EXTENSIONS) == len(set(EXTENSIONS)), "an extension listed twice in _config.yml"
    listed = {name for name in EXTENSIONS if (ROOT / "_ext" / f"{name}.py").is_file()}
    assert sorted(listed) == OWN, f"_ext/ modules not in _config.yml: {sorted(set(OWN) - listed)}"
    assert CONFIG["sphinx"]["local_extensions"] == {FIRST[0]: "_ext"}


def test_jupyter_book_builds_with_the_list_as_written():
    config, _ = get_final_config(
        user_yaml=ROOT / "_config.yml", sourcedir=ROOT, cli_config={"latex_individualpages": False}
    )
    assert config["extensions"][: len(EXTENSIONS)] == EXTENSIONS
