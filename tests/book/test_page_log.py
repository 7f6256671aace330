"""What the browser tests count against a page (tests.support.browser.PageLog): a request that
fails counts; one the page cancels by leaving, as a reader's click on a link does, does not."""

import threading

from booktools.local_server import QuietHandler
from tests.support.browser import PageLog, serve

PAGE = """<!doctype html><html lang="en"><meta charset="utf-8"><title>log</title>
<img alt="slow" src="slow.png"><img alt="refused" src="http://127.0.0.1:1/refused.png">"""


def test_a_failed_request_counts_and_a_cancelled_one_does_not(chromium, tmp_path):
    left = threading.Event()

    class SlowHandler(QuietHandler):
        """Answers slow.png only once the test has left the page."""

        def do_GET(self):
            if self.path == "/slow.png":
                left.wait(10)
            super().do_GET()

    (tmp_path / "index.html").write_text(PAGE, encoding="utf-8")
    (tmp_path / "next.html").write_text("<!doctype html><title>next</title>", encoding="utf-8")
    with serve(tmp_path, SlowHandler) as base:
        page = chromium.new_page()
        log = PageLog(page)
        page.goto(base + "index.html", wait_until="domcontentloaded")
        page.wait_for_function("() => document.images[1].complete")  # refused by then
        page.goto(base + "next.html")  # while slow.png still loads: cancelled
        left.set()
        page.close()
    assert log.failed == ["http://127.0.0.1:1/refused.png"]
