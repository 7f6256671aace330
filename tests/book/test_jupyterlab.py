"""The Binder path, offline: chapter 1 in a real JupyterLab with a live kernel.

A reader clicks the book's Binder button; Binder runs ``binder/postBuild`` and opens
the chapter's path in JupyterLab. This module does the same on this machine, on a copy of the
chapter, with nothing reachable but 127.0.0.1: the Markdown file opens as a notebook (Jupytext),
its MyST is rendered (jupyterlab-myst), Run All draws the heatmap, a slider moved in the
browser reaches ``explorer.weights`` in the kernel, and a trait set in the kernel redraws the
heatmap. The weights agree with NumPy's every time.
"""

import json
import os
import re
import secrets
import shutil
import socket
import subprocess
import time
import urllib.error
import urllib.request

import jupytext
import numpy as np
import pytest
from jupyter_client import BlockingKernelClient
from playwright.sync_api import expect

from tests.support.book import ROOT
from tests.support.browser import PageLog, drawn_weights, move_slider, require_chromium

pytestmark = pytest.mark.build  # it opens what the built book's Binder button names

CHAPTER = ROOT / "chapters" / "attention.md"
VENV_BIN = ROOT / ".venv" / "bin"
WIDGET = ".jp-OutputArea-output [data-attn-widget]"
STDERR = '.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]'  # tracebacks too
# The only console errors allowed: jupyterlab-myst reports {ref} targets it cannot find.
#   notation                   is in the preface (intro.md), not in this notebook; the link
#                              text is still shown.
#   attention-columns          is reported while the cells above its label render first;
#                              it resolves once the label's cell has rendered.
MISSING_REFERENCES = {"notation", "attention-columns"}


def wait_until(condition, timeout, explain):
    """Call ``condition`` until it returns something true, and return that; after ``timeout``
    seconds fail with ``explain()``. For what no event announces to the test: a server's or a
    kernel's readiness, a comm message handled in the kernel."""
    deadline = time.monotonic() + timeout
    while not (result := condition()):
        assert time.monotonic() < deadline, explain()
        time.sleep(0.1)
    return result


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Lab:
    """A running JupyterLab: its base URL, token and runtime folder (kernel connection files)."""

    def __init__(self, base, token, runtime):
        self.base, self.token, self.runtime = base, token, runtime

    def api(self, path):
        headers = {"Authorization": f"token {self.token}"}
        with urllib.request.urlopen(
            urllib.request.Request(self.base + path, headers=headers), timeout=5
        ) as response:
            return json.load(response)


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """Binder's set-up on a temporary HOME, then ``jupyter lab`` serving a temporary root."""
    require_chromium()
    tmp = tmp_path_factory.mktemp("binder")
    home, root, runtime = tmp / "home", tmp / "root", tmp / "runtime"
    home.mkdir()
    # a copy, never the repository: JupyterLab and Jupytext may save into what they serve
    (root / "chapters").mkdir(parents=True)
    shutil.copy(CHAPTER, root / "chapters")
    shutil.copytree(ROOT / "figures", root / "figures")  # the chapter shows ../figures/*.svg

    env = {
        **os.environ,
        "PATH": f"{VENV_BIN}{os.pathsep}{os.environ['PATH']}",
        "HOME": str(home),
        "JUPYTER_CONFIG_DIR": str(home / ".jupyter"),
        # offline: pip builds attnkit with the environment's setuptools instead of fetching
        # one from PyPI into an isolated build environment (pip reads "0" as "no isolation")
        "PIP_NO_INDEX": "1",
        "PIP_NO_BUILD_ISOLATION": "0",
    }
    egg_info = ROOT / "chapters" / "attnkit.egg-info"
    had_egg_info = egg_info.exists()
    post = subprocess.run(
        ["bash", "binder/postBuild"], cwd=ROOT, env=env, capture_output=True, text=True
    )
    if not had_egg_info:  # a by-product of the editable install: leave the working tree as found
        shutil.rmtree(egg_info, ignore_errors=True)
    assert post.returncode == 0, f"binder/postBuild failed:\n{post.stdout}\n{post.stderr}"
    # the repository's .venv/etc/jupyter has the same setting (make lab); check postBuild's own
    overrides = home / ".jupyter" / "labconfig" / "default_setting_overrides.json"
    docmanager = json.loads(overrides.read_text())["@jupyterlab/docmanager-extension:plugin"]
    assert docmanager["defaultViewers"]["markdown"] == "Jupytext Notebook"

    port, token = free_port(), secrets.token_hex(16)
    env["JUPYTER_RUNTIME_DIR"] = str(runtime)
    command = [
        str(VENV_BIN / "jupyter"),
        "lab",
        "--no-browser",
        "--ServerApp.ip=127.0.0.1",
        f"--ServerApp.port={port}",
        f"--IdentityProvider.token={token}",  # ServerApp.token is deprecated
        f"--ServerApp.root_dir={root}",
        # nothing beyond this machine: no news feed, no update check, no PyPI extension search
        "--LabApp.news_url=None",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
        "--LabApp.extension_manager=readonly",
    ]
    if os.geteuid() == 0:  # containers often run as root; Binder does not
        command.append("--ServerApp.allow_root=True")
    log_path = tmp / "jupyterlab.log"
    with open(log_path, "w") as log:
        server = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT)
    lab = Lab(f"http://127.0.0.1:{port}/", token, runtime)

    def answers():
        assert server.poll() is None, (
            f"jupyter lab exited (log {log_path}):\n{log_path.read_text()}"
        )
        try:
            return lab.api("api/status")
        except (urllib.error.URLError, ConnectionError):
            return None

    try:
        wait_until(
            answers,
            60,
            lambda: f"jupyter lab did not answer (log {log_path}):\n{log_path.read_text()}",
        )
        yield lab
    finally:
        server.terminate()  # on SIGTERM the server shuts its kernels down too
        try:
            server.wait(timeout=15)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


