"""The chapters' figure labels that the catalogue of figure labels lacks, added to it.

Run after the chapters have run (``make book``), from the repository root:
``python -m booktools.figure_labels _build/.jupyter_cache``. Each shown figure's output
carries the labels its language's catalogue lacked (``attnkit.plots.retina_png``); each one
the catalogue still lacks is added to ``chapters/attnkit/locales/<language>/LC_MESSAGES/
figures.po`` with an empty translation, for a translator to fill in. ``make catalogues`` then
compiles it into the ``figures.mo`` that attnkit reads, and that change to attnkit empties the
execution cache (``booktools.cache_stamp``), so the next build draws the figures again with the
filled-in catalogue. (The static figures' scripts name theirs.)
"""

from __future__ import annotations

import sys

from babel.messages.pofile import read_po
from jupyter_cache import get_cache

from attnkit.figure_text import catalogue_path
from attnkit.translated import UNTRANSLATED


def untranslated(cache) -> dict[str, list[str]]:
    """``language: labels`` the cached notebooks' figures lack, each once."""
    found: dict[str, dict[str, None]] = {}
    for record in cache.list_cache_records():
        notebook = cache.get_cache_bundle(record.pk).nb
        for cell in notebook.cells:
            for output in cell.get("outputs", []):
                for metadata in output.get("metadata", {}).values():
                    if not isinstance(metadata, dict):
                        continue
                    for language, labels in metadata.get(UNTRANSLATED, {}).items():
                        found.setdefault(language, {}).update(dict.fromkeys(labels))
    return {language: list(labels) for language, labels in found.items()}


def po_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def main(cache_path: str) -> None:
    for language, labels in untranslated(get_cache(cache_path)).items():
        path = catalogue_path(language).with_suffix(".po")
        with path.open("rb") as po:
            entries = {message.id for message in read_po(po)}
        labels = [label for label in labels if label not in entries]
        with path.open("a", encoding="utf-8") as po:
            for label in labels:
                po.write(f'\nmsgid {po_string(label)}\nmsgstr ""\n')
        print(f"{path}: {len(labels)} labels to translate")


if __name__ == "__main__":
    main(*sys.argv[1:])
