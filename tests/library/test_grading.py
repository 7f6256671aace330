"""The grader's parts that run no notebook: the wire between its two processes, and how it tells
what a collected file is. (A whole class graded in sandboxes: tests/book/test_assignments.py.)"""

import json
import os
import sys

import nbformat
import numpy as np
import pytest

from assignments import sandbox, wire
from assignments.grade import (
    COLUMNS,
    Submission,
    answers_code,
    assignments,
    grade,
    identify,
    read_csv,
)
from tests.support.book import chapter_files

# --- the wire ---------------------------------------------------------------------------------


def round_trip(value):
    read_fd, write_fd = os.pipe()
    try:
        wire.send(write_fd, {"value": value})
        os.close(write_fd)
        return wire.receive(wire.reader(read_fd))["value"]
    finally:
        os.close(read_fd)


@pytest.mark.parametrize(
    "value",
    [None, True, 3, -(2**70), 0.1, "τ", (1, [2.5, "x"]), [(), []]],
    ids=repr,
)
def test_plain_values_cross_as_they_are(value):
    assert round_trip(value) == value and type(round_trip(value)) is type(value)


def test_the_wire_is_not_thrown_by_torch_half_imported_by_another_grading_thread(monkeypatch):
    """While one grading thread imports torch, sys.modules holds it half made (its spec says it
    is initialising): another thread's values still cross."""
    import types

    half_made = types.ModuleType("torch")
    half_made.__spec__ = types.SimpleNamespace(_initializing=True)
    monkeypatch.setitem(sys.modules, "torch", half_made)
    number, anything = round_trip((1, object()))  # an object: the torch types are looked up
    assert number == 1 and isinstance(anything, wire.Opaque)


def test_floats_cross_bit_for_bit_nan_and_infinities_included():
    back = round_trip((float("nan"), float("inf"), -0.0, 1e-310))
    assert np.isnan(back[0]) and back[1] == float("inf") and str(back[2]) == "-0.0"
    assert back[3] == 1e-310


@pytest.mark.parametrize(
    "array",
    [
        np.arange(6, dtype=np.float32).reshape(2, 3),
        np.array([[True, False]]),
        np.zeros((0, 3)),
        np.array(2.5),
        np.arange(4, dtype=np.uint8),
        np.asfortranarray(np.ones((2, 3))),
        np.arange(12.0).reshape(3, 4).T,
    ],
)
def test_arrays_cross_with_their_dtype_shape_and_values(array):
    back = round_trip(array)
    assert type(back) is np.ndarray and back.dtype == array.dtype and back.shape == array.shape
    assert np.array_equal(back, array)
    assert back.flags.writeable


def test_numpy_scalars_tensors_and_torch_dtypes_cross():
    torch = pytest.importorskip("torch")
    scalar = round_trip(np.float32(1.5))
    assert type(scalar) is np.float32 and scalar == 1.5
    tensor = round_trip(torch.arange(6, dtype=torch.float64).reshape(2, 3).T)
    assert type(tensor) is torch.Tensor and tensor.dtype == torch.float64
    assert torch.equal(tensor, torch.arange(6.0, dtype=torch.float64).reshape(2, 3).T)
    assert round_trip(torch.float32) is torch.float32


def test_anything_else_crosses_as_the_name_of_its_type_only():
    class Sneaky(np.ndarray):
        def __eq__(self, other):
            return True

    back = round_trip((Sneaky((2,)), {"a": 1}, np.array([object()])))
    assert [type(v).__name__ for v in back] == ["Sneaky", "dict", "ndarray"]
    assert all(isinstance(v, wire.Opaque) for v in back)
    assert not isinstance(back[0], np.ndarray)


def frame(header: bytes, buffers: list[bytes]) -> bytes:
    parts = [len(header).to_bytes(8, "little"), header, len(buffers).to_bytes(8, "little")]
    for buffer in buffers:
        parts += [len(buffer).to_bytes(8, "little"), buffer]
    return b"".join(parts)


