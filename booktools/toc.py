"""The book's pages in the order of ``_toc.yml``, read by sphinx-external-toc's own parser (the
one the build uses), for the build's scripts, the tests and the benchmarks."""

from __future__ import annotations

from pathlib import Path

from sphinx_external_toc.parsing import parse_toc_yaml

ROOT = Path(__file__).resolve().parent.parent
CHAPTERS = "Chapters"  # the caption of the numbered part


def _site_map():
    return parse_toc_yaml(ROOT / "_toc.yml")


def pages() -> list[str]:
    """Every page, the root (the preface) first, as paths without their suffix."""
    return list(_site_map().keys())


def part(caption: str) -> list[str]:
    """The pages of the part with this caption; ValueError where there is not one such part."""
    site = _site_map()
    found = [tree for tree in site[site.root.docname].subtrees if tree.caption == caption]
    if len(found) != 1:
        raise ValueError(f"_toc.yml has {len(found)} parts captioned {caption!r}, not one")
    return list(found[0].items)


def chapters() -> list[str]:
    """The numbered chapters, not the appendices."""
    return part(CHAPTERS)


if __name__ == "__main__":
    print("\n".join(chapters()))
