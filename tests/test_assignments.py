"""The Otter-Grader assignments (``make assignments``), built and graded with real ``otter run``s.

The assignments are built once per session into a temporary folder. Each chapter's notebooks
are graded once each: the solutions notebook that ``otter assign`` wrote (full marks), the
untouched student notebook (zero, without crashing), and a student notebook in which every
question holds a typical wrong answer except every other one, which holds the reference
solution: the wrong ones lose their points, the others keep theirs.

An ``otter run`` takes about ten seconds, so grading every chapter takes minutes: ``make test``
grades chapter 1's assignment end to end, and ``make test-assignments`` (``BOOK_GRADE_ALL=1``)
grades every chapter's.
"""

import json
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from assignments.build import chapters_with_exercises
from assignments.exercises import coding_exercises
from tests.support.background import graded_chapters
from tests.support.book import ROOT

CHAPTERS = chapters_with_exercises()
GRADED = graded_chapters()

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


def exercises(chapter):
    return coding_exercises((ROOT / "chapters" / f"{chapter}.md").read_text(encoding="utf-8"))


def grade(assignment: Path, notebook: Path, results: Path) -> dict[str, float]:
    """One ``otter run`` of ``notebook`` with the assignment's autograder: score per question."""
    (autograder,) = (assignment / "autograder").glob("*.zip")
    results.mkdir()
    subprocess.run(
        [sys.executable, "-m", "otter", "run", "-a", autograder, "-o", results, notebook],
        check=True,
        capture_output=True,
    )
    tests = json.loads((results / "results.json").read_text())["tests"]
    return {test["name"]: test["score"] for test in tests if test["name"] != "Public Tests"}


def points(assignment: Path, chapter: str) -> dict[str, float]:
    master = nbformat.read(assignment / "autograder" / f"{chapter}.ipynb", as_version=4)
    return {name: test["points"] for name, test in master.metadata["otter"]["tests"].items()}


def with_answers(notebook: Path, answers: dict[str, str], to: Path) -> Path:
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
    nbformat.write(nb, to)
    return to


def test_every_coding_exercise_has_a_wrong_answer():
    labels = {exercise.label for chapter in CHAPTERS for exercise in exercises(chapter)}
    assert labels == set(WRONG_ANSWERS)
    assert len(CHAPTERS) == 7


@pytest.mark.parametrize("chapter", GRADED)
def test_the_reference_solutions_score_full_marks(assignments, chapter, tmp_path):
    assignment = assignments[chapter]
    scores = grade(assignment, assignment / "autograder" / f"{chapter}.ipynb", tmp_path / "r")
    assert scores == points(assignment, chapter)


@pytest.mark.parametrize("chapter", GRADED)
def test_the_untouched_student_notebook_scores_zero(assignments, chapter, tmp_path):
    assignment = assignments[chapter]
    scores = grade(assignment, assignment / "student" / f"{chapter}.ipynb", tmp_path / "r")
    assert scores == dict.fromkeys(points(assignment, chapter), 0)


@pytest.mark.parametrize("chapter", GRADED)
def test_a_wrong_answer_loses_exactly_its_points(assignments, chapter, tmp_path):
    assignment = assignments[chapter]
    chapter_exercises = exercises(chapter)
    answers = {
        exercise.function: WRONG_ANSWERS[exercise.label] if index % 2 == 0 else exercise.solution
        for index, exercise in enumerate(chapter_exercises)
    }
    notebook = with_answers(
        assignment / "student" / f"{chapter}.ipynb", answers, tmp_path / f"{chapter}.ipynb"
    )
    full = points(assignment, chapter)
    expected = {
        exercise.label: 0 if index % 2 == 0 else full[exercise.label]
        for index, exercise in enumerate(chapter_exercises)
    }
    assert grade(assignment, notebook, tmp_path / "r") == expected


@pytest.mark.parametrize("chapter", GRADED)
def test_the_student_folder_holds_no_hidden_test_and_no_solution(assignments, chapter):
    files = [path for path in (assignments[chapter] / "student").rglob("*") if path.is_file()]
    assert files
    text = "\n".join(path.read_text(encoding="utf-8") for path in files)
    for exercise in exercises(chapter):
        assert exercise.check in text  # the student's own check is there
        assert f"{exercise.check}({exercise.function}).assert_passed()" not in text
        for line in exercise.solution.splitlines():
            if line.strip() and line.strip() not in exercise.stub:
                assert line not in text, f"{exercise.label}: {line!r} is in student/"
    assert '"hidden": true' not in text