@pytest.mark.parametrize(
    "data, problem",
    [
        (frame(b"not json", []), "not JSON"),
        (frame(b"[1, 2]", []), "not a mapping"),
        (
            frame(
                json.dumps({"v": {"ndarray": "float64", "shape": [3], "at": 0}}).encode(),
                [b"\0" * 16],
            ),
            r"cannot hold an array of shape \[3\]",
        ),
        (
            frame(
                json.dumps({"v": {"ndarray": "object", "shape": [1], "at": 0}}).encode(),
                [b"\0" * 8],
            ),
            "no array of dtype 'object'",
        ),
        (
            frame(json.dumps({"v": {"ndarray": "float64", "shape": [1], "at": 3}}).encode(), []),
            "bytes are missing",
        ),
        (frame(json.dumps({"v": {"eval": "os.system('x')"}}).encode(), []), "not a value"),
        ((wire.MAX_BYTES + 1).to_bytes(8, "little"), "larger than"),
    ],
)
def test_a_message_the_protocol_never_sends_is_refused(data, problem):
    view = memoryview(data)

    def read(n):
        nonlocal view
        part, view = bytes(view[:n]), view[n:]
        if len(part) < n:
            raise EOFError
        return part

    with pytest.raises(wire.WireError, match=problem):
        wire.receive(read)


def test_the_name_of_an_opaque_type_is_only_ever_a_name():
    assert type(wire.decode({"opaque": "x); import os; ("}, [])).__name__ == "object"


# --- what a collected file is ----------------------------------------------------------------


def notebook_bytes(*cells: str, assignment: str | None = None) -> bytes:
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    if assignment:
        nb.metadata["otter"] = {"assignment_name": assignment}
    return nbformat.writes(nb).encode()


def submission(data: bytes, tmp_path) -> Submission:
    path = tmp_path / "s.ipynb"
    path.write_bytes(data)
    found = Submission.read(path)
    found.parse()
    return found


@pytest.mark.parametrize(
    "data, problem",
    [
        (b"\xff\xfe", "not valid JSON"),
        (b'{"cells": [', "not valid JSON"),
        (b"[]", "no list of cells"),
        (b'{"cells": {}}', "no list of cells"),
    ],
)
def test_a_file_that_is_no_notebook_says_why(tmp_path, data, problem):
    path = tmp_path / "s.ipynb"
    path.write_bytes(data)
    with pytest.raises(ValueError, match=problem):
        Submission.read(path).parse()


def test_a_notebook_is_the_assignment_whose_functions_its_cells_define(tmp_path):
    known = assignments()
    mine = submission(
        notebook_bytes(
            "%matplotlib inline\nimport numpy as np",
            "def my_softmax(x):\n    return x",
            "attend = lambda z, H: (z, H)",
            assignment="self-attention",
        ),
        tmp_path,
    )
    assignment, note = identify(mine, known)
    assert assignment.name == "attention"
    assert "metadata names the assignment 'self-attention'" in note
    assert "graded as 'attention'" in note
    plain = submission(notebook_bytes("print(1)", assignment="attention"), tmp_path)
    with pytest.raises(ValueError, match=r"not an assignment.*metadata names 'attention'"):
        identify(plain, known)


def test_answers_left_as_stubs_are_no_answers(tmp_path):
    known = assignments()
    stub = 'def my_softmax(x):\n    raise NotImplementedError("replace this line with your code")'
    untouched = submission(notebook_bytes(stub), tmp_path)
    assert answers_code(untouched, known["attention"]) is None
    answered = submission(notebook_bytes("def my_softmax(x):\n    return x  # mine"), tmp_path)
    assert answers_code(answered, known["attention"]) is not None


def test_every_chapter_with_exercises_is_an_assignment_with_its_questions():
    known = assignments()
    # every chapter of the table of contents has coding exercises: each is an assignment
    assert sorted(known) == sorted(name.removeprefix("chapters/") for name in chapter_files())
    softmax = known["attention"].questions[0]
    assert (softmax.function, softmax.check, softmax.points) == ("my_softmax", "check_softmax", 2)
    functions = [f for a in known.values() for f in a.functions]
    assert len(functions) == len(set(functions))  # a notebook's functions name its chapter


