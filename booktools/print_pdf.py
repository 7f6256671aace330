"""Print the book to one PDF (``make pdf``): the one-page build (Sphinx's singlehtml builder,
``_ext/single_page.py``) opened in Chromium, every widget drawn in its first state, and printed
with the browser's own PDF writer, which keeps the typeset formulas, the figures, the links
between sections and a bookmark for every heading.

Why Chromium and not LaTeX (Jupyter Book's ``pdflatex``): the pages' formulas, widgets and
Japanese text are already drawn for a browser, and the tests install Chromium anyway, where
LaTeX would need a TeX distribution of a gigabyte and a second way of drawing each of them.

    python -m booktools.print_pdf SINGLEHTML_DIR OUT.pdf
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from booktools.local_server import served

# As many widgets drawn (each marks its root data-drawn) as the page holds widget views.
WIDGETS_DRAWN = """() => document.querySelectorAll('[data-drawn]').length >= document
    .querySelectorAll('script[type="application/vnd.jupyter.widget-view+json"]').length"""


def print_book(folder: Path, out: Path) -> None:
    from playwright.sync_api import sync_playwright

    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        sys.exit("make pdf prints with Chromium: install it (apt-get install chromium)")
    out.parent.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=chromium,
            args=["--no-sandbox", "--disable-gpu"],
        )
        page = browser.new_page()
        said = []
        page.on("console", lambda m: m.type == "error" and said.append(m.text))
        page.on("pageerror", lambda error: said.append(str(error)))
        with served(folder) as base:
            page.goto(f"{base}intro.html", wait_until="load")
            try:
                page.wait_for_function(WIDGETS_DRAWN, timeout=60_000)
            except Exception:
                sys.exit(f"the widgets were not drawn: {said}")
            page.evaluate("() => document.fonts.ready.then(() => null)")
            page.emulate_media(media="print")
            page.pdf(
                path=out,
                format="A4",
                margin={"top": "18mm", "bottom": "18mm", "left": "16mm", "right": "16mm"},
                print_background=True,
                outline=True,  # bookmarks from the headings
                tagged=True,  # a structure for screen readers
            )
        browser.close()


if __name__ == "__main__":
    print_book(Path(sys.argv[1]), Path(sys.argv[2]))
    print(f"The book is in {sys.argv[2]}")
