"""Headless Chromium on a folder served at 127.0.0.1, with every other address blocked.

Shared by the browser tests and the heatmap benchmark. Chromium comes from Debian's
``chromium`` package; Playwright only drives it (its own browser download is not used).
"""

from __future__ import annotations

import contextlib
import os
import shutil
from urllib.parse import urlparse

import numpy as np

from booktools.local_server import served

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
# Run before a page's own scripts: adds up the page's layout shifts that no input caused in
# window.layoutShift, as the cumulative layout shift counts them (without its session windows,
# which only make it smaller).
WATCH_LAYOUT_SHIFTS = """
window.layoutShift = 0;
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) if (!entry.hadRecentInput) window.layoutShift += entry.value;
}).observe({ type: "layout-shift", buffered: true });
"""
CANCELLED = "net::ERR_ABORTED"  # Chromium's error for a request cancelled, not failed
INSTALL_HINT = "install Debian's Chromium with `apt-get install chromium` to run the browser tests"


# Serve a folder on 127.0.0.1 at a free port; yields the base URL.
serve = served


class PageLog:
    """What a page did that a reader would not want: blocked requests, errors, dialogs."""

    def __init__(self, page):
        self.blocked, self.failed, self.console_errors, self.page_errors, self.dialogs = (
            [],
            [],
            [],
            [],
            [],
        )
        page.route("**/*", self._route)
        page.on("requestfailed", self._failed)
        page.on("console", lambda m: m.type == "error" and self.console_errors.append(m.text))
        page.on("pageerror", lambda error: self.page_errors.append(str(error)))
        page.on("dialog", lambda d: (self.dialogs.append(d.message), d.dismiss()))

    def _failed(self, request):
        # Not a request the page itself cancelled: leaving a page cancels what it still loads
        # (a test that searches left as the icon loaded, under a full machine's load).
        if request.failure != CANCELLED:
            self.failed.append(request.url)

    def _route(self, route):
        url = route.request.url
        if url.startswith(("data:", "blob:")) or urlparse(url).hostname == "127.0.0.1":
            route.continue_()
        else:  # the network beyond this machine is closed to the book
            self.blocked.append(url)
            route.abort()

    def problems(self):
        names = ["blocked", "failed", "console_errors", "page_errors", "dialogs"]
        return {name: getattr(self, name) for name in names if getattr(self, name)}


class Tabs:
    """New pages as tabs of one browser context that a blank tab of its own keeps open.

    ``new_page`` takes Browser.new_page's ``viewport``. Chromium sets up a new context, and the
    renderer of a context left without a page, afresh: a chapter loaded in a page of its own
    context costs about twice the CPU time of one loaded in a tab of a live context (2.0 against
    1.0 CPU-s, measured). Given the ``origin`` its pages load, each new tab starts with that
    origin's local storage empty (where the theme keeps the colour mode), as in a context of its
    own."""

    def __init__(self, browser, origin: str | None = None, **context_options):
        self.browser = browser  # for a test that needs a context of its own settings
        self.context = browser.new_context(**context_options)
        self._keeper = self.context.new_page()
        self._origin = origin
        if origin:  # an empty document of the origin, from which to clear its storage
            self._keeper.route(f"{origin}tabs-keeper", lambda route: route.fulfill(body=""))
            self._keeper.goto(f"{origin}tabs-keeper")

    def new_page(self, viewport: dict | None = None):
        if self._origin:
            self._keeper.evaluate("() => localStorage.clear()")
        page = self.context.new_page()
        if viewport:
            page.set_viewport_size(viewport)
        return page


def open_page(site, name, width=1280, height=900):
    """A page of the book served by ``site`` ((Tabs, base URL)), loaded at ``width`` ×
    ``height``, and the log of what it did."""
    tabs, base = site
    page = tabs.new_page(viewport={"width": width, "height": height})
    log = PageLog(page)
    page.goto(f"{base}{name}.html", wait_until="load")
    return page, log


@contextlib.contextmanager
def opened_widget(site, name, selector, mode="light", width=1280):
    """Page ``name`` in the book's light or dark ``mode``, once the widget that ``selector``
    finds is drawn: yields the page and the widget's root, then asserts that the page did
    nothing a reader would not want (the calculator's and the scrubber's tests)."""
    tabs, base = site
    page = tabs.new_page(viewport={"width": width, "height": 900})
    page.add_init_script(f"localStorage.setItem('mode', '{mode}')")  # the theme's own switch
    log = PageLog(page)
    page.goto(f"{base}{name}.html", wait_until="load")
    root = page.locator(f"{selector}[data-drawn]")
    root.wait_for(state="attached")
    root.scroll_into_view_if_needed()
    assert page.evaluate("document.documentElement.dataset.theme") == mode
    yield page, root
    assert log.problems() == {}
    page.close()