def test_without_bubblewrap_the_grader_refuses_and_says_how_to_get_it(monkeypatch, tmp_path):
    which = sandbox.shutil.which
    monkeypatch.setattr(
        sandbox.shutil, "which", lambda name: None if name == "bwrap" else which(name)
    )
    with pytest.raises(sandbox.SandboxUnavailable, match="apt install bubblewrap"):
        grade([tmp_path], tmp_path / "grades.csv")


def test_a_csv_of_another_format_is_not_resumed(tmp_path):
    other = tmp_path / "grades.csv"
    other.write_text("notebook,score\nx,1\n")
    assert read_csv(other) == []
    assert read_csv(tmp_path / "missing.csv") == []
    other.write_text(",".join(COLUMNS) + "\nx,a,q,not-a-number,2,graded,m,,h,1\n")
    assert read_csv(other) == []


def test_a_fault_of_the_graders_is_tried_again_once_then_reported(monkeypatch, tmp_path):
    import assignments.grade as grading

    path = tmp_path / "s.ipynb"
    path.write_bytes(notebook_bytes("def my_softmax(x):\n    return x"))
    faults = iter([OSError("no process for you"), None, OSError("one"), OSError("two")])

    def flaky(submission, assignment, *args):
        fault = next(faults)
        if fault is not None:
            raise fault
        return [grading.Row(str(submission.path), assignment.name, "q", 2, 2, "graded", "ok")]

    monkeypatch.setattr(grading, "grade_notebook", flaky)
    (row,) = grading.grade_submission(path, assignments(), grading.Limits(), seed=1, slot=0)
    assert (row.status, row.score) == ("graded", 2)
    rows = grading.grade_submission(path, assignments(), grading.Limits(), seed=1, slot=0)
    assert {row.status for row in rows} == {"grader error"}
    assert rows[0].message.startswith("OSError: one (") and "; OSError: two (" in rows[0].message


# --- files that break the reader, and text that must not break the grade sheet --------------

NESTED = b'{"cells": [], "x": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
READER_BREAKERS = {
    "nested past the recursion limit": NESTED,
    "a lone surrogate": b'{"cells": [{"cell_type": "code", "source": "x = \'\\ud800\'"}]}',
    "an integer of 5,000 digits": b'{"cells": [], "n": ' + b"7" * 5000 + b"}",
    "metadata a list": b'{"cells": [], "metadata": ["otter"]}',
    "sources of numbers": b'{"cells": [{"cell_type": "code", "source": [1, 2]}]}',
    "a null byte in code": b'{"cells": [{"cell_type": "code", "source": "x = 1\\u0000"}]}',
    "code nested past the parser": json.dumps(
        {"cells": [{"cell_type": "code", "source": "x = " + "(" * 5000 + ")" * 5000}]}
    ).encode(),
}


@pytest.mark.parametrize("data", READER_BREAKERS.values(), ids=READER_BREAKERS)
def test_valid_json_that_python_cannot_read_becomes_the_notebooks_row(tmp_path, data):
    import assignments.grade as grading

    path = tmp_path / "s.ipynb"
    path.write_bytes(data)
    (row,) = grading.grade_submission(path, assignments(), grading.Limits(), seed=1, slot=0)
    assert row.status in ("unreadable", "not an assignment") and row.score == 0
    assert row.message.startswith(("not a notebook", "not an assignment")), row.message


NASTY = {
    "formula": '=HYPERLINK("http://x","click")',
    "plus": "+cmd|' /C calc'!A0",
    "minus": "-2+3",
    "at": "@SUM(A1)",
    "full-width": "＝1+1",
    "tab": "\t=1",
    "carriage return": "\rgraded 2/2",
    "escape sequences": "\x1b]0;owned\x07\x1b[2J\x1b[31mall clear\x1b[0m",
    "bidirectional override": "ok \u202e!dessap",
    "line separator": "one\u2028two\x85three",
    "multi-megabyte": "ValueError: " + "x" * 10_000_000,
}


