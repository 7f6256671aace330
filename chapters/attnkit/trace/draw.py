"""A trace drawn as HTML: one row per step, each axis a coloured block as wide as its size, the
flagged steps marked, and beside the drawing a table of the same facts.

The drawing is plain HTML with inline styles (no script, no style sheet, no network), so that it
shows the same in the book's pages, JupyterLab, Colab and a notebook opened offline, and survives
the sanitising of untrusted output. Its colours follow JupyterLab's theme variables, so it reads in
JupyterLab's dark themes; the book's dark mode sets HTML outputs on a light ground, where the light
fallbacks read. The blocks keep their own colours, each label black or white, whichever contrasts
more.
The drawing is hidden from screen readers (``aria-hidden``): the table carries its content.
"""

from __future__ import annotations

from html import escape

from ..exercises.wording import language
from .axes import Axis
from .words import words

# JupyterLab's theme colours, else light ones: the book's theme sets every HTML output on a light
# ground of its own in dark mode, so the book's pages take the light ones in both modes
TEXT = "var(--jp-ui-font-color0, #222832)"
MUTED = "var(--jp-ui-font-color1, #48566b)"
BORDER = "var(--jp-border-color1, #8c96a3)"
FLAGGED = "#c5221f"  # the flagged step's mark, 4.5:1 or more on white and as a border on dark
# one colour per atomic name, in a fixed order (Okabe and Ito's palette, told apart by most
# readers with a colour vision deficiency); other names cycle through them
PALETTE = ("#0072b2", "#e69f00", "#009e73", "#cc79a7", "#56b4e9", "#d55e00", "#f0e442", "#999999")
ORDER = ("B", "H", "T", "d_k", "S", "d_v", "n", "m", "d")
# code in the page's text colour, not the theme's colour for code (pink on the light ground
# the book's dark mode gives outputs)
CODE = "color:inherit;background:none;padding:0;border:0;font-size:95%"
UNIT_EM = 0.22  # a block's width per unit of size
WIDEST_EM = 7.0


def colour(name: str) -> str:
    base = name.removesuffix("'")
    index = ORDER.index(base) if base in ORDER else sum(map(ord, base))
    return PALETTE[index % len(PALETTE)]


def on(background: str) -> str:
    """Black or white, whichever contrasts more with ``background`` (WCAG's luminance)."""
    channels = [int(background[i : i + 2], 16) / 255 for i in (1, 3, 5)]
    linear = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    luminance = 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]
    return "#000" if (luminance + 0.05) / 0.05 > 1.05 / (luminance + 0.05) else "#fff"


def block(axis: Axis, names_of_factors: list) -> str:
    """One axis: a block as wide as its size (capped), split into its factors' colours when it
    is a merge of them, hatched when a reshape mixed it."""
    width = min(1.4 + UNIT_EM * axis.size, WIDEST_EM)
    parts = names_of_factors if len(names_of_factors) > 1 and not axis.mixed else [axis.name]
    if axis.size == 1:  # an axis of one: an outline, nothing in it
        fill, text = "transparent", "inherit"
    elif axis.mixed:
        fill = f"repeating-linear-gradient(45deg, {FLAGGED} 0 4px, #fff 4px 8px)"
        text = "#000"
    elif len(parts) > 1:
        stops = ", ".join(
            f"{colour(p)} {100 * i / len(parts):.0f}% {100 * (i + 1) / len(parts):.0f}%"
            for i, p in enumerate(parts)
        )
        fill, text = f"linear-gradient(90deg, {stops})", on(colour(parts[0]))
    else:
        fill, text = colour(axis.name), on(colour(axis.name))
    label = escape(axis.shown())
    # over hatching or several colours a label gets a white ground of its own
    chip = axis.mixed or len(parts) > 1
    label_style = "background:#fff;color:#000;padding:0 2px;border-radius:2px" if chip else ""
    return (
        f'<span data-axis="{label}" data-size="{axis.size}" style="display:inline-flex;'
        f"align-items:center;justify-content:center;min-width:{width:.2f}em;height:1.6em;"
        f"padding:0 3px;box-sizing:border-box;border-radius:3px;background:{fill};color:{text};"
        f"border:1px {'dashed' if axis.size == 1 else 'solid'} "
        f"{MUTED if axis.size == 1 else 'transparent'};"
        f'font-weight:600;white-space:nowrap"><span style="{label_style}">{label}</span></span>'
    )


