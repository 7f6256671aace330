"""Every generated figure in figures/ is what its script makes today, in each language."""

import importlib.util

import matplotlib.pyplot as plt
import pytest

from attnkit import figure_text
from tests.support.book import ROOT
from tests.support.figure_labels import english_left, shown_texts

SCRIPTS = sorted((ROOT / "figures").glob("make_*.py"))


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_committed_figure_matches_its_script(script, tmp_path):
    spec = importlib.util.spec_from_file_location(script.stem, script)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    committed = module.main.__defaults__[0]
    fresh = tmp_path / committed.name
    module.main(fresh)
    # the English figure, then its translations (<name>.<language>.svg) where it has words
    for drawn in sorted(tmp_path.iterdir()):
        kept = committed.with_name(drawn.name)
        assert kept.is_file() and drawn.read_bytes() == kept.read_bytes(), (
            f"{kept.name} is out of date: run .venv/bin/python figures/{script.name}"
        )


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_the_static_figures_in_japanese_have_no_english_label(script, monkeypatch):
    spec = importlib.util.spec_from_file_location(script.stem, script)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    if not hasattr(module, "save_in_languages"):
        pytest.skip(f"{script.name} draws no figure a page shows (the site's card)")
    drawn = []
    monkeypatch.setattr(module, "save_in_languages", lambda fig, path, **_: drawn.append(fig) or [])
    module.main()
    (fig,) = drawn
    with figure_text.in_language(fig, "ja") as missing:
        assert missing == [] and english_left(shown_texts(fig)) == []
    plt.close(fig)
