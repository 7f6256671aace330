"""The trace of a rejected answer: what the learner's function did to every axis, for the verdict.

A check whose exercise is about axes has a contract here (:data:`CONTRACTS`): the named axes of
its arguments and of its result, as :func:`attnkit.trace.trace` reads them. When such a check
rejects an answer, :func:`traced` runs the function once more on an example whose axes are named,
and where the tracer flags a step (axes mixed by a reshape, a softmax along the queries, a scale
by another width than ``d_k``, a mask along the wrong axis), the verdict shows the trace: the
flagged step and its line, drawn in a notebook and on the book's pages, as text in a grader's
report. An answer with no flag gets no trace; the check's verdict never depends on one.

The function is called as a check calls it (:func:`calling.forbidding`), and what comes back is
plain data (strings), so that a grader can ask for it across the sandbox's wall, in the process
that holds the student's code (:meth:`calling.Remote.trace`).
"""

from __future__ import annotations

from .calling import ForbiddenHelper, forbidding

H = 3  # the tracer's number of heads (attnkit.trace.SIZES["H"])

# A check's contract: the arguments (axis names, or a value) and the result's axes.
CONTRACTS = {
    "check_split_heads": (("B T d_model", H), "B H T d_k"),
    "check_merge_heads": (("B H T d_k",), "B T d_model"),
    "check_scaled_dot_product_attention": (("m d_k", "n d_k", "n d_v"), "m d_v"),
    "check_masked_self_attention": (("n d", "bool n n'"), "n d"),
}
LANGUAGES = ("en", "ja")


def traced(fn, check: str, forbidden: tuple[str, ...] = ()) -> dict | None:
    """``{"text": {language: table}, "html": {language: drawing}}`` for the function ``fn``
    rejected by ``check``, or None: no contract, no flag, or the function raised on the
    example."""
    if check not in CONTRACTS:
        return None
    from attnkit.trace import trace
    from attnkit.trace.draw import html

    args, expect = CONTRACTS[check]
    with forbidding(forbidden, fn) as used:
        if used:
            return None
        try:
            found = trace(fn, *args, expect=expect)
        except (Exception, ForbiddenHelper):  # any error in student code: no trace
            return None
    if not found.flags:
        return None
    return {
        "text": {code: found.text(code) for code in LANGUAGES},
        "html": {code: html(found, code) for code in LANGUAGES},
    }


def plain_trace(value) -> dict | None:
    """``value`` if it is what :func:`traced` returns (a string for each part and language),
    else None: what came from a student's process is only shown if it is that."""
    ok = isinstance(value, dict) and set(value) == {"text", "html"}
    for part in value.values() if ok else ():
        ok = ok and isinstance(part, dict) and set(part) == set(LANGUAGES)
        ok = ok and all(isinstance(text, str) for text in part.values())
    return value if ok else None


def packed(trace: dict | None) -> tuple | None:
    """:func:`traced`'s result as a flat tuple of strings, which a grader's wire carries."""
    if trace is None:
        return None
    return tuple(trace[part][code] for part in ("text", "html") for code in LANGUAGES)


def unpacked(value) -> dict | None:
    """:func:`packed`'s tuple as :func:`traced` gave it, or None if it is not one."""
    if not isinstance(value, (tuple, list)) or len(value) != 2 * len(LANGUAGES):
        return None
    if not all(isinstance(text, str) for text in value):
        return None
    n = len(LANGUAGES)
    return {"text": dict(zip(LANGUAGES, value[:n])), "html": dict(zip(LANGUAGES, value[n:]))}