@pytest.fixture(scope="module")
def binder_urlpath(built_book):
    """What chapter 1's Binder button asks mybinder.org to open, e.g. lab/tree/chapters/x.md."""
    html = (built_book[0] / "chapters" / "attention.html").read_text(encoding="utf-8")
    (urlpath,) = set(
        re.findall(r'href="https://mybinder\.org/v2/gh/[^"?]+\?urlpath=([^"]+)"', html)
    )
    return urlpath


@pytest.fixture(scope="module")
def notebook(lab, binder_urlpath, browser):
    """Chromium on the Binder button's path; yields the page and its log."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    log = PageLog(page)
    page.goto(f"{lab.base}{binder_urlpath}?token={lab.token}")
    page.wait_for_selector(".jp-NotebookPanel .jp-CodeCell", timeout=60_000)
    yield page, log
    context.close()


def cell_count(cell_type):
    return sum(cell.cell_type == cell_type for cell in jupytext.read(CHAPTER).cells)


@pytest.fixture(scope="module")
def kernel(lab, notebook, binder_urlpath):
    """A second client of the notebook's own kernel, found through the server's REST API."""
    path = binder_urlpath.removeprefix("lab/tree/")
    (session,) = wait_until(
        lambda: [s for s in lab.api("api/sessions") if s["path"] == path],
        60,
        lambda: "opening the notebook started no kernel",
    )
    client = BlockingKernelClient()
    client.load_connection_file(str(lab.runtime / f"kernel-{session['kernel']['id']}.json"))
    client.start_channels()
    client.wait_for_ready(timeout=60)
    yield client
    client.stop_channels()


def in_kernel(client, code, expression):
    """Run ``code`` in the kernel, then return the value of ``expression`` there (through JSON)."""
    out = []

    def hook(message):
        if message["msg_type"] == "stream" and message["content"]["name"] == "stdout":
            out.append(message["content"]["text"])

    reply = client.execute_interactive(
        f"{code}\nprint(__import__('json').dumps({expression}))",
        output_hook=hook,
        store_history=False,
        timeout=30,
    )
    assert reply["content"]["status"] == "ok", reply["content"]
    return json.loads("".join(out))


@pytest.fixture(scope="module")
def heatmap(notebook, kernel):
    """Run All Cells from the Run menu, as a reader would; returns the heatmap."""
    page, _ = notebook
    page.wait_for_selector('.jp-Notebook-ExecutionIndicator[data-status="idle"]', timeout=60_000)
    page.locator(".lm-MenuBar-item", has_text="Run").click()
    run_all = page.locator(".lm-Menu-itemLabel").get_by_text("Run All Cells", exact=True)
    run_all.click()
    # The exercises' checkers report an unfinished exercise without raising, so every cell
    # runs: wait until every prompt shows its execution count, or until something errs.
    page.wait_for_function(
        """([n, stderr]) => {
        const prompts = [...document.querySelectorAll('.jp-CodeCell .jp-InputArea-prompt')];
        return document.querySelector(stderr) ||
            prompts.length === n && prompts.every(p => /^\\[\\d+\\]:$/.test(p.textContent.trim()));
    }""",
        arg=[cell_count("code"), STDERR],
        timeout=60_000,
    )
    assert page.locator(STDERR).all_inner_texts() == [], "a cell wrote to stderr or failed"
    page.wait_for_selector(f"{WIDGET}[data-drawn]", state="attached")
    assert page.locator(WIDGET).count() == 1
    return page.locator(WIDGET)


def test_binder_url_opens_the_chapter_as_a_notebook(notebook):
    page, _ = notebook
    # the notebook attaches its cells a few at a time; wait for all of them
    page.wait_for_function(
        "([code, markdown]) => "
        "document.querySelectorAll('.jp-CodeCell').length === code && "
        "document.querySelectorAll('.jp-MarkdownCell').length === markdown",
        arg=[cell_count("code"), cell_count("markdown")],
        timeout=30_000,
    )
    assert page.locator(".jp-NotebookPanel").count() == 1
    assert page.locator(".jp-FileEditor").count() == 0, "opened as a text file"
    assert page.locator(".lm-TabBar-tab.jp-mod-current").inner_text().strip() == "attention.md"


def rendered_markdown(page):
    """Every Markdown cell's rendered text, math left out (TeX braces are not MyST markup)."""
    page.wait_for_function(
        "n => document.querySelectorAll('.jp-MarkdownCell .myst').length === n",
        arg=cell_count("markdown"),
        timeout=30_000,
    )
    return page.evaluate("""() => [...document.querySelectorAll('.jp-MarkdownCell .myst')].map(m => {
        const copy = m.cloneNode(true);
        copy.querySelectorAll('.katex').forEach(k => k.remove());
        return copy.textContent;
    }).join('\\n')""")


