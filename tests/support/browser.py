"""Headless Chromium on a folder served at 127.0.0.1, with every other address blocked.

Shared by the browser tests and the heatmap benchmark. Chromium comes from Debian's
``chromium`` package; Playwright only drives it (its own browser download is not used).
"""

from __future__ import annotations

import contextlib
import functools
import http.server
import os
import shutil
import threading
from pathlib import Path
from urllib.parse import urlparse

import numpy as np

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
INSTALL_HINT = "install Debian's Chromium with `apt-get install chromium` to run the browser tests"


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@contextlib.contextmanager
def serve(folder: Path):
    """Serve ``folder`` on 127.0.0.1 at a free port; yields the base URL."""
    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(_QuietHandler, directory=str(folder)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}/"
    finally:
        server.shutdown()
        server.server_close()


class PageLog:
    """What a page did that a reader would not want: blocked requests, errors, dialogs."""

    def __init__(self, page):
        self.blocked, self.failed, self.console_errors, self.page_errors, self.dialogs = [], [], [], [], []
        page.route("**/*", self._route)
        page.on("requestfailed", lambda request: self.failed.append(request.url))
        page.on("console", lambda m: m.type == "error" and self.console_errors.append(m.text))
        page.on("pageerror", lambda error: self.page_errors.append(str(error)))
        page.on("dialog", lambda d: (self.dialogs.append(d.message), d.dismiss()))

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
    """The weights as drawn: full precision from each row, checked against each cell's text."""
    rows, texts = widget.evaluate("""root => {
        const rows = [...root.querySelectorAll('.attn-row[data-row]')];
        return [rows.map(r => r.dataset.weights.split(' ').map(Number)),
                rows.map(r => [...r.querySelectorAll('.attn-cell')].map(c => c.textContent))];
    }""")
    weights = np.array(rows)
    for i, row in enumerate(texts):
        for j, text in enumerate(row):
            if text == "–":  # a masked key
                assert weights[i, j] == 0, (i, j)
            elif text:       # (large heatmaps show colour only)
                assert abs(float(text) - weights[i, j]) <= 0.005 + 1e-12, (i, j, text)
    return weights


def move_slider(slider, value):
    """Set a range input as a reader's drag does: the value, then an input event."""
    slider.evaluate("(s, v) => { s.value = String(v); s.dispatchEvent(new Event('input', {bubbles: true})); }",
                    value)
