"""A class's worth of collected notebooks, graded as an instructor would (make class-for-tests).

``make assignments`` builds every chapter's assignment; a folder of "collected" notebooks is
written, one subfolder per imagined student, and ``python -m assignments.grade`` grades it in one
run; the tests read its CSV. For every chapter there are the solutions notebook that ``otter
assign`` wrote, the untouched student notebook, and notebooks that answer some questions with a
typical wrong answer and the others with the book's solution (every even-numbered question wrong
in one, every odd-numbered one in the other). Beside them, chapter 1's assignment arrives the
ways a real class hands it in (:data:`CLASS`): broken, mislabelled, copied, and written by
students who try to raise their grade without a right answer or to reach outside their notebook.
Notebooks that never finish are graded in a second run with a short time limit (:data:`SLOW`).
"""

from __future__ import annotations

import csv
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import nbformat

from assignments.build import chapters_with_exercises
from assignments.exercises import CodingExercise, coding_exercises
from tests.support.answers import every_graded_wrong
from tests.support.book import ROOT

# A typical mistake for each coding exercise, as the student's function.
WRONG_ANSWERS = {
    "attention-ex-softmax": """
def my_softmax(x):
    e = np.exp(x)                                   # no maximum subtracted: overflows
    return e / e.sum(axis=-1, keepdims=True)
""",
    "attention-ex-single": """
def attend(z, H):
    a = np.exp(H @ z) / np.exp(H @ z).sum()         # an unstable softmax
    return a @ H, a
""",
    "sa-ex-causal": """
def my_causal_mask(n):
    return np.triu(np.ones((n, n), dtype=bool))     # the transpose: later keys visible
""",
    "sa-ex-masked": """
def masked_self_attend(X, mask):
    scores = X @ X.T                                # the mask ignored
    w = np.exp(scores - scores.max(axis=-1, keepdims=True))
    w = w / w.sum(axis=-1, keepdims=True)
    return w @ X, w
""",
    "sa-ex-padding-mask": """
def my_padding_mask(lengths, n, left=False):
    return (np.arange(n) < np.asarray(lengths)[:, None])[:, None, :]   # left ignored
""",
    "qkv-ex-sdpa": """
def sdpa(Q, K, V):
    A = softmax(Q @ K.T)                            # no division by sqrt(d_k)
    return A @ V, A
""",
    "qkv-ex-mask-forms": """
def mask_forms(keep, dtype):
    masked_out = ~keep
    return masked_out, masked_out.to(dtype) * float("-inf")   # 0 * -inf is NaN
""",
    "mha-ex-split": """
def my_split_heads(X, h):
    b, n, d = X.shape
    return X.reshape(b, h, n, d // h)               # mixes tokens across heads
""",
    "mha-ex-merge": """
def my_merge_heads(Y):
    b, h, n, d_v = Y.shape
    return Y.reshape(b, n, h * d_v)                 # no transpose back
""",
    "pe-ex-code": """
def my_positional_encoding(n, d):
    positions = np.arange(n)[:, None]
    rates = 1 / 10000 ** (2 * (np.arange(d) // 2) / d)
    return np.sin(positions * rates)                # sines only, no cosines
""",
    "pe-ex-rope": """
def my_rope(q, k, positions):
    d = q.shape[1]
    angles = np.asarray(positions, dtype=np.float64)[:, None] * 10000.0 ** (-np.arange(0, d, 2) / d)
    cos, sin = np.cos(angles).astype(q.dtype), np.sin(angles).astype(q.dtype)
    def turn(x):                                    # columns i and i + d/2: rotate half
        a, b = x[:, : d // 2], x[:, d // 2 :]
        return np.concatenate([a * cos - b * sin, a * sin + b * cos], axis=1)
    return turn(q), turn(k)
""",
    "capstone-ex-measure": """
def diagonal_mass(weights, offset):
    return torch.diagonal(weights, dim1=-2, dim2=-1).mean(dim=(0, -1))   # offset ignored
""",
    "scale-ex-online": """
def online_attention(Q, K, V, block_size, causal):
    S = Q @ K.T / np.sqrt(Q.shape[1]).astype(Q.dtype)   # the causal mask ignored
    P = np.exp(S - S.max(axis=1, keepdims=True))
    return P @ V / P.sum(axis=1, keepdims=True)
""",
    "scale-ex-gqa": """
def gqa(Q, K, V):
    r = Q.shape[0] // K.shape[0]
    K_all, V_all = np.tile(K, (r, 1, 1)), np.tile(V, (r, 1, 1))   # tile, not repeat
    return scaled_dot_product_attention(Q, K_all, V_all)[0]
""",
    "scale-ex-merge": """
def merge_states(o_a, lse_a, o_b, lse_b):
    return (o_a + o_b) / 2, np.logaddexp(lse_a, lse_b)   # averaged, not weighted
""",
    "gpt-ex-rope-attention": """
def rope_attention(Q, K, V):
    d_k = Q.shape[-1]
    q, k = apply_rotary(Q), apply_rotary(K)
    scores = q @ k.transpose(0, 2, 1) / np.sqrt(d_k).astype(Q.dtype)   # no causal mask
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights = e / e.sum(axis=-1, keepdims=True)
    return weights @ V, weights
""",
    "gpt-ex-top-k": """
def top_k(logits, k, temperature):
    scaled = logits * temperature                   # multiplied, not divided
    kth = np.sort(scaled, axis=-1)[..., -k:][..., :1]
    kept = np.where(scaled >= kth, scaled, -np.inf)
    e = np.exp(kept - kept.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)
""",
    "induction-ex-score": """
def induction_score(weights, tokens):
    n = len(tokens)
    targets = (tokens[:, None] == tokens[None, :]) & np.tri(n, k=-1, dtype=bool)
    return (weights * targets).sum(axis=-1).mean(axis=-1)   # the occurrences, every query
""",
    "induction-ex-composition": """
def k_composition(W_QK, W_OV):
    return float(np.linalg.norm(W_QK @ W_OV))       # W_OV not transposed, not normalised
""",
    **every_graded_wrong(),  # a new chapter's, from its module of answers
}

