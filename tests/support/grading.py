"""Every chapter's assignment built and graded as an instructor would, in the background.

``make assignments`` builds them; a folder of "collected" notebooks is written, one subfolder per
imagined student: the solutions notebook that ``otter assign`` wrote, the untouched student
notebook, and student notebooks that answer some questions with a typical wrong answer and the
others with the book's solution (every even-numbered question wrong in one, every odd-numbered
one in the other, so each wrong answer is graded beside correct ones). ``python -m
assignments.grade`` then grades the whole folder in one run, and the tests read its CSV.
"""

from __future__ import annotations

import csv
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import nbformat

from assignments.exercises import CodingExercise, coding_exercises
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
}

# The imagined students: which answer each gives to the question at a given position.
REFERENCE, UNTOUCHED = "reference", "untouched"
WRONG_WHERE = {"wrong-even": 0, "wrong-odd": 1}  # wrong where position % 2 equals this


@dataclass(frozen=True)
class Graded:
    """What the grader said of every collected notebook: student -> chapter -> scores."""

    assignments: Path  # the built assignments, one folder per chapter
    collected: Path  # the notebooks graded, collected/<student>/<chapter>.ipynb
    table: Path  # the grader's CSV
    scores: dict[str, dict[str, dict[str, float]]]
    points: dict[str, dict[str, float]]  # chapter -> question -> points, as graded
    errors: dict[tuple[str, str], str]  # (student, chapter) -> why the grader gave up


def exercises(chapter: str) -> list[CodingExercise]:
    return coding_exercises((ROOT / "chapters" / f"{chapter}.md").read_text(encoding="utf-8"))


def wrong_at(student: str, position: int) -> bool:
    return student in WRONG_WHERE and position % 2 == WRONG_WHERE[student]


def with_answers(notebook: Path, answers: dict[str, str], to: Path) -> None:
    """A copy of the student ``notebook`` whose answer cells hold ``answers`` (function name ->
    code defining it); the cell keeps its imports and its call to the check."""
    nb = nbformat.read(notebook, as_version=4)
    for cell in nb.cells:
        for function, code in answers.items():
            if f"def {function}(" in cell.source:
                kept = [
                    line for line in cell.source.splitlines() if line.startswith(("from", "check_"))
                ]
                cell.source = "\n".join([kept[0], code, *kept[1:]])
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


def build_and_grade(chapters: list[str], folder: Path) -> Graded:
    """Build ``chapters``' assignments, collect the students' notebooks and grade them all, with
    the commands an instructor runs."""
    built, collected, table = folder / "assignments", folder / "collected", folder / "grades.csv"
    # At low priority: the grading has the whole session to finish (its tests run last) and
    # should not slow the book's build, which the browser tests wait for.
    python = ["nice", "-n", "10", sys.executable, "-m"]
    run = {"cwd": ROOT, "check": True, "capture_output": True, "text": True}
    try:
        subprocess.run([*python, "assignments.build", "--out", built, *chapters], **run)
        for chapter in chapters:
            collect(chapter, built / chapter, collected)
        subprocess.run(
            [*python, "assignments.grade", collected, "--assignments", built, "--out", table], **run
        )
    except subprocess.CalledProcessError as error:
        message = f"{error.cmd} failed:\n{error.stdout[-3000:]}{error.stderr[-3000:]}"
        raise AssertionError(message) from error
    scores, points, errors = {}, {}, {}
    with table.open(encoding="utf-8") as file:
        for row in csv.DictReader(file):
            notebook = Path(row["notebook"])
            student, chapter = notebook.parent.name, notebook.stem
            scores.setdefault(student, {}).setdefault(chapter, {})[row["question"]] = float(
                row["score"]
            )
            points.setdefault(chapter, {})[row["question"]] = float(row["points"])
            if row["error"]:
                errors[student, chapter] = row["error"]
    return Graded(built, collected, table, scores, points, errors)
