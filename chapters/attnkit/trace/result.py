"""A finished trace: its steps and flags, as a text table (``str``) and as a drawing
(``_repr_html_``, :mod:`.draw`)."""

from __future__ import annotations

import linecache
import os
from dataclasses import dataclass

from .axes import shown
from .flags import Flag
from .record import Step

CODE_WIDTH = 44


@dataclass
class Trace:
    """What a traced function did to every axis: its steps (:class:`~.record.Step`), the flags
    raised at them (:class:`~.flags.Flag`), its result (plain arrays) and the result's axes."""

    name: str
    steps: list[Step]
    flags: list[Flag]
    result: object
    output: tuple | None

    def rows(self, language: str | None = None) -> list[dict]:
        """One plain record per step: what the table and the drawing both show."""
        return [
            {
                "step": number,
                "kind": step.kind,
                "op": step.op,
                "inputs": [shown(axes) for axes in step.inputs],
                "output": shown(step.output),
                "where": where(step.file, step.line),
                "code": code(step.file, step.line),
                "flags": [flag.advice(language) for flag in step.flags],
            }
            for number, step in enumerate(self.steps, 1)
        ]

    def text(self, language: str | None = None) -> str:
        lines = [f"trace of {self.name}: {len(self.steps)} steps, {len(self.flags)} flagged"]
        for row in self.rows(language):
            mark = "!" if row["flags"] else " "
            lines.append(
                f"{mark}{row['step']:>3}  {row['where']:<18} {row['kind']:<13} "
                f"{' , '.join(row['inputs'])} -> {row['output']}"
            )
            if row["code"]:  # the line's text, where Python can read it again
                lines.append(f"      {row['code']}")
            lines += [f"      ^ {advice}" for advice in row["flags"]]
        flags_elsewhere = [f for f in self.flags if not f.step]
        lines += [f"    ^ {flag.advice(language)}" for flag in flags_elsewhere]
        if self.output is not None:
            lines.append(f"result: {shown(self.output)}")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.text()

    def _repr_html_(self) -> str:
        from .draw import html

        return html(self)


def where(file: str, line: int) -> str:
    """``file.py:12``; a notebook cell's (IPython's file of it, named by a number) ``line 12``."""
    if not file:
        return ""
    if "ipykernel_" in file or file.startswith("<ipython-input"):
        return f"line {line}"
    return f"{os.path.basename(file)}:{line}"


def code(file: str, line: int) -> str:
    text = linecache.getline(file, line).strip() if file else ""
    return text if len(text) <= CODE_WIDTH else text[: CODE_WIDTH - 1] + "…"