# The imagined students: which answer each gives to the question at a given position.
REFERENCE, UNTOUCHED = "reference", "untouched"
WRONG_WHERE = {"wrong-even": 0, "wrong-odd": 1}  # wrong where position % 2 equals this

# Files outside its sandbox that a mischievous notebook tries to write, and the command line of
# the processes it leaves behind: after grading, neither may exist on this machine.
OUTSIDE = Path(tempfile.gettempdir()) / "written-from-a-graded-notebook"
LEFT_RUNNING = "3617"  # sleep 3617


# Chapter 1's notebook as a class hands it in: student -> (answers, extra cells, changes).
# The answers are "right" (the chapter's solution), "wrong" (WRONG_ANSWERS) or code.
def snoop(classmate: Path) -> str:
    """A cell that looks for every file it might rewrite (the paths on the command lines of the
    processes it can see, their folders, the usual homes, and the ``classmate``'s notebook,
    whose path it guessed) and tries to overwrite each, and to write :data:`OUTSIDE`."""
    return f"""
import os, pathlib
places = {{'/submission', '/tmp', '/work', '/root', '/home', os.path.expanduser('~')}}
for pid in filter(str.isdigit, os.listdir('/proc')):
    try:
        places.update(open(f'/proc/{{pid}}/cmdline').read().split('\\0'))
        places.add(os.readlink(f'/proc/{{pid}}/cwd'))
    except OSError:
        pass
found = []
for place in places:
    if (not place.startswith('/') or '.venv' in place or '.pyenv' in place
            or place.startswith(('/usr', '/proc', '/sys', '/dev', '/etc'))):
        continue
    for folder, subfolders, files in os.walk(place):
        subfolders[:] = [s for s in subfolders if s not in {{'.venv', '.pyenv', '__pycache__'}}]
        found += [os.path.join(folder, f) for f in files]
targets = [p for p in found if p.endswith(('.ipynb', '.py', '.zip', '.csv', '.md'))]
targets += [{str(OUTSIDE)!r}, {str(classmate)!r}, {str(ROOT / "chapters" / "attention.md")!r}]
written = []
for target in targets:
    try:
        pathlib.Path(target).write_text('rewritten by a classmate')
        written.append(target)
    except OSError:
        pass
"""


RAISES = "def my_softmax(x):\n    raise ValueError({message})\n"

