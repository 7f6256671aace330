"""What every exercise check is built on, written once.

A check is a function ``check_<name>(fn)`` decorated with :func:`check`. Its body calls the
student's ``fn`` through :func:`call`, turns answers into arrays with :func:`as_array`, compares
them with :func:`close` (a tolerance that follows the answer's dtype), words numbers with
:func:`shown`, raises :class:`Failed` with plain advice at the first problem it finds, and
returns a confirmation when there is none. The decorator turns either outcome into a
:class:`CheckResult`.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class CheckResult:
    passed: bool
    message: str

    def __repr__(self) -> str:
        return ("✓ " if self.passed else "✗ ") + self.message


class Failed(Exception):
    """Raised inside a check to stop at the first problem; its text is what the student reads."""


class Raised(Failed):
    """The student's function raised; ``error`` is what it raised, as ``"TypeError: ..."``."""

    def __init__(self, message: str, error: str):
        super().__init__(message)
        self.error = error


def check(body):
    """Make ``body(fn)`` a check: its returned text passes, a :class:`Failed` it raises fails.

    Either way the check returns a :class:`CheckResult` and never raises, so an unfinished
    exercise does not stop the notebook.
    """

    @functools.wraps(body)
    def run(fn) -> CheckResult:
        try:
            message = body(fn)
        except Failed as failure:
            return CheckResult(False, str(failure))
        return CheckResult(True, message)

    return run


def call(fn, *args, called_with: str | None = None, hint: str = ""):
    """The student's ``fn(*args)``, called so that nothing it does escapes the check.

    NumPy arrays are passed as copies and compared with the originals afterwards, so a function
    that changes its input in place is reported; any other argument (a size, a count, a tensor
    the check copied itself) is passed as it is. An exception becomes a :class:`Raised` that
    names it and says how the function was called: ``called_with`` (for example ``"n = 4"``),
    else the shapes of the array arguments; ``hint`` follows that message.
    """
    copies = [np.array(a, copy=True) if isinstance(a, np.ndarray) else a for a in args]
    try:
        result = fn(*copies)
    except Exception as exc:  # any error in student code becomes a message
        error = f"{type(exc).__name__}: {exc}"
        if called_with is None:
            shapes = ", ".join(str(a.shape) for a in args if isinstance(a, np.ndarray))
            called_with = f"arguments of shape {shapes}"
        raise Raised(f"your function raised {error} (it was called with {called_with}){hint}",
                     error) from None
    for original, copy in zip(args, copies):
        if isinstance(original, np.ndarray) and not np.array_equal(original, copy):
            raise Failed("your function changed its input array in place; "
                         "compute a new array instead")
    return result


def as_array(result, what: str) -> np.ndarray:
    """The answer as a float32 array if it is one (its tolerance is float32's), else float64."""
    try:
        arr = np.asarray(result)
        return arr if arr.dtype == np.float32 else arr.astype(np.float64)
    except (TypeError, ValueError):
        raise Failed(f"{what} should be a NumPy array, got {type(result).__name__}") from None


def near(got, expected) -> np.ndarray:
    """Entry by entry: is the answer within rounding error of ``expected``?

    The tolerance follows the answer's dtype: the square root of its machine epsilon
    (about 3e-4 for float32, 1.5e-8 for float64), relative and absolute, so a correct
    float32 answer passes and a float64 answer must be right to about eight digits.
    """
    got = np.asarray(got)
    tol = np.sqrt(np.finfo(got.dtype if got.dtype == np.float32 else np.float64).eps)
    return np.isclose(got, expected, rtol=tol, atol=tol)


def close(got, expected) -> bool:
    """Is every entry of the answer :func:`near` ``expected``?"""
    return bool(np.all(near(got, expected)))


def shown(expected, got) -> tuple[str, str]:
    """``expected`` and ``got`` written with as many digits as it takes to tell them apart."""
    expected, got = np.broadcast_arrays(np.asarray(expected, dtype=np.float64),
                                        np.asarray(got, dtype=np.float64))
    for digits in range(4, 18):
        pair = tuple(str(np.round(x, digits).tolist()) for x in (expected, got))
        if pair[0] != pair[1]:
            break
    return pair
