"""The record of one trace: its steps, each with the line of the traced code that made it."""

from __future__ import annotations

import functools
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path

from .axes import Names
from .flags import Flag

ATTNKIT = str(Path(__file__).resolve().parent.parent)
HERE = str(Path(__file__).resolve().parent)


@functools.cache
def folder(library) -> str:
    return str(Path(library.__file__).resolve().parent)


@dataclass
class Step:
    """One operation: its kind (matmul, reshape …), the library's name for it, the named axes of
    its array operands and of its result, where it ran, and what it did wrong."""

    kind: str
    op: str
    inputs: list
    output: tuple
    file: str
    line: int
    flags: list = field(default_factory=list)


class Recorder:
    """Collects the steps of one call of the traced function."""

    def __init__(self, names: Names, libraries: tuple):
        self.names = names
        self.steps: list[Step] = []
        self.flags: list[Flag] = []
        # frames in these folders are the libraries', not the traced code's
        self.skipped = tuple(folder(lib) for lib in libraries)
        self.stop = None  # the code object of the frame that called the traced function

    def record(self, kind: str, op: str, inputs: list, output: tuple, flags: list) -> int:
        file, line = self.source()
        number = len(self.steps) + 1
        placed = [
            replace(flag, step=number, line=line, file=file)
            for flag in flags
            if not any(_same(flag, seen, file, line) for seen in self.flags)
        ]
        self.steps.append(Step(kind, op, inputs, output, file, line, placed))
        self.flags += placed
        return number

    def flag_last(self, flag: Flag, step: int) -> None:
        """A flag found after the fact (the result's axes), placed at the step that made it."""
        where = self.steps[step - 1] if step else None
        placed = replace(
            flag,
            step=step,
            line=where.line if where else 0,
            file=where.file if where else "",
        )
        if where:
            where.flags.append(placed)
        self.flags.append(placed)

    def source(self) -> tuple[str, int]:
        """The innermost line of the traced code outside NumPy, PyTorch and attnkit, or, where
        the traced code is attnkit's own, the innermost of attnkit's outside the tracer."""
        frame = sys._getframe(2)
        own = None
        while frame is not None and frame.f_code is not self.stop:
            path = frame.f_code.co_filename
            if not path.startswith(self.skipped) and not path.startswith(HERE):
                if not path.startswith(ATTNKIT):
                    return path, frame.f_lineno
                own = own or (path, frame.f_lineno)
            frame = frame.f_back
        return own or ("", 0)


def _same(flag: Flag, seen: Flag, file: str, line: int) -> bool:
    """A flag already raised at this line (a loop raises it once)."""
    return (flag.kind, flag.fields, file, line) == (seen.kind, seen.fields, seen.file, seen.line)