CLASS = {
    "copy": ("right", [], {}),
    "other-metadata": ("right", [], {"assignment": "self-attention"}),
    "julia-kernel": ("right", [], {"kernel": "julia-1.10"}),
    "error-in-another-cell": ("right", ["undefined_name + 1"], {}),
    "no-check-cells": ("right", [], {"drop checks": True}),
    "renamed": ({"my_softmax": "right-renamed"}, [], {}),
    "forbidden-helper": (
        {
            "my_softmax": "import attnkit.core\n\ndef my_softmax(x):\n    return attnkit.core.softmax(x)\n"
        },
        [],
        {},
    ),
    "patched-check": (
        "wrong",
        [
            "from attnkit.exercises.harness import CheckResult\n"
            "check_softmax = check_single_query_attention = lambda fn: CheckResult(True, 'ok')"
        ],
        {},
    ),
    "patched-checks-module": (
        "wrong",
        [
            "import attnkit.exercises, attnkit.exercises.attention as own\n"
            "from attnkit.exercises.harness import CheckResult\n"
            "for module in (attnkit.exercises, own):\n"
            "    module.check_softmax = module.check_single_query_attention = (\n"
            "        lambda fn, **kw: CheckResult(True, 'ok'))"
        ],
        {},
    ),
    "patched-harness": (
        "wrong",
        [
            "import attnkit.exercises.harness as h, attnkit.exercises.calling as c\n"
            "h.close = lambda *a, **k: True\n"
            "h.keeps_dtype = lambda *a, **k: None\n"
            "c.invoke = lambda fn, args, *a: c.Outcome(result=None, args=args)"
        ],
        {},
    ),
    "patched-numpy": (
        "wrong",
        [
            "np.isclose = lambda *a, **k: np.ones(1, dtype=bool)\n"
            "np.allclose = np.array_equal = lambda *a, **k: True"
        ],
        {},
    ),
    "fake-results": (
        {
            "my_softmax": "class Anything(np.ndarray):\n"
            "    def __eq__(self, other):\n        return True\n"
            "    def __array_ufunc__(self, *a, **k):\n        return np.ones(1, dtype=bool)\n\n"
            "def my_softmax(x):\n    return np.zeros(x.shape, x.dtype).view(Anything)\n",
            "attend": "class Pair(tuple):\n    def __eq__(self, other):\n        return True\n\n"
            "def attend(z, H):\n    return Pair([z, H])\n",
        },
        [],
        {},
    ),
    "snoops": ("wrong", ["SNOOP"], {}),  # tests.support.grading.snoop, at the class's path
    "exhausts-memory": ("right", ["hog = np.ones(2**33)  # 64 GiB"], {}),
    "exhausts-disk": (
        "right",
        ["with open('big', 'wb') as f:\n    for _ in range(4096):\n        f.write(bytes(2**20))"],
        {},
    ),
    "exhausts-processes": (
        "right",
        [
            "import subprocess\nchildren = []\nfor _ in range(500):\n    try:\n"
            f"        children.append(subprocess.Popen(['sleep', '{LEFT_RUNNING}']))\n"
            "    except OSError:\n        break"
        ],
        {},
    ),
    "outlives-grading": (
        "right",
        [
            "import os\nif os.fork() == 0:\n    os.setsid()\n"
            f"    os.execvp('sleep', ['sleep', '{LEFT_RUNNING}'])"
        ],
        {},
    ),
    "kills-its-grader": (
        "right",
        [
            "import os, signal\nfor pid in (os.getppid(), 1, -1):\n"
            "    try:\n        os.kill(pid, signal.SIGKILL)\n    except OSError:\n        pass"
        ],
        {},
    ),
    "dies": ("right", ["import os\nos.abort()"], {}),
    # Text a spreadsheet would run, or a terminal obey, or no cell can hold, in what it raises.
    "raises-a-formula": (
        {"my_softmax": RAISES.format(message='\'=HYPERLINK("http://example.com","2/2")\'')},
        [],
        {},
    ),
    "raises-escapes": (
        {"my_softmax": RAISES.format(message="'\\x1b[2J\\x1b]0;all clear\\x07\\rgraded: 2/2'")},
        [],
        {},
    ),
    "raises-megabytes": ({"my_softmax": RAISES.format(message="'x' * 10_000_000")}, [], {}),
}
# Graded in a second run, with a short time limit. The cell that never ends and the function
# that never returns wait (as on input or a lock) rather than spin: the grader stops both at the
# wall clock's limit alike, and a spinning sandbox, a session of its own, took its share of the
# cores from make test's other jobs until then.
SLOW = {
    "on-time": ("right", [], {}),
    "endless-cell": ("right", ["import time\n\nwhile True:\n    time.sleep(1)"], {}),
    "endless-function": (
        {
            "my_softmax": "import time\n\n\ndef my_softmax(x):\n    while True:\n"
            "        time.sleep(1)\n"
        },
        [],
        {},
    ),
}
# Long enough for the notebook on time on a busy machine: make test grades at low priority,
# and a notebook's session takes the grader's (assignments/notebook_process.py).
SLOW_SECONDS = 45