# As many widgets drawn (each marks its root data-drawn) as the page holds widget views.
WIDGETS_DRAWN = """() => document.querySelectorAll('[data-drawn]').length >= document
    .querySelectorAll('script[type="application/vnd.jupyter.widget-view+json"]').length"""


def wait_for_widgets(page):
    """Wait until every widget of the page (heatmaps, the cache calculator) is drawn."""
    page.wait_for_function(WIDGETS_DRAWN)


def open_dropdowns(page):
    """Open every dropdown (a <details>) of the page, as a reader opens the solutions: a closed
    one lays out none of its content, which a test then cannot measure."""
    page.evaluate("() => document.querySelectorAll('details').forEach(d => { d.open = true; })")


def settle(page):
    """Wait until whatever a page still fetches has arrived or failed, and so has reported any
    error: the network idle, every web font and every image loaded or broken, the pictures that
    wait for the reader to near them (loading="lazy", _ext/lazy_images.py) included, as a
    reader who reads to the end gets them all."""
    page.evaluate(
        "() => document.querySelectorAll('img[loading=lazy]').forEach(i => { i.loading = 'eager'; })"
    )
    page.wait_for_load_state("networkidle")
    page.evaluate("() => document.fonts.ready.then(() => null)")
    page.wait_for_function("() => [...document.images].every(image => image.complete)")


def require_chromium():
    """Skip a browser test where Chromium is missing, but fail on CI, which must have it."""
    import pytest

    if CHROMIUM is None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"Chromium is missing on CI: {INSTALL_HINT}")
        pytest.skip(f"Chromium not found: {INSTALL_HINT}")


def launch(playwright):
    return playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)


def drawn_weights(widget):
    """The weights as drawn (full precision, kept on the widget's root as ``attnWidget.drawn``),
    checked against the canvas's pixels and, where cells show numbers, each cell's text."""
    weights, masked, pixels, texts = widget.evaluate("""root => {
        const { weights, masked } = root.attnWidget.drawn;
        const canvas = root.querySelector('canvas.attn-canvas');
        const pixels = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
        const texts = [...root.querySelectorAll('.attn-cell')].map(
            c => [Number(c.dataset.row), Number(c.dataset.col), c.textContent]);
        return [weights, masked.map(row => Array.from(row)), Array.from(pixels), texts];
    }""")
    weights, masked = np.array(weights, dtype=float), np.array(masked, dtype=bool)
    pixels = np.array(pixels).reshape(*weights.shape, 4)
    assert np.array_equal(pixels[..., 3] == 0, masked), (
        "masked cells, and only they, are transparent"
    )
    assert np.all(weights[masked] == 0)
    order = np.argsort(weights[~masked], kind="stable")  # viridis brightens as the weight grows
    assert np.all(np.diff(pixels[~masked][order, 1].astype(int)) >= 0), "colours out of order"
    for i, j, text in texts:  # (large heatmaps show colour only)
        assert (text == "–") == masked[i, j], (i, j, text)
        if not masked[i, j]:
            assert abs(float(text) - weights[i, j]) <= 0.005 + 1e-12, (i, j, text)
    return weights


def move_slider(slider, value):
    """Set a range input as a reader's drag does: the value, then an input event."""
    slider.evaluate(
        "(s, v) => { s.value = String(v); s.dispatchEvent(new Event('input', {bubbles: true})); }",
        value,
    )


# WCAG 2.2 A and AA, and axe-core's best practices: what the widgets' and drawings' tests ask
AXE_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa", "best-practice"]
SERIOUS_VIOLATIONS = """async ([include, tags]) => (await axe.run(
        include ? { include: [[include]] } : document, { runOnly: { type: 'tag', values: tags } }))
    .violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => [v.id, v.help, v.nodes.map((node) => node.html.slice(0, 120))])"""


def serious_violations(page, axe, include: str | None = None) -> list:
    """What axe-core (the script at ``axe``, added to the page once) finds serious or critical
    on the page, or in the elements the selector ``include`` picks: [rule, help, the first
    characters of each element]."""
    if not page.evaluate("() => 'axe' in window"):
        page.add_script_tag(path=str(axe))
    return page.evaluate(SERIOUS_VIOLATIONS, [include, AXE_TAGS])
