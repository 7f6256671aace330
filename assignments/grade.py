"""``make grade``: grade every collected notebook in a sandbox of its own, into one complete CSV.

    python -m assignments.grade collected/ [--out grades.csv] [--timeout 120] [--jobs 2]
                                           [--seed N] [--fresh]

Each notebook is judged by what its cells are. It is read once (the collected files are never
written), and its chapter is the one whose exercise functions its code defines; the name in its
metadata only matters when the cells leave a choice, and a disagreement is reported. Its code
then runs in a sandbox (:mod:`assignments.sandbox`): a copy of the notebook alone, a read-only
environment, no network, no other submission, time and memory limits. The chapter's checks run
here, in the grader's own process, on the student's functions, which they call across the
sandbox's wall (:class:`StudentFunction`): nothing the notebook does can change a check, and
only plain data (arrays, numbers, strings) comes back. A question scores its points when its
check passes; the check's message says why when it does not.

Whatever a notebook is (not JSON, not an assignment, an endless loop, a process that dies), the
run goes on and ends with a row for it: ``status`` says what happened (``graded``,
``unreadable``, ``not an assignment``, ``time limit``, ``kernel died``, ``grader error``) and
``message`` why. Every field is safe to open in a spreadsheet (:mod:`assignments.sheet`); a
message too long for a cell is cut, and kept whole in the notebook's log, in the folder
``grades-logs`` beside ``grades.csv``. The CSV is rewritten after every notebook, so a run that is stopped keeps
what it graded, and running again resumes: a notebook graded before, unchanged since (its
``sha256``), keeps its rows. Notebooks whose answers are the same code are flagged in
``duplicate_of``. Each check draws its own fixed inputs, as in the book, so a notebook gets the
verdict its student saw; ``--seed`` draws other inputs, the same for the whole class, and
``seed`` says which (empty: the checks' own).
"""

from __future__ import annotations

import argparse
import ast
import csv
import functools
import hashlib
import json
import os
import sys
import threading
import time
import traceback
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path

from assignments.build import chapters_with_exercises
from assignments.exercises import assignment_settings, coding_exercises
from assignments.sandbox import Limits, NotebookProcess, ProcessEnded, bubblewrap
from assignments.sheet import CELL_CHARACTERS, cut, printable, safe_cell
from attnkit.exercises.calling import Outcome, Remote
from attnkit.exercises.stub import stub_line
from attnkit.exercises.tracing import unpacked

ROOT = Path(__file__).resolve().parent.parent
COLUMNS = [
    "notebook",
    "assignment",
    "question",
    "score",
    "points",
    "status",
    "message",
    "duplicate_of",
    "sha256",
    "seed",
]
GRADED, UNREADABLE, NOT_AN_ASSIGNMENT = "graded", "unreadable", "not an assignment"
# the stub's line, in each language its notebook is handed out in, as Submission.defined writes code
STUBS = tuple(ast.unparse(ast.parse(stub_line(code))) for code in ("en", "ja"))
TIME_LIMIT, KERNEL_DIED, GRADER_ERROR = "time limit", "kernel died", "grader error"


@dataclass(frozen=True)
class Question:
    label: str
    function: str  # the function the student writes
    check: str  # the check that judges it, in module
    module: str
    points: float


@dataclass(frozen=True)
class Assignment:
    name: str  # the chapter's slug, as otter assign names the assignment
    questions: tuple[Question, ...]

    @property
    def functions(self) -> set[str]:
        return {q.function for q in self.questions}

    def check_of(self, question: Question):
        import importlib

        return getattr(importlib.import_module(question.module), question.check)


@functools.cache
def assignments() -> dict[str, Assignment]:
    """Every chapter with coding exercises, its questions and points, from the book's sources."""
    found = {}
    for chapter in chapters_with_exercises():
        text = (ROOT / "chapters" / f"{chapter}.md").read_text(encoding="utf-8")
        settings = assignment_settings(text)
        found[chapter] = Assignment(
            chapter,
            tuple(
                Question(e.label, e.function, e.check, e.check_module, settings[e.label]["points"])
                for e in coding_exercises(text)
            ),
        )
    return found