def test_myst_markup_is_rendered(notebook):
    page, _ = notebook
    text = rendered_markdown(page)
    raw = re.findall(r".{0,30}(?:\{[\w:-]+\}|:::|```|^\(.*\)=$|:class:|:label:).{0,30}", text, re.M)
    assert raw == [], "MyST markup shown as text"
    first = page.locator(".jp-MarkdownCell .myst").first
    header = first.locator("aside.myst-admonition .myst-admonition-header")
    assert header.inner_text().strip() == "Learning goals"
    # one group per {cite} role of the chapter's first Markdown cell, as jupytext reads it
    first_cell = next(c for c in jupytext.read(CHAPTER).cells if c.cell_type == "markdown")
    assert first.locator(".cite-group").count() == len(
        re.findall(r"\{cite:\w+\}", first_cell.source)
    )
    figure = page.locator(".jp-MarkdownCell .myst figure#fig-seq2seq-attention img")
    page.wait_for_function(
        "img => img.complete && img.naturalWidth > 0", arg=figure.element_handle()
    )


def test_every_cross_reference_resolves(notebook):
    page, _ = notebook
    rendered_markdown(page)
    missing = page.locator('.jp-MarkdownCell .myst [title="Cross Reference Not Found"]')
    assert missing.all_inner_texts() == []