@dataclass(frozen=True)
class Graded:
    """What the grader said of every collected notebook, and what grading left behind."""

    assignments: Path  # the built assignments, one folder per chapter
    collected: Path  # the notebooks graded, collected/<student>/<chapter>.ipynb
    table: Path  # the grader's CSV of the class
    slow_table: Path  # the CSV of the run with a short time limit
    rows: list[dict]  # the CSV's rows, both runs
    before: dict[str, str]  # collected file -> sha256, before grading
    after: dict[str, str]  # and after
    leftovers: list[str]  # command lines of processes left running by graded notebooks
    outside_written: bool  # did a notebook write a file outside its sandbox?

    def save(self, path: Path) -> None:
        fields = {name: getattr(self, name) for name in self.__dataclass_fields__}
        text = json.dumps(fields, default=str, indent=1)
        path.write_text(text, encoding="utf-8")

    @classmethod
    def load(cls, path: Path) -> Graded:
        fields = json.loads(path.read_text(encoding="utf-8"))
        paths = ("assignments", "collected", "table", "slow_table")
        return cls(**fields | {name: Path(fields[name]) for name in paths})

    def of(self, student: str, chapter: str) -> list[dict]:
        return [
            row
            for row in self.rows
            if Path(row["notebook"]).parent.name == student
            and Path(row["notebook"]).stem == chapter
        ]

    def scores(self, student: str, chapter: str) -> dict[str, float]:
        return {row["question"]: float(row["score"]) for row in self.of(student, chapter)}


def exercises(chapter: str) -> list[CodingExercise]:
    return coding_exercises((ROOT / "chapters" / f"{chapter}.md").read_text(encoding="utf-8"))


def wrong_at(student: str, position: int) -> bool:
    return student in WRONG_WHERE and position % 2 == WRONG_WHERE[student]


def with_answers(
    notebook: Path,
    answers: dict[str, str],
    to: Path,
    extra: list[str] = (),
    changes: dict | None = None,
) -> None:
    """A copy of the student ``notebook`` whose answer cells hold ``answers`` (function name ->
    code defining it; the cell keeps its imports and its call to the check), then the ``extra``
    code cells, with ``changes``: another assignment or kernel named in the metadata, or the
    cells that call the checks (the chapter's and Otter's) dropped."""
    changes = changes or {}
    nb = nbformat.read(notebook, as_version=4)
    for cell in nb.cells:
        for function, code in answers.items():
            if f"def {function}(" in cell.source:
                kept = [
                    line for line in cell.source.splitlines() if line.startswith(("from", "check_"))
                ]
                cell.source = "\n".join([kept[0], code, *kept[1:]])
    if changes.get("drop checks"):
        for cell in nb.cells:
            cell.source = "\n".join(
                line for line in cell.source.splitlines() if not line.startswith("check_")
            )
        nb.cells = [cell for cell in nb.cells if "grader.check(" not in cell.source]
    nb.cells += [nbformat.v4.new_code_cell(source) for source in extra]
    if "assignment" in changes:
        nb.metadata["otter"]["assignment_name"] = changes["assignment"]
    if "kernel" in changes:
        nb.metadata["kernelspec"] = {"name": changes["kernel"], "display_name": "Julia"}
    to.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, to)


def collect(chapter: str, built: Path, collected: Path) -> None:
    """The notebooks of every imagined student for ``chapter``'s assignment built in ``built``."""
    solutions, student = built / "autograder" / f"{chapter}.ipynb", built / "student"
    for folder, source in [(REFERENCE, solutions), (UNTOUCHED, student / f"{chapter}.ipynb")]:
        (collected / folder).mkdir(parents=True, exist_ok=True)
        (collected / folder / f"{chapter}.ipynb").write_bytes(source.read_bytes())
    questions = exercises(chapter)
    for name in WRONG_WHERE:
        if not any(wrong_at(name, position) for position in range(len(questions))):
            continue  # one question: the other student would answer it rightly, as reference does
        answers = {
            exercise.function: WRONG_ANSWERS[exercise.label]
            if wrong_at(name, position)
            else exercise.solution
            for position, exercise in enumerate(questions)
        }
        with_answers(student / f"{chapter}.ipynb", answers, collected / name / f"{chapter}.ipynb")