@dataclass(frozen=True)
class Row:
    notebook: str
    assignment: str
    question: str
    score: float
    points: float
    status: str
    message: str
    duplicate_of: str = ""
    sha256: str = ""
    seed: str = ""


# --- what a notebook is ----------------------------------------------------------------------


@dataclass
class Submission:
    """A collected notebook, read once: its bytes, its code cells and the names they define."""

    path: Path
    data: bytes
    sha256: str
    cells: list[str] = field(default_factory=list)
    metadata_assignment: str = ""

    @classmethod
    def read(cls, path: Path) -> Submission:
        data = path.read_bytes()
        return cls(path, data, hashlib.sha256(data).hexdigest())

    def parse(self) -> None:
        """The code cells, or ValueError saying why the file is no notebook."""
        try:
            # Valid JSON may still be more than Python reads: nesting deeper than its recursion
            # limit, integers of more than 4,300 digits, strings no UTF-8 can hold.
            notebook = json.loads(self.data.decode("utf-8"))
            json.dumps(notebook, ensure_ascii=False).encode("utf-8")
        except Exception as error:
            reason = f"{type(error).__name__}: {error}"
            raise ValueError(
                f"not a notebook: it is not valid JSON Python can read ({reason})"
            ) from None
        if not isinstance(notebook, dict) or not isinstance(notebook.get("cells"), list):
            raise ValueError("not a notebook: it has no list of cells")
        for cell in notebook["cells"]:
            if isinstance(cell, dict) and cell.get("cell_type") == "code":
                source = cell.get("source", "")
                lines = source if isinstance(source, list) else [source]
                self.cells.append("".join(map(str, lines)))
        metadata = notebook.get("metadata")
        otter = metadata.get("otter") if isinstance(metadata, dict) else None
        name = otter.get("assignment_name") if isinstance(otter, dict) else None
        self.metadata_assignment = name if isinstance(name, str) else ""

    def defined(self) -> dict[str, str]:
        """Every top-level function or name the code cells define -> the code of its cell."""
        names = {}
        for source in self.cells:
            code = "\n".join(
                line for line in source.splitlines() if not line.lstrip().startswith(("%", "!"))
            )
            try:
                tree = ast.parse(code)
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                continue  # the cell raises when it runs, as it would in a kernel
            for node in tree.body:
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    names[node.name] = ast.unparse(tree)
                elif isinstance(node, ast.Assign):
                    for target in node.targets:
                        if isinstance(target, ast.Name):
                            names[target.id] = ast.unparse(tree)
        return names


def identify(submission: Submission, known: dict[str, Assignment]) -> tuple[Assignment, str]:
    """The assignment whose functions the notebook's cells define, and a note when its metadata
    names another; ValueError when it defines none."""
    defined = submission.defined()
    counts = {name: len(a.functions & defined.keys()) for name, a in known.items()}
    best = max(counts.values(), default=0)
    named = submission.metadata_assignment
    if best == 0:
        said = f" (its metadata names {named!r})" if named else ""
        raise ValueError(
            "not an assignment: its cells define none of the exercise functions of any "
            f"chapter{said}"
        )
    candidates = [name for name, count in counts.items() if count == best]
    chosen = named if named in candidates else candidates[0]
    note = ""
    if named and named != chosen:
        note = (
            f"its metadata names the assignment {named!r}, but its cells are those of "
            f"{chosen!r}: graded as {chosen!r}. "
        )
    return known[chosen], note


def answers_code(submission: Submission, assignment: Assignment) -> tuple[str, ...] | None:
    """The code of the cells that define the answers, or None if every one is the stub."""
    defined = submission.defined()
    code = tuple(defined.get(function, "") for function in sorted(assignment.functions))
    return None if all(not c or any(stub in c for stub in STUBS) for c in code) else code


# --- grading one notebook --------------------------------------------------------------------


