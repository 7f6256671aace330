"""Right and wrong answers to the exercises of ``chapters/__SLUG__.md``."""

import numpy as np

from attnkit.exercises.__MODULE__ import check___MODULE__
from tests.support.answers import (
    _NUMPY,
    Answers,
    Wrong,
    dtype_family,
    layout_family,
    squeezed_family,
    structure_family,
    type_family,
)

# The families of wrong answers each check of this chapter must reject (FAMILIES lists them).
REQUIRED = {"check___MODULE__": _NUMPY}

# A typical mistake for each coding exercise, as the student's function, for the graded class
# (tests/support/grading.py).
GRADED_WRONG = {
    "__PREFIX__-ex-attend": """
def __MODULE___attention(Q, K, V):
    S = Q @ K.T                                     # not divided by sqrt(d_k)
    E = np.exp(S - S.max(axis=-1, keepdims=True))
    return E / E.sum(axis=-1, keepdims=True) @ V
""",
}


def attend_with(*, scale=True, shift=True):
    """The chapter's solution with one of its choices changed."""

    def attend(Q, K, V):
        S = Q @ K.T / Q.shape[-1] ** 0.5 if scale else Q @ K.T
        E = np.exp(S - S.max(axis=-1, keepdims=True) if shift else S)
        return E / E.sum(axis=-1, keepdims=True) @ V

    return attend


attend_reference = attend_with()


def attend_by_loops(Q, K, V):
    """Query by query, as the formula reads."""
    out = np.zeros((Q.shape[0], V.shape[1]), dtype=Q.dtype)
    for i, q in enumerate(Q):
        s = K @ q / Q.dtype.type(np.sqrt(Q.shape[-1]))
        e = np.exp(s - s.max())
        out[i] = e / e.sum() @ V
    return out


def _library(Q, K, V):
    from attnkit.core import scaled_dot_product_attention

    return scaled_dot_product_attention(Q, K, V)[0]


ATTEND = Answers(
    check___MODULE__,
    right={"reference": attend_reference, "loops": attend_by_loops},
    wrong={
        "not scaled": Wrong("known", attend_with(scale=False), "sqrt(d_k)"),
        "not shifted": Wrong("known", attend_with(shift=False)),
        **structure_family(attend_reference),
        "attnkit's attention": Wrong("forbidden", _library, "attnkit.core"),
        **type_family(attend_reference),
        **dtype_family(attend_reference),
        **layout_family(attend_reference),
        **squeezed_family(attend_reference),
    },
)

ANSWERS = [ATTEND]
