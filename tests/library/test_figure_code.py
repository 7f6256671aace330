"""The chapters' plotting code, read without running it: every figure is drawn for the column.

attnkit.plots sets the book's figure style (the column's width, legible sizes, twice the pixels);
a cell may make a figure narrower or taller, never wider than the column, and never writes text
smaller than the style's minimum. Maths in titles, labels and legends is set as mathtext
(``$d_k$``), not as raw ``d_k``, which matplotlib prints as it stands.
"""

import ast
import re

import jupytext
import pytest

from attnkit.plots import COLUMN_INCHES, MIN_FONT_PT
from tests.support.book import ROOT, chapter_files

# What sets a font size, and what holds text that a figure shows.
SIZE_KEYWORDS = {"fontsize", "labelsize", "titlesize"}
TEXT_METHODS = {"set_title", "set_xlabel", "set_ylabel", "suptitle", "text", "annotate"}
TEXT_KEYWORDS = {"title", "xlabel", "ylabel", "label"}
MATH = re.compile(r"\$[^$]*\$")


def plotting_cells(source):
    """The code cells of a chapter's Markdown that draw with matplotlib, as Python source."""
    cells = jupytext.reads(source, fmt="md:myst").cells
    return [c.source for c in cells if c.cell_type == "code" and "plt." in c.source]


def width_problems(tree):
    """Every ``figsize=(w, h)`` whose width is not COLUMN_INCHES or a number no larger."""
    found = []
    for node in ast.walk(tree):
        for keyword in getattr(node, "keywords", []):
            if keyword.arg != "figsize":
                continue
            width = keyword.value.elts[0] if isinstance(keyword.value, ast.Tuple) else None
            fits = (isinstance(width, ast.Name) and width.id == "COLUMN_INCHES") or (
                isinstance(width, ast.Constant) and width.value <= COLUMN_INCHES
            )
            if not fits:
                found.append(ast.unparse(keyword))
    return found


def size_problems(tree):
    """Every font size set below MIN_FONT_PT, or by name ('small'), which hides its size."""
    found = []
    for node in ast.walk(tree):
        method = getattr(getattr(node, "func", None), "attr", None)
        for keyword in getattr(node, "keywords", []):
            # ``size`` is a font size only for text; rng.normal(size=...) is not
            if keyword.arg in SIZE_KEYWORDS or (keyword.arg == "size" and method in TEXT_METHODS):
                value = keyword.value
                if not (isinstance(value, ast.Constant | ast.Name | ast.Attribute)) or (
                    isinstance(value, ast.Constant)
                    and (isinstance(value.value, str) or value.value < MIN_FONT_PT)
                ):
                    found.append(ast.unparse(keyword))
    return found


def shown_strings(tree):
    """The literal text of titles, axis labels, legend labels and texts (f-strings' literal
    parts joined, with a placeholder where a value goes)."""
    nodes = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        method = node.func.attr if isinstance(node.func, ast.Attribute) else None
        if method in TEXT_METHODS:
            nodes += node.args[-1:] if method == "text" else node.args[:1]
        nodes += [k.value for k in node.keywords if k.arg in TEXT_KEYWORDS]
    for node in nodes:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            yield node.value
        elif isinstance(node, ast.JoinedStr):
            yield "".join(v.value if isinstance(v, ast.Constant) else "0" for v in node.values)


def raw_maths(tree):
    """Shown text with a subscript or superscript outside ``$...$``: matplotlib prints
    ``d_k`` as it stands."""
    return [text for text in shown_strings(tree) if re.search(r"[_^]", MATH.sub("", text))]


@pytest.mark.parametrize(
    "code, widths, sizes, maths",
    [
        ("plt.subplots(1, 2, figsize=(16, 7))", 1, 0, 0),
        ("plt.subplots(figsize=(COLUMN_INCHES, 7))", 0, 0, 0),
        ("plt.subplots(figsize=(4.5, 3))", 0, 0, 0),
        ("plt.figure(figsize=(width, 3))", 1, 0, 0),
        ("ax.legend(fontsize=8)", 0, 1, 0),
        ("ax.legend(fontsize='small')", 0, 1, 0),
        ("ax.tick_params(labelsize=12)", 0, 0, 0),
        ("ax.text(0, 1, 'x', size=7)", 0, 1, 0),
        ("rng.normal(size=(4, 2))", 0, 0, 0),
        ("ax.set_title('d_k = 4')", 0, 0, 1),
        ("ax.set_title(f'd_k = {dk}, {kind}')", 0, 0, 1),
        ("ax.set_title(f'$d_k = {dk}$, {kind}')", 0, 0, 0),
        ("ax.plot(x, y, label='e_20 · e_q')", 0, 0, 1),
        ("ax.set(xlabel='d_k', title='time')", 0, 0, 1),
        ("ax.set_title(r'$Q_1 = X W_Q^1$')", 0, 0, 0),
        ("ax.text(0, 1, 'W_Q^1')", 0, 0, 1),
    ],
)
def test_the_checks_find_what_they_look_for(code, widths, sizes, maths):
    tree = ast.parse(code)
    assert (len(width_problems(tree)), len(size_problems(tree)), len(raw_maths(tree))) == (
        widths,
        sizes,
        maths,
    )


@pytest.mark.parametrize("name", chapter_files())
def test_chapter_figures_fit_the_column_with_legible_text_and_maths(name):
    source = (ROOT / f"{name}.md").read_text(encoding="utf-8")
    cells = plotting_cells(source)
    problems = []
    for cell in cells:
        tree = ast.parse(cell)
        problems += width_problems(tree) + size_problems(tree) + raw_maths(tree)
        if "tight_layout" in cell:  # the style's constrained layout already fits the figure
            problems.append("fig.tight_layout()")
    assert problems == [], f"{name}: draw for the column (attnkit.plots): {problems}"


def test_every_plotting_chapter_is_read():
    """The test above reads cells that draw: a change in how chapters plot must not leave it
    with nothing to read."""
    drawing = [n for n in chapter_files() if plotting_cells((ROOT / f"{n}.md").read_text())]
    assert len(drawing) >= 6


@pytest.mark.parametrize(
    "path",
    [
        "chapters/attnkit/plots.py",
        *sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "figures").glob("make_*.py")),
    ],
)
def test_helper_and_figure_scripts_write_no_text_below_the_minimum(path):
    tree = ast.parse((ROOT / path).read_text(encoding="utf-8"))
    assert size_problems(tree) == []
    assert raw_maths(tree) == []