class StudentFunction(Remote):
    """The notebook's function ``name``, called in its sandbox until ``deadline``."""

    def __init__(self, process: NotebookProcess, name: str, deadline: float):
        self.process, self.name, self.deadline = process, name, deadline

    def invoke(
        self,
        args: tuple,
        forbidden: tuple[str, ...],
        measure: bool,
        layout: str = "C",
        twice: bool = False,
    ) -> Outcome:
        how = {"measure": measure, "layout": layout, "twice": twice}
        try:
            reply = self.process.call(self.name, args, forbidden, how, self.deadline)
        except ProcessEnded as ended:
            return Outcome(error=f"the grader stopped it: {ended}", args=args)
        if reply.get("missing"):
            return Outcome(error=f"NameError: the notebook has no function {self.name}", args=args)
        forbidden_used = reply.get("forbidden") or ()
        peak = reply.get("peak_bytes")
        return Outcome(
            result=reply.get("result"),
            error=reply.get("error") if isinstance(reply.get("error"), str) else None,
            forbidden=tuple(str(name) for name in forbidden_used),
            peak_bytes=peak if isinstance(peak, int) else None,
            args=tuple(reply.get("args") or ()),
            shared=reply.get("shared") is True,
        )

    def trace(self, check: str, forbidden: tuple[str, ...]) -> dict | None:
        """The trace of the notebook's function, made in its sandbox (harness checks what
        comes back); None when the process cannot give it."""
        try:
            reply = self.process.call(self.name, (), forbidden, {"trace": check}, self.deadline)
        except ProcessEnded:
            return None
        return unpacked(reply.get("trace"))


def grade_notebook(
    submission: Submission,
    assignment: Assignment,
    note: str,
    limits: Limits,
    seed: int | None,
    slot: int,
) -> list[Row]:
    """Run the notebook in its sandbox and judge each question with its chapter's check. A
    question whose check ends the process (it died, or ran out of time) starts a new one."""

    def row(question: Question, status: str, message: str, passed: bool = False) -> Row:
        score = question.points if passed else 0
        return Row(
            str(submission.path), assignment.name, question.label, score, question.points,
            status, note + message,
        )  # fmt: skip

    rows, process, ready = [], None, {}
    try:
        for question in assignment.questions:
            if process is None or process.stopped_because is not None:
                process = NotebookProcess(submission.data, limits, slot)
                try:
                    ready = process.wait_ready()
                except ProcessEnded as ended:
                    left = assignment.questions[len(rows) :]
                    return rows + [row(q, _status(str(ended)), str(ended)) for q in left]
            if question.function not in ready.get("functions", ()):
                rows.append(row(question, GRADED, _missing(question, ready)))
                continue
            deadline = time.monotonic() + limits.seconds
            student = StudentFunction(process, question.function, deadline)
            result = assignment.check_of(question)(student, seed=seed)
            ended = process.stopped_because
            if ended is not None:
                rows.append(row(question, _status(ended), ended))
            else:
                rows.append(row(question, GRADED, result.report, result.passed))
    finally:
        if process is not None:
            process.stop()
    return rows


def _status(ended: str) -> str:
    """The status of a question whose process the grader stopped (``ended`` says why)."""
    return TIME_LIMIT if ended.startswith("time limit") else KERNEL_DIED


def _missing(question: Question, ready: dict) -> str:
    errors = ready.get("errors") or []
    raised = f" (these cells raised: {', '.join(map(str, errors[:5]))})" if errors else ""
    return (
        f"the notebook defines no function `{question.function}`{raised}: the question asks "
        "for a function of this name, and the check calls it by that name"
    )


