"""Every page of the built book read as a reader would, at a width and in a colour mode, with
the network beyond this machine closed: what the page did that a reader would not want (blocked
or failed requests, errors, dialogs), what the console says, whether its formulas were typeset
and its heatmaps drawn, what axe-core finds, the document's width, how far its layout moved
while it loaded, and a screenshot. Then, its dropdowns opened and the window set to each width
in turn, how wide its display equations and figures show and which of its code blocks scroll
and take the keyboard's focus (LAYOUT, for tests/book/test_display_math.py,
test_figure_layout.py and test_accessibility.py): each page is loaded once for all of these.

Run as a program (``make readings-for-tests``) it reads every page in every way asked for and
writes the results as JSON, for the tests that read them (READINGS in the Makefile); where
Chromium is missing it writes nothing, and those tests are skipped with the hint (or fail under
CI=true):

    python -m tests.support.readings HTML_DIR FOLDER   (FOLDER/readings.json, FOLDER/screenshots)
"""

import itertools
import json
import os
import sys
from pathlib import Path

from tests.support.book import ROOT, toc_files
from tests.support.browser import (
    CHROMIUM,
    INSTALL_HINT,
    WATCH_LAYOUT_SHIFTS,
    PageLog,
    Tabs,
    launch,
    open_dropdowns,
    serve,
    settle,
    wait_for_widgets,
)

AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"
EVERY_SECTION_LAID_OUT = "* { content-visibility: visible !important; }"
WIDTHS = {"laptop": 1280, "phone": 375}
MODES = ["light", "dark"]
# A reading with axe takes about three seconds: make test reads every page once, on a phone in
# dark mode; make test-accessibility (BOOK_READ_EVERY_WAY=1) reads every page in all four ways.
READINGS = (
    list(itertools.product(WIDTHS, MODES))
    if os.environ.get("BOOK_READ_EVERY_WAY") == "1"
    else [("phone", "dark")]
)
# the rules of WCAG 2.2 A and AA (axe's other rules are best practices)
WCAG = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"]
SERIOUS = ["serious", "critical"]
RUN_AXE = """([tags, impacts]) => axe.run(document, {
        resultTypes: ['violations'], runOnly: {type: 'tag', values: tags}})
    .then(r => r.violations.filter(v => impacts.includes(v.impact)).map(
        v => `${v.id}: ${v.nodes.map(n => n.target.join(' ')).join(', ')}`))"""


def open_reading(tabs, base, name):
    """The page loaded, its math typeset and its widgets drawn, everything it fetches arrived;
    what the console said and what the page did that it should not (PageLog)."""
    page = tabs.new_page()
    log, said = PageLog(page), []
    page.on("console", lambda m: m.type in ("error", "warning") and said.append(m.text))
    page.on("response", lambda r: r.status >= 400 and said.append(f"{r.status}: {r.url}"))
    page.goto(f"{base}{name}.html", wait_until="load")
    wait_for_widgets(page)
    settle(page)
    return page, log, said


# Formulas typeset (and none left as TeX) and each heatmap drawn: its canvas has a pixel per key
# (the numbers over it are drawn only in small grids).
DRAWN = """() => ({
    typeset: document.querySelectorAll(".math > math").length,
    left_as_tex: document.querySelectorAll(".math:not(:has(> math))").length,
    heatmap_keys: [...document.querySelectorAll("[data-attn-widget]")].map(
        w => w.querySelector("canvas.attn-canvas")?.width ?? 0),
})"""


# At each width: the content column; every code block and cell output with its tab stop and
# whether it scrolls; every display equation (typeset at build time) with its number, its TeX
# and its box's widths; every image of a code cell's output or of a {figure} with how wide it
# was drawn (its width set in the page), how wide it shows, its pixels, and the box it may
# scroll in.
LAYOUT = """() => {
  const article = document.querySelector('article.bd-article');
  const style = getComputedStyle(article);
  const images = [...article.querySelectorAll('img')].filter(i => i.closest('.cell_output, figure'));
  return {
    column: article.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight),
    page: [document.documentElement.scrollWidth, window.innerWidth],
    blocks: [...document.querySelectorAll('#main-content pre, #main-content .cell_output > .output')]
      .map(b => [b.tabIndex, b.scrollWidth > b.clientWidth || b.scrollHeight > b.clientHeight]),
    equations: [...document.querySelectorAll('.math > math[display="block"]')]
      .map(box => {
        const formula = box.closest('.math');
        const number = formula && formula.querySelector('.eqno');
        return {
          number: number ? number.textContent.replace('#', '').trim() : null,
          tex: formula ? formula.dataset.tex : null,
          scroll: box.scrollWidth,
          client: box.clientWidth,
          focusable: box.tabIndex === 0,
          overflow: getComputedStyle(box).overflowX,
        };
      }),
    figures: images.map(img => {
      const box = img.closest('a.image-reference');
      return {
        src: img.getAttribute('src').split('/').pop(),
        drawn: parseFloat(img.style.width) || null,
        shown: img.getBoundingClientRect().width,
        pixels: img.naturalWidth,
        box: box && {width: box.clientWidth, content: box.scrollWidth,
                     overflow: getComputedStyle(box).overflowX},
      };
    }),
  };
}"""


