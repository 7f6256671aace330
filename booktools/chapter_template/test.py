"""Chapter ``__SLUG__``: its check passes the chapter's solution and fails its stub."""

import numpy as np

from attnkit.exercises.__MODULE__ import check___MODULE__


def solution(Q, K, V):
    S = Q @ K.T / Q.shape[-1] ** 0.5
    E = np.exp(S - S.max(axis=-1, keepdims=True))
    return E / E.sum(axis=-1, keepdims=True) @ V


def stub(Q, K, V):
    raise NotImplementedError("replace this line with your code")


def test_the_check_passes_the_solution():
    assert check___MODULE__(solution).passed


def test_the_check_fails_the_stub_quietly():
    result = check___MODULE__(stub)
    assert not result.passed and "NotImplementedError" in result.message