def grade_submission(
    path: Path, known: dict[str, Assignment], limits: Limits, seed: int | None, slot: int
) -> list[Row]:
    """Every row of one collected notebook, whatever it holds."""
    stamp = dict(seed="" if seed is None else str(seed))
    try:
        submission = Submission.read(path)
    except OSError as error:
        return [Row(str(path), "", "", 0, 0, UNREADABLE, f"cannot be read: {error}", **stamp)]
    stamp["sha256"] = submission.sha256
    try:
        submission.parse()
        assignment, note = identify(submission, known)
    except Exception as error:
        said = str(error) if isinstance(error, ValueError) else f"{type(error).__name__}: {error}"
        status = NOT_AN_ASSIGNMENT if said.startswith("not an assignment") else UNREADABLE
        return [Row(str(path), submission.metadata_assignment, "", 0, 0, status, said, **stamp)]
    faults = []
    # A fault of the grader's own (the machine refusing a process, say) is tried once more: it
    # must not cost the student the grade. A second one is reported, where it happened.
    while len(faults) < 2:
        try:
            rows = grade_notebook(submission, assignment, note, limits, seed, slot)
            break
        except Exception as error:
            where = traceback.extract_tb(error.__traceback__)[-1]
            faults.append(
                f"{type(error).__name__}: {error} ({Path(where.filename).name}:{where.lineno})"
            )
    else:
        rows = [
            Row(str(path), assignment.name, q.label, 0, q.points, GRADER_ERROR, "; ".join(faults))
            for q in assignment.questions
        ]
    return [replace(row, **stamp) for row in rows]


# --- the class -------------------------------------------------------------------------------


def collect(paths: Iterable[Path]) -> list[Path]:
    """The notebooks named, and those in the folders named (at any depth), in a stable order."""
    found = []
    for path in paths:
        if path.is_dir():
            found += sorted(p for p in path.rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts)
        elif path.suffix == ".ipynb":
            found.append(path)
        else:
            raise ValueError(f"{path} is neither a notebook nor a folder")
    if not found:
        raise ValueError(f"no notebook in {', '.join(map(str, paths))}")
    return found


def read_csv(path: Path) -> list[Row]:
    """The rows of an earlier run's CSV; none if it is missing or not this grader's."""
    try:
        with path.open(newline="", encoding="utf-8") as file:
            reader = csv.DictReader(file)
            if reader.fieldnames != COLUMNS:
                return []
            return [
                Row(**{**row, "score": float(row["score"]), "points": float(row["points"])})
                for row in reader
            ]
    except (OSError, ValueError, TypeError):
        return []


def write_csv(rows: Sequence[Row], path: Path) -> None:
    """All rows, written whole to a new file that then replaces ``path``."""
    partial = path.with_name(path.name + ".partial")
    with partial.open("w", newline="", encoding="utf-8") as file:
        writer = csv.writer(file)
        writer.writerow(COLUMNS)
        for row in rows:
            writer.writerow([safe_cell(getattr(row, column)) for column in COLUMNS])
    os.replace(partial, path)


def logs_folder(out: Path) -> Path:
    """Where the notebooks' logs go, beside the CSV ``out``: ``grades.csv`` -> ``grades-logs``."""
    return out.with_name(f"{out.stem}-logs")


def fit_in_cells(rows: Sequence[Row], logs: Path) -> list[Row]:
    """The rows of one notebook with printable text, each field within a spreadsheet cell; a
    longer message is cut, and every cut message is written whole to the notebook's log."""
    notebook = rows[0].notebook if rows else ""
    log = logs / (hashlib.sha256(notebook.encode("utf-8", "replace")).hexdigest()[:16] + ".log")
    fitted, whole = [], []
    for row in rows:
        fields = {
            name: printable(value) if isinstance(value, str) else value
            for name, value in vars(row).items()
        }
        message = fields["message"]
        if len(message) > CELL_CHARACTERS - 1:  # one character for a formula's neutralising '
            whole.append(f"question {fields['question']}:\n{message}\n")
            fields["message"] = cut(message, CELL_CHARACTERS - 1, f"the whole message: {log}")
        fitted.append(Row(**fields))
    if whole:
        logs.mkdir(parents=True, exist_ok=True)
        log.write_text(f"{printable(notebook)}\n\n" + "\n".join(whole), encoding="utf-8")
    return fitted


def flag_duplicates(rows: list[Row], known: dict[str, Assignment]) -> list[Row]:
    """Mark the notebooks whose answers are the same code as another notebook's."""
    by_code: dict[tuple, list[str]] = {}
    for notebook in dict.fromkeys(row.notebook for row in rows if row.assignment in known):
        try:
            submission = Submission.read(Path(notebook))
            submission.parse()
        except Exception:  # reported in its own row already
            continue
        assignment = next(row.assignment for row in rows if row.notebook == notebook)
        code = answers_code(submission, known[assignment])
        if code is not None:
            by_code.setdefault((assignment, code), []).append(notebook)
    copies = {
        notebook: "; ".join(other for other in group if other != notebook)
        for group in by_code.values()
        if len(group) > 1
        for notebook in group
    }
    return [replace(row, duplicate_of=copies.get(row.notebook, "")) for row in rows]