def collect_class(students: dict, built: Path, collected: Path) -> None:
    """Chapter 1's notebook from each of ``students`` (see :data:`CLASS`)."""
    chapter = "attention"
    handed_out = built / chapter / "student" / f"{chapter}.ipynb"
    questions = {exercise.function: exercise for exercise in exercises(chapter)}
    for student, (answers, extra, changes) in students.items():
        if isinstance(answers, str):
            answers = dict.fromkeys(questions, answers)
        code = {}
        for function, exercise in questions.items():
            answer = answers.get(function, "right")
            code[function] = {
                "right": exercise.solution,
                "wrong": WRONG_ANSWERS[exercise.label],
                "right-renamed": exercise.solution.replace(function, function + "_v2"),
            }.get(answer, answer)
        classmate = collected / REFERENCE / f"{chapter}.ipynb"
        extra = [snoop(classmate) if cell == "SNOOP" else cell for cell in extra]
        with_answers(handed_out, code, collected / student / f"{chapter}.ipynb", extra, changes)
    if "copy" in students:  # the copy is the reference's file, byte for byte
        reference = collected / REFERENCE / f"{chapter}.ipynb"
        (collected / "copy" / f"{chapter}.ipynb").write_bytes(reference.read_bytes())


def collect_odd_files(collected: Path) -> None:
    """A file that is no notebook, files Python cannot read as JSON, and a notebook of no
    assignment."""
    (collected / "corrupt").mkdir(parents=True)
    (collected / "corrupt" / "attention.ipynb").write_bytes(b'{"cells": [ this is not JSON')
    plain = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("print('my notes')")])
    (collected / "not-an-assignment").mkdir(parents=True)
    nbformat.write(plain, collected / "not-an-assignment" / "attention.ipynb")
    for name, data in UNREADABLE_JSON.items():
        (collected / name).mkdir(parents=True)
        (collected / name / "attention.ipynb").write_bytes(data)


# Valid JSON that Python's reader cannot read.
UNREADABLE_JSON = {
    "nested-json": b'{"cells": [], "x": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
    "huge-number": b'{"cells": [], "n": ' + b"7" * 5000 + b"}",
}


def hashes(folder: Path) -> dict[str, str]:
    return {
        str(path): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


def processes_left() -> list[str]:
    """The command lines on this machine that a graded notebook started."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            line = (Path("/proc") / pid / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if f"sleep {LEFT_RUNNING}" in line:
            found.append(line)
    return found


def grade_class(folder: Path) -> Graded:
    """Collect the class's notebooks from the assignments that ``make assignments OUT=folder``
    built and grade them all with the instructor's command: the class, and beside it (its
    notebooks mostly wait for their time limit) the notebooks that never finish."""
    built, collected = folder / "_build" / "assignments", folder / "collected"
    slow, table, slow_table = folder / "slow", folder / "grades.csv", folder / "slow-grades.csv"
    for path in (collected, slow, table, slow_table):  # a second run starts afresh
        if path.is_dir():
            shutil.rmtree(path)
        path.unlink(missing_ok=True)
    OUTSIDE.unlink(missing_ok=True)
    for chapter in chapters_with_exercises():
        collect(chapter, built / chapter, collected)
    collect_class(CLASS, built, collected)
    collect_odd_files(collected)
    collect_class(SLOW, built, slow)
    before = hashes(collected)
    grade = [sys.executable, "-m", "assignments.grade", "--seed", "1", "--fresh"]
    runs = [
        ([*grade, collected, "--out", table], table),
        ([*grade, slow, "--out", slow_table, "--timeout", str(SLOW_SECONDS)], slow_table),
    ]
    started = [
        (subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT), out)
        for command, out in runs
    ]
    rows = []
    for process, out in started:
        said = process.communicate()[0].decode(errors="replace")
        if process.returncode != 0:
            raise SystemExit(f"{process.args} failed:\n{said[-3000:]}")
        with out.open(encoding="utf-8") as file:
            rows += list(csv.DictReader(file))
    return Graded(
        built,
        collected,
        table,
        slow_table,
        rows,
        before,
        hashes(collected),
        processes_left(),
        OUTSIDE.exists(),
    )


if __name__ == "__main__":
    # make class-for-tests: python -m tests.support.grading FOLDER (after make assignments OUT=FOLDER)
    folder = Path(sys.argv[1]).resolve()
    grade_class(folder).save(folder / "graded.json")
