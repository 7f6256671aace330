"""A finished trace: its steps and flags, as a text table (``str``) and as a drawing
(``_repr_html_``, :mod:`.draw`), each in the checks' language or a given one; shown in Jupyter,
the drawing carries its other languages' too (:mod:`attnkit.translated`)."""

from __future__ import annotations

import linecache
import os
from dataclasses import dataclass

from ..exercises.wording import language as checks_language
from ..translated import TRANSLATED_INTO, TRANSLATIONS
from .axes import shown
from .flags import Flag
from .record import Step
from .words import kind, words

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
        """One plain record per step, in ``language`` (by default the checks'): what the table
        and the drawing both show."""
        language = language or checks_language()
        return [
            {
                "step": number,
                "kind": kind(step.kind, language),
                "op": step.op,
                "inputs": [shown(axes) for axes in step.inputs],
                "output": shown(step.output),
                "where": where(step.file, step.line, language),
                "code": code(step.file, step.line),
                "flags": [flag.advice(language) for flag in step.flags],
            }
            for number, step in enumerate(self.steps, 1)
        ]

    def text(self, language: str | None = None) -> str:
        language = language or checks_language()
        said = words(language)
        lines = [
            said["title"].format(name=self.name, steps=len(self.steps), flagged=len(self.flags))
        ]
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
            lines.append(said["result"].format(axes=shown(self.output)))
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.text()

    def _repr_html_(self) -> str:
        from .draw import html

        return html(self)

    def _repr_mimebundle_(self, include=None, exclude=None):
        """The table and the drawing in the checks' language, the drawing in each other
        language of the book in its metadata: the book runs its cells in English, and its
        Japanese pages show the Japanese drawing (_ext/translated_outputs.py)."""
        from .draw import html

        shown_in = checks_language()
        others = {code: html(self, code) for code in TRANSLATED_INTO if code != shown_in}
        data = {"text/plain": self.text(shown_in), "text/html": html(self, shown_in)}
        return data, ({"text/html": {TRANSLATIONS: others}} if others else {})


def where(file: str, line: int, language: str = "en") -> str:
    """``file.py:12``; a notebook cell's (IPython's file of it, named by a number) ``line 12``,
    in ``language``."""
    if not file:
        return ""
    if "ipykernel_" in file or file.startswith("<ipython-input"):
        return words(language)["line"].format(line=line)
    return f"{os.path.basename(file)}:{line}"


def code(file: str, line: int) -> str:
    text = linecache.getline(file, line).strip() if file else ""
    return text if len(text) <= CODE_WIDTH else text[: CODE_WIDTH - 1] + "…"