def grade(
    paths: Sequence[Path],
    out: Path,
    limits: Limits | None = None,
    jobs: int = 2,
    seed: int | None = None,
    fresh: bool = False,
) -> list[Row]:
    """Grade the notebooks under ``paths`` into ``out``, resuming an earlier run unless
    ``fresh``. Returns every row."""
    bubblewrap()  # fail at once, with advice, where there is no sandbox
    limits = limits or Limits()
    known = assignments()
    notebooks = collect(paths)
    earlier = [] if fresh else read_csv(out)
    kept: dict[str, list[Row]] = {}
    for row in earlier:
        kept.setdefault(row.notebook, []).append(row)
    if seed is None and earlier and earlier[0].seed:
        seed = int(earlier[0].seed)
    done = {}
    for path in notebooks:
        rows = kept.get(str(path))
        try:
            same = rows and rows[0].sha256 == Submission.read(path).sha256
        except OSError:
            same = False
        if same:
            done[str(path)] = rows
    lock = threading.Lock()
    slots = list(range(jobs))

    def one(path: Path) -> None:
        with lock:
            slot = slots.pop()
        try:
            rows = grade_submission(path, known, limits, seed, slot)
        except Exception as error:  # the grader's own fault: reported, and the class goes on
            said = f"{type(error).__name__}: {error}"
            rows = [
                Row(
                    str(path),
                    "",
                    "",
                    0,
                    0,
                    GRADER_ERROR,
                    said,
                    seed="" if seed is None else str(seed),
                )
            ]
        finally:
            with lock:
                slots.append(slot)
        rows = fit_in_cells(rows, logs_folder(out))
        with lock:
            done[str(path)] = rows
            write_csv(_in_order(done, notebooks), out)
            _report(rows)

    with ThreadPoolExecutor(max_workers=jobs) as pool:
        list(pool.map(one, [p for p in notebooks if str(p) not in done]))
    rows = flag_duplicates(_in_order(done, notebooks), known)
    write_csv(rows, out)
    return rows


def _in_order(done: dict[str, list[Row]], notebooks: Sequence[Path]) -> list[Row]:
    return [row for path in notebooks for row in done.get(str(path), [])]


def _report(rows: Sequence[Row]) -> None:
    score, points = sum(r.score for r in rows), sum(r.points for r in rows)
    statuses = sorted({r.status for r in rows} - {GRADED})
    verdict = f"{score:g} / {points:g}" + (f"  ({', '.join(statuses)})" if statuses else "")
    where = printable(f"{rows[0].notebook}  {rows[0].assignment or '-'}")
    print(f"{where}  {verdict}", flush=True)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="+", type=Path, help="notebooks, or folders of them")
    parser.add_argument("--out", type=Path, default=Path("grades.csv"))
    parser.add_argument(
        "--timeout", type=float, default=Limits.seconds,
        help="seconds for a notebook's cells, and again for each question's check",
    )  # fmt: skip
    parser.add_argument("--memory", type=float, default=Limits.memory_bytes / 2**30, help="GiB")
    parser.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1))
    parser.add_argument(
        "--seed", type=int, help="other random inputs for the checks (default: each check's own)"
    )
    parser.add_argument("--fresh", action="store_true", help="ignore an earlier run's CSV")
    args = parser.parse_args(argv)
    limits = Limits(seconds=args.timeout, memory_bytes=int(args.memory * 2**30))
    try:
        rows = grade(args.paths, args.out, limits, args.jobs, args.seed, args.fresh)
    except (ValueError, RuntimeError) as error:
        sys.exit(printable(f"grade: {error}"))
    notebooks = {row.notebook for row in rows}
    print(printable(f"{len(notebooks)} notebooks: every one graded or reported in {args.out}"))


if __name__ == "__main__":
    main()