def operation(row: dict) -> str:
    """The step's kind, and the library's name for it where that says more (``@``, ``view``)."""
    kind = escape(row["kind"])
    return (
        kind
        if row["op"] == row["kind"]
        else f"{kind} <code style='{CODE}'>{escape(row['op'])}</code>"
    )


def blocks(axes: tuple) -> str:
    inner = "".join(block(axis, list(axis.factors)) for axis in axes)
    return f'<span style="display:inline-flex;flex-wrap:wrap;gap:2px">{inner or "()"}</span>'


def html(trace, code: str | None = None) -> str:
    """The drawing and its table in the language ``code`` (``en``, ``ja``; by default the
    checks')."""
    code = code or language()
    rows = trace.rows(code)
    drawn = []
    for step, row in zip(trace.steps, rows):
        flagged = bool(step.flags)
        edge = (
            f"border-left:4px solid {FLAGGED};" if flagged else f"border-left:4px solid {BORDER};"
        )
        comma = f'<span style="color:{MUTED}">,</span>'
        inputs = comma.join(blocks(a) for a in step.inputs)
        advice = "".join(
            f'<div style="color:{TEXT};font-weight:600;margin-top:2px">⚠ {escape(text)}</div>'
            for text in row["flags"]
        )
        drawn.append(
            f'<div data-step="{row["step"]}" data-flagged="{str(flagged).lower()}" '
            f'style="{edge}padding:3px 6px;margin:3px 0">'
            f'<div style="display:flex;flex-wrap:wrap;align-items:center;gap:4px 8px">'
            f'<span style="color:{MUTED};min-width:1.6em">{row["step"]}</span>'
            f"<span>{operation(row)}</span>"
            f"{inputs}<span>→</span>{blocks(step.output)}</div>"
            f'<div style="color:{MUTED};font-size:90%;overflow-wrap:anywhere">'
            f"{escape(row['where'])} <code style='{CODE}'>{escape(row['code'])}</code></div>{advice}</div>"
        )
    return (
        f'<div class="attn-trace" lang="{code}" style="color:{TEXT};font:13px/1.4 system-ui,-apple-system,'
        f"&quot;Segoe UI&quot;,&quot;Noto Sans&quot;,&quot;Noto Sans CJK JP&quot;,sans-serif;"
        f'max-width:100%;margin:0.5em 0">'
        f'<div aria-hidden="true" class="attn-trace-drawing">{"".join(drawn)}</div>'
        f"{table(trace, rows, words(code))}</div>"
    )


def table(trace, rows: list, words: dict) -> str:
    """The same facts as the drawing, as a table (in a closed ``details``, for screen readers
    and anyone who prefers text)."""
    head = "".join(
        f'<th scope="col" style="text-align:left;padding:2px 6px">{escape(h)}</th>'
        for h in words["heads"]
    )
    cell = 'style="padding:2px 6px;border-top:1px solid ' + BORDER + ';vertical-align:top"'
    body = "".join(
        f"<tr><td {cell}>{row['step']}</td>"
        f"<td {cell}>{operation(row)}</td>"
        f"<td {cell}>{escape(' , '.join(row['inputs']))}</td>"
        f"<td {cell}>{escape(row['output'])}</td>"
        f"<td {cell}>{escape(row['where'])} <code style='{CODE}'>{escape(row['code'])}</code></td>"
        f"<td {cell}>{escape(' '.join(row['flags']))}</td></tr>"
        for row in rows
    )
    flagged = len(trace.flags)
    summary = words["summary"].format(steps=len(rows), name=trace.name, flagged=flagged)
    return (
        f'<details style="margin-top:4px"><summary style="cursor:pointer;min-height:24px">'
        f"{escape(summary)}</summary>"
        f'<div style="overflow-x:auto;max-width:100%"><table class="attn-trace-table" '
        f'style="border-collapse:collapse;font-size:90%">'
        f"<caption style='text-align:left'>{escape(summary)}</caption>"
        f"<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div></details>"
    )
