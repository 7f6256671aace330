"""The chapters' code, read without running it: no chapter asserts on a time it measures.

A build runs every chapter as a test; an assertion on wall-clock time makes the build fail on a
busy or slow machine, whatever the code does. Timings may be printed, and recorded benchmark
figures (read from a file) may be checked.
"""

import ast

import jupytext
import pytest
from IPython.core.inputtransformer2 import TransformerManager

from tests.support.book import ROOT, toc_files

# What reads a clock; a value computed from one of these is a time measured here and now.
CLOCKS = {
    f"time.{name}"
    for name in [
        "time",
        "time_ns",
        "perf_counter",
        "perf_counter_ns",
        "monotonic",
        "monotonic_ns",
        "process_time",
        "process_time_ns",
        "thread_time",
        "thread_time_ns",
    ]
}
CLOCKS |= {
    "timeit.timeit",
    "timeit.repeat",
    "timeit.default_timer",
    "datetime.now",
    "datetime.datetime.now",
    "datetime.utcnow",
    "datetime.datetime.utcnow",
}


def notebooks():
    """The pages of the book that are notebooks (a kernel runs them at build time)."""
    return [
        name for name in toc_files() if "kernelspec" in jupytext.read(ROOT / f"{name}.md").metadata
    ]


def code_of(name):
    """The code cells of a notebook page as one Python source, IPython's magics made Python."""
    cells = jupytext.read(ROOT / f"{name}.md").cells
    return "\n".join(
        TransformerManager().transform_cell(cell.source)
        for cell in cells
        if cell.cell_type == "code"
    )


def import_aliases(tree):
    """What each imported name stands for: ``import time as t`` gives t → time,
    ``from time import perf_counter`` gives perf_counter → time.perf_counter."""
    aliases = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            aliases |= {alias.asname or alias.name: alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            aliases |= {
                alias.asname or alias.name: f"{node.module}.{alias.name}" for alias in node.names
            }
    return aliases


def dotted_name(node, aliases):
    """``time.perf_counter`` for the expression ``t.perf_counter`` after ``import time as t``."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.insert(0, node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return ".".join([aliases.get(node.id, node.id), *parts])


def reads_clock(node, aliases, timed):
    """Whether the expression calls a clock or uses a name that holds a time."""
    return any(
        (isinstance(n, ast.Call) and dotted_name(n.func, aliases) in CLOCKS)
        or (isinstance(n, ast.Name) and n.id in timed)
        for n in ast.walk(node)
    )


def assignments(tree):
    """(targets, value) of every assignment, augmented and walrus ones included."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            yield node.targets, node.value
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign, ast.NamedExpr)) and node.value:
            yield [node.target], node.value


def asserts_on_time(source):
    """The assert statements of ``source`` whose condition depends on a clock, as source text.

    A name holds a time when it is assigned from a clock or from another such name
    (``seconds = time.perf_counter() - start``), in any order of the statements.
    """
    tree = ast.parse(source)
    aliases = import_aliases(tree)
    timed = set()
    while True:
        more = {
            n.id
            for targets, value in assignments(tree)
            if reads_clock(value, aliases, timed)
            for target in targets
            for n in ast.walk(target)
            if isinstance(n, ast.Name)
        }
        if more <= timed:
            break
        timed |= more
    return [
        ast.unparse(node)
        for node in ast.walk(tree)
        if isinstance(node, ast.Assert) and reads_clock(node.test, aliases, timed)
    ]


@pytest.mark.parametrize(
    "source, expected",
    [
        (
            "import time\nstart = time.perf_counter()\ntrain()\nseconds = time.perf_counter() - start\n"
            "assert seconds < 30",
            ["assert seconds < 30"],
        ),
        ("import time as t\nt0 = t.time()\nassert t.time() - t0 < 5", ["assert t.time() - t0 < 5"]),
        (
            "from time import perf_counter as clock\nbegin = clock()\nelapsed = [clock() - begin]\n"
            "ok = elapsed[0] < 1\nassert ok, 'slow'",
            ["assert ok, 'slow'"],
        ),
        (
            "import timeit\nassert timeit.timeit('1 + 1', number=10) < 1",
            ["assert timeit.timeit('1 + 1', number=10) < 1"],
        ),
        (
            "import time\ndef f():\n    start = time.monotonic()\n    assert time.monotonic() > start",
            ["assert time.monotonic() > start"],
        ),
        (
            "import time\nstart = time.perf_counter()\nprint(time.perf_counter() - start)\nassert x < 30",
            [],
        ),
        ("record = load()\nassert slope('fused', 'seconds') > 1.5", []),
        ("seconds = 3\nassert seconds < 30", []),
        ("%timeit f()\nassert f() == 1", []),
    ],
)
def test_asserts_on_time_are_recognised(source, expected):
    assert asserts_on_time(TransformerManager().transform_cell(source)) == expected


@pytest.mark.parametrize("name", notebooks())
def test_no_chapter_asserts_on_a_time_it_measures(name):
    assert asserts_on_time(code_of(name)) == []
