"""A folder served over HTTP on 127.0.0.1, for a browser that opens the built book: its widgets
load their code as modules, which a browser refuses from ``file:`` URLs. The PDF printer, the
browser tests and the benchmarks share it."""

from __future__ import annotations

import contextlib
import functools
import http.server
import threading
from pathlib import Path


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    """The standard library's file handler, without a log line per request."""

    def log_message(self, *args):
        pass


@contextlib.contextmanager
def served(folder: Path, handler: type = QuietHandler):
    """``folder`` served at a free port by ``handler`` (a SimpleHTTPRequestHandler) on its own
    threads, until the block ends; yields the base URL, ending in ``/``."""
    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(handler, directory=str(folder))
    )
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_port}/"
    finally:
        server.shutdown()
        server.server_close()