def test_slider_in_the_browser_reaches_the_kernel(heatmap, kernel, tmp_path):
    before_temperature, before = in_kernel(kernel, "", "[explorer.temperature, explorer.weights]")
    assert np.max(np.abs(np.array(before) - drawn_weights(heatmap))) < 1e-9
    move_slider(heatmap.locator("input.attn-temperature"), -0.5)  # τ = 10^-0.5
    drawn = drawn_weights(heatmap)

    def kernel_state_once_changed():
        state = in_kernel(
            kernel,
            "",
            "[explorer.temperature, explorer.weights, explorer.expected_weights().tolist()]",
        )
        return state if state[0] != before_temperature and state[1] != before else None

    # the comm message reaches the kernel asynchronously
    temperature, weights, expected = wait_until(
        kernel_state_once_changed, 10, lambda: "the slider's change never reached the kernel"
    )
    assert temperature == pytest.approx(10**-0.5, rel=1e-12)
    assert np.max(np.abs(np.array(weights) - drawn)) < 1e-9
    assert np.max(np.abs(np.array(expected) - drawn)) < 1e-9
    assert not np.allclose(drawn, before, atol=1e-3)
    # cells above have estimated heights until first drawn, so one scroll may fall short and
    # JupyterLab may still scroll after Run All: scroll until the heatmap stays in view
    heatmap.page.wait_for_function(
        """root => {
        const box = root.getBoundingClientRect();
        if (box.top >= 0 && box.bottom <= innerHeight) return ++root.framesInView > 10;
        root.framesInView = 0;
        root.scrollIntoView({block: 'center'});
        return false;
    }""",
        arg=heatmap.element_handle(),
    )
    heatmap.page.locator(".jp-NotebookPanel").screenshot(
        path=str(tmp_path / "jupyterlab-heatmap.png")
    )


def test_trait_set_in_the_kernel_redraws_the_heatmap(heatmap, kernel):
    before = drawn_weights(heatmap)
    expected = in_kernel(
        kernel, "explorer.temperature = 3.0", "explorer.expected_weights().tolist()"
    )
    heatmap.page.wait_for_function(
        "root => root.attnWidget.model.get('temperature') === 3", arg=heatmap.element_handle()
    )
    drawn = drawn_weights(heatmap)
    assert np.max(np.abs(drawn - np.array(expected))) < 1e-9
    assert not np.allclose(drawn, before, atol=1e-3)


def test_slider_shows_a_temperature_set_in_the_kernel(heatmap, kernel):
    in_kernel(kernel, "explorer.temperature = 0.2", "explorer.temperature")
    heatmap.page.wait_for_function(
        "root => root.attnWidget.model.get('temperature') === 0.2", arg=heatmap.element_handle()
    )
    # the view redraws after the model has changed: wait for its text, as a reader would
    expect(heatmap.locator("label:has(input.attn-temperature) output")).to_have_text("0.20")
    slider = heatmap.locator("input.attn-temperature")
    assert float(slider.input_value()) == pytest.approx(np.log10(0.2), abs=0.01)


def test_no_outside_requests_or_errors(notebook, heatmap):
    _page, log = notebook
    assert log.blocked == [] and log.failed == []
    assert log.page_errors == [] and log.dialogs == []
    for error in log.console_errors:
        lines = error.split("\n")
        assert all(line.startswith("Cross reference target was not found: ") for line in lines), (
            error
        )
        assert {line.split(": ", 1)[1] for line in lines} <= MISSING_REFERENCES, error
