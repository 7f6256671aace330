"""The chapters' figure labels that the catalogue of figure labels lacks, added to it.

Run after the chapters have run (``make book``), from the repository root:
``python -m booktools.figure_labels _build/.jupyter_cache``. Each shown figure's output
carries the labels its language's catalogue lacked (``attnkit.plots.retina_png``); each is
added to ``chapters/attnkit/locales/<language>/LC_MESSAGES/figures.po`` with an empty
translation, for a translator to fill in. (The static figures' scripts name theirs.)
"""

from __future__ import annotations

import sys

from jupyter_cache import get_cache

from attnkit.figure_text import catalogue_path
from attnkit.plots import UNTRANSLATED


def untranslated(cache_path: str) -> dict[str, list[str]]:
    """``language: labels`` the cached notebooks' figures lack, each once."""
    cache = get_cache(cache_path)
    found: dict[str, dict[str, None]] = {}
    for record in cache.list_cache_records():
        notebook = cache.get_cache_bundle(record.pk).nb
        for cell in notebook.cells:
            for output in cell.get("outputs", []):
                for metadata in output.get("metadata", {}).values():
                    if isinstance(metadata, dict):
                        for language, labels in metadata.get(UNTRANSLATED, {}).items():
                            found.setdefault(language, {}).update(dict.fromkeys(labels))
    return {language: list(labels) for language, labels in found.items()}


def po_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def main(cache_path: str) -> None:
    for language, labels in untranslated(cache_path).items():
        path = catalogue_path(language)
        with path.open("a", encoding="utf-8") as catalogue:
            for label in labels:
                catalogue.write(f'\nmsgid {po_string(label)}\nmsgstr ""\n')
        print(f"{path}: {len(labels)} labels to translate")


if __name__ == "__main__":
    main(*sys.argv[1:])