def assert_safe_field(text: str) -> None:
    from assignments.sheet import CELL_CHARACTERS, FORMULA_STARTS

    assert text.isprintable(), repr(text[:80])
    assert not text.startswith(FORMULA_STARTS), repr(text[:80])
    assert len(text) <= CELL_CHARACTERS


def test_every_field_of_the_grade_sheet_is_printable_no_formula_and_within_a_cell(tmp_path):
    import csv

    import assignments.grade as grading

    out = tmp_path / "grades.csv"
    rows = []
    for text in NASTY.values():
        notebook = str(tmp_path / f"{text[:20]}.ipynb")
        row = grading.Row(notebook, text[:30], text, 0, 2, "graded", text, text[:50], "h", "1")
        rows += grading.fit_in_cells([row], grading.logs_folder(out))
    grading.write_csv(rows, out)
    with out.open(newline="", encoding="utf-8") as file:
        table = list(csv.reader(file))
    assert table[0] == COLUMNS and len(table) == len(NASTY) + 1
    for line in table[1:]:
        assert len(line) == len(COLUMNS)
        for field in line:
            assert_safe_field(field)
    back = {row.message[:12]: row for row in read_csv(out)}
    assert back["'=HYPERLINK("].message == "'" + NASTY["formula"]
    assert back["\\x1b]0;owned"].message.startswith("\\x1b]0;owned\\x07\\x1b[2J")
    long = back["ValueError: "].message
    assert "[cut: 10,000,012 characters in all; the whole message:" in long
    (log,) = grading.logs_folder(out).glob("*.log")
    assert str(log) in long and "x" * 10_000_000 in log.read_text(encoding="utf-8")


def test_a_second_writing_of_a_safe_sheet_changes_nothing(tmp_path):
    import assignments.grade as grading

    out = tmp_path / "grades.csv"
    rows = [grading.Row("n", "a", "q", 0.0, 2.0, "graded", text) for text in NASTY.values()]
    grading.write_csv(grading.fit_in_cells(rows, grading.logs_folder(out)), out)
    first = out.read_bytes()
    grading.write_csv(read_csv(out), out)
    assert out.read_bytes() == first


def test_what_the_grader_prints_is_printable(capsys):
    import assignments.grade as grading

    grading._report([grading.Row("\x1b[2Jnb\r.ipynb", "\x07a", "q", 0, 2, "graded", "m")])
    printed = capsys.readouterr().out
    assert printed.endswith("\n") and printed[:-1].isprintable()
    assert printed.startswith("\\x1b[2Jnb\\r.ipynb  \\x07a")


def test_a_notebook_the_grader_cannot_grade_still_gets_its_row_and_the_class_goes_on(
    monkeypatch, tmp_path
):
    import assignments.grade as grading

    first, second = tmp_path / "a.ipynb", tmp_path / "b.ipynb"
    for path in (first, second):
        path.write_bytes(notebook_bytes("print(1)"))

    def grade_or_fail(path, *args):
        if path == first:
            raise RecursionError("maximum recursion depth exceeded")
        return [grading.Row(str(path), "", "", 0, 0, "not an assignment", "not an assignment")]

    monkeypatch.setattr(grading, "bubblewrap", lambda: None)
    monkeypatch.setattr(grading, "grade_submission", grade_or_fail)
    rows = grading.grade([tmp_path], tmp_path / "grades.csv", jobs=1, seed=1)
    assert [(row.notebook, row.status) for row in rows] == [
        (str(first), "grader error"),
        (str(second), "not an assignment"),
    ]
    assert rows[0].message == "RecursionError: maximum recursion depth exceeded"


def test_without_a_seed_each_check_draws_its_own_inputs_and_the_row_says_so(tmp_path):
    import assignments.grade as grading

    path = tmp_path / "s.ipynb"
    path.write_bytes(b"[]")
    (own,) = grading.grade_submission(path, assignments(), grading.Limits(), seed=None, slot=0)
    (other,) = grading.grade_submission(path, assignments(), grading.Limits(), seed=0, slot=0)
    assert (own.seed, other.seed) == ("", "0")