NEXT_FRAME = "() => new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)))"


def layout_at(page, width: int) -> dict:
    """What LAYOUT measures once the page has settled at ``width``: the theme lays parts of it
    out again a frame after the window is resized, so it is measured until two frames agree."""
    page.set_viewport_size({"width": width, "height": 800})
    measured = None
    for _ in range(20):
        page.evaluate(NEXT_FRAME)
        again = page.evaluate(LAYOUT)
        if again == measured:
            return again
        measured = again
    raise RuntimeError(f"{page.url}: the layout still moves at {width} px")


def layouts(found: dict[str, dict]) -> dict[str, dict]:
    """{page: {width: what LAYOUT measured}} from the first reading of each page."""
    width, mode = READINGS[0]
    return {name: found[f"{width} {mode} {name}"]["layout"] for name in toc_files()}


def measured_at_each_width(found: dict[str, dict], what: str) -> dict[str, dict]:
    """{page: {width: LAYOUT's ``what``}} (``"equations"``, ``"blocks"``), from layouts()."""
    return {
        name: {width: measured[what] for width, measured in layout.items()}
        for name, layout in layouts(found).items()
    }


def read_every_page(html_dir: Path, shots: Path) -> dict[str, dict]:
    """{"width mode page": {"problems", "typeset", "left_as_tex", "heatmap_keys", "mode", "axe",
    "width", "console", "layout_shift"}} for every page and reading, and "layout" in the first
    reading of each page."""
    from playwright.sync_api import sync_playwright

    found = {}
    with serve(html_dir) as base, sync_playwright() as playwright:
        browser = launch(playwright)
        for width, mode in READINGS:
            tabs = Tabs(browser, viewport={"width": WIDTHS[width], "height": 800})
            tabs.context.add_init_script(f"localStorage.setItem('mode', '{mode}')")
            tabs.context.add_init_script(WATCH_LAYOUT_SHIFTS)
            for name in toc_files():
                page, log, said = open_reading(tabs, base, name)
                drawn = page.evaluate(DRAWN)
                # every section laid out before axe scrolls through the page: a section that
                # content-visibility left unrendered takes its real height only as it nears the
                # screen, and what axe found under a link had moved (a code block's background)
                page.add_style_tag(content=EVERY_SECTION_LAID_OUT)
                page.add_script_tag(path=str(AXE))
                found[f"{width} {mode} {name}"] = drawn | {
                    "problems": log.problems(),
                    "mode": page.evaluate("document.documentElement.dataset.theme"),
                    "axe": page.evaluate(RUN_AXE, [WCAG, SERIOUS]),
                    "width": page.evaluate(
                        "() => [document.documentElement.scrollWidth, window.innerWidth]"
                    ),
                    "console": said,
                    "layout_shift": page.evaluate("window.layoutShift"),
                }
                # the first screen: a full page costs twenty times as long
                page.screenshot(path=str(shots / f"{name.replace('/', '-')}-{width}-{mode}.png"))
                if (width, mode) == READINGS[0]:  # the layout once a page, this width first
                    open_dropdowns(page)  # their figures and equations measured too
                    found[f"{width} {mode} {name}"]["layout"] = {
                        each: layout_at(page, WIDTHS[each])
                        for each in sorted(WIDTHS, key=lambda w: w != width)
                    }
                page.close()
            tabs.context.close()
        browser.close()
    return found


if __name__ == "__main__":
    html_dir, folder = map(Path, sys.argv[1:3])
    results, shots = folder / "readings.json", folder / "screenshots"
    results.unlink(missing_ok=True)
    if CHROMIUM is None:
        sys.exit(print(f"pages not read: {INSTALL_HINT}"))  # the tests say it again
    shots.mkdir(parents=True, exist_ok=True)
    results.write_text(json.dumps(read_every_page(html_dir, shots)), encoding="utf-8")
