"""What every exercise check is built on, written once.

A check is a function ``check_<name>(fn)`` decorated with :func:`check`. Its body calls the
student's ``fn`` through :func:`call`, turns answers into arrays with :func:`as_array`, compares
them with :func:`close` (a tolerance that follows the answer's dtype), words numbers with
:func:`shown`, raises :class:`Failed` with plain advice at the first problem it finds, and
returns a confirmation when there is none. The decorator turns either outcome into a
:class:`CheckResult`. A NumPy check runs its inputs in each of :data:`DTYPES` and asks
:func:`keeps_dtype` whether the answer kept the inputs' dtype.
"""

from __future__ import annotations

import functools
import html
import sys
import warnings

import numpy as np

# Every NumPy check runs in both: float64 first, whose tight tolerance pins the values down,
# then float32, whose answers must stay float32.
DTYPES = (np.float64, np.float32)


class CheckFailedWarning(UserWarning):
    """A failed check's result was thrown away before anyone read it."""


class CheckFailed(AssertionError):
    """Raised by :meth:`CheckResult.assert_passed`; its text is the check's verdict."""


class CheckResult:
    """A check's verdict: ``passed``, and a ``message`` that says what was checked or what to fix.

    A failure can never pass for a success. The result is true only when the check passed, so
    ``assert check_x(fn)`` stops at a failure, and ``assert_passed()`` raises with the message.
    A notebook shows the verdict marked ✓ or ✗. A script shows nothing of a bare call, so a
    failed result that is discarded before its message was read (displayed, printed, asserted
    with ``assert_passed()`` or read as ``.message``) warns with that message, a
    :class:`CheckFailedWarning` pointing at the line of the call.
    """

    __slots__ = ("_message", "_passed", "_read")

    def __init__(self, passed: bool, message: str):
        self._passed = bool(passed)
        self._message = str(message)
        self._read = False

    @property
    def passed(self) -> bool:
        return self._passed

    @property
    def message(self) -> str:
        self._read = True
        return self._message

    def __bool__(self) -> bool:
        return self._passed

    def __repr__(self) -> str:
        return ("✓ " if self._passed else "✗ failed: ") + self.message

    def _repr_html_(self) -> str:
        colour = "46, 125, 50" if self._passed else "198, 40, 40"  # green, red
        mark = "✓" if self._passed else "✗ failed:"
        return (
            f'<div style="border-left: 0.3em solid rgb({colour}); '
            f'background: rgba({colour}, 0.1); padding: 0.3em 0.7em">'
            f"<strong>{mark}</strong> {html.escape(self.message)}</div>"
        )

    def assert_passed(self) -> None:
        """Raise :class:`CheckFailed` with the message if the check failed."""
        if not self._passed:
            raise CheckFailed(repr(self))

    def __del__(self):
        if not self._passed and not getattr(self, "_read", True):
            warnings.warn(
                f"{self!r}\n(this failed check was never displayed; in a script, "
                "call .assert_passed() on a check's result to stop at a failure)",
                CheckFailedWarning,
                stacklevel=2,
            )


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


def _is_tensor(value) -> bool:
    """Is ``value`` a torch tensor? (torch is imported only by the checks that need it.)"""
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(value, torch.Tensor)


def _copy(value):
    if isinstance(value, np.ndarray):
        return np.array(value, copy=True)
    return value.clone() if _is_tensor(value) else value


def _unchanged(original, copy) -> bool:
    if isinstance(original, np.ndarray):
        return np.array_equal(original, copy)
    if _is_tensor(original):
        return original.shape == copy.shape and bool((original == copy).all())
    return True


def call(fn, *args, called_with: str | None = None, hint: str = ""):
    """The student's ``fn(*args)``, called so that nothing it does escapes the check.

    NumPy arrays and torch tensors are passed as copies and compared with the originals
    afterwards, so a function that changes its input in place is reported; any other argument
    (a size, a count, a dtype) is passed as it is. An exception becomes a :class:`Raised` that
    names it and says how the function was called: ``called_with`` (for example ``"n = 4"``),
    else the shapes of the array arguments; ``hint`` follows that message.
    """
    copies = [_copy(a) for a in args]
    try:
        result = fn(*copies)
    except Exception as exc:  # any error in student code becomes a message
        error = f"{type(exc).__name__}: {exc}"
        if called_with is None:
            shapes = ", ".join(
                str(tuple(a.shape)) for a in args if isinstance(a, np.ndarray) or _is_tensor(a)
            )
            called_with = f"arguments of shape {shapes}"
        raise Raised(
            f"your function raised {error} (it was called with {called_with}){hint}", error
        ) from None
    if not all(_unchanged(original, copy) for original, copy in zip(args, copies)):
        raise Failed("your function changed its input array in place; compute a new array instead")
    return result


def keeps_dtype(result, dtype, what: str) -> None:
    """Raise :class:`Failed` unless the answer ``result`` has the inputs' float ``dtype``."""
    got = np.asarray(result).dtype
    if got != dtype:
        raise Failed(
            f"for {np.dtype(dtype).name} inputs you returned {what} in {got}: return "
            "the inputs' dtype. Arithmetic with Python numbers keeps float32 (x / 2.0, "
            "d ** 0.5, math.sqrt(d)); a float64 array or a NumPy scalar such as "
            "np.sqrt(d) turns it into float64"
        )


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
    expected, got = np.broadcast_arrays(
        np.asarray(expected, dtype=np.float64), np.asarray(got, dtype=np.float64)
    )
    for digits in range(4, 18):
        pair = tuple(str(np.round(x, digits).tolist()) for x in (expected, got))
        if pair[0] != pair[1]:
            break
    return pair
